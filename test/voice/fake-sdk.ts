/**
 * A small hand-written PluginSDK for the voice tests: an in-memory bus and
 * settings, recorded registrations, and an injectInput that hands the text
 * to a test-provided "agent" which answers through the registered channel.
 */
import { silentLogger } from '../support/quiet.js';
import type { EventMap, EventType } from '../../src/kernel/events.js';
import type { Logger } from '../../src/kernel/log-types.js';
import type { OutputHandler, OutputMessage } from '../../src/kernel/output-types.js';
import type { PluginSDK } from '../../src/kernel/sdk.js';
import type { SettingDef, SettingsAPI } from '../../src/kernel/settings-types.js';
import type { ToolDef } from '../../src/kernel/stage-types.js';
import type { InjectOptions, InputMessage, Level, TurnResult } from '../../src/kernel/turn-types.js';

/** What the fake agent gets per input. */
export interface FakeInput {
  id: string;
  channel: string;
  text: string;
  meta?: Record<string, unknown>;
  level: Level;
}

/** The agent: answers an input, e.g. by calling `sdk.deliver(...)`. */
export type FakeAgent = (input: FakeInput, sdk: FakeSdk) => Promise<string> | string;


/** The fake SDK plus what the tests inspect. */
export class FakeSdk implements PluginSDK {
  readonly name = 'voice';
  readonly log = silentLogger;
  readonly dataDir = '/nonexistent';
  readonly tools = new Map<string, ToolDef>();
  readonly channels = new Map<string, { caps: number; handler: OutputHandler }>();
  readonly inputs: FakeInput[] = [];
  readonly published: Array<{ type: string; payload: unknown }> = [];
  private readonly handlers = new Map<string, Set<(p: unknown) => void | Promise<void>>>();
  private readonly values = new Map<string, unknown>();
  private readonly defs = new Map<string, SettingDef>();
  private seq = 0;
  agent: FakeAgent = () => '';

  constructor(settings: Record<string, unknown> = {}) {
    for (const [k, v] of Object.entries(settings)) this.values.set(k, v);
  }

  /** assistant_state values published, in order. */
  get states(): string[] {
    return this.published.filter((p) => p.type === 'assistant_state').map((p) => (p.payload as { state: string }).state);
  }

  registerTool(def: ToolDef): void {
    if (this.tools.has(def.name)) throw new Error(`duplicate tool ${def.name}`);
    this.tools.set(def.name, def);
  }
  registerStage(): void {
    throw new Error('the voice plugin registers no stages');
  }
  subscribe<K extends EventType>(type: K, handler: (payload: EventMap[K]) => void | Promise<void>): () => void {
    let set = this.handlers.get(type);
    if (!set) this.handlers.set(type, (set = new Set()));
    const h = handler as (p: unknown) => void | Promise<void>;
    set.add(h);
    return () => set.delete(h);
  }
  publish<K extends EventType>(type: K, payload: EventMap[K]): void {
    this.published.push({ type, payload });
    for (const h of this.handlers.get(type) ?? []) void h(payload);
  }
  registerOutputChannel(name: string, caps: number, _d: string, handler: OutputHandler): void {
    this.channels.set(name, { caps, handler });
  }
  /** Deliver to a channel as the kernel would. */
  async deliver(channel: string, msg: Omit<OutputMessage, 'channel' | 'type' | 'meta'> & { meta?: Record<string, unknown> }): Promise<void> {
    const ch = this.channels.get(channel);
    if (!ch) throw new Error(`no channel ${channel}`);
    await ch.handler({ channel, type: 'text', meta: {}, ...msg });
  }
  injectInput(channel: string, text: string, opts?: InjectOptions): Promise<TurnResult> {
    return this.run(channel, text, 0, opts);
  }
  injectInterrupt(level: Level, channel: string, text: string, opts?: InjectOptions): Promise<TurnResult> {
    return this.run(channel, text, level, opts);
  }
  private readonly waiters: Array<{ channel?: string; accept?: (t: string) => boolean; resolve: (m: InputMessage | null) => void }> = [];
  /** Like the kernel: the next matching input goes to the waiter instead of becoming a turn. */
  awaitInput(opts: { channel?: string; timeout_ms: number; accept?: (text: string) => boolean; signal?: AbortSignal }): Promise<InputMessage | null> {
    return new Promise((resolveOuter) => {
      const resolve = (m: InputMessage | null): void => {
        clearTimeout(timer);
        resolveOuter(m);
      };
      const w = { ...(opts.channel ? { channel: opts.channel } : {}), ...(opts.accept ? { accept: opts.accept } : {}), resolve };
      this.waiters.push(w);
      const drop = (): void => {
        const i = this.waiters.indexOf(w);
        if (i >= 0) this.waiters.splice(i, 1);
        resolve(null);
      };
      const timer = setTimeout(drop, opts.timeout_ms);
      opts.signal?.addEventListener('abort', drop, { once: true });
    });
  }
  private async run(channel: string, text: string, level: Level, opts?: InjectOptions): Promise<TurnResult> {
    const input: FakeInput = { id: `in-${++this.seq}`, channel, text, level, ...(opts?.meta ? { meta: opts.meta } : {}) };
    this.inputs.push(input);
    const w = this.waiters.find((x) => (!x.channel || x.channel === channel) && (!x.accept || x.accept(text)));
    if (w) {
      this.waiters.splice(this.waiters.indexOf(w), 1);
      w.resolve({ ...input, source: 'voice', kind: 'queued', received_at: 0 });
      return { input_id: input.id, reply: '', status: 'short_circuit', tools: [] };
    }
    const reply = await this.agent(input, this);
    return { input_id: input.id, reply, status: 'done', tools: [] };
  }
  stop(source: string): void {
    this.publish('stop', { source, cancelled_inputs: 0 });
  }
  async sendOutput(channel: string, content: string, meta?: Record<string, unknown>): Promise<void> {
    await this.deliver(channel, { kind: 'full', content, ...(meta ? { meta } : {}) });
  }
  settings(): SettingsAPI {
    return {
      get: <T>(key: string): T => (this.values.has(key) ? this.values.get(key) : this.defs.get(key)?.default) as T,
      set: (key, value) => void this.values.set(key, value),
      list: () => [],
      delete: (key) => void this.values.delete(key),
      register: (def) => void this.defs.set(def.key, def),
      onChange: () => () => undefined,
    };
  }
  memory(): never {
    throw new Error('not used');
  }
  knowledge(): never {
    throw new Error('not used');
  }
  /** Call a registered tool as the kernel would, for an input on `channel`. */
  async callTool(name: string, input: FakeInput): Promise<unknown> {
    const t = this.tools.get(name);
    if (!t) throw new Error(`no tool ${name}`);
    return t.handler({}, { input: { ...input, source: 'voice', kind: 'queued', received_at: 0 }, signal: new AbortController().signal, call_id: 'c1' });
  }
}
