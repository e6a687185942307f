/**
 * The turn event stream (issue 13; names after seed 002's run events:
 * turn.started → context.projected → llm.requested → llm.delta… →
 * llm.completed → tool.pre_execute → tool.executed → … → output →
 * turn.interrupted → turn.finished, and error). A turn emits each fact once,
 * as one event of the `TurnEvent` union; everything that records or shows a
 * turn is a subscriber of that one stream (src/kernel/turn-subscribers.ts):
 * the run log (every event but `llm.delta`), the memory window, the bus (every
 * event under its `type` name, `llm.delta` live only) and the `ask` result.
 * `turn` is always the input id. No IO here.
 */
import type { ChatMessage, CompletionResponse } from './llm-types.js';
import type { OutputMessage } from './output-types.js';
import type { StageName } from './stage-types.js';
import type { CutReason, InputMessage, TurnResult } from './turn-types.js';

/**
 * How a turn ended, as a value (never a throw):
 * - `reply`: it ran to the end; `reply` is what reached the input's channel ('' when nothing did).
 * - `short_circuit`: a stage answered (`stage` says which) and the answer was delivered.
 * - `interrupted`: stop cut it; `reply` is what was delivered before; `cancelled` when it was
 *   queued at the stop and never ran a stage.
 * - `cut_short`: the reply ended early for `reason` (CutReason: the stream broke, or a limit was
 *   reached); `reply` is what was delivered (the text that arrived, then one short ending saying
 *   why), `said` in `turn.finished` the model's text that arrived; `message` the cause.
 * - `preempted`: a higher interrupt took over at the LLM boundary; the turn resumes later.
 * - `error`: it failed (`message`); `reply` is the apology delivered, if any.
 */
export type TurnOutcome =
  | { kind: 'reply'; reply: string }
  | { kind: 'short_circuit'; reply: string; stage: StageName }
  | { kind: 'interrupted'; reply: string; cancelled: boolean }
  | { kind: 'cut_short'; reply: string; reason: CutReason; message: string }
  | { kind: 'preempted' }
  | { kind: 'error'; reply: string; message: string };

/** A turn's end as reported in `turn.finished` (every outcome but `preempted`, which is not an end). */
export type FinalOutcome = Exclude<TurnOutcome, { kind: 'preempted' }>;

/** One fact of a turn. */
export type TurnEvent =
  /** The turn began (once per input; a resumed turn does not start again). */
  | { type: 'turn.started'; turn: string; input: InputMessage }
  /** The whole model-visible message list, logged when it is first built or a stage rewrote earlier messages. */
  | { type: 'context.projected'; turn: string; messages: ChatMessage[] }
  /** An LLM request of `round` (1-based): the messages appended since the last projection or request. */
  | {
      type: 'llm.requested';
      turn: string;
      round: number;
      appended: ChatMessage[];
      /** The whole request's estimated tokens: messages and tool schemas (estimateTokens; `homeagent doctor` compares the largest recent one with the model's context). */
      prompt_tokens?: number;
    }
  /** A piece of the streamed answer (live only: published on the bus, never persisted). */
  | { type: 'llm.delta'; turn: string; round: number; kind: 'content' | 'reasoning'; text: string }
  /** The model's complete answer of `round`. `duration_ms` from request to the last piece. */
  | { type: 'llm.completed'; turn: string; round: number; response: CompletionResponse; duration_ms: number }
  /**
   * A tool call passed before_toolcall and is about to run (with the arguments a stage may have changed).
   * `via`: the stable tool the model called it through (tools_call, src/kernel/tool-groups.ts); `name` and `arguments` are the inner call's.
   */
  | { type: 'tool.pre_execute'; turn: string; call_id: string; name: string; arguments: Record<string, unknown>; via?: string }
  /** A tool call's result as fed back to the model (after after_toolcall); `denied` when before_toolcall refused it; `via` as in tool.pre_execute. */
  | { type: 'tool.executed'; turn: string; call_id: string; name: string; arguments: Record<string, unknown>; result: string; is_error: boolean; denied?: boolean; duration_ms: number; via?: string }
  /**
   * Something the turn delivered to an output channel: a whole reply, one
   * sentence of a streamed one, or the end of a streamed one (`interrupted`
   * when stop cut it).
   */
  | { type: 'output'; turn: string; channel: string; kind: OutputMessage['kind']; content: string; interrupted?: boolean }
  /** Stop cut the turn (or cancelled it before it ran: `cancelled`). */
  | { type: 'turn.interrupted'; turn: string; cancelled: boolean }
  /** Something failed: the LLM call (`where: 'llm'`) or the turn itself (`where: 'turn'`). */
  | { type: 'error'; turn: string; where: 'llm' | 'turn'; message: string }
  /**
   * The turn ended. `status` and `reply` repeat the outcome the way the
   * `ask` result (TurnResult) names them. `said` is the agent's words for the
   * memory window: the reply, or the model's final text when it went to no
   * channel (explicit output mode, where plain text is the model's
   * reasoning; consolidation). When the outcome is `cut_short`, `said` is the
   * model's text that arrived (without the spoken ending) and the memory
   * window marks it with the outcome's reason.
   */
  | { type: 'turn.finished'; turn: string; outcome: FinalOutcome; status: TurnResult['status']; reply: string; said: string };

/** The TurnResult status of an outcome. */
export function statusOf(outcome: FinalOutcome): TurnResult['status'] {
  switch (outcome.kind) {
    case 'reply':
      return 'done';
    case 'short_circuit':
      return 'short_circuit';
    case 'interrupted':
      return outcome.cancelled ? 'cancelled' : 'interrupted';
    case 'cut_short':
      return 'cut_short';
    case 'error':
      return 'error';
  }
}

/** The event names, in the order a turn emits them. */
export const TURN_EVENT_TYPES = [
  'turn.started',
  'context.projected',
  'llm.requested',
  'llm.delta',
  'llm.completed',
  'tool.pre_execute',
  'tool.executed',
  'output',
  'turn.interrupted',
  'error',
  'turn.finished',
] as const satisfies ReadonlyArray<TurnEvent['type']>;

/** Name of a turn event. */
export type TurnEventType = TurnEvent['type'];

/** The event of type `K`. */
export type TurnEventOf<K extends TurnEventType> = Extract<TurnEvent, { type: K }>;

/** A subscriber of the turn stream. Called synchronously, in emission order. */
export type TurnEventListener = (ev: TurnEvent) => void;

/**
 * The fan-out of turn events: each subscriber gets every event, in order,
 * synchronously; a throwing subscriber is reported to `onError` and never
 * reaches the turn or the other subscribers.
 */
export class TurnStream {
  private readonly listeners: Array<{ name: string; fn: TurnEventListener }> = [];
  constructor(private readonly onError: (subscriber: string, ev: TurnEvent, err: unknown) => void) {}

  /** Add a subscriber named `name` (for error reports); returns a function that removes it. */
  subscribe(name: string, fn: TurnEventListener): () => void {
    const entry = { name, fn };
    this.listeners.push(entry);
    return () => {
      const i = this.listeners.indexOf(entry);
      if (i >= 0) this.listeners.splice(i, 1);
    };
  }

  /** Deliver `ev` to every subscriber. Never throws. */
  emit(ev: TurnEvent): void {
    for (const l of [...this.listeners]) {
      try {
        l.fn(ev);
      } catch (err) {
        this.onError(l.name, ev, err);
      }
    }
  }
}
