/**
 * Stages and tools: the seven pipeline stages with their shared context and
 * write rights (seed 000 §3, seed 001 "Message Processing Flow"), and the tool
 * definitions handlers register (seed 001 ToolDef). No IO here.
 */
import type { ChatMessage, JsonSchema, ToolCall } from './llm-types.js';
import type { MemItem } from './memory-types.js';
import type { InputMessage } from './turn-types.js';

/** The seven pipeline stages (seed 000 §3 table). */
export const STAGES = [
  'on_input',
  'pre_action',
  'post_action',
  'before_toolcall',
  'after_toolcall',
  'before_output',
  'after_output',
] as const;
export type StageName = (typeof STAGES)[number];

/** The result of executing one tool call, as fed back to the model. */
export interface ToolResult {
  call_id: string;
  name: string;
  content: string;
  is_error: boolean;
}

/**
 * The shared context of one stage run (seed 000 §11 StageContext). Which fields
 * a handler may write depends on the stage (seed 000 §3 table); see
 * `STAGE_WRITE_RIGHTS`. Writing a field the stage does not allow throws a
 * `StageAccessError` inside that handler only.
 */
export interface StageContext {
  readonly stage: StageName;
  /** The input being processed (read-only everywhere). */
  readonly input: Readonly<InputMessage>;
  /** on_input: the raw text, may be rewritten. */
  raw_message: string;
  /** pre_action / post_action: the model-visible messages, may be appended or modified. */
  context_messages: ChatMessage[];
  /** post_action: the model's text of this round. */
  llm_text: string;
  /** post_action: the tool calls of this round (add, remove, change). */
  tool_calls: ToolCall[];
  /** before_toolcall: the single call about to run (name and arguments writable). */
  tool_call?: ToolCall;
  /** before_toolcall: set true to deny the call. */
  deny: boolean;
  /** before_toolcall: why it was denied; fed back to the model. */
  deny_reason?: string;
  /** after_toolcall: the result about to be fed back (content writable). */
  tool_result?: ToolResult;
  /** before_output: the text about to be delivered. */
  final_text: string;
  /** before_output: true when `final_text` is one sentence of a streamed reply. */
  readonly partial: boolean;
  /** before_output: set true to suppress delivery. */
  skip_output: boolean;
  /** Set at any stage but after_output to short-circuit: delivered to the input's channel, then after_output. */
  response?: string;
  /**
   * on_input: meta delivered with a short-circuit `response` (OutputMessage.meta), e.g. `{ expects_reply: true }`
   * when the response asks the person something: the voice pipeline then listens for the answer without the
   * wake word or the button (src/voice/pipeline.ts).
   */
  response_meta?: Record<string, unknown>;
  /** Memory recalled for this turn (read-only). */
  readonly memory: readonly MemItem[];
  /**
   * Aborted when the turn is stopped (button, /stop, CLI, HA). A handler that
   * acts on the world (a device command, a timer) checks it right before
   * acting and does nothing once it is aborted: after a stop nothing of this
   * turn may act.
   */
  readonly signal: AbortSignal;
  /** Free scratch space shared by all handlers of this run. */
  extra: Record<string, unknown>;
}

/** Fields each stage may write (seed 000 §3 "7 个阶段总表"); `extra` is always writable. */
export const STAGE_WRITE_RIGHTS: Record<StageName, ReadonlyArray<keyof StageContext>> = {
  on_input: ['raw_message', 'response', 'response_meta'],
  pre_action: ['context_messages', 'response'],
  post_action: ['llm_text', 'tool_calls', 'context_messages', 'response'],
  before_toolcall: ['tool_call', 'deny', 'deny_reason', 'response'],
  after_toolcall: ['tool_result', 'response'],
  before_output: ['final_text', 'skip_output', 'response'],
  after_output: [],
};

/** A stage handler: may be async; runs concurrently with the stage's other handlers. */
export type StageHandler = (ctx: StageContext) => void | Promise<void>;

/** What a tool handler gets besides its arguments. */
export interface ToolContext {
  /** The input whose turn called the tool (a synthetic one when called by the CLI or a test). */
  input: Readonly<InputMessage>;
  /** Aborted when the turn is stopped or preempted. */
  signal: AbortSignal;
  call_id: string;
}

/**
 * A tool result carrying images (base64, e.g. a camera snapshot) for a
 * multimodal model: `text` goes back as the tool result, the images follow in
 * a user message of their own (tool messages cannot carry images on every
 * protocol).
 */
export interface ToolOutput {
  readonly kind: 'tool_output';
  text: string;
  images?: string[];
}

/** A tool handler returns text, a ToolOutput, or a value that is JSON-encoded for the model. Throwing makes a tool error. */
export type ToolHandler = (args: Record<string, unknown>, ctx: ToolContext) => unknown | Promise<unknown>;

/**
 * A tool definition (seed 001 ToolDef with NoMemory and Cleaner).
 * `parameters` is a JSON Schema validated with ajv before every call.
 */
export interface ToolDef {
  name: string;
  description: string;
  parameters: JsonSchema;
  handler: ToolHandler;
  /** Output excluded from vectors, keywords and distillation (seed 001 NoMemory). */
  no_memory?: boolean;
  /** Filter applied to the output before it enters the memory computation layer (seed 001 Cleaner). */
  cleaner?: (output: string) => string;
  /** Time limit for one call, ms (default core.agent.tool_timeout_ms). */
  timeout_ms?: number;
  /**
   * The group the tool belongs to (issue 19 "Only the tools a turn needs";
   * seed 002 smallest approved schema): an ordinary turn offers only the core
   * tools (core.agent.core_tools) and the model brings a group in with
   * `tools_load` and calls its tools with `tools_call`
   * (src/kernel/tool-groups.ts). Default: the name of the plugin that
   * registered the tool.
   */
  group?: string;
  /**
   * A tool of one channel: offered with the core on turns whose input came
   * from that channel (output_send__<channel> and the speaker's expect_reply:
   * "the output channel in use"; the memory tools the internal
   * `_consolidation_` channel's review and merge prompts name).
   */
  channel?: string;
}

