/**
 * The assistant state machine: the one owner of the assistant state
 * (src/kernel/assistant-state.ts). Its events are the voice pipeline's
 * activity (`plugin.voice.activity`: capture, speaker, follow-up, mute,
 * failure) and the kernel's facts (a turn started or finished, stop). The
 * rules are a transition table, state x event -> state, read top to bottom,
 * first match wins; each event first updates what is going on (captures,
 * running turns, speaker) in `apply`, then the table picks the state.
 *
 * The rule the table exists for: the box is idle only when the speaker has
 * finished, no turn runs and no follow-up listening is due; a turn that ends
 * while its reply is still spoken leaves the box `speaking`.
 *
 * Targets besides a state: `same` (no change), `rest` (idle, or muted when
 * the microphone is off), `busy` (what is still going on: `speaking` while
 * the speaker plays or a follow-up is due, else `thinking` while a turn
 * runs, else `rest`). Pure: no IO, no timers.
 */
import type { AssistantState, VoiceActivity } from '../kernel/assistant-state.js';

/** An event of the machine: voice activity, or a kernel fact. */
export type StateEvent =
  | VoiceActivity
  | { event: 'turn_start'; input_id: string; channel: string }
  | { event: 'turn_end'; input_id: string }
  | { event: 'stop' };

/** Event names. */
export type StateEventName = StateEvent['event'];

/** What is going on, besides the visible state. */
export interface StateContext {
  /** listen_id of the capture in progress. */
  listening: string | undefined;
  /** Kernel turns running: input id -> its channel; the self-input channel is not counted. */
  readonly turns: Map<string, string>;
  /** Voice inputs injected whose turn result has not come back (listen ids). */
  readonly pending: Set<string>;
  /** The speaker plays or has sentences queued. */
  speaking: boolean;
  /** Listening is due after the reply being spoken: for an answer to a question, or to a yes/no confirmation. */
  followup: 'none' | 'question' | 'confirmation';
  /** The microphone is off. */
  muted: boolean;
}

/** A row's target. */
export type Target = AssistantState | 'same' | 'rest' | 'busy';

/** One row of the table. */
export interface Transition {
  from: readonly AssistantState[] | '*';
  on: StateEventName;
  /** Extra condition on the context (after `apply`) and the event. */
  when?: (ctx: StateContext, ev: StateEvent) => boolean;
  to: Target;
  /** Why (shows in tests and the docs). */
  note?: string;
}

const LISTENING: readonly AssistantState[] = ['listening', 'waiting_for_answer'];
/** The voice pipeline's output channel: a turn on it is a spoken reply. */
const SPEAKER = 'speaker';
const WORKING: readonly AssistantState[] = ['thinking', 'speaking'];

/** The transition table. */
export const TRANSITIONS: readonly Transition[] = [
  // stop and mute
  { from: '*', on: 'stop', to: 'rest', note: 'stop cuts everything: speech, the turn, the capture, a due follow-up' },
  { from: WORKING, on: 'mute', to: 'same', note: 'a reply already under way goes on (muted shows when it is over)' },
  { from: '*', on: 'mute', to: 'muted' },
  { from: ['muted'], on: 'unmute', to: 'busy' },
  { from: '*', on: 'unmute', to: 'same' },
  // captures
  { from: ['muted'], on: 'listen_start', to: 'same', note: 'a muted box does not listen' },
  { from: '*', on: 'listen_start', when: (_c, ev) => ev.event === 'listen_start' && ev.answer, to: 'waiting_for_answer' },
  { from: '*', on: 'listen_start', to: 'listening', note: 'button, wake word, CLI; during a reply this is barge-in' },
  { from: LISTENING, on: 'listen_end', when: (c) => c.listening !== undefined, to: 'same', note: 'the end of a capture that a newer one replaced' },
  { from: LISTENING, on: 'listen_end', when: (_c, ev) => ev.event === 'listen_end' && ev.next === 'turn', to: 'thinking' },
  { from: LISTENING, on: 'listen_end', when: (_c, ev) => ev.event === 'listen_end' && ev.next === 'message', to: 'same', note: '"didn\'t catch that" is about to be spoken' },
  { from: LISTENING, on: 'listen_end', to: 'busy' },
  { from: '*', on: 'listen_end', to: 'same' },
  { from: WORKING, on: 'input_done', to: 'busy' },
  { from: '*', on: 'input_done', to: 'same' },
  // kernel turns
  { from: ['idle', 'muted', 'error'], on: 'turn_start', to: 'thinking' },
  { from: '*', on: 'turn_start', to: 'same', note: 'listening and speaking win over a turn that starts meanwhile' },
  { from: WORKING, on: 'turn_end', to: 'busy', note: 'idle only when the speaker has finished' },
  { from: '*', on: 'turn_end', to: 'same' },
  // the speaker
  { from: LISTENING, on: 'speech_start', when: (c) => c.listening !== undefined, to: 'same', note: 'a message spoken while the microphone captures does not hide the listening' },
  { from: '*', on: 'speech_start', to: 'speaking' },
  { from: ['speaking'], on: 'speech_end', when: (c) => c.pending.size > 0 || [...c.turns.values()].includes(SPEAKER), to: 'same', note: 'between sentences while the model still writes a spoken reply' },
  { from: ['speaking', 'error'], on: 'speech_end', to: 'busy', note: 'speaking until listening follows when a follow-up is due' },
  { from: LISTENING, on: 'speech_end', when: (c) => c.listening === undefined, to: 'busy', note: 'the "didn\'t catch that" could not be spoken' },
  { from: '*', on: 'speech_end', to: 'same' },
  // follow-up
  { from: '*', on: 'followup_expected', to: 'same' },
  { from: WORKING, on: 'followup_cancelled', to: 'busy' },
  { from: '*', on: 'followup_cancelled', to: 'same' },
  // failure
  { from: '*', on: 'failure', to: 'error' },
];

/** Update what is going on for `ev` (before the table picks the state). */
export function apply(ctx: StateContext, ev: StateEvent): void {
  switch (ev.event) {
    case 'stop':
      ctx.listening = undefined;
      ctx.turns.clear();
      ctx.pending.clear();
      ctx.speaking = false;
      ctx.followup = 'none';
      return;
    case 'mute':
      ctx.muted = true;
      ctx.listening = undefined;
      ctx.followup = 'none';
      return;
    case 'unmute':
      ctx.muted = false;
      return;
    case 'listen_start':
      if (ctx.muted) return;
      ctx.listening = ev.listen_id;
      ctx.followup = 'none';
      return;
    case 'listen_end':
      if (ctx.listening === ev.listen_id) ctx.listening = undefined;
      if (ev.next === 'turn') ctx.pending.add(ev.listen_id);
      return;
    case 'input_done':
      ctx.pending.delete(ev.listen_id);
      return;
    case 'turn_start':
      ctx.turns.set(ev.input_id, ev.channel);
      return;
    case 'turn_end':
      ctx.turns.delete(ev.input_id);
      return;
    case 'speech_start':
      ctx.speaking = true;
      return;
    case 'speech_end':
      ctx.speaking = false;
      return;
    case 'followup_expected':
      if (!ctx.muted) ctx.followup = ev.answer ? 'confirmation' : 'question';
      return;
    case 'followup_cancelled':
      ctx.followup = 'none';
      return;
    case 'failure':
      return;
  }
}

/** The rest state: idle, or muted while the microphone is off. */
function rest(ctx: StateContext): AssistantState {
  return ctx.muted ? 'muted' : 'idle';
}

/** What is still going on: speaking, thinking, or the rest state. */
function busy(ctx: StateContext): AssistantState {
  if (ctx.speaking || ctx.followup !== 'none') return 'speaking';
  if (ctx.turns.size > 0 || ctx.pending.size > 0) return 'thinking';
  return rest(ctx);
}

/** The first row of `table` that matches `state` and `ev` (after `apply`). */
export function findTransition(table: readonly Transition[], state: AssistantState, ev: StateEvent, ctx: StateContext): Transition | undefined {
  return table.find((t) => t.on === ev.event && (t.from === '*' || t.from.includes(state)) && (!t.when || t.when(ctx, ev)));
}

/** One state change, for listeners. */
export interface StateChange {
  from: AssistantState;
  to: AssistantState;
  event: StateEvent;
}

/** The machine: feed it events, read `state`, listen to changes. */
export class AssistantStateMachine {
  private current: AssistantState = 'idle';
  readonly ctx: StateContext = { listening: undefined, turns: new Map(), pending: new Set(), speaking: false, followup: 'none', muted: false };
  private readonly listeners = new Set<(c: StateChange) => void>();
  /** The row the last event matched (logs, tests). */
  lastTransition: Transition | undefined;

  constructor(private readonly table: readonly Transition[] = TRANSITIONS) {}

  /** The current state. */
  get state(): AssistantState {
    return this.current;
  }

  /** Call `fn` on every change of state (not on events that keep it); returns an unsubscribe function. */
  onChange(fn: (c: StateChange) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  /**
   * Handle one event: update the context, pick the row, change state.
   * Returns the new state. An event no row matches keeps the state (the
   * table ends each event with a catch-all, so this does not happen with
   * the built-in table).
   */
  dispatch(ev: StateEvent): AssistantState {
    apply(this.ctx, ev);
    const row = findTransition(this.table, this.current, ev, this.ctx);
    this.lastTransition = row;
    if (!row) return this.current;
    const next = row.to === 'same' ? this.current : row.to === 'rest' ? rest(this.ctx) : row.to === 'busy' ? busy(this.ctx) : row.to;
    if (next !== this.current) {
      const from = this.current;
      this.current = next;
      for (const l of this.listeners) l({ from, to: next, event: ev });
    }
    return next;
  }
}
