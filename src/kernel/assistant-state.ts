/**
 * The assistant state: what the box is doing, as the LEDs, an LED ring, the
 * Home Assistant sensor and `homeagent logs` show it. The one definition of
 * the type; the `assistant_state` bus event carries it and the voice state
 * machine (src/voice/state-machine.ts) is its only publisher. No IO here.
 */

/**
 * - `idle`: nothing going on (the speaker has finished).
 * - `listening`: the microphone captures an utterance (button, wake word, a follow-up after a question).
 * - `thinking`: an input is being handled and nothing is spoken yet.
 * - `speaking`: the speaker plays a reply or a message.
 * - `waiting_for_answer`: listening for the yes/no answer to a confirmation question.
 * - `muted`: the microphone is switched off (`plugin.voice.mute`); nothing listens for the wake word.
 * - `error`: the last utterance failed (the recogniser crashed); shown until something else happens.
 */
export type AssistantState = 'idle' | 'listening' | 'thinking' | 'speaking' | 'waiting_for_answer' | 'muted' | 'error';

/** Every state, in display order. */
export const ASSISTANT_STATES: readonly AssistantState[] = ['idle', 'listening', 'thinking', 'speaking', 'waiting_for_answer', 'muted', 'error'];

/** The states before waiting_for_answer and muted existed (what an LED ring's firmware may know). */
export type LegacyAssistantState = 'idle' | 'listening' | 'thinking' | 'speaking' | 'error';

/**
 * The older state a newer one looks like: waiting_for_answer is a kind of
 * listening, muted a kind of idle. Used where a consumer predates the newer
 * states (an LED pattern a user configured, a serial LED ring's firmware).
 */
export function legacyAssistantState(s: AssistantState): LegacyAssistantState {
  if (s === 'waiting_for_answer') return 'listening';
  if (s === 'muted') return 'idle';
  return s;
}

/** True when `v` names an assistant state. */
export function isAssistantState(v: unknown): v is AssistantState {
  return typeof v === 'string' && (ASSISTANT_STATES as readonly string[]).includes(v);
}

/**
 * What the voice pipeline reports on the bus (`plugin.voice.activity`), the
 * facts the state machine turns into the assistant state. `listen_id` tells
 * one capture from the next (a capture cut by barge-in ends after the new
 * one began).
 * - `listen_start`: a capture began; `answer` when it listens for the yes/no of a confirmation.
 * - `listen_end`: the capture ended; `next` says what follows: `turn` (the transcript was
 *   injected), `message` (the "didn't catch that" is spoken), `nothing` (silence after a
 *   follow-up, stop, barge-in, the plugin stopping).
 * - `input_done`: the injected input's turn result came back.
 * - `speech_start`: audio was handed to the speaker; `speech_end`: the speaker has finished
 *   everything queued (played, cut or failed).
 * - `followup_expected`: a reply that asks something was delivered: listening follows its
 *   playback (`answer`: a confirmation question); `followup_cancelled`: that listening could not start.
 * - `failure`: the recogniser failed.
 * - `mute` / `unmute`: the microphone was switched off / on.
 */
export type VoiceActivity =
  | { event: 'listen_start'; listen_id: string; answer: boolean }
  | { event: 'listen_end'; listen_id: string; next: 'turn' | 'message' | 'nothing' }
  | { event: 'input_done'; listen_id: string }
  | { event: 'speech_start' }
  | { event: 'speech_end' }
  | { event: 'followup_expected'; answer: boolean }
  | { event: 'followup_cancelled' }
  | { event: 'failure'; message: string }
  | { event: 'mute' }
  | { event: 'unmute' };
