/**
 * Inputs and turns: what enters the agent (seed 001 `InjectInput(source,
 * channel, payload)`, interrupt levels of seed 001 "Input Scheduler &
 * Interrupt Mechanism") and what a finished turn reports back to whoever
 * injected it. No IO here.
 */

/**
 * How the speaker of an input became known: `given` by the injector
 * (`homeagent ask --as NAME`, a plugin that knows), `pairing` (a WebUI
 * pairing link made for that person; the WebUI sets it), `said` (this input
 * says who is speaking: "this is Anna"), `session` (someone said so earlier
 * on the same channel or session, within core.people.speaker_ttl_min).
 */
export type SpeakerVia = 'given' | 'pairing' | 'said' | 'session';

/**
 * The kernel's own inputs (the self-input queue, seed 000 §13): a channel
 * whose name starts with `_` (`_consolidation_`: the memory's merge and review
 * prompts) or a source that does (`_kernel_`). They are housekeeping, never
 * conversation: nothing of their turns enters the memory's context window,
 * the rule distiller's queue, the recall state or the prune query
 * (src/kernel/turn-subscribers.ts memoryWindowSubscriber, turn.ts).
 */
export function isSelfInput(input: Pick<InputMessage, 'source' | 'channel'>): boolean {
  return input.channel.startsWith('_') || input.source.startsWith('_');
}

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
  /**
   * Who is speaking, when known: a person's name as the household knows it
   * (never a channel's name). Unknown: absent, and the prompt says "someone
   * in the household" (src/kernel/people.ts).
   */
  user?: string;
  /** How `user` became known (src/kernel/people.ts SpeakerVia); absent when `user` is. */
  user_via?: SpeakerVia;
  /** Set when no person said it: an announcement a plugin raises (a timer going off). It has no speaker. */
  announcement?: true;
  /** Wall-clock time of arrival, ms since epoch (from the kernel's clock). */
  received_at: number;
  /** Base64-encoded images attached to this input. */
  images?: string[];
  /** Free routing metadata (e.g. the voice pipeline's utterance id). */
  meta?: Record<string, unknown>;
}

/** Options of injectInput / injectInterrupt. */
export interface InjectOptions {
  /**
   * The person speaking, when the injector knows it: `homeagent ask --as
   * NAME`, the person a WebUI pairing link was made for. Never a channel's
   * name; leave it out when unknown (a spoken "this is Anna" may then set it,
   * src/kernel/people.ts).
   */
  user?: string;
  /** How the injector knows `user` (default 'given'); a WebUI pairing link passes 'pairing'. */
  user_via?: Exclude<SpeakerVia, 'said' | 'session'>;
  /**
   * No person said this: an announcement the plugin raises on a channel (a
   * timer going off). It gets no speaker and leaves the channel's speaker
   * session as it is (src/kernel/people.ts).
   */
  announcement?: boolean;
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

