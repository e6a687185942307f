/**
 * Plugin host (seed 001 "Plugin System"; zigbee2mqtt controller style):
 * built-in plugins come from an explicit list; each is started and stopped
 * inside its own guard (try/catch + timeout) so one broken plugin never takes
 * the service down; everything a plugin registered (tools, stages,
 * subscriptions, output channels) is removed when it stops or fails to start.
 */
import type { Plugin, PluginSDK } from './sdk.js';
import type { StageName, ToolDef } from './stage-types.js';
import type { Level, TurnResult } from './turn-types.js';
import type { KernelServices } from './services.js';
import type { Agent } from './agent.js';
import type { KnowledgeAPI, MemoryAPI, SocialAPI, SocialReadAPI } from './memory-types.js';
import { clampPluginLevel } from './scheduler.js';
import { HomeAgentError, PluginError, errorMessage } from './errors.js';
import { createLogger } from './log.js';
import { STAGES } from './stage-types.js';
import { newStageContext } from './stages.js';

/** State of one plugin, for `homeagent plugins`. */
export interface PluginStatus {
  name: string;
  state: 'stopped' | 'starting' | 'running' | 'failed';
  error?: string;
  tools: string[];
  channels: string[];
  started_at?: number;
  /** Times the supervisor started it again after a crash or a failed start. */
  restarts: number;
  /** The last error it failed with (kept after a successful restart). */
  last_error?: string;
  /** Wall time (ms) of the next restart the supervisor has scheduled. */
  next_restart_at?: number;
  /** Turned off by the user (`plugins disable`): not started, not restarted. */
  disabled?: boolean;
}

/**
 * Error codes of a failed start that a restart cannot cure (the supervisor
 * does not retry them): a call refused for a capability the plugin was not
 * granted (src/plugins/external/restricted-sdk.ts).
 */
export const PERMANENT_START_ERRORS: ReadonlySet<string> = new Set(['PERMISSION_DENIED']);

/** Things the SDK needs besides the services. */
export interface HostDeps {
  services: KernelServices;
  agent: Agent;
  dataDir: string;
  memoryApi: () => MemoryAPI;
  knowledgeApi: () => KnowledgeAPI;
  /** The social API with writes; plugins get its reading half, and built-in ones the whole of it. */
  socialApi: () => SocialAPI;
  /** Start/stop time limit per plugin, ms. */
  timeoutMs?: number;
}

interface Slot {
  plugin: Plugin;
  status: PluginStatus;
  /** The back-off the next restart waits, ms. */
  backoffMs: number;
  restartTimer?: import('./clock.js').TimerHandle;
  /** Bumped on every start/stop: a crash report from an earlier life is ignored. */
  life: number;
}

/** The host. */
export class PluginHost {
  private readonly slots = new Map<string, Slot>();
  private readonly order: string[] = [];
  constructor(private readonly d: HostDeps) {}

  private timeoutMs(): number {
    return this.d.timeoutMs ?? this.d.services.settings.get<number>('core.plugins.start_timeout_ms');
  }

  private backoffBase(): number {
    return this.d.services.settings.get<number>('core.plugins.restart_backoff_ms');
  }

  private backoffMax(): number {
    return this.d.services.settings.get<number>('core.plugins.restart_backoff_max_ms');
  }

  /** Add a plugin (not started). Names must be unique. */
  add(plugin: Plugin): void {
    if (this.slots.has(plugin.name)) throw new HomeAgentError('PLUGIN_DUPLICATE', `plugin "${plugin.name}" is already added`);
    this.slots.set(plugin.name, { plugin, status: { name: plugin.name, state: 'stopped', tools: [], channels: [], restarts: 0 }, backoffMs: 0, life: 0 });
    this.order.push(plugin.name);
  }

  /**
   * Take a plugin out (stopped first): `plugins remove`, or a reload that
   * replaces it with a new `add`. Never throws.
   */
  async remove(name: string): Promise<void> {
    const slot = this.slots.get(name);
    if (!slot) return;
    await this.stop(name);
    this.d.services.clock.clearTimeout(slot.restartTimer);
    this.slots.delete(name);
    this.order.splice(this.order.indexOf(name), 1);
  }

  /**
   * The supervisor (issue 17 "Supervision"): after a crash or a failed start,
   * start the plugin again after a back-off that starts at
   * core.plugins.restart_backoff_ms and doubles up to
   * core.plugins.restart_backoff_max_ms; it falls back to the start value
   * once the plugin has run for the maximum back-off without failing.
   */
  private scheduleRestart(slot: Slot): void {
    if (slot.status.disabled) return;
    const clock = this.d.services.clock;
    clock.clearTimeout(slot.restartTimer);
    const ran = slot.status.started_at !== undefined ? clock.now() - slot.status.started_at : 0;
    if (ran >= this.backoffMax()) slot.backoffMs = 0;
    slot.backoffMs = slot.backoffMs === 0 ? this.backoffBase() : Math.min(slot.backoffMs * 2, this.backoffMax());
    slot.status.next_restart_at = clock.now() + slot.backoffMs;
    const life = slot.life;
    slot.restartTimer = clock.setTimeout(() => {
      slot.restartTimer = undefined;
      if (slot.life !== life || slot.status.disabled || !this.slots.has(slot.plugin.name)) return;
      slot.status.restarts++;
      void this.start(slot.plugin.name);
    }, slot.backoffMs);
  }

  /** A plugin reported it died (PluginSDK.crashed): detach at once, stop it, restart with back-off. */
  private crashed(name: string, life: number, reason: string): void {
    const slot = this.slots.get(name);
    if (!slot || slot.life !== life || slot.status.state !== 'running') return;
    const log = createLogger(`plugin:${name}`);
    slot.status.state = 'failed';
    slot.status.error = reason;
    slot.status.last_error = reason;
    this.detach(name);
    slot.life++;
    log.error({ err: reason }, 'plugin crashed; its registrations are removed, it restarts after a back-off');
    this.d.services.bus.publish('system', { kind: 'plugin_failed', message: new PluginError(name, reason).message });
    void withTimeout(Promise.resolve().then(() => slot.plugin.stop?.()), 5000, `stop of plugin ${name}`).catch(() => undefined);
    this.scheduleRestart(slot);
  }

  /** Turn a plugin off or on (`plugins disable/enable`): a disabled plugin is stopped and never restarted. */
  async setDisabled(name: string, disabled: boolean): Promise<void> {
    const slot = this.slots.get(name);
    if (!slot) throw new HomeAgentError('PLUGIN_UNKNOWN', `no plugin called "${name}"`);
    slot.status.disabled = disabled;
    if (disabled) {
      this.d.services.clock.clearTimeout(slot.restartTimer);
      delete slot.status.next_restart_at;
      await this.stop(name);
    } else if (slot.status.state !== 'running') {
      slot.backoffMs = 0;
      await this.start(name);
    }
  }

  /** Stop and start one plugin now (`plugins restart`); the back-off starts over. */
  async restart(name: string): Promise<boolean> {
    const slot = this.slots.get(name);
    if (!slot) throw new HomeAgentError('PLUGIN_UNKNOWN', `no plugin called "${name}"`);
    await this.stop(name);
    slot.backoffMs = 0;
    return this.start(name);
  }

  /** Start every plugin in order; failures are logged and recorded, never thrown. */
  async startAll(): Promise<PluginStatus[]> {
    for (const name of this.order) await this.start(name);
    return this.status();
  }

  /** Start one plugin inside its guard. Resolves false when it failed (its registrations are removed). */
  async start(name: string): Promise<boolean> {
    const slot = this.slots.get(name);
    if (!slot) return false;
    const { plugin, status } = slot;
    if (status.disabled) return false;
    this.d.services.clock.clearTimeout(slot.restartTimer);
    delete status.next_restart_at;
    slot.life++;
    status.state = 'starting';
    const log = createLogger(`plugin:${name}`);
    try {
      await withTimeout(Promise.resolve().then(() => plugin.start(this.sdkFor(plugin))), this.timeoutMs(), `start of plugin ${name}`);
      status.state = 'running';
      status.started_at = this.d.services.clock.now();
      delete status.error;
      status.tools = this.d.services.tools.names().filter((t) => this.d.services.tools.ownerOf(t) === name);
      status.channels = this.d.services.outputs.all().filter((c) => c.owner === name).map((c) => c.name);
      log.info({ tools: status.tools.length, channels: status.channels }, 'plugin started');
      return true;
    } catch (err) {
      status.state = 'failed';
      status.error = errorMessage(err);
      status.last_error = status.error;
      delete status.started_at;
      log.error({ err: status.error }, 'plugin failed to start; its registrations are removed, the others go on; it is tried again after a back-off');
      this.d.services.bus.publish('system', { kind: 'plugin_failed', message: new PluginError(name, status.error).message });
      this.detach(name);
      try {
        await withTimeout(Promise.resolve().then(() => plugin.stop?.()), 5000, `stop of plugin ${name}`);
      } catch {
        /* already failed */
      }
      slot.life++;
      // A start refused for what the plugin is (a capability it was not granted) fails the same way every time:
      // it waits for the household (plugins approve / reload) instead of being retried.
      if (err instanceof HomeAgentError && PERMANENT_START_ERRORS.has(err.code)) {
        log.warn({ code: err.code }, 'not restarted: this failure repeats until the plugin or its approval changes');
        return false;
      }
      this.scheduleRestart(slot);
      return false;
    }
  }

  /** Stop one plugin and remove its registrations. Never throws. */
  async stop(name: string): Promise<void> {
    const slot = this.slots.get(name);
    if (!slot) return;
    this.d.services.clock.clearTimeout(slot.restartTimer);
    delete slot.status.next_restart_at;
    slot.life++;
    if (slot.status.state === 'stopped') return;
    try {
      await withTimeout(Promise.resolve().then(() => slot.plugin.stop?.()), this.timeoutMs(), `stop of plugin ${name}`);
    } catch (err) {
      createLogger(`plugin:${name}`).error({ err: errorMessage(err) }, 'plugin stop failed');
    }
    this.detach(name);
    slot.status.state = 'stopped';
    slot.status.tools = [];
    slot.status.channels = [];
  }

  /** Stop all plugins in reverse order. */
  async stopAll(): Promise<void> {
    for (const name of [...this.order].reverse()) await this.stop(name);
  }

  /** Each plugin's state; a running plugin's tools as registered now (an MCP plugin's change with its server's list). */
  status(): PluginStatus[] {
    const tools = this.d.services.tools;
    return this.order.map((n) => {
      const st = this.slots.get(n)!.status;
      return { ...st, ...(st.state === 'running' ? { tools: tools.names().filter((t) => tools.ownerOf(t) === n) } : {}) };
    });
  }

  get(name: string): Plugin | undefined {
    return this.slots.get(name)?.plugin;
  }

  /** Remove everything `name` registered. */
  private detach(name: string): void {
    const s = this.d.services;
    for (const t of s.tools.removeOwner(name)) s.memory.registerToolMemoryPolicy(t, {});
    s.stages.removeOwner(name);
    s.bus.removeOwner(name);
    s.outputs.removeOwner(name);
    s.commands.removeOwner(name);
    s.promptSections.removeOwner(name);
  }

  /** The SDK handed to `plugin` (seed 001 "PluginSDK Four Channels"). */
  sdkFor(plugin: Plugin): PluginSDK {
    const name = plugin.name;
    const s = this.d.services;
    const agent = this.d.agent;
    const kernelLevel = plugin.kernelLevel === true;
    const log = createLogger(`plugin:${name}`);
    const life = this.slots.get(name)?.life ?? 0;
    const registerTool = (def: ToolDef) => {
      s.tools.register(name, def);
      if (def.no_memory || def.cleaner) s.memory.registerToolMemoryPolicy(def.name, { no_memory: def.no_memory, cleaner: def.cleaner });
    };
    return {
      name,
      log,
      dataDir: this.d.dataDir,
      registerTool,
      unregisterTool: (tool: string) => {
        if (s.tools.ownerOf(tool) !== name) return;
        s.tools.unregister(tool);
        s.memory.registerToolMemoryPolicy(tool, {});
      },
      whenIdle: () => agent.whenIdle(),
      registerStage: (stage: StageName, handler, opts) => {
        if (!(STAGES as readonly string[]).includes(stage)) throw new HomeAgentError('STAGE_UNKNOWN', `unknown stage "${stage}"; stages: ${STAGES.join(', ')}`);
        s.stages.register(name, stage, handler, opts?.timeout_ms);
      },
      awaitInput: (opts) => agent.awaitInput(opts),
      subscribe: (type, handler) => s.bus.subscribe(name, type, handler),
      publish: (type, payload) => s.bus.publish(type, payload),
      registerCommand: (command, handler) => s.commands.register(name, command, handler),
      registerOutputChannel: (ch, caps, description, handler, opts) => {
        const channel = s.outputs.register(name, ch, caps, description, handler, opts);
        registerOutputTools(s, name, channel.name);
      },
      injectInput: (channel, text, opts) => agent.submit(name, channel, text, 'queued', 0, opts),
      injectInterrupt: (level: Level, channel, text, opts): Promise<TurnResult> => agent.submit(name, channel, text, 'interrupt', clampPluginLevel(level, kernelLevel), opts),
      stop: (source: string) => {
        agent.stop(`${name}:${source}`);
      },
      outputChannel: (ch) => {
        const c = s.outputs.get(ch);
        return c ? { name: c.name, caps: c.caps, perRequest: c.perRequest } : undefined;
      },
      sendOutput: async (channel, content, meta = {}) => {
        await s.outputs.send({ channel, kind: 'full', content, type: 'text', meta });
        s.bus.publish('output', { type: 'output', channel, content, kind: 'full' });
      },
      crashed: (reason: string) => {
        this.crashed(name, life, reason);
      },
      settings: () => s.settings,
      memory: () => this.d.memoryApi(),
      knowledge: () => this.d.knowledgeApi(),
      social: () => readOnlySocial(this.d.socialApi()),
      socialWrite: () => {
        if (plugin.external === true) throw new HomeAgentError('PERMISSION_DENIED', `plugin "${name}" is external: its social API is read-only`);
        return this.d.socialApi();
      },
    };
  }
}

/** The reading half of a social API, as an object that has no write methods at all (an external plugin cannot reach them). */
export function readOnlySocial(api: SocialReadAPI): SocialReadAPI {
  return Object.freeze({
    listPersons: () => api.listPersons(),
    getPerson: (name: string) => api.getPerson(name),
    getTrait: (name: string, trait: string) => api.getTrait(name, trait),
    getRelations: (name: string) => api.getRelations(name),
    getNetwork: (name: string, depth?: number) => api.getNetwork(name, depth),
  });
}

/**
 * Create output_send__{ch} and output_send__{ch}_help for a channel, owned
 * by `owner` (seed 001 "Each output channel generates two tools").
 * output_send__{ch} passes before_output/after_output like any reply.
 */
export function registerOutputTools(s: KernelServices, owner: string, ch: string): void {
  const channel = s.outputs.get(ch)!;
  s.tools.register(owner, {
    name: `output_send__${ch}`,
    description: `Send a message to the ${ch} channel. Example: {"payload":"Dinner is ready."}`,
    group: 'output',
    channel: ch,
    parameters: {
      type: 'object',
      properties: {
        payload: { type: 'string' },
        type: { type: 'string', enum: channel.types },
        meta: { type: 'object' },
      },
      required: ['payload'],
      additionalProperties: false,
    },
    no_memory: false,
    handler: async (args, ctx) => {
      const payload = String(args.payload);
      const before = newStageContext('before_output', ctx.input, { final_text: payload });
      await s.stages.run(before);
      if (before.skip_output) return 'skipped by before_output';
      const content = before.response ?? before.final_text;
      await s.outputs.send({ channel: ch, kind: 'full', content, type: typeof args.type === 'string' ? args.type : 'text', meta: (args.meta as Record<string, unknown>) ?? {}, input_id: ctx.input.id });
      // A delivery by the turn that called the tool: one event on the turn stream (run log, bus).
      s.turnEvents.emit({ type: 'output', turn: ctx.input.id, channel: ch, content, kind: 'full' });
      await s.stages.run(newStageContext('after_output', ctx.input, { final_text: content }));
      return `sent to ${ch}`;
    },
  });
  s.tools.register(owner, {
    name: `output_send__${ch}_help`,
    description: `How to use the ${ch} channel: its meta fields and types. Example: {}`,
    group: 'admin',
    parameters: { type: 'object', properties: {}, additionalProperties: false },
    handler: () => channel.help,
  });
}

async function withTimeout<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new HomeAgentError('TIMEOUT', `${what} timed out after ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    if (timer) clearTimeout(timer);
  }
}
