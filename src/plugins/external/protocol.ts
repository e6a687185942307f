/**
 * The process-plugin protocol, version 1 (issue 17 "Process plugins"; seed 001
 * "The Three Communication Planes": the control plane is stdio JSON-RPC with
 * NDJSON frames). Shared by the kernel side (src/plugins/external/process.ts)
 * and the author SDK (src/plugin-sdk/index.ts); no imports, no IO, so the SDK
 * can be bundled into a plugin on its own.
 *
 * Framing: every message is one JSON-RPC 2.0 object on one line of UTF-8
 * ending in "\n" — the plugin's stdout carries plugin→kernel messages, its
 * stdin kernel→plugin ones; stderr is free text logged under the plugin's
 * name. Both sides send requests (with `id`), notifications (without) and
 * responses. docs/PLUGINS.md "Process plugins (JSON-RPC)" is the reference
 * for authors; the method tables below are the source of truth.
 *
 * Life of a plugin:
 *  1. kernel → `initialize` {protocol, plugin, homeagent, capabilities, settings, state_dir, plugin_dir, sandboxed}
 *     ← {protocol, name?}   (a different protocol number fails the start)
 *  2. kernel → `start` {} ; while it is pending the plugin registers
 *     (register_tool, register_stage, subscribe, register_output_channel);
 *     its answer {} closes the start window.
 *  3. kernel → `tool.call` / `stage.run` / `output.deliver` requests and
 *     `event` / `cancel` notifications; plugin → publish, inject, log,
 *     memory.*, social.*, settings.get at any time.
 *  4. kernel → `shutdown` {} ← {}; then its stdin closes; a plugin that has
 *     not exited after the grace gets SIGTERM, then SIGKILL (its process group).
 */

/** The protocol version both sides announce in `initialize`. */
export const PROTOCOL_VERSION = 1;

/** JSON-RPC 2.0 error codes used by the protocol (-32768..-32000 are JSON-RPC's; -32001.. are ours). */
export const RPC_ERRORS = {
  PARSE_ERROR: -32700,
  INVALID_REQUEST: -32600,
  METHOD_NOT_FOUND: -32601,
  INVALID_PARAMS: -32602,
  INTERNAL_ERROR: -32603,
  /** A generic failure; `data.code` carries the HomeAgentError code. */
  FAILED: -32000,
  /** The manifest does not grant the capability the call needs (`data.capability`). */
  PERMISSION_DENIED: -32001,
  /** A name is taken (a tool, an output channel). */
  DUPLICATE: -32002,
  /** The call outlived its time limit. */
  TIMEOUT: -32003,
  /** The call was cancelled (the turn was stopped) or the peer is going away. */
  CANCELLED: -32004,
  /** A registration outside the start window. */
  WINDOW_CLOSED: -32005,
} as const;

/** A JSON-RPC 2.0 error object. */
export interface RpcErrorObject {
  code: number;
  message: string;
  data?: { code?: string; capability?: string; [k: string]: unknown };
}

/** A request (`id` set) or a notification (no `id`). */
export interface RpcRequest {
  jsonrpc: '2.0';
  id?: number | string;
  method: string;
  params?: unknown;
}

/** A response: `result` or `error`. */
export interface RpcResponse {
  jsonrpc: '2.0';
  id: number | string | null;
  result?: unknown;
  error?: RpcErrorObject;
}

/** Params of `initialize` (kernel → plugin). */
export interface InitializeParams {
  protocol: number;
  /** The plugin's name from its manifest. */
  plugin: string;
  /** The HomeAgent version. */
  homeagent: string;
  /** The capabilities the user approved (manifest ∩ approval). */
  capabilities: string[];
  /** The plugin's settings (`plugin.<name>.<key>` without the prefix). Secrets included: they are the plugin's own. */
  settings: Record<string, unknown>;
  /** The private writable folder (inside the sandbox: its path there). */
  state_dir: string;
  /** The plugin's own folder, read-only in the sandbox. */
  plugin_dir: string;
  /** Whether the plugin runs inside the sandbox (false: capabilities are advisory). */
  sandboxed: boolean;
}

/** Result of `initialize` (plugin → kernel). */
export interface InitializeResult {
  protocol: number;
  name?: string;
}

/** Params of `register_tool` (plugin → kernel). `parameters` is a JSON Schema (type object). */
export interface RegisterToolParams {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
  /** One call's limit, ms (default: the plugin's call timeout; never above it). */
  timeout_ms?: number;
  group?: string;
  no_memory?: boolean;
}

/** Params of `register_stage`. */
export interface RegisterStageParams {
  stage: string;
  /** The handler's limit, ms (default core.agent.stage_timeout_ms; never above the call timeout). */
  timeout_ms?: number;
}

/** Params of `subscribe`. */
export interface SubscribeParams {
  event: string;
}

/** Params of `register_output_channel`; `caps` names capabilities (text, file, image, audio, structured, stream). */
export interface RegisterOutputChannelParams {
  name: string;
  caps: string[];
  description: string;
}

/** Params of `tool.call` (kernel → plugin). */
export interface ToolCallParams {
  name: string;
  args: Record<string, unknown>;
  call_id: string;
  input: { id: string; channel: string; text: string; source?: string };
}

/** Result of `tool.call`: text for the model, or any JSON value (sent as JSON). */
export type ToolCallResult = { content: unknown; is_error?: boolean };

/** The stage context as sent in `stage.run` (a JSON copy of the kernel's StageContext). */
export interface WireStageContext {
  stage: string;
  input: { id: string; channel: string; text: string; source?: string };
  raw_message: string;
  context_messages: unknown[];
  llm_text: string;
  tool_calls: unknown[];
  tool_call?: unknown;
  deny: boolean;
  deny_reason?: string;
  tool_result?: unknown;
  final_text: string;
  partial: boolean;
  skip_output: boolean;
  response?: string;
  memory: unknown[];
  extra: Record<string, unknown>;
}

/** Result of `stage.run`: the fields the handler changed (only those its stage may write; seed 000 §3). */
export interface StageRunResult {
  set?: Partial<Record<keyof WireStageContext, unknown>>;
}

/** Output capability names ↔ the kernel's Cap flags (src/kernel/output-types.ts). */
export const CAP_NAMES: Readonly<Record<string, number>> = { text: 1, file: 2, image: 4, audio: 8, structured: 16, stream: 32 };
