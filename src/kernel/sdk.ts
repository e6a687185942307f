/**
 * The plugin SDK (seed 000 §11, seed 001 "PluginSDK Four Channels") and the
 * plugin interface (seed 001 "Plugin Interface"; zigbee2mqtt extension style).
 * No IO here.
 */
import type { CommandHandler } from './commands.js';
import type { EventMap, EventType } from './events.js';
import type { Logger } from './log-types.js';
import type { KnowledgeAPI, MemoryAPI, SocialAPI, SocialReadAPI } from './memory-types.js';
import type { OutputChannelInfo, OutputChannelOptions, OutputHandler } from './output-types.js';
import type { SettingsAPI } from './settings-types.js';
import type { StageHandler, StageName, ToolDef } from './stage-types.js';
import type { InjectOptions, InputMessage, Level, TurnResult } from './turn-types.js';

/**
 * The SDK a plugin gets in `start()` (seed 001 "PluginSDK Four Channels").
 * Everything registered through it is owned by the plugin and removed when the
 * plugin stops.
 */
export interface PluginSDK {
  readonly name: string;
  readonly log: Logger;
  /** The data directory (absolute path). */
  readonly dataDir: string;
  /** Register a tool; throws `DuplicateToolError` when the name is taken. */
  registerTool(def: ToolDef): void;
  /**
   * Remove a tool this plugin registered (an MCP server's tool list changed).
   * A name the plugin does not own is left alone. Call it between turns
   * (`whenIdle`): a tool must not vanish in the middle of a turn (issue 17).
   */
  unregisterTool(name: string): void;
  /**
   * Resolves when no turn is running or waiting (at once when idle): where a
   * plugin changes its tools between turns, never in the middle of one
   * (issue 17 "reload"; MCP tools/list_changed).
   */
  whenIdle(): Promise<void>;
  /** Register a stage handler; `timeout_ms` overrides core.agent.stage_timeout_ms for this handler (e.g. a confirmation that waits for the user). */
  registerStage(stage: StageName, handler: StageHandler, opts?: { timeout_ms?: number }): void;
  /** Subscribe to bus events; returns an unsubscribe function. */
  subscribe<K extends EventType>(type: K, handler: (payload: EventMap[K]) => void | Promise<void>): () => void;
  publish<K extends EventType>(type: K, payload: EventMap[K]): void;
  /** Creates output_send__{name} and output_send__{name}_help. caps: `Cap` flags OR-ed. */
  registerOutputChannel(name: string, caps: number, description: string, handler: OutputHandler, opts?: OutputChannelOptions): void;
  /** Queue an input as a normal task; resolves when its turn finishes. */
  injectInput(channel: string, text: string, opts?: InjectOptions): Promise<TurnResult>;
  /** Raise an interrupt at `level` (external plugins' L4 is clamped to L3); resolves when its turn finishes. */
  injectInterrupt(level: Level, channel: string, text: string, opts?: InjectOptions): Promise<TurnResult>;
  /**
   * Take the next input that arrives on `channel` (any channel when omitted)
   * and that `accept` approves, instead of queueing it as a new turn — how a
   * running turn hears the user's answer to its question (a confirmation's
   * "yes"). Resolves null on timeout or abort.
   */
  awaitInput(opts: { channel?: string; timeout_ms: number; accept?: (text: string) => boolean; signal?: AbortSignal }): Promise<InputMessage | null>;
  /** Stop: abort the LLM call, silence output, cancel inputs queued now before any of their stages runs. Kernel-level plugins only. */
  stop(source: string): void;
  /**
   * Serve a maintenance command (`homeagent <name>` on the control socket)
   * while this plugin runs. Throws HomeAgentError COMMAND_DUPLICATE when
   * another plugin has the name, COMMAND_NAME for a malformed one.
   */
  registerCommand(name: string, handler: CommandHandler): void;
  /** A registered output channel's name, capabilities and whether it lasts beyond a request; undefined when there is none. */
  outputChannel(name: string): OutputChannelInfo | undefined;
  /** Deliver a message to an output channel directly (passes before_output/after_output). */
  sendOutput(channel: string, content: string, meta?: Record<string, unknown>): Promise<void>;
  /**
   * Report that the plugin died outside a call (its child process exited,
   * its VM broke, its server went away for good). The host detaches
   * everything the plugin registered at once, calls its `stop()`, and starts
   * it again with back-off (issue 17 "Supervision"). Never throws.
   */
  crashed(reason: string): void;
  settings(): SettingsAPI;
  memory(): MemoryAPI;
  knowledge(): KnowledgeAPI;
  /**
   * The household's people, read-only (seed 001 "Restricted External Plugin
   * API": GetPerson / GetTrait / GetRelations / GetNetwork / ListPersons).
   * Every plugin may read; sensitive facts are left out.
   */
  social(): SocialReadAPI;
  /**
   * The social API with its writes (set_trait, relate) — built-in plugins
   * only: an external plugin (`Plugin.external`) gets HomeAgentError
   * PERMISSION_DENIED (seed 001: external plugins' SocialAPI is read-only).
   */
  socialWrite(): SocialAPI;
}

/**
 * A plugin (seed 001 "Plugin Interface"; zigbee2mqtt extension style): the
 * constructor only stores dependencies, `start` registers, `stop` releases.
 */
export interface Plugin {
  readonly name: string;
  /** Built-in kernel-level plugins (GPIO stop button) may raise L4 and call stop(). */
  readonly kernelLevel?: boolean;
  /** A plugin not built into the box (installed separately): its social API is read-only (seed 001 "Restricted External Plugin API"). */
  readonly external?: boolean;
  start(sdk: PluginSDK): void | Promise<void>;
  stop?(): void | Promise<void>;
}
