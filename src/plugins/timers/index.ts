/** The timers plugin: public surface. */
export { TimersPlugin, TIMER_EXPIRY_LEVEL, TIMER_SETTINGS, type TimersPluginOptions } from './timers-plugin.js';
export { TimerService, TimerError, TimerAmbiguousError, formatDuration, expiryText, MAX_TIMER_S, type Timer, type TimerStatus, type TimerSelector, type TimerChange, type TimerServiceOptions } from './timer-service.js';
