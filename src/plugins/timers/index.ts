/** The timers plugin: public surface. */
export { TimersPlugin, TIMER_EXPIRY_LEVEL, TIMER_SETTINGS, type TimersPluginOptions } from './timers-plugin.js';
export { TimerService, TimerError, formatDuration, expiryText, MAX_TIMER_S, type Timer, type TimerStatus, type TimerServiceOptions } from './timer-service.js';
