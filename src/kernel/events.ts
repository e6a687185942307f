/**
 * The typed bus's event map (seed 000 §12, seed 001 EventAgentLLMChain): each
 * event name with its payload type. No IO here.
 */
import type { CompletionResponse } from './llm-types.js';
import type { OutputMessage } from './output-types.js';
import type { InputMessage, TurnResult } from './turn-types.js';
import type { AssistantState, VoiceActivity } from './assistant-state.js';
import type { Vocabulary } from '../intents/types.js';

/** Event payloads of the typed bus (seed 000 §12, seed 001 EventAgentLLMChain). */
export interface EventMap {
  raw_input: InputMessage;
  agent_output: { input_id?: string; channel: string; content: string; kind: OutputMessage['kind']; interrupted?: boolean };
  tool_call: { input_id: string; call_id: string; name: string; arguments: Record<string, unknown>; result: string; is_error: boolean; denied?: boolean; duration_ms: number };
  reasoning: { input_id: string; text: string };
  system: { kind: string; message: string; data?: Record<string, unknown> };
  agent_llm_chain: { input_id: string; round: number; response: CompletionResponse; duration_ms: number };
  /** The assistant's visible state (LEDs, HA sensor); published only by the assistant-state plugin (src/voice/assistant-state-plugin.ts). */
  assistant_state: { state: AssistantState; input_id?: string };
  /** A turn began running (once per input, not again when a preempted turn resumes); `turn` is the input id. Seed 002 run event names. */
  'turn.started': { turn: string; input: InputMessage };
  /** A turn finished (any outcome); `turn` is the input id. */
  'turn.finished': { turn: string; status: TurnResult['status']; reply: string };
  /** The voice pipeline's facts for the assistant state (captures, speaker, follow-up, mute). */
  'plugin.voice.activity': VoiceActivity;
  /** Switch the microphone off (`muted: true`), on (`false`), or toggle it (no `muted`; e.g. a long-press action `{"type":"event","name":"plugin.voice.mute"}`). */
  'plugin.voice.mute': { muted?: boolean };
  /**
   * The home's vocabulary (device names, rooms, lists) for the speech grammar, on start and whenever
   * devices, names or rooms change. Retained: a subscriber that comes later gets the current one at once.
   */
  'plugin.home.vocabulary': { vocabulary: Vocabulary; entities: number; areas: string[] };
  /** A stop happened (button, /stop, CLI, HA). */
  stop: { source: string; cancelled_inputs: number };
  /** Custom plugin events. */
  [custom: `plugin.${string}`]: Record<string, unknown>;
}
export type EventType = keyof EventMap;

/**
 * Events the bus retains (MQTT style): the last payload of each is handed to
 * a subscriber at once when it subscribes, so a plugin that starts later
 * still gets the current vocabulary and assistant state.
 */
export const RETAINED_EVENTS: ReadonlySet<EventType> = new Set<EventType>(['plugin.home.vocabulary', 'assistant_state']);
