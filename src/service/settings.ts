/**
 * Settings of the service itself (which optional plugins run, the demo home).
 */
import type { SettingsAPI } from '../kernel/types.js';

/** Register the service's settings. */
export function registerServiceSettings(s: SettingsAPI): void {
  s.register({ key: 'core.plugins.optional', type: 'json', default: [], description: 'Optional built-in plugins to start besides the standard ones: "serial" (a JSON-lines microcontroller or LED ring), "camera" (snapshots for a multimodal model).' });
  s.register({ key: 'core.service.demo_home', type: 'string', default: 'auto', enum: ['auto', 'on', 'off'], description: 'Announce a demo home (kitchen light, lamp, lock, thermostat, sensor) on the broker: auto = only on the embedded broker with simulated devices.' });
}
