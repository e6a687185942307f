/**
 * The kernel: one agent, one persistent session, persona from
 * data/personal.md, and the parts plugins plug into (bus, stages, tools,
 * output channels, settings, memory, scheduler). No IO of its own beyond
 * reading the persona file: everything that touches the world is a plugin
 * (seed 000 §1 "核心零 IO").
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Provider } from './llm-types.js';
import type { Logger } from './log-types.js';
import type { KnowledgeAPI, MemoryAPI, SocialAPI } from './memory-types.js';
import type { Plugin } from './sdk.js';
import type { SettingsAPI } from './settings-types.js';
import type { InjectOptions, Level, TurnResult } from './turn-types.js';
import { EventBus } from './event-bus.js';
import { StageHost } from './stages.js';
import { ToolRegistry } from './tool-registry.js';
import { OutputRegistry } from './output.js';
import { Agent } from './agent.js';
import { PluginHost, registerOutputTools } from './plugin-host.js';
import { SimpleContextStore, type KernelMemory } from './memory-port.js';
import { systemClock, type Clock } from './clock.js';
import { registerCoreSettings } from './core-settings.js';
import { spawnChildTool } from './child-agent.js';
import { createLogger } from './log.js';
import { MemoryRunLog, type RunLog } from './run-log.js';
import type { KernelServices } from './services.js';
import { Cap } from './output-types.js';
import { HomeAgentError, errorMessage } from './errors.js';
import { TurnStream } from './turn-events.js';
import { busSubscriber, memoryWindowSubscriber, runLogSubscriber } from './turn-subscribers.js';
import { CommandRegistry } from './commands.js';
import { loaderTools } from './tool-groups.js';
import { PromptSections } from './prompt-sections.js';

/** Repository/installation root (two levels above this file, in src/ or dist/src/). */
export const INSTALL_ROOT = (() => {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const up2 = path.resolve(here, '..', '..');
  return path.basename(up2) === 'dist' ? path.resolve(up2, '..') : up2;
})();

/** Options of a kernel. */
export interface KernelOptions {
  settings: SettingsAPI;
  dataDir: string;
  provider?: Provider | (() => Provider | undefined);
  memory?: KernelMemory;
  memoryApi?: () => MemoryAPI;
  knowledgeApi?: () => KnowledgeAPI;
  /** The household's people (src/memory/social.ts); plugins read it through PluginSDK.social(). */
  socialApi?: () => SocialAPI;
  clock?: Clock;
  log?: Logger;
  /** Append-only run log (default: in memory, last 10000 events). */
  runLog?: RunLog;
}

/** The kernel. */
export class Kernel {
  readonly log: Logger;
  readonly bus: EventBus;
  readonly stages: StageHost;
  readonly tools: ToolRegistry;
  readonly outputs: OutputRegistry;
  readonly settings: SettingsAPI;
  readonly agent: Agent;
  readonly host: PluginHost;
  readonly services: KernelServices;
  readonly dataDir: string;
  private providerRef: () => Provider | undefined;
  private memoryRef: KernelMemory;
  private personaCache?: string;
  private started = false;

  constructor(opts: KernelOptions) {
    this.log = opts.log ?? createLogger('kernel');
    this.settings = opts.settings;
    this.dataDir = opts.dataDir;
    registerCoreSettings(this.settings);
    this.bus = new EventBus(this.log);
    this.stages = new StageHost(this.log, this.settings.get<number>('core.agent.stage_timeout_ms'));
    this.tools = new ToolRegistry(this.log, this.settings.get<number>('core.agent.tool_timeout_ms'));
    this.outputs = new OutputRegistry(this.log);
    this.providerRef = typeof opts.provider === 'function' ? opts.provider : () => opts.provider as Provider | undefined;
    this.memoryRef = opts.memory ?? new SimpleContextStore();
    const self = this;
    const clock = opts.clock ?? systemClock;
    const turnEvents = new TurnStream((subscriber, ev, err) => this.log.error({ err: errorMessage(err), subscriber, event: ev.type }, 'turn event subscriber failed'));
    this.services = {
      log: this.log,
      bus: this.bus,
      stages: this.stages,
      tools: this.tools,
      outputs: this.outputs,
      settings: this.settings,
      get memory() {
        return self.memoryRef;
      },
      clock,
      runLog: opts.runLog ?? new MemoryRunLog(),
      turnEvents,
      commands: new CommandRegistry(),
      promptSections: new PromptSections(),
      provider: () => this.providerRef(),
      persona: () => this.persona(),
    };
    // The one turn event stream and what keeps it (src/kernel/turn-subscribers.ts).
    turnEvents.subscribe('run_log', runLogSubscriber(() => this.services.runLog, this.log));
    turnEvents.subscribe('memory_window', memoryWindowSubscriber(() => this.memoryRef, clock));
    turnEvents.subscribe('bus', busSubscriber(this.bus));
    this.agent = new Agent(this.services);
    const noMemory = (): never => {
      throw new HomeAgentError('MEMORY_UNAVAILABLE', 'the memory system is not running');
    };
    this.host = new PluginHost({
      services: this.services,
      agent: this.agent,
      dataDir: this.dataDir,
      memoryApi: opts.memoryApi ?? (() => ({ recall: noMemory, commit: noMemory })),
      knowledgeApi: opts.knowledgeApi ?? (() => ({ search: noMemory, create: noMemory, list: noMemory })),
      socialApi:
        opts.socialApi ??
        (() => ({ listPersons: noMemory, getPerson: noMemory, getTrait: noMemory, getRelations: noMemory, getNetwork: noMemory, setTrait: noMemory, relate: noMemory })),
    });
    this.settings.onChange('core.agent.stage_timeout_ms', (_k, v) => (this.stages.timeoutMs = Number(v)));
    this.settings.onChange('core.agent.tool_timeout_ms', (_k, v) => (this.tools.defaultTimeoutMs = Number(v)));
  }

  /** Replace the LLM provider. */
  setProvider(p: Provider | (() => Provider | undefined) | undefined): void {
    this.providerRef = typeof p === 'function' ? p : () => p;
  }

  /** Add a plugin (started by start()). */
  use(plugin: Plugin): this {
    this.host.add(plugin);
    return this;
  }

  /** Register kernel tools and channels, then start every plugin in its guard. */
  async start(): Promise<void> {
    if (this.started) return;
    this.started = true;
    this.tools.register('_kernel_', spawnChildTool(this.services));
    for (const def of loaderTools(this.tools, this.settings)) this.tools.register('_kernel_', def);
    for (const def of this.memoryRef.tools()) this.tools.register('_memory_', def);
    // The internal channel: output of consolidation work never reaches external channels.
    this.outputs.register('_kernel_', '_consolidation_', Cap.Text, 'internal memory maintenance (not delivered anywhere)', (m) => {
      this.log.debug({ content: m.content }, 'consolidation output');
    });
    await this.host.startAll();
    this.bus.publish('system', { kind: 'started', message: 'kernel started' });
  }

  /** Stop the agent, every plugin (reverse order) and the memory. Never throws. */
  async stop(): Promise<void> {
    await this.agent.close();
    await this.host.stopAll();
    try {
      this.memoryRef.close();
    } catch (err) {
      this.log.error({ err }, 'memory close failed');
    }
    try {
      this.services.runLog.close();
    } catch (err) {
      this.log.error({ err }, 'run log close failed');
    }
  }

  /** Inject a queued input as plugin `source` would. */
  injectInput(source: string, channel: string, text: string, opts?: InjectOptions): Promise<TurnResult> {
    return this.agent.submit(source, channel, text, 'queued', 0, opts);
  }

  /** Inject an interrupt (the caller decides the level; kernel callers may use L4). */
  injectInterrupt(source: string, level: Level, channel: string, text: string, opts?: InjectOptions): Promise<TurnResult> {
    return this.agent.submit(source, channel, text, 'interrupt', level, opts);
  }

  /** The kernel's self-input queue (`_consolidation_`). */
  injectSelf(text: string): Promise<TurnResult> {
    return this.agent.submitSelf(text);
  }

  /** Stop button semantics (seed 001 "Stop"). Returns the number of queued inputs cancelled. */
  stopNow(source: string): number {
    return this.agent.stop(source);
  }

  /** Register an output channel owned by the kernel (tests, the console before plugins). */
  registerOutputChannel(owner: string, name: string, caps: number, description: string, handler: Parameters<OutputRegistry['register']>[4]): void {
    this.outputs.register(owner, name, caps, description, handler);
    registerOutputTools(this.services, owner, name);
  }

  /** The persona text (core.agent.persona_path, else data/personal.md). */
  persona(): string {
    if (this.personaCache !== undefined) return this.personaCache;
    const configured = this.settings.get<string>('core.agent.persona_path');
    const candidates = [configured, path.join(this.dataDir, 'personal.md'), path.join(INSTALL_ROOT, 'data', 'personal.md')].filter(Boolean);
    for (const p of candidates) {
      try {
        this.personaCache = readFileSync(p, 'utf8');
        return this.personaCache;
      } catch {
        /* next */
      }
    }
    this.personaCache = 'You are HomeAgent, a helpful voice assistant in the living room.';
    return this.personaCache;
  }
}
