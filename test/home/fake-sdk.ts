/**
 * A hand-written fake PluginSDK for the home and timers tests: in-memory
 * settings, a tiny bus, recorded outputs/interrupts/stops, and helpers that
 * run the registered on_input handlers (like the kernel's on_input stage:
 * concurrently, on one shared context) and call a tool after the
 * before_toolcall handlers.
 */
import { silentLogger } from '../support/quiet.js';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { EventMap, EventType } from '../../src/kernel/events.js';
import type { Logger } from '../../src/kernel/log-types.js';
import type { PluginSDK } from '../../src/kernel/sdk.js';
import type { SettingDef, SettingsAPI } from '../../src/kernel/settings-types.js';
import type { StageContext, StageHandler, StageName, ToolDef } from '../../src/kernel/stage-types.js';
import type { InjectOptions, InputMessage, Level, TurnResult } from '../../src/kernel/turn-types.js';


/** A logger that records warn/error/info lines (tests assert on them). */
export function recordingLogger(lines: Array<{ level: string; obj: unknown; msg?: string }>): Logger {
  const mk = (level: string) => (obj: unknown, msg?: string) => void lines.push({ level, obj, msg });
  const l: Logger = { debug: mk('debug'), info: mk('info'), warn: mk('warn'), error: mk('error'), child: () => l };
  return l;
}

class FakeSettings implements SettingsAPI {
  readonly defs = new Map<string, SettingDef>();
  readonly values = new Map<string, unknown>();
  private readonly watchers: Array<{ prefix: string; cb: (k: string, v: unknown) => void }> = [];
  get<T = unknown>(key: string): T {
    if (this.values.has(key)) return this.values.get(key) as T;
    const d = this.defs.get(key);
    if (!d) throw new Error(`unknown setting ${key}`);
    return d.default as T;
  }
  set(key: string, value: unknown): void {
    if (!this.defs.has(key)) throw new Error(`unknown setting ${key}`);
    this.values.set(key, value);
    for (const w of this.watchers) if (key.startsWith(w.prefix)) w.cb(key, value);
  }
  list(): ReturnType<SettingsAPI['list']> {
    return [...this.defs.values()].map((d) => ({ key: d.key, value: this.get(d.key), type: d.type, description: d.description, source: this.values.has(d.key) ? 'stored' : 'default' }));
  }
  delete(key: string): void {
    this.values.delete(key);
  }
  register(def: SettingDef): void {
    this.defs.set(def.key, def);
  }
  /** Store a value before the plugin registers the key (test set-up). */
  preset(key: string, value: unknown): void {
    this.values.set(key, value);
  }
  onChange(prefix: string, cb: (k: string, v: unknown) => void): () => void {
    const w = { prefix, cb };
    this.watchers.push(w);
    return () => void this.watchers.splice(this.watchers.indexOf(w), 1);
  }
}

/** What a fake input turn produced. */
export interface FakeTurn {
  response?: string;
}

/** The fake SDK plus recordings. */
export class FakeSdk implements PluginSDK {
  readonly name: string;
  readonly log: Logger;
  readonly dataDir: string;
  readonly tools = new Map<string, ToolDef>();
  readonly stages = new Map<StageName, StageHandler[]>();
  readonly outputs: Array<{ channel: string; content: string; meta?: Record<string, unknown> }> = [];
  readonly interrupts: Array<{ level: Level; channel: string; text: string; opts?: InjectOptions; response?: string }> = [];
  readonly stops: string[] = [];
  readonly published: Array<{ type: string; payload: unknown }> = [];
  readonly settingsApi = new FakeSettings();
  private readonly handlers = new Map<string, Set<(p: never) => void | Promise<void>>>();
  private seq = 0;
  private readonly ownDir: boolean;

  constructor(opts: { name?: string; dataDir?: string; log?: Logger } = {}) {
    this.name = opts.name ?? 'home';
    this.log = opts.log ?? silentLogger;
    this.ownDir = !opts.dataDir;
    this.dataDir = opts.dataDir ?? mkdtempSync(path.join(os.tmpdir(), 'homeagent-home-test-'));
  }

  registerTool(def: ToolDef): void {
    if (this.tools.has(def.name)) throw new Error(`duplicate tool ${def.name}`);
    this.tools.set(def.name, def);
  }
  registerStage(stage: StageName, handler: StageHandler, _opts?: { timeout_ms?: number }): void {
    const l = this.stages.get(stage) ?? [];
    l.push(handler);
    this.stages.set(stage, l);
  }
  subscribe<K extends EventType>(type: K, handler: (payload: EventMap[K]) => void | Promise<void>): () => void {
    const set = this.handlers.get(type) ?? new Set();
    set.add(handler as (p: never) => void);
    this.handlers.set(type, set);
    return () => set.delete(handler as (p: never) => void);
  }
  publish<K extends EventType>(type: K, payload: EventMap[K]): void {
    this.published.push({ type, payload });
    for (const h of this.handlers.get(type) ?? []) void (h as (p: EventMap[K]) => void)(payload);
  }
  registerOutputChannel(): void {}
  async injectInput(channel: string, text: string, opts?: InjectOptions): Promise<TurnResult> {
    const r = await this.runInput(text, { channel, meta: opts?.meta });
    return { input_id: String(this.seq), reply: r.response ?? '', status: r.response !== undefined ? 'short_circuit' : 'done', tools: [] };
  }
  async injectInterrupt(level: Level, channel: string, text: string, opts?: InjectOptions): Promise<TurnResult> {
    const rec: (typeof this.interrupts)[number] = { level, channel, text, opts };
    this.interrupts.push(rec);
    const r = await this.runInput(text, { channel, meta: opts?.meta, kind: 'interrupt', level });
    rec.response = r.response;
    return { input_id: String(this.seq), reply: r.response ?? '', status: 'short_circuit', tools: [] };
  }
  stop(source: string): void {
    this.stops.push(source);
  }
  private readonly waiters: Array<{ channel?: string; accept?: (t: string) => boolean; resolve: (i: InputMessage | null) => void }> = [];
  /** Like the kernel: the next matching input goes to the waiter instead of the stages. */
  awaitInput(opts: { channel?: string; timeout_ms: number; accept?: (text: string) => boolean; signal?: AbortSignal }): Promise<InputMessage | null> {
    return new Promise((resolve) => {
      const w = { channel: opts.channel, accept: opts.accept, resolve };
      this.waiters.push(w);
      const drop = () => {
        const i = this.waiters.indexOf(w);
        if (i >= 0) this.waiters.splice(i, 1);
        resolve(null);
      };
      opts.signal?.addEventListener('abort', drop, { once: true });
      setTimeout(drop, opts.timeout_ms).unref();
    });
  }
  async sendOutput(channel: string, content: string, meta?: Record<string, unknown>): Promise<void> {
    this.outputs.push({ channel, content, meta });
  }
  settings(): SettingsAPI {
    return this.settingsApi;
  }
  memory(): never {
    throw new Error('no memory in the fake SDK');
  }
  knowledge(): never {
    throw new Error('no knowledge in the fake SDK');
  }

  /** A kernel-like input message. */
  input(text: string, o: { channel?: string; meta?: Record<string, unknown>; kind?: 'queued' | 'interrupt'; level?: Level; user?: string } = {}): InputMessage {
    return {
      id: `in_${++this.seq}`, source: 'test', channel: o.channel ?? 'console', text, kind: o.kind ?? 'queued', level: o.level ?? 0,
      received_at: Date.now(), ...(o.meta ? { meta: o.meta } : {}), ...(o.user ? { user: o.user } : {}),
    };
  }

  private ctx(stage: StageName, input: InputMessage): StageContext {
    return {
      stage, input, raw_message: input.text, context_messages: [], llm_text: '', tool_calls: [], deny: false, final_text: '', skip_output: false, extra: {},
    } as unknown as StageContext;
  }

  /** Run every on_input handler concurrently on one context, as the kernel does. */
  async runInput(text: string, o: Parameters<FakeSdk['input']>[1] = {}): Promise<FakeTurn> {
    const input = this.input(text, o);
    const w = this.waiters.find((x) => (!x.channel || x.channel === input.channel) && (!x.accept || x.accept(text)));
    if (w) {
      this.waiters.splice(this.waiters.indexOf(w), 1);
      w.resolve(input);
      return {};
    }
    this.publish('raw_input', input);
    const ctx = this.ctx('on_input', input);
    await Promise.all((this.stages.get('on_input') ?? []).map(async (h) => h(ctx)));
    return { response: ctx.response };
  }

  /** Run before_toolcall handlers, then the tool unless denied. */
  async callTool(name: string, args: Record<string, unknown>, o: { text?: string; channel?: string } = {}): Promise<{ denied: boolean; deny_reason?: string; result?: unknown; error?: Error }> {
    const tool = this.tools.get(name);
    if (!tool) throw new Error(`no tool ${name}`);
    const input = this.input(o.text ?? 'llm turn', { channel: o.channel });
    const call = { id: `call_${++this.seq}`, type: 'function' as const, function: { name, arguments: args } };
    const ctx = this.ctx('before_toolcall', input);
    ctx.tool_call = call;
    await Promise.all((this.stages.get('before_toolcall') ?? []).map(async (h) => h(ctx)));
    if (ctx.deny) return { denied: true, deny_reason: ctx.deny_reason };
    try {
      const result = await tool.handler(call.function.arguments, { input, signal: new AbortController().signal, call_id: call.id });
      return { denied: false, result };
    } catch (err) {
      return { denied: false, error: err as Error };
    }
  }

  /** Remove the temp data dir (when the fake made it). */
  cleanup(): void {
    if (this.ownDir) rmSync(this.dataDir, { recursive: true, force: true });
  }
}
