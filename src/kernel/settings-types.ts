/**
 * Settings as plugins see them (seed 000 §10 `Register(key, default)`,
 * Settings().Get/Set/List): definitions, value types and the API. No IO here.
 */

/** Setting value types of the ConfigRegistry. */
export type SettingType = 'string' | 'number' | 'integer' | 'boolean' | 'json' | 'secret';

/** A registered setting (seed 000 §10 `Register(key, default)`, plus type and description). */
export interface SettingDef {
  key: string;
  type: SettingType;
  default: unknown;
  description: string;
  /** Allowed values for strings. */
  enum?: readonly string[];
  min?: number;
  max?: number;
  /**
   * A URL (strings only; WHATWG URL parsing): its scheme must be one of
   * `schemes` (without the colon, e.g. ['mqtt', 'mqtts']) and it must name a
   * host; `allowEmpty` accepts '' (meaning "none" or "built-in").
   */
  url?: { schemes: readonly string[]; allowEmpty?: boolean };
  /** The service reads it only when it starts: a change takes effect after a restart. */
  restart?: boolean;
  /** Further validation: returns what is wrong with a value, or undefined when it is fine. May read other settings (a cross-key requirement). */
  check?: (value: unknown) => string | undefined;
  /**
   * A warning about a value that is taken, not refused (`homeagent config set`
   * prints it as a note): a device name that fits no device today may fit one
   * announced later. Undefined when there is nothing to say.
   */
  advise?: (value: unknown) => string | undefined;
}

/** The settings view a plugin gets (seed 000 §10 Settings().Get/Set/List). */
export interface SettingsAPI {
  get<T = unknown>(key: string): T;
  set(key: string, value: unknown): void;
  /** Set from a command-line string, parsed by the key's type (optional; the ConfigRegistry has it). */
  setFromString?(key: string, raw: string): void;
  list(prefix?: string): Array<{ key: string; value: unknown; type: SettingType; description: string; source: 'default' | 'stored' | 'env'; restart?: boolean }>;
  /** The key's SettingDef.advise on its value in effect, if any (optional; the ConfigRegistry has it). */
  advice?(key: string): string | undefined;
  /** Remove the stored value (the default applies again); true when a value was stored. */
  delete(key: string): boolean;
  register(def: SettingDef): void;
  /** Called after any key under `prefix` changes; returns an unsubscribe function. */
  onChange(prefix: string, cb: (key: string, value: unknown) => void): () => void;
}

