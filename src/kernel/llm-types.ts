/**
 * LLM wire types: the provider-neutral chat model every provider adapter maps
 * to and from (OpenAI/Ollama field names: `tool_calls`, `finish_reason`,
 * `tool_call_id`), the unified request/response of seed 000 §9 and the
 * `Provider` interface. No IO here.
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

