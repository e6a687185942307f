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
import { CAMERA_SETTINGS, HAL_SETTINGS, SERIAL_SETTINGS } from '../../hal/index.js';
import { VOICE_SETTINGS } from '../voice/settings.js';
import { TIMER_SETTINGS } from '../plugins/timers/timers-plugin.js';
import { WEBUI_SETTINGS } from '../plugins/webui/settings.js';
import { MCP_SERVER_SETTINGS } from '../plugins/mcp-server/index.js';

/** Register the service's settings. Those read only at start carry `restart: true`. */
export function registerServiceSettings(s: SettingsAPI): void {
  s.register({ key: 'core.plugins.optional', type: 'json', default: [], restart: true, check: (v) => (Array.isArray(v) && v.every((x) => (OPTIONAL_PLUGINS as readonly unknown[]).includes(x)) ? undefined : 'must be a list of "serial" and/or "camera"'), description: 'Optional built-in plugins to start besides the standard ones: "serial" (a JSON-lines microcontroller or LED ring), "camera" (snapshots for a multimodal model).' });
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
export function registerAllSettings(s: SettingsAPI, opts: { optional?: 'all' | 'listed' } = {}): void {
  registerCoreSettings(s);
  registerServiceSettings(s);
  registerProviderSettings(s);
  registerStorageSettings(s);
  // With optional 'listed', an optional plugin's keys only when core.plugins.optional lists it, as the service
  // registers them (its plugin does, once started): `homeagent config` answers the same with the service down.
  const listed = opts.optional === 'listed' ? listedOptional(s.get<unknown>('core.plugins.optional')) : OPTIONAL_PLUGINS;
  const left = new Set(OPTIONAL_PLUGINS.filter((p) => !listed.includes(p)).flatMap((p) => OPTIONAL_PLUGIN_SETTINGS[p].map((d) => d.key)));
  for (const d of [...HOME_SETTINGS, ...MEMORY_SETTINGS, ...HAL_SETTINGS, ...VOICE_SETTINGS, ...TIMER_SETTINGS, ...WEBUI_SETTINGS]) if (!left.has(d.key)) s.register(d);
  for (const d of MCP_SERVER_SETTINGS) s.register(d);
}

/** The optional built-in plugins (core.plugins.optional). */
export const OPTIONAL_PLUGINS = ['serial', 'camera'] as const;
/** An optional built-in plugin's name. */
export type OptionalPlugin = (typeof OPTIONAL_PLUGINS)[number];
/** The keys each optional plugin registers when it starts. */
const OPTIONAL_PLUGIN_SETTINGS: Record<OptionalPlugin, readonly { key: string }[]> = { serial: SERIAL_SETTINGS, camera: CAMERA_SETTINGS };

/** The optional plugins a core.plugins.optional value lists (anything else in it ignored). */
export function listedOptional(v: unknown): OptionalPlugin[] {
  return Array.isArray(v) ? OPTIONAL_PLUGINS.filter((p) => v.includes(p)) : [];
}

/**
 * What to say of `key` when nobody registered it and it belongs to an
 * optional plugin that is not running (ConfigRegistry.explainUnknown):
 * `started` are the optional plugins the service started with (undefined:
 * the service is not running), `listedNow` core.plugins.optional's value
 * now. Undefined for any other key.
 */
export function optionalPluginHint(key: string, started: readonly string[] | undefined, listedNow: unknown): string | undefined {
  const name = OPTIONAL_PLUGINS.find((p) => key.startsWith(`plugin.${p}.`) && !(started ?? []).includes(p));
  if (!name) return undefined;
  const now = listedOptional(listedNow);
  // Listed since the start (config set), but not started until the service restarts.
  if (started && now.includes(name)) return `the ${name} plugin is in core.plugins.optional, but the service has not restarted since it was added; restart it (sudo systemctl restart homeagent) and its settings exist`;
  return `the ${name} plugin is optional and not started; add "${name}" to core.plugins.optional (homeagent config set core.plugins.optional '${JSON.stringify([...(Array.isArray(listedNow) ? listedNow : []), name])}') and ${started ? 'restart' : 'start'} the service`;
}
