/** Test and bench helpers: a logger that prints nothing, and settings that only know their defaults. */
import type { Logger } from '../../src/kernel/log-types.js';
import type { SettingDef, SettingsAPI } from '../../src/kernel/settings-types.js';

/** A Logger that drops everything (its child is itself). */
export const silentLogger: Logger = {
  debug: () => undefined,
  info: () => undefined,
  warn: () => undefined,
  error: () => undefined,
  child: () => silentLogger,
};

/** A SettingsAPI that answers every registered key with its default; set/delete are ignored. */
export function defaultSettings(): SettingsAPI {
  const defs = new Map<string, SettingDef>();
  return {
    get: <T>(key: string) => defs.get(key)?.default as T,
    set: () => {},
    list: () => [],
    delete: () => {},
    register: (d) => void defs.set(d.key, d),
    onChange: () => () => {},
  };
}
