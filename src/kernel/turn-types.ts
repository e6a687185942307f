/**
 * Inputs and turns: what enters the agent (seed 001 `InjectInput(source,
 * channel, payload)`, interrupt levels of seed 001 "Input Scheduler &
 * Interrupt Mechanism") and what a finished turn reports back to whoever
 * injected it. No IO here.
 */

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

/** Options of injectInput / injectInterrupt. */
export interface InjectOptions {
  user?: string;
  images?: string[];
  meta?: Record<string, unknown>;
  /**
   * Called synchronously with the input's id once it is accepted, before any
   * output for it can be sent, so a channel serving several callers (the
   * maintenance socket's `ask`) routes each reply (`OutputMessage.input_id`)
   * to the caller that asked.
   */
  onAccepted?: (inputId: string) => void;
  /**
   * Aborted when whoever asked is gone (the maintenance socket's `ask`
   * client disconnected). A turn that has not begun by then is dropped: it
   * runs no stage, so nothing it asked for acts late, and it ends
   * `cancelled`. A turn already under way runs to its end (what was asked
   * is being done).
   */
  signal?: AbortSignal;
}

/**
 * Why a reply ended before the model finished it, other than the user's stop
 * (issue 14). The reason is a value of the turn's outcome, recorded once in
 * `turn.finished`; the run log, the memory window and the `ask` result take
 * it from there.
 * - `connection_lost`: the stream broke after text had arrived (cut, reset,
 *   stalled, or the server reported an error mid-answer); the text that
 *   arrived is kept.
 * - `reply_limit`: the model wrote more than core.agent.max_reply_chars in
 *   one round; the stream was closed there and the text up to the cap kept.
 * - `tool_call_limit`: one round asked for more than core.agent.max_tool_calls
 *   tool calls; the stream was closed and none of them ran.
 */
export type CutReason = 'connection_lost' | 'reply_limit' | 'tool_call_limit';

/** What a finished turn reports to whoever injected the input. */
export interface TurnResult {
  input_id: string;
  /** The reply text delivered to the input's channel ('' when none). */
  reply: string;
  /**
   * 'done' normally; 'interrupted' when stop cut it; 'cut_short' when the
   * reply ended early for `cut_reason` (what arrived is in `reply`);
   * 'short_circuit' when a stage answered; 'error' on failure; 'cancelled'
   * when stop dropped it before it ran.
   */
  status: 'done' | 'interrupted' | 'cut_short' | 'short_circuit' | 'error' | 'cancelled';
  /** Why the reply was cut short (status 'cut_short'). */
  cut_reason?: CutReason;
  /** Tools the turn executed, in order. */
  tools: Array<{ name: string; arguments: Record<string, unknown>; result: string; is_error: boolean; denied?: boolean }>;
  error?: string;
}

