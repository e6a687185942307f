/**
 * The kernel's parts as one object handed to turns and the plugin host.
 */
import type { Provider } from './llm-types.js';
import type { Logger } from './log-types.js';
import type { SettingsAPI } from './settings-types.js';
import type { EventBus } from './event-bus.js';
import type { StageHost } from './stages.js';
import type { ToolRegistry } from './tool-registry.js';
import type { OutputRegistry } from './output.js';
import type { KernelMemory } from './memory-port.js';
import type { Clock } from './clock.js';
import type { RunLog } from './run-log.js';
import type { CommandRegistry } from './commands.js';
import type { TurnStream } from './turn-events.js';
import type { PromptSections } from './prompt-sections.js';

/** Everything a turn needs. */
export interface KernelServices {
  log: Logger;
  bus: EventBus;
  stages: StageHost;
  tools: ToolRegistry;
  outputs: OutputRegistry;
  settings: SettingsAPI;
  memory: KernelMemory;
  clock: Clock;
  /** The append-only run log (seed 002 §3); a subscriber of `turnEvents`. */
  runLog: RunLog;
  /** The turn event stream: turns emit on it; the run log, the memory window, the bus and `ask` results subscribe. */
  turnEvents: TurnStream;
  /** Maintenance commands plugins registered (`homeagent <name>`), served by the control plugin. */
  commands: CommandRegistry;
  /** The LLM provider now in use (the provider manager), or undefined when none is configured. */
  provider(): Provider | undefined;
  /** Extra system-message sections (the skill list), src/kernel/prompt-sections.ts. */
  promptSections: PromptSections;
  /** The persona text (data/personal.md). */
  persona(): string;
}
