/**
 * The one hand-written PluginSDK fake for plugin tests (HAL, home, timers,
 * voice), pi-mono style: a fake passed in as an argument, no module mocking.
 *
 * It owns:
 * - a MemoryLogger (every line kept, `messages(level)` for assertions);
 * - in-memory settings (register/get/set/list/delete/onChange; values given
 *   to the constructor or `preset()` win over registered defaults);
 * - a bus that records every publish and dispatches to subscribers, with
 *   `waitForPublished()` to wait for an event instead of polling;
 * - registered tools, stages and output channels (`deliver()` hands a message
 *   to a channel as the kernel would);
 * - inputs like the kernel: `raw_input` is published; an input an
 *   `awaitInput()` waiter accepts goes to it; else it runs as a turn between
 *   `turn.started` and `turn.finished`
 *   (the facts the assistant state follows): the registered on_input
 *   handlers run concurrently on one shared context (a `response`
 *   short-circuits, as the kernel's on_input does), else the test's `agent`
 *   answers;
 * - records of inputs, interrupts, outputs and stop() calls;
 * - `callTool()`: before_toolcall handlers, then the tool unless denied.
 *
 * Time (the awaitInput timeout) comes from an injected Clock, so a test can
 * use the FakeClock.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { systemClock, type Clock } from '../../src/kernel/clock.js';
import type { CommandHandler } from '../../src/kernel/commands.js';
import type { EventMap, EventType } from '../../src/kernel/events.js';
import type { Logger } from '../../src/kernel/log-types.js';
import type { OutputChannelInfo, OutputChannelOptions, OutputHandler, OutputMessage } from '../../src/kernel/output-types.js';
import type { PluginSDK } from '../../src/kernel/sdk.js';
import type { SettingDef, SettingsAPI } from '../../src/kernel/settings-types.js';
import type { StageContext, StageHandler, StageName, ToolDef } from '../../src/kernel/stage-types.js';
import type { InjectOptions, InputMessage, Level, TurnResult } from '../../src/kernel/turn-types.js';
import { statusOf, type FinalOutcome } from '../../src/kernel/turn-events.js';

/** One logged line. */
export interface LogLine {
  level: string;
  obj: unknown;
  msg?: string;
}

/** A logger that keeps every line (level, object, message) in memory; children share the lines. */
export class MemoryLogger implements Logger {
  readonly lines: LogLine[];
  constructor(lines?: LogLine[]) {
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

/**
 * In-memory SettingsAPI. `get` of a key with neither a value nor a
 * registered definition throws (a plugin reading a key it never registered
 * is a bug); `set` accepts any key.
 */
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
    for (const l of [...this.listeners]) if (key.startsWith(l.prefix)) l.cb(key, value);
  }
  /** Store a value before the plugin registers the key (test set-up), without notifying. */
  preset(key: string, value: unknown): void {
    this.values.set(key, value);
  }
  list(prefix = ''): ReturnType<SettingsAPI['list']> {
    return [...this.defs.values()]
      .filter((d) => d.key.startsWith(prefix))
      .map((d) => ({ key: d.key, value: this.get(d.key), type: d.type, description: d.description, source: this.values.has(d.key) ? ('stored' as const) : ('default' as const) }));
  }
  /** Remove a stored value; listeners hear the default, as ConfigRegistry's do. */
  delete(key: string): boolean {
    return this.values.delete(key);
    for (const l of [...this.listeners]) if (key.startsWith(l.prefix)) l.cb(key, this.defs.get(key)?.default);
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

/** One input the fake received (injectInput, injectInterrupt or runInput). */
export interface FakeInput {
  id: string;
  channel: string;
  text: string;
  /** 0 for injectInput, the interrupt level for injectInterrupt. */
  level: Level;
  meta?: Record<string, unknown>;
  opts?: InjectOptions;
  /** The on_input answer, once the turn ran and one answered (short-circuit). */
  response?: string;
}

/** The test's agent: answers an input that no waiter or on_input handler took (e.g. by `sdk.deliver(...)`). */
export type FakeAgent = (input: FakeInput, sdk: FakeSdk) => Promise<string> | string;

/** What the on_input stage produced for one input. */
export interface FakeTurn {
  /** The on_input handlers' short-circuit answer, when one answered. */
  response?: string;
  /** The meta delivered with it (StageContext.response_meta), when set. */
  response_meta?: Record<string, unknown>;
}

/** Options of the fake. */
export interface FakeSdkOptions {
  /** The plugin's name (default 'test'). */
  name?: string;
  /** Setting values, stored before the plugin registers its keys. */
  settings?: Record<string, unknown>;
  /** Data directory; default: a fresh temporary directory made on first use and removed by cleanup(). */
  dataDir?: string;
  /** The array the fake's MemoryLogger appends its lines to (default: its own). */
  logLines?: LogLine[];
  /** Time source for the awaitInput timeout (default the system clock). */
  clock?: Clock;
}

type Handler = (payload: unknown) => void | Promise<void>;
type Waiter = { channel?: string; accept?: (t: string) => boolean; resolve: (m: InputMessage | null) => void };

/** The fake SDK plus what tests inspect. */
export class FakeSdk implements PluginSDK {
  readonly name: string;
  /** Every line the plugin logged (`sdk.log.messages('warn')`). */
  readonly log: MemoryLogger;
  readonly settingsApi: FakeSettings;
  readonly tools = new Map<string, ToolDef>();
  readonly stages = new Map<StageName, StageHandler[]>();
  readonly channels = new Map<string, { caps: number; handler: OutputHandler; perRequest: boolean }>();
  /** Maintenance commands registered (registerCommand). */
  readonly commands = new Map<string, CommandHandler>();
  /** Every publish, in order. */
  readonly published: Array<{ type: string; payload: unknown }> = [];
  /** Every injected input (injectInput and injectInterrupt), in order. */
  readonly inputs: FakeInput[] = [];
  /** injectInterrupt calls, with the on_input answer once the turn ran. */
  readonly interrupts: Array<{ level: Level; channel: string; text: string; opts?: InjectOptions; response?: string }> = [];
  /** sendOutput calls. */
  readonly outputs: Array<{ channel: string; content: string; meta?: Record<string, unknown> }> = [];
  /** stop() sources. */
  readonly stops: string[] = [];
  /** Answers inputs that no waiter or on_input handler took; default: an empty reply. */
  agent: FakeAgent = () => '';
  private readonly subs = new Map<string, Set<Handler>>();
  private readonly publishWaiters: Array<{ type: string; pred: (p: unknown) => boolean; n: number; resolve: () => void }> = [];
  private readonly waiters: Waiter[] = [];
  private readonly clock: Clock;
  private dir: string | undefined;
  private readonly ownDir: boolean;
  private seq = 0;
  /** Signals of the stage contexts handed out; stop() aborts them, as the kernel's stop aborts the running turn. */
  private readonly running = new Set<AbortController>();

  constructor(opts: FakeSdkOptions = {}) {
    this.name = opts.name ?? 'test';
    this.log = new MemoryLogger(opts.logLines);
    this.settingsApi = new FakeSettings(opts.settings);
    this.clock = opts.clock ?? systemClock;
    this.dir = opts.dataDir;
    this.ownDir = !opts.dataDir;
  }

  /** The data directory (made on first use when none was given). */
  get dataDir(): string {
    this.dir ??= mkdtempSync(path.join(os.tmpdir(), `homeagent-${this.name}-test-`));
    return this.dir;
  }

  /** Remove the data directory when the fake made it. */
  cleanup(): void {
    if (this.ownDir && this.dir) rmSync(this.dir, { recursive: true, force: true });
  }

  // ---- registration -----------------------------------------------------------

  registerTool(def: ToolDef): void {
    if (this.tools.has(def.name)) throw new Error(`duplicate tool ${def.name}`);
    this.tools.set(def.name, def);
  }
  unregisterTool(name: string): void {
    this.tools.delete(name);
  }
  /** No turns run in the fake: always idle. */
  whenIdle(): Promise<void> {
    return Promise.resolve();
  }
  registerStage(stage: StageName, handler: StageHandler, _opts?: { timeout_ms?: number }): void {
    const l = this.stages.get(stage) ?? [];
    l.push(handler);
    this.stages.set(stage, l);
  }
  registerOutputChannel(name: string, caps: number, _description: string, handler: OutputHandler, opts?: OutputChannelOptions): void {
    this.channels.set(name, { caps, handler, perRequest: opts?.perRequest === true });
  }
  outputChannel(name: string): OutputChannelInfo | undefined {
    const c = this.channels.get(name);
    return c ? { name, caps: c.caps, perRequest: c.perRequest } : undefined;
  }
  registerCommand(name: string, handler: CommandHandler): void {
    if (this.commands.has(name)) throw new Error(`duplicate command ${name}`);
    this.commands.set(name, handler);
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
  social(): never {
    throw new Error('no social API in the fake SDK');
  }
  socialWrite(): never {
    throw new Error('no social API in the fake SDK');
  }

  // ---- bus --------------------------------------------------------------------

  subscribe<K extends EventType>(type: K, handler: (payload: EventMap[K]) => void | Promise<void>): () => void {
    let set = this.subs.get(type);
    if (!set) this.subs.set(type, (set = new Set()));
    const h = handler as Handler;
    set.add(h);
    return () => void set.delete(h);
  }
  publish<K extends EventType>(type: K, payload: EventMap[K]): void {
    this.published.push({ type, payload });
    for (const h of this.subs.get(type) ?? []) void h(payload);
    for (const w of [...this.publishWaiters]) {
      if (this.count(w.type, w.pred) >= w.n) {
        this.publishWaiters.splice(this.publishWaiters.indexOf(w), 1);
        w.resolve();
      }
    }
  }
  /** Payloads published under `type`. */
  events(type: string): unknown[] {
    return this.published.filter((p) => p.type === type).map((p) => p.payload);
  }
  /** assistant_state values published, in order. */
  get states(): string[] {
    return this.events('assistant_state').map((p) => (p as { state: string }).state);
  }
  /** Number of live subscriptions (tests check plugins unsubscribe on stop). */
  subscriptionCount(): number {
    let n = 0;
    for (const s of this.subs.values()) n += s.size;
    return n;
  }
  /**
   * Resolves once `n` events of `type` matching `pred` have been published
   * (counting those already published). No deadline of its own: the test
   * runner's timeout is the failure deadline.
   */
  waitForPublished(type: string, pred: (payload: unknown) => boolean = () => true, n = 1): Promise<void> {
    if (this.count(type, pred) >= n) return Promise.resolve();
    return new Promise((resolve) => this.publishWaiters.push({ type, pred, n, resolve }));
  }
  private count(type: string, pred: (p: unknown) => boolean): number {
    return this.published.filter((p) => p.type === type && pred(p.payload)).length;
  }

  // ---- inputs -----------------------------------------------------------------

  async injectInput(channel: string, text: string, opts?: InjectOptions): Promise<TurnResult> {
    return (await this.run(channel, text, 0, opts)).result;
  }
  async injectInterrupt(level: Level, channel: string, text: string, opts?: InjectOptions): Promise<TurnResult> {
    const rec: FakeSdk['interrupts'][number] = { level, channel, text, ...(opts ? { opts } : {}) };
    this.interrupts.push(rec);
    const { result, response } = await this.run(channel, text, level, opts);
    rec.response = response;
    return result;
  }
  /** Like the kernel: the next matching input goes to the waiter instead of becoming a turn. */
  awaitInput(opts: { channel?: string; timeout_ms: number; accept?: (text: string) => boolean; signal?: AbortSignal }): Promise<InputMessage | null> {
    return new Promise((resolveOuter) => {
      if (opts.signal?.aborted) return resolveOuter(null);
      const resolve = (m: InputMessage | null): void => {
        this.clock.clearTimeout(timer);
        resolveOuter(m);
      };
      const w: Waiter = { ...(opts.channel ? { channel: opts.channel } : {}), ...(opts.accept ? { accept: opts.accept } : {}), resolve };
      this.waiters.push(w);
      const drop = (): void => {
        const i = this.waiters.indexOf(w);
        if (i >= 0) this.waiters.splice(i, 1);
        resolve(null);
      };
      const timer = this.clock.setTimeout(drop, opts.timeout_ms);
      opts.signal?.addEventListener('abort', drop, { once: true });
    });
  }
  /** Crash reports (PluginSDK.crashed), in order. */
  readonly crashes: string[] = [];
  crashed(reason: string): void {
    this.crashes.push(reason);
  }
  stop(source: string): void {
    this.stops.push(source);
    for (const c of [...this.running]) c.abort(new Error('stopped'));
    this.publish('stop', { source, cancelled_inputs: 0 });
  }

  /** A kernel-like input message (id `in_N`). */
  input(text: string, o: { channel?: string; meta?: Record<string, unknown>; kind?: 'queued' | 'interrupt'; level?: Level; user?: string } = {}): InputMessage {
    return {
      id: `in_${++this.seq}`, source: 'test', channel: o.channel ?? 'console', text, kind: o.kind ?? 'queued', level: o.level ?? 0,
      received_at: this.clock.now(), ...(o.meta ? { meta: o.meta } : {}), ...(o.user ? { user: o.user } : {}),
    };
  }

  /**
   * Run an input as the kernel's on_input stage would: to an awaitInput
   * waiter if one accepts it (then `{}`), else every on_input handler
   * concurrently on one shared context; returns their short-circuit answer.
   */
  async runInput(text: string, o: Parameters<FakeSdk['input']>[1] = {}): Promise<FakeTurn> {
    const input = this.input(text, o);
    this.publish('raw_input', input);
    if (this.handOver(input)) return {};
    const ctx = this.ctx('on_input', input);
    await Promise.all((this.stages.get('on_input') ?? []).map(async (h) => h(ctx))).finally(() => this.release(ctx));
    return ctx.response !== undefined ? { response: ctx.response, ...(ctx.response_meta ? { response_meta: ctx.response_meta } : {}) } : {};
  }

  // ---- outputs ----------------------------------------------------------------

  /** Deliver to a registered channel as the kernel would. */
  async deliver(channel: string, msg: Omit<OutputMessage, 'channel' | 'type' | 'meta'> & { meta?: Record<string, unknown> }): Promise<void> {
    const ch = this.channels.get(channel);
    if (!ch) throw new Error(`no channel ${channel}`);
    await ch.handler({ channel, type: 'text', meta: {}, ...msg });
  }
  /** Recorded; delivered to the channel too when one of that name is registered. */
  async sendOutput(channel: string, content: string, meta?: Record<string, unknown>): Promise<void> {
    this.outputs.push({ channel, content, ...(meta ? { meta } : {}) });
    if (this.channels.has(channel)) await this.deliver(channel, { kind: 'full', content, ...(meta ? { meta } : {}) });
  }

  // ---- tools ------------------------------------------------------------------

  /**
   * Call a registered tool as the kernel would: before_toolcall handlers, then
   * the tool unless one denied. `input` is the turn's input (default: an
   * input with `text` on `channel`). Tool errors are returned, not thrown.
   */
  async callTool(
    name: string,
    args: Record<string, unknown> = {},
    o: { text?: string; channel?: string; input?: FakeInput | InputMessage } = {},
  ): Promise<{ denied: boolean; deny_reason?: string; result?: unknown; error?: Error }> {
    const tool = this.tools.get(name);
    if (!tool) throw new Error(`no tool ${name}`);
    const input: InputMessage = o.input
      ? { source: 'test', kind: 'queued', received_at: this.clock.now(), ...o.input }
      : this.input(o.text ?? 'llm turn', { channel: o.channel });
    const call = { id: `call_${++this.seq}`, type: 'function' as const, function: { name, arguments: args } };
    const ctx = this.ctx('before_toolcall', input);
    ctx.tool_call = call;
    try {
      await Promise.all((this.stages.get('before_toolcall') ?? []).map(async (h) => h(ctx)));
      if (ctx.deny) return { denied: true, deny_reason: ctx.deny_reason };
      const result = await tool.handler(call.function.arguments, { input, signal: ctx.signal, call_id: call.id });
      return { denied: false, result };
    } catch (err) {
      return { denied: false, error: err as Error };
    } finally {
      this.release(ctx);
    }
  }

  // ---- internals --------------------------------------------------------------

  /** One input end to end; `response` is the on_input handlers' answer, when one answered. */
  private async run(channel: string, text: string, level: Level, opts?: InjectOptions): Promise<{ result: TurnResult; response?: string }> {
    const rec: FakeInput = { id: `in_${++this.seq}`, channel, text, level, ...(opts?.meta ? { meta: opts.meta } : {}), ...(opts ? { opts } : {}) };
    this.inputs.push(rec);
    const input: InputMessage = {
      id: rec.id, source: 'test', channel, text, kind: level === 0 ? 'queued' : 'interrupt', level, received_at: this.clock.now(),
      ...(opts?.meta ? { meta: opts.meta } : {}), ...(opts?.user ? { user: opts.user } : {}),
    };
    // Accepted (raw_input), as the kernel does: handed to a waiting turn, or run as a turn: turn.started, on_input (may short-circuit), the agent, turn.finished.
    this.publish('raw_input', input);
    if (this.handOver(input)) return { result: { input_id: rec.id, reply: '', status: 'short_circuit', tools: [] } };
    this.publish('turn.started', { type: 'turn.started', turn: rec.id, input });
    const finish = (outcome: FinalOutcome, response?: string): { result: TurnResult; response?: string } => {
      const status = statusOf(outcome);
      this.publish('turn.finished', { type: 'turn.finished', turn: rec.id, outcome, status, reply: outcome.reply, said: outcome.reply });
      return { result: { input_id: rec.id, reply: outcome.reply, status, tools: [] }, ...(response !== undefined ? { response } : {}) };
    };
    const onInput = this.stages.get('on_input') ?? [];
    if (onInput.length > 0) {
      const ctx = this.ctx('on_input', input);
      await Promise.all(onInput.map(async (h) => h(ctx))).finally(() => this.release(ctx));
      if (ctx.response !== undefined) {
        rec.response = ctx.response;
        return finish({ kind: 'short_circuit', reply: ctx.response, stage: 'on_input' }, ctx.response);
      }
    }
    try {
      return finish({ kind: 'reply', reply: await this.agent(rec, this) });
    } catch (err) {
      finish({ kind: 'error', reply: '', message: err instanceof Error ? err.message : String(err) });
      throw err;
    }
  }

  /** Give the input to the first awaitInput waiter that accepts it. */
  private handOver(input: InputMessage): boolean {
    const w = this.waiters.find((x) => (!x.channel || x.channel === input.channel) && (!x.accept || x.accept(input.text)));
    if (!w) return false;
    this.waiters.splice(this.waiters.indexOf(w), 1);
    w.resolve(input);
    return true;
  }

  /** The stage ran to its end: stop() no longer reaches its context. */
  private release(ctx: StageContext): void {
    for (const c of this.running) if (c.signal === ctx.signal) this.running.delete(c);
  }

  /** A fresh stage context; its signal aborts when stop() is called while the input runs (release() when done). */
  private ctx(stage: StageName, input: InputMessage): StageContext {
    const controller = new AbortController();
    this.running.add(controller);
    return {
      stage, input, raw_message: input.text, context_messages: [], llm_text: '', tool_calls: [], deny: false, final_text: '', partial: false,
      skip_output: false, memory: [], signal: controller.signal, extra: {},
    };
  }
}
