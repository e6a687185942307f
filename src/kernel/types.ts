/**
 * Kernel contract: the shapes every part of HomeAgent shares.
 *
 * Owns the wire-neutral message model (OpenAI/Ollama field names: `tool_calls`,
 * `finish_reason`, `tool_call_id`), the seven pipeline stages (seed 000 §3,
 * seed 001 "Message Processing Flow"), tool and output-channel definitions
 * (seed 001 "Output Channel System"), inputs with interrupt levels (seed 001
 * "Input Scheduler & Interrupt Mechanism") and the plugin SDK surface (seed 000
 * §11, seed 001 "PluginSDK Four Channels"). No IO here.
 */

/** A JSON Schema object as plugins declare it (draft-07 subset understood by ajv). */
export type JsonSchema = Record<string, unknown>;

/** Chat roles, as in the OpenAI and Ollama chat APIs. */
export type Role = 'system' | 'user' | 'assistant' | 'tool';

/**
 * One tool call requested by the model. `function.arguments` is always a parsed
 * object inside the kernel; adapters turn it into a JSON string where the wire
 * format wants one (OpenAI /v1) and keep it an object where it does not
 * (Ollama /api/chat).
 */
export interface ToolCall {
  /** Call id from the model (`call_1`), or one the provider made up when the protocol has none (Ollama). */
  id: string;
  type: 'function';
  function: { name: string; arguments: Record<string, unknown> };
}

/** One chat message in the model-visible history. */
export interface ChatMessage {
  role: Role;
  content: string;
  /** Assistant turns that asked for tools. */
  tool_calls?: ToolCall[];
  /** Tool turns: the id of the call this result answers. */
  tool_call_id?: string;
  /** Tool turns: the tool's name (Ollama's `tool_name`, OpenAI's `name`). */
  name?: string;
  /** Reasoning text kept apart from content (DeepSeek `reasoning_content`, Ollama `thinking`). */
  reasoning_content?: string;
  /** Base64-encoded images for multimodal models (Ollama `images`). */
  images?: string[];
}

/** A tool as offered to the model (OpenAI `tools[]` entry shape). */
export interface ToolSchema {
  type: 'function';
  function: { name: string; description: string; parameters: JsonSchema };
}

/** Token accounting of one completion (OpenAI `usage` names). */
export interface TokenUsage {
  prompt_tokens: number;
  completion_tokens: number;
  total_tokens: number;
}

/** The unified request every provider takes (seed 000 §9: serialised to JSON and handed to the adapter). */
export interface CompletionRequest {
  model?: string;
  messages: ChatMessage[];
  tools?: ToolSchema[];
  temperature?: number;
  max_tokens?: number;
  stream?: boolean;
  /** Protocol-specific extras the adapter may read (e.g. Ollama keep_alive, num_ctx). */
  options?: Record<string, unknown>;
}

/**
 * The unified response (seed 000 §9: {content, reasoning_content,
 * finish_reason, token_usage, tool_calls}). `finish_reason` uses OpenAI's
 * values: 'stop' | 'tool_calls' | 'length' | 'content_filter' | other strings.
 */
export interface CompletionResponse {
  content: string;
  reasoning_content?: string;
  finish_reason: string;
  token_usage?: TokenUsage;
  tool_calls: ToolCall[];
  /** Which source and model answered (provider manager fills it in). */
  source?: string;
  model?: string;
}

/**
 * What a streaming call yields. Providers merge tool-call deltas by index
 * themselves; the last event is always `done` carrying the merged response.
 * Errors are thrown (typed `ProviderError` subclasses), never yielded.
 */
export type StreamEvent =
  | { type: 'content'; text: string }
  | { type: 'reasoning'; text: string }
  | { type: 'tool_call_delta'; index: number; id?: string; name?: string; arguments?: string }
  | { type: 'done'; response: CompletionResponse };

/**
 * An LLM provider (seed 000 §9 "Provider 接口 (Name / Chat / ChatStream)").
 * Every call honours `signal`: aborting closes the HTTP connection at once.
 */
export interface Provider {
  readonly name: string;
  chat(req: CompletionRequest, signal?: AbortSignal): Promise<CompletionResponse>;
  chatStream(req: CompletionRequest, signal?: AbortSignal): AsyncIterable<StreamEvent>;
  /** The model's context window in tokens, when known (declared, or read from the server). */
  maxContextTokens?(): Promise<number | undefined>;
}

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

/** Interrupt levels (seed 001 "Four interrupt levels"): 0 is a queued task, 1-4 interrupts. */
export type Level = 0 | 1 | 2 | 3 | 4;

/** An input as it enters the agent (seed 001 `InjectInput(source, channel, payload)`). */
export interface InputMessage {
  /** Unique id, assigned by the kernel. */
  id: string;
  /** The plugin that injected it (`console`, `voice`, `timers`, `_kernel_`). */
  source: string;
  /** The output channel a reply goes to (`console`, `speaker`, `_consolidation_`). */
  channel: string;
  text: string;
  /** 'queued' tasks have level 0; interrupts L1-L4 (seed 001 "Two task classes"). */
  kind: 'queued' | 'interrupt';
  level: Level;
  /** Who spoke, when known. */
  user?: string;
  /** Wall-clock time of arrival, ms since epoch (from the kernel's clock). */
  received_at: number;
  /** Base64-encoded images attached to this input. */
  images?: string[];
  /** Free routing metadata (e.g. the voice pipeline's utterance id). */
  meta?: Record<string, unknown>;
}

/** The result of executing one tool call, as fed back to the model. */
export interface ToolResult {
  call_id: string;
  name: string;
  content: string;
  is_error: boolean;
}

/** One recalled memory item injected into the prompt. */
export interface MemItem {
  id: string;
  kind: 'entity' | 'relation' | 'document' | 'knowledge';
  text: string;
  score: number;
  /** Original time of the remembered event, ms since epoch, when known. */
  time?: number;
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
  /** Memory recalled for this turn (read-only). */
  readonly memory: readonly MemItem[];
  /** Free scratch space shared by all handlers of this run. */
  extra: Record<string, unknown>;
}

/** Fields each stage may write (seed 000 §3 "7 个阶段总表"); `extra` is always writable. */
export const STAGE_WRITE_RIGHTS: Record<StageName, ReadonlyArray<keyof StageContext>> = {
  on_input: ['raw_message', 'response'],
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
}

/** Output channel capability flags (seed 001 "Capability flags") plus Stream. */
export const Cap = {
  Text: 1,
  File: 2,
  Image: 4,
  Audio: 8,
  Structured: 16,
  /** Takes a reply sentence by sentence while the model still writes (the speaker). */
  Stream: 32,
} as const;

/**
 * One delivery to an output channel.
 * - kind 'full': a whole reply (non-stream channels, output_send__X calls, short-circuit responses).
 * - kind 'sentence': one sentence of a streamed reply (stream channels only).
 * - kind 'end': the streamed reply is complete; `content` is the whole text.
 */
export interface OutputMessage {
  channel: string;
  kind: 'full' | 'sentence' | 'end';
  content: string;
  /** output_send `type` (e.g. 'text', 'file', 'audio'); default 'text'. */
  type: string;
  /** output_send `meta` routing metadata. */
  meta: Record<string, unknown>;
  /** The input this reply answers, when there is one. */
  input_id?: string;
  /** True on an 'end' delivery when the reply was cut by stop or preemption. */
  interrupted?: boolean;
}

/** Handler of an output channel; resolves when the message is delivered (or queued for playback). */
export type OutputHandler = (msg: OutputMessage) => void | Promise<void>;

/** Options of registerOutputChannel. */
export interface OutputChannelOptions {
  /** Text returned by output_send__{name}_help. */
  help?: string;
  /** Allowed `type` values of output_send__{name}. */
  types?: string[];
}

/** Options of injectInput / injectInterrupt. */
export interface InjectOptions {
  user?: string;
  images?: string[];
  meta?: Record<string, unknown>;
}

/** What a finished turn reports to whoever injected the input. */
export interface TurnResult {
  input_id: string;
  /** The reply text delivered to the input's channel ('' when none). */
  reply: string;
  /** 'done' normally; 'interrupted' when stop cut it; 'short_circuit' when a stage answered; 'error' on failure; 'cancelled' when stop dropped it before it ran. */
  status: 'done' | 'interrupted' | 'short_circuit' | 'error' | 'cancelled';
  /** Tools the turn executed, in order. */
  tools: Array<{ name: string; arguments: Record<string, unknown>; result: string; is_error: boolean; denied?: boolean }>;
  error?: string;
}

/** Event payloads of the typed bus (seed 000 §12, seed 001 EventAgentLLMChain). */
export interface EventMap {
  raw_input: InputMessage;
  agent_output: { input_id?: string; channel: string; content: string; kind: OutputMessage['kind']; interrupted?: boolean };
  tool_call: { input_id: string; call_id: string; name: string; arguments: Record<string, unknown>; result: string; is_error: boolean; denied?: boolean; duration_ms: number };
  reasoning: { input_id: string; text: string };
  system: { kind: string; message: string; data?: Record<string, unknown> };
  agent_llm_chain: { input_id: string; round: number; response: CompletionResponse; duration_ms: number };
  /** The assistant's visible state (LEDs, HA sensor): idle, listening, thinking, speaking, error. */
  assistant_state: { state: 'idle' | 'listening' | 'thinking' | 'speaking' | 'error'; input_id?: string };
  /** A stop happened (button, /stop, CLI, HA). */
  stop: { source: string; cancelled_inputs: number };
  /** Custom plugin events. */
  [custom: `plugin.${string}`]: Record<string, unknown>;
}
export type EventType = keyof EventMap;

/** Setting value types of the ConfigRegistry. */
export type SettingType = 'string' | 'number' | 'integer' | 'boolean' | 'json' | 'secret';

/** A registered setting (seed 000 §10 `Register(key, default)`, plus type and description). */
export interface SettingDef {
  key: string;
  type: SettingType;
  default: unknown;
  description: string;
  /** Allowed values for strings. */
  enum?: readonly string[];
  min?: number;
  max?: number;
  /** Further validation: returns what is wrong with a value, or undefined when it is fine. */
  check?: (value: unknown) => string | undefined;
}

/** The settings view a plugin gets (seed 000 §10 Settings().Get/Set/List). */
export interface SettingsAPI {
  get<T = unknown>(key: string): T;
  set(key: string, value: unknown): void;
  /** Set from a command-line string, parsed by the key's type (optional; the ConfigRegistry has it). */
  setFromString?(key: string, raw: string): void;
  list(prefix?: string): Array<{ key: string; value: unknown; type: SettingType; description: string; source: 'default' | 'stored' | 'env' }>;
  delete(key: string): void;
  register(def: SettingDef): void;
  /** Called after any key under `prefix` changes; returns an unsubscribe function. */
  onChange(prefix: string, cb: (key: string, value: unknown) => void): () => void;
}

/** A subject-relation-object fact for the graph memory. */
export interface Triple {
  subject: string;
  relation: string;
  object: string;
  subject_type?: string;
  object_type?: string;
  confidence?: number;
  /** The sentence the fact came from. */
  sentence?: string;
}

/** The memory access plugins get (seed 000 §11 Memory().Recall/Commit). */
export interface MemoryAPI {
  recall(query: string, limit?: number): Promise<MemItem[]>;
  commit(triples: Triple[]): Promise<{ entities: number; relations: number }>;
}

/** The knowledge-base access plugins get (seed 000 §5). */
export interface KnowledgeAPI {
  search(query: string, limit?: number): Promise<Array<{ name: string; score: number; snippet: string }>>;
  create(name: string, content: string): Promise<void>;
  list(): Promise<string[]>;
}

/** A structured logger (pino-compatible subset). */
export interface Logger {
  debug(obj: unknown, msg?: string): void;
  info(obj: unknown, msg?: string): void;
  warn(obj: unknown, msg?: string): void;
  error(obj: unknown, msg?: string): void;
  child(bindings: Record<string, unknown>): Logger;
}

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
  /** Stop: abort the LLM call, silence output, short-circuit inputs queued now. Kernel-level plugins only. */
  stop(source: string): void;
  /** Deliver a message to an output channel directly (passes before_output/after_output). */
  sendOutput(channel: string, content: string, meta?: Record<string, unknown>): Promise<void>;
  settings(): SettingsAPI;
  memory(): MemoryAPI;
  knowledge(): KnowledgeAPI;
}

/**
 * A plugin (seed 001 "Plugin Interface"; zigbee2mqtt extension style): the
 * constructor only stores dependencies, `start` registers, `stop` releases.
 */
export interface Plugin {
  readonly name: string;
  /** Built-in kernel-level plugins (GPIO stop button) may raise L4 and call stop(). */
  readonly kernelLevel?: boolean;
  start(sdk: PluginSDK): void | Promise<void>;
  stop?(): void | Promise<void>;
}
