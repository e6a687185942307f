/**
 * ConfigRegistry (seed 000 §10, seed 001 "Configuration System"): one SQLite
 * key-value table under the data directory, namespaces `core.*` and
 * `plugin.<name>.*`, registered defaults with types and descriptions (a `*`
 * segment registers a family such as `core.llm.sources.*.base_url`),
 * validation with errors naming the key and the expected type, and
 * environment overrides: `HOMEAGENT__CORE__AGENT__MAX_TOOL_ROUNDS=4` overrides
 * `core.agent.max_tool_rounds` (dots become double underscores, upper case).
 * Writes are synchronous with synchronous=FULL, so an acknowledged set
 * survives kill -9.
 */
import type Database from 'better-sqlite3';
import type { SettingDef, SettingType, SettingsAPI } from '../kernel/settings-types.js';
import { ConfigError } from '../kernel/errors.js';
import { openSqliteStore, type OpenStoreOptions, type SqliteStoreSpec } from '../kernel/store-version.js';

const SETTINGS_SCHEMA = 'CREATE TABLE IF NOT EXISTS settings (key TEXT PRIMARY KEY, value TEXT NOT NULL, updated_at INTEGER NOT NULL)';

/**
 * The settings store's versions (`PRAGMA user_version`, src/kernel/store-version.ts):
 * - 0: the unversioned `settings` table of commit e216bba (value = the JSON of the setting);
 * - 1: the same table, versioned.
 */
export const SETTINGS_STORE: SqliteStoreSpec = {
  store: 'settings',
  version: 1,
  create: (db) => db.exec(SETTINGS_SCHEMA),
  migrations: [{ to: 1, description: 'adopt schema versions (settings as in e216bba)', up: (db) => db.exec(SETTINGS_SCHEMA) }],
};

const KEY_RE = /^(core|plugin)(\.[A-Za-z0-9_*-]+)+$/;

/** The environment variable that overrides `key`. */
export function envNameFor(key: string): string {
  return 'HOMEAGENT__' + key.replace(/\./g, '__').replace(/-/g, '_').toUpperCase();
}

interface Listener {
  prefix: string;
  cb: (key: string, value: unknown) => void;
}

/** The registry. Open with a path (`:memory:` for tests). */
export class ConfigRegistry implements SettingsAPI {
  private readonly db: Database.Database;
  private readonly defs = new Map<string, SettingDef>();
  private readonly patterns: Array<{ re: RegExp; def: SettingDef }> = [];
  private readonly listeners: Listener[] = [];
  private readonly env: NodeJS.ProcessEnv;
  /** Restart settings deleted by this registry (delete): when, and when the deleted value had been stored (epoch ms; restartPending). */
  private readonly deletedAt = new Map<string, { at: number; storedAt: number }>();

  /**
   * Open (creating when absent) the settings store at `path` (`:memory:` for
   * tests), migrating an older store first (SETTINGS_STORE; a copy is kept
   * under `<dataDir>/backups/pre-migration`, `dataDir` defaulting to the
   * file's directory). Throws StoreTooNewError / StoreMigrationError
   * (src/kernel/store-version.ts) or the better-sqlite3 error.
   */
  constructor(path: string, opts: { env?: NodeJS.ProcessEnv; dataDir?: string } & OpenStoreOptions = {}) {
    this.env = opts.env ?? process.env;
    this.db = openSqliteStore(path, SETTINGS_STORE, { ...opts, pragmas: ['busy_timeout = 5000'] });
  }

  /** Register a default (does not store it). Re-registering the same key replaces the definition. */
  register(def: SettingDef): void {
    if (!KEY_RE.test(def.key)) throw new ConfigError(def.key, 'keys look like core.<area>.<name> or plugin.<plugin>.<name>');
    const checked = this.check(def, def.default, 'default');
    const d = { ...def, default: checked };
    // A bad environment override is refused when its key is registered (at start), not at first use.
    if (!def.key.includes('*')) {
      const envVal = this.env[envNameFor(def.key)];
      if (envVal !== undefined) {
        try {
          this.parseEnv(d, envVal);
        } catch (err) {
          throw new ConfigError(def.key, `environment variable ${envNameFor(def.key)}=${JSON.stringify(envVal)}: ${err instanceof ConfigError ? err.message.replace(/^setting [^:]+: /, '') : String(err)}`);
        }
      }
    }
    if (def.key.includes('*')) {
      const re = new RegExp('^' + def.key.split('.').map((s) => (s === '*' ? '[A-Za-z0-9_-]+' : escapeRe(s))).join('\\.') + '$');
      const i = this.patterns.findIndex((p) => p.def.key === def.key);
      if (i >= 0) this.patterns.splice(i, 1);
      this.patterns.push({ re, def: d });
    } else {
      this.defs.set(def.key, d);
    }
  }

  /** The definition governing `key` (exact or pattern), if any. */
  definition(key: string): SettingDef | undefined {
    const exact = this.defs.get(key);
    if (exact) return exact;
    for (const p of this.patterns) if (p.re.test(key)) return { ...p.def, key };
    return undefined;
  }

  private unknownHint: ((key: string) => string | undefined) | undefined;

  /**
   * Say more about a key nobody registered, in the ConfigError of get, set and
   * delete: `hint` gets the key and returns a sentence, or undefined. The
   * service says which optional plugin (core.plugins.optional) would register
   * it: a newcomer's `config set plugin.camera.name` was "unknown setting"
   * while the README listed the key.
   */
  explainUnknown(hint: (key: string) => string | undefined): void {
    this.unknownHint = hint;
  }

  private unknownReason(key: string): string {
    const near = nearKeys(key, [...this.defs.keys()]);
    const more = this.unknownHint?.(key) ?? (near.length ? `did you mean ${near.join(' or ')}?` : undefined);
    return `unknown setting (not registered by the core or any plugin)${more ? `: ${more}` : ''}`;
  }

  /** Value of `key`: environment override, else stored value, else default. Throws ConfigError for unknown keys. */
  get<T = unknown>(key: string): T {
    const def = this.definition(key);
    const envVal = this.env[envNameFor(key)];
    if (envVal !== undefined && def) return this.parseEnv(def, envVal) as T;
    const row = this.db.prepare('SELECT value FROM settings WHERE key = ?').get(key) as { value: string } | undefined;
    if (row) return JSON.parse(row.value) as T;
    if (!def) throw new ConfigError(key, this.unknownReason(key));
    return def.default as T;
  }

  /** What the key's definition advises about its value in effect (SettingDef.advise); undefined for none or an unknown key. A failing adviser says nothing. */
  advice(key: string): string | undefined {
    const def = this.definition(key);
    if (!def?.advise) return undefined;
    try {
      return def.advise(this.get(key));
    } catch {
      return undefined;
    }
  }

  /** Like get, but undefined instead of throwing for unknown keys. */
  tryGet<T = unknown>(key: string): T | undefined {
    try {
      return this.get<T>(key);
    } catch {
      return undefined;
    }
  }

  /** Validate and store. Throws ConfigError naming the key and the expected type. */
  set(key: string, value: unknown): void {
    if (!KEY_RE.test(key) || key.includes('*')) {
      const near = nearKeys(key, [...this.defs.keys()]);
      throw new ConfigError(key, `keys look like core.<area>.<name> or plugin.<plugin>.<name>${near.length ? `: did you mean ${near.join(' or ')}?` : ''}`);
    }
    const def = this.definition(key);
    if (!def) throw new ConfigError(key, this.unknownReason(key));
    const v = this.check(def, value, 'value');
    // A value equal to the one in force (stored, else the default) changes nothing: it keeps the time of the last
    // real change (0 when there was none), so it is no restart pending (a newcomer's `config set plugin.webui.port 0`
    // on the default 0 made `status` ask for a restart).
    const row = this.db.prepare('SELECT value, updated_at FROM settings WHERE key = ?').get(key) as { value: string; updated_at: number } | undefined;
    const same = (row ? row.value : JSON.stringify(def.default)) === JSON.stringify(v);
    this.db.prepare('INSERT INTO settings (key, value, updated_at) VALUES (?, ?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value, updated_at = excluded.updated_at').run(key, JSON.stringify(v), same ? (row?.updated_at ?? 0) : Date.now());
    this.emit(key, v);
  }

  /** Set from a command-line string: parsed according to the key's type. */
  setFromString(key: string, raw: string): void {
    const def = this.definition(key);
    if (!def) throw new ConfigError(key, this.unknownReason(key));
    this.set(key, this.parseEnv(def, raw));
  }

  /** Remove the stored value (the default applies again); true when a value was stored, false when none was. Throws ConfigError for a key that is neither registered nor stored. */
  delete(key: string): boolean {
    const stored = this.db.prepare('SELECT 1 FROM settings WHERE key = ?').get(key) !== undefined;
    if (!stored && !this.definition(key)) throw new ConfigError(key, this.unknownReason(key));
    if (!stored) return false;
    const def = this.definition(key);
    const row = this.db.prepare('SELECT value, updated_at FROM settings WHERE key = ?').get(key) as { value: string; updated_at: number } | undefined;
    // Back to the default is a change a restart applies too, unless the stored value was the default (restartPending).
    if (def?.restart && row && row.value !== JSON.stringify(def.default)) this.deletedAt.set(key, { at: Date.now(), storedAt: row.updated_at });
    this.db.prepare('DELETE FROM settings WHERE key = ?').run(key);
    this.emit(key, this.tryGet(key));
    return true;
  }

  /** Every registered or stored key under `prefix`, with value, type, description and where the value comes from. */
  list(prefix = ''): ReturnType<SettingsAPI['list']> {
    const keys = new Set<string>();
    for (const k of this.defs.keys()) if (k.startsWith(prefix)) keys.add(k);
    const rows = this.db.prepare('SELECT key FROM settings WHERE key LIKE ? ORDER BY key').all(escapeLike(prefix) + '%') as Array<{ key: string }>;
    for (const r of rows) if (r.key.startsWith(prefix)) keys.add(r.key);
    const out: ReturnType<SettingsAPI['list']> = [];
    for (const key of [...keys].sort()) {
      const def = this.definition(key);
      const stored = this.db.prepare('SELECT 1 FROM settings WHERE key = ?').get(key) !== undefined;
      const fromEnv = def !== undefined && this.env[envNameFor(key)] !== undefined;
      out.push({
        key,
        value: def?.type === 'secret' ? (this.get<string>(key) ? '********' : '') : this.tryGet(key),
        type: def?.type ?? 'json',
        description: def?.description ?? '(not registered)',
        source: fromEnv ? 'env' : stored ? 'stored' : 'default',
        ...(def?.restart ? { restart: true } : {}),
      });
    }
    return out;
  }

  /** Names of the source groups stored or registered under `prefix` (e.g. LLM source names under core.llm.sources.). */
  children(prefix: string): string[] {
    const names = new Set<string>();
    const add = (k: string) => {
      if (!k.startsWith(prefix)) return;
      const seg = k.slice(prefix.length).split('.')[0];
      if (seg && seg !== '*') names.add(seg);
    };
    for (const k of this.defs.keys()) add(k);
    for (const r of this.db.prepare('SELECT key FROM settings WHERE key LIKE ?').all(escapeLike(prefix) + '%') as Array<{ key: string }>) add(r.key);
    return [...names].sort();
  }

  onChange(prefix: string, cb: (key: string, value: unknown) => void): () => void {
    const l = { prefix, cb };
    this.listeners.push(l);
    return () => {
      const i = this.listeners.indexOf(l);
      if (i >= 0) this.listeners.splice(i, 1);
    };
  }

  /** When `key`'s stored value was last written (ms since epoch), or undefined when it is not stored. */
  updatedAt(key: string): number | undefined {
    const row = this.db.prepare('SELECT updated_at FROM settings WHERE key = ?').get(key) as { updated_at: number } | undefined;
    return row?.updated_at;
  }

  /**
   * Settings that take effect only after a restart (SettingDef.restart) whose
   * stored value was written after `sinceMs` (the service's start): what a
   * restart would change, with when (ms since epoch), oldest first. Another
   * process (`homeagent config set` while the service is down, or a second
   * writer) counts too: it reads the file; a value deleted through this
   * registry counts from the deletion (the default applies after a restart)
   * when that value was stored before `sinceMs` (in force at the start) and
   * was not the default. A key an environment variable overrides is
   * left out: a restart would not apply its stored value.
   */
  restartPending(sinceMs: number): Array<{ key: string; changed_at: number }> {
    const rows = this.db.prepare('SELECT key, updated_at FROM settings WHERE updated_at > ? ORDER BY updated_at').all(sinceMs) as Array<{ key: string; updated_at: number }>;
    const changed = rows.map((r) => ({ key: r.key, changed_at: r.updated_at }));
    // Deleted here (`config delete`) since: the default applies after a restart. A newcomer's deleted wake phrase was no longer "restart needed" while the service still spotted it.
    const stored = this.db.prepare('SELECT 1 FROM settings WHERE key = ?');
    // Only a value stored before the start was in force: one set since and deleted again leaves what the service read.
    for (const [key, d] of this.deletedAt) if (d.at > sinceMs && d.storedAt <= sinceMs && stored.get(key) === undefined) changed.push({ key, changed_at: d.at });
    return changed
      .filter((r) => this.definition(r.key)?.restart === true && this.env[envNameFor(r.key)] === undefined)
      .sort((a, b) => a.changed_at - b.changed_at);
  }

  /** Run SQLite's integrity check (`homeagent doctor`). */
  integrityCheck(): string {
    const r = this.db.pragma('integrity_check', { simple: true });
    return String(r);
  }

  close(): void {
    if (this.db.open) this.db.close();
  }

  private emit(key: string, value: unknown): void {
    for (const l of [...this.listeners]) {
      if (!key.startsWith(l.prefix)) continue;
      try {
        l.cb(key, value);
      } catch {
        /* a listener's failure is its own */
      }
    }
  }

  private parseEnv(def: SettingDef, raw: string): unknown {
    switch (def.type) {
      case 'number':
      case 'integer': {
        // Decimal only: Number() also takes "0x10", "0b1", "Infinity" and, for an integer, "1e3". A number may have
        // an exponent (thresholds such as 1e-30); surrounding spaces are dropped.
        const t = raw.trim();
        const shape = def.type === 'integer' ? /^[-+]?\d+$/ : /^[-+]?(\d+\.?\d*|\.\d+)([eE][-+]?\d+)?$/;
        if (!shape.test(t)) throw new ConfigError(def.key, `expected ${def.type === 'integer' ? 'integer (decimal digits)' : 'number (decimal, e.g. 0.5 or 1e-30)'}, got "${raw}"`);
        return this.check(def, Number(t), 'value');
      }
      case 'boolean':
        if (/^(1|true|yes|on)$/i.test(raw)) return true;
        if (/^(0|false|no|off)$/i.test(raw)) return false;
        throw new ConfigError(def.key, `expected boolean (true/false), got "${raw}"`);
      case 'json':
        try {
          return JSON.parse(raw);
        } catch {
          // A newcomer's `config set core.llm.sources_order deepseek`: say what the value looks like. Items are split at
          // commas only: a name may have spaces ("Kitchen Light" split at its space protected no device).
          const items = raw.split(',').map((x) => x.trim()).filter(Boolean);
          const like = Array.isArray(def.default) && !/^\s*[[{"]/.test(raw) ? ` (a list: '${JSON.stringify(items)}', quoted for the shell)` : def.default !== undefined ? ` like '${JSON.stringify(def.default)}'` : '';
          throw new ConfigError(def.key, `expected JSON${like}, got "${raw}"`);
        }
      default:
        return this.check(def, raw, 'value');
    }
  }

  private check(def: SettingDef, v: unknown, what: string): unknown {
    const fail = (expected: string): never => {
      const shown = typeof v === 'number' && !Number.isFinite(v) ? String(v) : JSON.stringify(v);
      throw new ConfigError(def.key, `${what} must be ${expected}, got ${shown} (${typeof v})`);
    };
    const extra = (x: unknown): unknown => {
      const why = def.check?.(x);
      if (why) throw new ConfigError(def.key, `${what} ${why}`);
      return x;
    };
    const type: SettingType = def.type;
    switch (type) {
      case 'string':
      case 'secret':
        if (typeof v !== 'string') fail('a string');
        if (def.enum && !def.enum.includes(v as string)) fail(`one of ${def.enum.join(', ')}`);
        if (def.url) {
          const why = urlProblem(v as string, def.url);
          if (why) throw new ConfigError(def.key, `${what} must be a URL ${def.url.schemes.map((x) => x + '://').join(', ')}${def.url.allowEmpty ? " or '' " : ''}: ${why}`);
        }
        return extra(v);
      case 'number':
      case 'integer':
        if (typeof v !== 'number' || !Number.isFinite(v)) fail(type === 'integer' ? 'an integer' : 'a number');
        if (type === 'integer' && !Number.isInteger(v)) fail('an integer');
        if (def.min !== undefined && (v as number) < def.min) fail(`>= ${def.min}`);
        if (def.max !== undefined && (v as number) > def.max) fail(`<= ${def.max}`);
        return extra(v);
      case 'boolean':
        if (typeof v !== 'boolean') fail('a boolean');
        return extra(v);
      case 'json':
        return extra(v);
    }
  }
}

/** What is wrong with `raw` as a URL of one of `spec.schemes`, or undefined when it is fine. */
export function urlProblem(raw: string, spec: { schemes: readonly string[]; allowEmpty?: boolean }): string | undefined {
  if (raw === '') return spec.allowEmpty ? undefined : 'it is empty';
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return `"${raw}" is not a URL (write it with its scheme, e.g. ${spec.schemes[0]}://host:port)`;
  }
  const scheme = u.protocol.replace(/:$/, '');
  if (!spec.schemes.includes(scheme)) return `"${raw}" has scheme ${scheme}: (write it as ${spec.schemes[0]}://host${/^[a-z]+$/.test(scheme) ? '' : ':port'})`;
  if (!u.hostname) return `"${raw}" names no host`;
  return undefined;
}

function escapeRe(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}
/** LIKE pattern prefix; `_` and `%` still match loosely, so callers re-check with startsWith. */
function escapeLike(s: string): string {
  return s;
}

/**
 * Registered keys close to a key nobody registered (a typo such as
 * `plugin.home.aera`, or the right name under another prefix such as
 * `core.home.area`), at most three, closest first: those within an edit
 * distance of 2 (3 for keys over 20 characters), else those whose last part
 * is the same word. Empty when none is close.
 */
export function nearKeys(key: string, keys: readonly string[]): string[] {
  // Letter case is not a difference here: a tester's plugin.HOME.AREA got no suggestion (8 edits from plugin.home.area).
  const lower = key.toLowerCase();
  const limit = key.length > 20 ? 3 : 2;
  const scored = keys.map((k) => ({ k, d: editDistance(lower, k.toLowerCase(), limit) })).filter((x) => x.d <= limit);
  if (scored.length > 0) return scored.sort((a, b) => a.d - b.d || a.k.localeCompare(b.k)).slice(0, 3).map((x) => x.k);
  const last = lower.split('.').pop() ?? '';
  return keys.filter((k) => k.toLowerCase().split('.').pop() === last).sort().slice(0, 3);
}

/** Levenshtein distance of `a` and `b`, or `limit + 1` as soon as it must exceed `limit`. */
function editDistance(a: string, b: string, limit: number): number {
  if (Math.abs(a.length - b.length) > limit) return limit + 1;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      best = Math.min(best, cur[j]!);
    }
    if (best > limit) return limit + 1;
    prev = cur;
  }
  return prev[b.length]!;
}
