/**
 * What a WebUI session may read of a turn in the run log (issue 18: one
 * person's sensitive facts are not shown to another person). The rule is
 * the prompt history's (src/kernel/prompt.ts `maskPrivate`), applied to the
 * run log's events: a turn belongs to its speaker (the input's person, or
 * the unidentified speaker; the box's own turns to nobody). A viewer who is
 * not its owner (src/kernel/sensitive.ts `visibleTo`: a session paired for a
 * person reads as that person, an unnamed session as the unidentified
 * speaker, as its typed turns are spoken) sees the turn with placeholders:
 *
 * - when any of the turn's own words touch a sensitive topic (what was said,
 *   the memory recalled for it, the tool calls and results, what the model
 *   wrote and what was delivered), all of them are masked: "[Anna said
 *   something private]" for the input, "[private]" for the rest, tool calls
 *   without their arguments; the answer to a sensitive question is as
 *   private as the question, even when its own words do not say so;
 * - the earlier history inside the turn's context (masked for the owner,
 *   not for this viewer) is masked turn by turn by the same rule: each
 *   earlier turn (its turn context, which names its speaker, and the
 *   messages up to the next one) whose words touch a sensitive topic and
 *   whose speaker is not the viewer; what stands before the first turn
 *   context (the system message, a compaction summary, history of the
 *   older layout) message by message;
 * - what a compaction took out of the prompt is masked as the prompt
 *   history masks it, a summary touching a sensitive topic replaced.
 *
 * The event shapes, ids, timings and round numbers stay, so the Activity
 * page can still show that a turn ran and how. Pure functions; no IO.
 */
import type { ChatMessage, ToolCall } from '../../kernel/llm-types.js';
import type { RunEvent, StoredRunEvent } from '../../kernel/run-log.js';
import { TURN_CONTEXT_MARK, maskPrivate } from '../../kernel/prompt.js';
import { isSensitiveText, visibleTo } from '../../kernel/sensitive.js';
import { UNKNOWN_SPEAKER } from '../../kernel/people.js';
import { isSelfInput } from '../../kernel/turn-types.js';

/** Who reads: a person's name, undefined for the unidentified speaker (an unnamed session), null for nobody in particular. */
export type TurnViewer = string | undefined | null;

/** What stands for masked text. */
export const PRIVATE = '[private]';

/**
 * Whose turn `events` (one turn's stored events, in order) is: the speaker
 * of its input (the unidentified speaker when none was recognised); null for
 * the box's own turns (channels and sources starting with `_`) and for a
 * turn whose start is no longer in the log (nobody's: shown to nobody).
 */
export function turnOwner(events: readonly StoredRunEvent[]): string | null {
  const start = events.find((e) => e.type === 'turn.started');
  if (!start || start.type !== 'turn.started' || isSelfInput(start.input)) return null;
  return start.input.user ?? UNKNOWN_SPEAKER;
}

/** Whether `viewer` reads turn `events` as they are (its owner, by `visibleTo`'s rule). */
export function ownsTurn(events: readonly StoredRunEvent[], viewer: TurnViewer): boolean {
  return visibleTo(true, turnOwner(events), viewer);
}

/** Index of the turn's own context message in a projection (the last turn-context message), -1 when none. */
function ownContextIndex(messages: readonly ChatMessage[]): number {
  for (let i = messages.length - 1; i >= 0; i--) if (isTurnContext(messages[i]!)) return i;
  return -1;
}

function messageText(m: ChatMessage): string {
  return [m.content, m.reasoning_content ?? '', ...(m.tool_calls ?? []).map((c) => JSON.stringify(c.function.arguments))].join('\n');
}

const maskCalls = (calls: readonly ToolCall[]): ToolCall[] => calls.map((c) => ({ ...c, function: { ...c.function, arguments: {} } }));
const maskText = (s: string): string => (s === '' ? s : PRIVATE);

/** A message with its words replaced (role, ids and tool names kept); a turn context keeps its first line (time, channel, speaker). */
function maskMessage(m: ChatMessage): ChatMessage {
  const content = m.role === 'user' && m.content.startsWith(TURN_CONTEXT_MARK) ? m.content.split('\n')[0]! : maskText(m.content);
  const { images: _images, ...rest } = m;
  return { ...rest, content, ...(m.reasoning_content ? { reasoning_content: PRIVATE } : {}), ...(m.tool_calls ? { tool_calls: maskCalls(m.tool_calls) } : {}) };
}

/** Whether `m` is a turn context message (`[Turn context: …]`). */
function isTurnContext(m: ChatMessage): boolean {
  return m.role === 'user' && typeof m.content === 'string' && m.content.startsWith(TURN_CONTEXT_MARK);
}

/** The speaker a turn context names (`…; speaker: Anna]` on its first line); null when it names none (the box's own turns). */
function contextSpeaker(m: ChatMessage): string | null {
  const head = m.content.split('\n')[0]!;
  const at = head.lastIndexOf('; speaker: ');
  return at < 0 ? null : head.slice(at + '; speaker: '.length).replace(/\]$/, '');
}

/**
 * A projected message list as `viewer` reads it: messages from `own` on are
 * the turn's own (masked when `secret`); the earlier turns of the history
 * by their speakers (see the module comment).
 */
function maskProjection(messages: readonly ChatMessage[], own: number, secret: boolean, viewer: TurnViewer): ChatMessage[] {
  const out = messages.map((m) => m);
  const end = own >= 0 ? own : messages.length;
  let i = 0;
  // Before the first turn context: message by message.
  for (; i < end && !isTurnContext(messages[i]!); i++) if (isSensitiveText(messageText(messages[i]!))) out[i] = maskMessage(messages[i]!);
  // Then one earlier turn at a time: its context and what follows up to the next one.
  while (i < end) {
    let j = i + 1;
    while (j < end && !isTurnContext(messages[j]!)) j++;
    const turn = messages.slice(i, j);
    if (!visibleTo(true, contextSpeaker(messages[i]!), viewer) && isSensitiveText(turn.map(messageText).join('\n'))) for (let k = i; k < j; k++) out[k] = maskMessage(messages[k]!);
    i = j;
  }
  if (own >= 0 && secret) for (let k = own; k < messages.length; k++) out[k] = maskMessage(messages[k]!);
  return out;
}

/**
 * The words of one of a turn's own events (not its earlier history): what
 * decides whether the turn is private. The Activity stream asks it event by
 * event as the turn runs (activity-stream.ts); `maskTurn` of a whole turn.
 */
export function eventWords(e: RunEvent): string {
  switch (e.type) {
    case 'turn.started':
      return e.input.text;
    case 'context.projected': {
      const i = ownContextIndex(e.messages);
      return i >= 0 ? e.messages.slice(i).map(messageText).join('\n') : '';
    }
    case 'llm.requested':
      return e.appended.map(messageText).join('\n');
    case 'llm.completed':
      return [e.response.content, e.response.reasoning_content ?? '', ...e.response.tool_calls.map((c) => JSON.stringify(c.function.arguments))].join('\n');
    case 'tool.pre_execute':
      return JSON.stringify(e.arguments);
    case 'tool.executed':
      return `${JSON.stringify(e.arguments)}\n${e.result}`;
    case 'output':
      return e.content;
    case 'turn.finished':
      return `${e.reply}\n${e.said}`;
    case 'error':
      return e.message;
    default:
      return '';
  }
}

/** What another viewer reads in place of `owner`'s private input: "[Anna said something private]" ("someone" for nobody's). */
export function privateInputText(owner: string | null): string {
  return `[${owner ?? 'someone'} said something private]`;
}

/** An input with its words masked for another viewer (text replaced, images left out; source, channel, speaker kept). */
export function maskInput<I extends { text: string; images?: string[] }>(input: I, owner: string | null): Omit<I, 'images'> {
  const { images: _images, ...rest } = input;
  return { ...rest, text: privateInputText(owner) };
}

/**
 * One event of `owner`'s turn as a viewer who does not own it reads it (see
 * the module comment): the turn's own words replaced when the turn is
 * `secret`; the earlier history in a projection (its masking depends on
 * `viewer`) and compaction events by their own rules. For the Activity
 * stream's events (no projections, no compactions) the result is the same
 * for every such viewer. Never throws; `e` is not modified.
 */
export function maskEvent(e: RunEvent, owner: string | null, secret: boolean, viewer: TurnViewer): RunEvent {
  switch (e.type) {
    case 'turn.started':
      return secret ? { ...e, input: maskInput(e.input, owner) } : e;
    case 'context.projected':
      return { ...e, messages: maskProjection(e.messages, ownContextIndex(e.messages), secret, viewer) };
    case 'llm.requested':
      return secret ? { ...e, appended: e.appended.map(maskMessage) } : e;
    case 'llm.completed':
      if (!secret) return e;
      return {
        ...e,
        response: { ...e.response, content: maskText(e.response.content), ...(e.response.reasoning_content ? { reasoning_content: PRIVATE } : {}), tool_calls: maskCalls(e.response.tool_calls) },
      };
    case 'tool.pre_execute':
      return secret ? { ...e, arguments: {} } : e;
    case 'tool.executed':
      return secret ? { ...e, arguments: {}, result: maskText(e.result) } : e;
    case 'output':
      return secret ? { ...e, content: maskText(e.content) } : e;
    case 'turn.finished':
      if (!secret) return e;
      return {
        ...e,
        reply: maskText(e.reply),
        said: maskText(e.said),
        outcome: { ...e.outcome, reply: maskText(e.outcome.reply), ...('message' in e.outcome ? { message: maskText(e.outcome.message) } : {}) } as typeof e.outcome,
      };
    case 'error':
      return secret ? { ...e, message: maskText(e.message) } : e;
    case 'compaction.started':
      return { ...e, covered: maskPrivate(e.covered, viewer), previous: isSensitiveText(e.previous) ? maskText(e.previous) : e.previous };
    case 'compaction.finished': {
      if (!isSensitiveText(Object.values(e.sections).join('\n'))) return e;
      const sections = Object.fromEntries(Object.entries(e.sections).map(([k, v]) => [k, maskText(v)])) as typeof e.sections;
      return { ...e, sections };
    }
    default:
      return e;
  }
}

/**
 * Turn `events` (one turn's stored events, in order) as `viewer` may read
 * them (see the module comment): unchanged for the turn's owner; otherwise
 * with placeholders. Never throws; the input is not modified.
 */
export function maskTurn(events: readonly StoredRunEvent[], viewer: TurnViewer): StoredRunEvent[] {
  if (ownsTurn(events, viewer)) return [...events];
  const owner = turnOwner(events);
  const secret = isSensitiveText(events.map(eventWords).join('\n'));
  // maskEvent keeps every field it does not mask (seq and at among them).
  return events.map((e) => maskEvent(e, owner, secret, viewer) as StoredRunEvent);
}
