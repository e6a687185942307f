/**
 * Settings of the service itself (which optional plugins run, the demo home),
 * and the one list of every setting the core and the built-in plugins
 * register (`registerAllSettings`): docs/SETTINGS.md is generated from it and
 * `homeagent config` uses it to validate when the service is not running.
 */
import { registerStorageSettings } from './disk-keeper.js';
import type { SettingsAPI } from '../kernel/settings-types.js';
import { registerCoreSettings } from '../kernel/core-settings.js';
import { registerProviderSettings } from '../providers/manager.js';
import { HOME_SETTINGS } from '../home/settings.js';
import { MEMORY_SETTINGS } from '../memory/settings.js';
import { HAL_SETTINGS } from '../../hal/index.js';
import { VOICE_SETTINGS } from '../voice/settings.js';
import { TIMER_SETTINGS } from '../plugins/timers/timers-plugin.js';
import { WEBUI_SETTINGS } from '../plugins/webui/settings.js';
import { MCP_SERVER_SETTINGS } from '../plugins/mcp-server/index.js';

/** Register the service's settings. Those read only at start carry `restart: true`. */
export function registerServiceSettings(s: SettingsAPI): void {
  s.register({ key: 'core.plugins.optional', type: 'json', default: [], restart: true, check: (v) => (Array.isArray(v) && v.every((x) => x === 'serial' || x === 'camera') ? undefined : 'must be a list of "serial" and/or "camera"'), description: 'Optional built-in plugins to start besides the standard ones: "serial" (a JSON-lines microcontroller or LED ring), "camera" (snapshots for a multimodal model).' });
  s.register({ key: 'core.service.embedded_broker_port', type: 'integer', default: 1883, restart: true, min: 0, max: 65535, description: "Port of the box's embedded MQTT broker on 127.0.0.1, used when plugin.mqtt.url is empty (0 = any free port)." });
  s.register({ key: 'core.service.stop_deadline_ms', type: 'integer', default: 15000, min: 1000, max: 600000, description: "Longest a graceful stop (reply cut, plugins stopped, databases closed) may take before the service exits anyway, ms; keep it below the unit's TimeoutStopSec (20 s) so systemd never has to SIGKILL it." });
  s.register({ key: 'core.service.demo_home', type: 'string', default: 'auto', restart: true, enum: ['auto', 'on', 'off'], description: 'Announce a demo home (kitchen light, lamp, lock, thermostat, sensor) on the broker: auto = only on the embedded broker with simulated devices.' });
}

/**
 * Register every setting of the core, the service and the built-in plugins
 * (kernel, providers, home, memory, HAL, voice, timers, webui): what the running
 * service has registered once all its plugins started. Used by the settings
 * documentation and by `homeagent config`/`doctor` without the service.
 */
export function registerAllSettings(s: SettingsAPI): void {
  registerCoreSettings(s);
  registerServiceSettings(s);
  registerProviderSettings(s);
  registerStorageSettings(s);
  for (const d of [...HOME_SETTINGS, ...MEMORY_SETTINGS, ...HAL_SETTINGS, ...VOICE_SETTINGS, ...TIMER_SETTINGS, ...WEBUI_SETTINGS]) s.register(d);
  for (const d of MCP_SERVER_SETTINGS) s.register(d);
}
