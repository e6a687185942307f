/**
 * Settings of the service itself (which optional plugins run, the demo home).
 */
import type { SettingsAPI } from '../kernel/settings-types.js';

/** Register the service's settings. */
export function registerServiceSettings(s: SettingsAPI): void {
  s.register({ key: 'core.plugins.optional', type: 'json', default: [], check: (v) => (Array.isArray(v) && v.every((x) => x === 'serial' || x === 'camera') ? undefined : 'must be a list of "serial" and/or "camera"'), description: 'Optional built-in plugins to start besides the standard ones: "serial" (a JSON-lines microcontroller or LED ring), "camera" (snapshots for a multimodal model).' });
  s.register({ key: 'core.service.embedded_broker_port', type: 'integer', default: 1883, min: 0, max: 65535, description: "Port of the box's embedded MQTT broker on 127.0.0.1, used when plugin.mqtt.url is empty (0 = any free port)." });
  s.register({ key: 'core.service.stop_deadline_ms', type: 'integer', default: 15000, min: 1000, max: 600000, description: "Longest a graceful stop (reply cut, plugins stopped, databases closed) may take before the service exits anyway, ms; keep it below the unit's TimeoutStopSec (20 s) so systemd never has to SIGKILL it." });
  s.register({ key: 'core.service.demo_home', type: 'string', default: 'auto', enum: ['auto', 'on', 'off'], description: 'Announce a demo home (kitchen light, lamp, lock, thermostat, sensor) on the broker: auto = only on the embedded broker with simulated devices.' });
}
