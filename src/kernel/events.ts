/**
 * The typed bus's event map (seed 000 §12, seed 001 EventAgentLLMChain): each
 * event name with its payload type. No IO here.
 */
import type { CompletionResponse } from './llm-types.js';
import type { OutputMessage } from './output-types.js';
import type { InputMessage } from './turn-types.js';

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

