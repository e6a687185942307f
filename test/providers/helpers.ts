/**
 * Test helpers of the provider suites: an in-memory SettingsAPI (the same
 * interface as the lead's ConfigRegistry), a capturing Logger, and paths.
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../../src/kernel/log-types.js';
import type { SettingDef, SettingsAPI, SettingType } from '../../src/kernel/settings-types.js';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const adaptersDir = path.join(repoRoot, 'adapters');

/** In-memory settings: register() sets defaults, set() stores, onChange() fires per prefix. */
export class MemorySettings implements SettingsAPI {
  private readonly defs = new Map<string, SettingDef>();
  private readonly stored = new Map<string, unknown>();
  private readonly listeners: Array<{ prefix: string; cb: (key: string, value: unknown) => void }> = [];

  get<T = unknown>(key: string): T {
    if (this.stored.has(key)) return this.stored.get(key) as T;
    const d = this.defs.get(key);
    if (!d) throw new Error(`unknown setting ${key}`);
    return d.default as T;
  }

  set(key: string, value: unknown): void {
    this.stored.set(key, value);
    for (const l of [...this.listeners]) if (key.startsWith(l.prefix)) l.cb(key, value);
  }

  list(prefix = ''): Array<{ key: string; value: unknown; type: SettingType; description: string; source: 'default' | 'stored' | 'env' }> {
    const keys = new Set([...this.defs.keys(), ...this.stored.keys()]);
    return [...keys]
      .filter((k) => k.startsWith(prefix))
      .sort()
      .map((k) => ({
        key: k,
        value: this.stored.has(k) ? this.stored.get(k) : this.defs.get(k)?.default,
        type: this.defs.get(k)?.type ?? 'json',
        description: this.defs.get(k)?.description ?? '',
        source: this.stored.has(k) ? ('stored' as const) : ('default' as const),
      }));
  }

  delete(key: string): void {
    this.stored.delete(key);
    for (const l of [...this.listeners]) if (key.startsWith(l.prefix)) l.cb(key, this.defs.get(key)?.default);
  }

  register(def: SettingDef): void {
    this.defs.set(def.key, def);
  }

  onChange(prefix: string, cb: (key: string, value: unknown) => void): () => void {
    const entry = { prefix, cb };
    this.listeners.push(entry);
    return () => {
      const i = this.listeners.indexOf(entry);
      if (i >= 0) this.listeners.splice(i, 1);
    };
  }
}

/** One captured log line. */
export interface LogLine {
  level: 'debug' | 'info' | 'warn' | 'error';
  obj: unknown;
  msg?: string;
}

/** A Logger that records lines (inspect `lines`). */
export function captureLogger(lines: LogLine[] = []): Logger & { lines: LogLine[] } {
  const mk = (bindings: Record<string, unknown>): Logger & { lines: LogLine[] } => ({
    lines,
    debug: (obj, msg) => lines.push({ level: 'debug', obj: { ...bindings, ...(obj as object) }, msg }),
    info: (obj, msg) => lines.push({ level: 'info', obj: { ...bindings, ...(obj as object) }, msg }),
    warn: (obj, msg) => lines.push({ level: 'warn', obj: { ...bindings, ...(obj as object) }, msg }),
    error: (obj, msg) => lines.push({ level: 'error', obj: { ...bindings, ...(obj as object) }, msg }),
    child: (b) => mk({ ...bindings, ...b }),
  });
  return mk({});
}

/** Collects every event of a stream. */
export async function collect<T>(it: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const e of it) out.push(e);
  return out;
}
