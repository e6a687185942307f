/**
 * A small hand-written PluginSDK for HAL plugin tests: in-memory settings with
 * register/get/set/onChange, a bus that records publishes and dispatches to
 * subscribers, a tool table, and records of stop() and injectInput() calls.
 */
import os from 'node:os';
import type { EventMap, EventType } from '../../src/kernel/events.js';
import type { Logger } from '../../src/kernel/log-types.js';
import type { PluginSDK } from '../../src/kernel/sdk.js';
import type { SettingDef, SettingsAPI } from '../../src/kernel/settings-types.js';
import type { ToolDef } from '../../src/kernel/stage-types.js';
import type { InjectOptions, TurnResult } from '../../src/kernel/turn-types.js';

/** A logger that keeps every line (level, object, message) in memory. */
export class MemoryLogger implements Logger {
  readonly lines: Array<{ level: string; obj: unknown; msg?: string }>;
  constructor(lines?: Array<{ level: string; obj: unknown; msg?: string }>) {
    this.lines = lines ?? [];
  }
  debug(obj: unknown, msg?: string): void {
    this.lines.push({ level: 'debug', obj, msg });
  }
  info(obj: unknown, msg?: string): void {
    this.lines.push({ level: 'info', obj, msg });
  }
  warn(obj: unknown, msg?: string): void {
    this.lines.push({ level: 'warn', obj, msg });
  }
  error(obj: unknown, msg?: string): void {
    this.lines.push({ level: 'error', obj, msg });
  }
  child(): Logger {
    return new MemoryLogger(this.lines);
  }
  /** Messages logged at `level`. */
  messages(level: string): string[] {
    return this.lines.filter((l) => l.level === level).map((l) => l.msg ?? '');
  }
}

/** In-memory SettingsAPI. */
export class FakeSettings implements SettingsAPI {
  readonly defs = new Map<string, SettingDef>();
  readonly values = new Map<string, unknown>();
  private listeners: Array<{ prefix: string; cb: (key: string, value: unknown) => void }> = [];
  constructor(initial: Record<string, unknown> = {}) {
    for (const [k, v] of Object.entries(initial)) this.values.set(k, v);
  }
  get<T = unknown>(key: string): T {
    if (this.values.has(key)) return this.values.get(key) as T;
    const def = this.defs.get(key);
    if (!def) throw new Error(`unknown setting ${key}`);
    return def.default as T;
  }
  set(key: string, value: unknown): void {
    this.values.set(key, value);
    for (const l of this.listeners) if (key.startsWith(l.prefix)) l.cb(key, value);
  }
  list(prefix = ''): ReturnType<SettingsAPI['list']> {
    return [...this.defs.values()]
      .filter((d) => d.key.startsWith(prefix))
      .map((d) => ({ key: d.key, value: this.get(d.key), type: d.type, description: d.description, source: this.values.has(d.key) ? ('stored' as const) : ('default' as const) }));
  }
  delete(key: string): void {
    this.values.delete(key);
  }
  register(def: SettingDef): void {
    this.defs.set(def.key, def);
  }
  onChange(prefix: string, cb: (key: string, value: unknown) => void): () => void {
    const entry = { prefix, cb };
    this.listeners.push(entry);
    return () => {
      this.listeners = this.listeners.filter((l) => l !== entry);
    };
  }
}

type Handler = (payload: unknown) => void | Promise<void>;

/** A fake SDK recording what a plugin did. */
export class FakeSdk implements PluginSDK {
  readonly log = new MemoryLogger();
  readonly tools = new Map<string, ToolDef>();
  readonly published: Array<{ type: string; payload: unknown }> = [];
  readonly stops: string[] = [];
  readonly inputs: Array<{ channel: string; text: string; opts?: InjectOptions }> = [];
  readonly settingsApi: FakeSettings;
  private subs = new Map<string, Set<Handler>>();

  constructor(readonly name: string, settings: Record<string, unknown> = {}, readonly dataDir = os.tmpdir()) {
    this.settingsApi = new FakeSettings(settings);
  }
  registerTool(def: ToolDef): void {
    if (this.tools.has(def.name)) throw new Error(`duplicate tool ${def.name}`);
    this.tools.set(def.name, def);
  }
  registerStage(): void {
    throw new Error('not used by HAL plugins');
  }
  subscribe<K extends EventType>(type: K, handler: (payload: EventMap[K]) => void | Promise<void>): () => void {
    const set = this.subs.get(type) ?? new Set<Handler>();
    const h = handler as Handler;
    set.add(h);
    this.subs.set(type, set);
    return () => set.delete(h);
  }
  publish<K extends EventType>(type: K, payload: EventMap[K]): void {
    this.published.push({ type, payload });
    for (const h of this.subs.get(type) ?? []) void h(payload);
  }
  /** Number of live subscriptions (tests check plugins unsubscribe on stop). */
  subscriptionCount(): number {
    let n = 0;
    for (const s of this.subs.values()) n += s.size;
    return n;
  }
  /** Payloads published under `type`. */
  events(type: string): unknown[] {
    return this.published.filter((p) => p.type === type).map((p) => p.payload);
  }
  registerOutputChannel(): void {
    throw new Error('not used by HAL plugins');
  }
  async injectInput(channel: string, text: string, opts?: InjectOptions): Promise<TurnResult> {
    this.inputs.push({ channel, text, opts });
    return { input_id: `in_${this.inputs.length}`, reply: '', status: 'done', tools: [] };
  }
  async injectInterrupt(_level: 0 | 1 | 2 | 3 | 4, channel: string, text: string, opts?: InjectOptions): Promise<TurnResult> {
    return this.injectInput(channel, text, opts);
  }
  stop(source: string): void {
    this.stops.push(source);
  }
  async sendOutput(): Promise<void> {
    throw new Error('not used by HAL plugins');
  }
  settings(): SettingsAPI {
    return this.settingsApi;
  }
  memory(): never {
    throw new Error('not used by HAL plugins');
  }
  knowledge(): never {
    throw new Error('not used by HAL plugins');
  }
}
