/**
 * Prompt assembly (issue 19 "A stable prefix"; seed 002 §7 cache-friendly:
 * injected pieces at fixed positions, prefix bytes stable). A request is
 * ordered from most stable to least:
 *
 *   system (persona + fixed rules) · tool schemas · history ·
 *   turn context (time to the minute, the input's channel, a short recall) ·
 *   the new user message
 *
 * so a follow-up turn shares every byte up to the history's end with the
 * previous request, and a model server (Ollama, llama.cpp, a hosted cache)
 * re-reads only what is new. The turn context is a `user` message of its
 * own right before the new one: Ollama's templates render system messages
 * only at the top (a later one is hoisted there, which would change the
 * prefix every turn) and merge consecutive user messages, so the block
 * reaches the model where it was put with both adapters. Past tool calls are
 * shown as the assistant's tool calls and their results, never as system
 * notes, for the same reason.
 *
 * The history is the recent tail of the context window, appended turn by
 * turn (`PromptHistory`); when the projected prompt would exceed the band
 * (core.agent.prompt_band) the older part is compacted into a summary shown
 * right after the system message (src/kernel/compaction.ts), so the prefix
 * stays stable between compactions. The window's own relevance pruning
 * (archiving to documents) does not rewrite it.
 *
 * Token budget of seed 001 "Context Budget": working band = min(window x
 * 0.8, 600000); memory gets (band - fixed) / 3, the timeline the other 2/3.
 * Budgets are ceilings.
 */
import type { ChatMessage, Provider, ToolCall, ToolSchema } from './llm-types.js';
import type { RunLog } from './run-log.js';
import { emptySections, findCut, messageTokens, restoreCompaction, summarise, summaryMessage, type CompactionSummary, type RestoredCompaction, type SummarySections } from './compaction.js';
import type { ContextEvent, KernelMemory } from './memory-port.js';
import type { CutReason } from './turn-types.js';
import { estimateTokens } from './memory-port.js';
import { UNKNOWN_SPEAKER } from './people.js';
import { isSensitiveText, visibleTo } from './sensitive.js';

/** Token budget of one turn. */
export interface TokenBudget {
  window: number;
  band: number;
  fixed: number;
  memory: number;
  context: number;
}

/** Seed 001 ComputeTokenBudget. `window` in tokens; `fixed` = persona + tools + rules. */
export function computeTokenBudget(window: number, fixed: number): TokenBudget {
  const band = Math.min(Math.floor(window * 0.8), 600000);
  const free = Math.max(0, band - fixed);
  const memory = Math.floor(free / 3);
  return { window, band, fixed, memory, context: free - memory };
}

/**
 * Which prompt layout turns use: `stable` (the order above) or `legacy` (the
 * order before issue 19: time, channel and recall in the system message, the
 * timeline re-pruned every turn). `legacy` is kept only so the prompt bench
 * (test/bench/prompt.ts) measures the baseline in the same run.
 */
export type PromptLayout = 'stable' | 'legacy';

let layout: PromptLayout = 'stable';

/** Select the prompt layout for turns begun from now on in this process (the bench's baseline switch). */
export function setPromptLayout(l: PromptLayout): void {
  if (l !== 'stable' && l !== 'legacy') throw new TypeError(`prompt layout must be 'stable' or 'legacy', got ${JSON.stringify(l)}`);
  layout = l;
}

/** The prompt layout in use (see `PromptLayout`). */
export function promptLayout(): PromptLayout {
  return layout;
}

/** Tokens of recalled memory in an ordinary turn's context block: a few items; the model asks memory_recall for more. */
export const TURN_RECALL_TOKENS = 60;

/**
 * The fixed rules appended to the persona, by output mode (DESIGN.md
 * "Output"). They never name the input's channel (that changes from turn to
 * turn and is said in the turn context, `turnContext`), so they stay byte
 * for byte the same while the channel list does.
 */
export function stableRules(mode: 'auto' | 'explicit', channels: string[]): string {
  const list = channels.filter((c) => !c.startsWith('_')).join(', ');
  if (mode === 'explicit') {
    return `Output rule: nothing you write reaches anyone unless you call an output_send__<channel> tool. Answer with output_send__<the input channel> (named before each message). Channels: ${list}.`;
  }
  return `Your reply goes to the input channel (named before each message), short and speakable. Other channels: ${list} (tools_load output). Call tools only through the tool interface, never as text.`;
}

/** A time to the minute in the box's local zone, e.g. "Tue Dec 01 2026 04:36 GMT+0000" (the zone's long name left out: tokens every turn). `now` in epoch ms. */
export function minuteTime(now: number): string {
  return new Date(now).toString().replace(/(\d{2}:\d{2}):\d{2}/, '$1').replace(/ \([^)]*\)$/, '');
}

/**
 * The turn context: what changes every turn, placed right before the new
 * user message (time to the minute, the input's channel, who is speaking,
 * the short recall block, '' when none). `now` in epoch ms. `speaker`: the
 * person speaking, or "someone in the household" (src/kernel/people.ts);
 * absent for the kernel's own inputs. It is said here, never in the system
 * message, so the prefix stays stable when the speaker changes (issue 19).
 */
export function turnContext(opts: { now: number; channel: string; mode: 'auto' | 'explicit'; memory: string; speaker?: string }): string {
  return contextText(turnContextParts(opts));
}

/** How a turn context opens (one line: `[Turn context: <time>; channel <name>; speaker: <who>]`, about 30 tokens). */
export const TURN_CONTEXT_MARK = '[Turn context:';

/** The turn context in its two parts (see ContextEvent.context): `head` (time, channel, speaker) and `memory` (the recall block). */
export function turnContextParts(opts: { now: number; channel: string; mode: 'auto' | 'explicit'; memory: string; speaker?: string }): { head: string; memory: string } {
  const channel = opts.mode === 'explicit' ? `${opts.channel} (answer with output_send__${opts.channel})` : opts.channel;
  const speaker = opts.speaker === undefined ? '' : `; speaker: ${opts.speaker}`;
  return { head: `${TURN_CONTEXT_MARK} ${minuteTime(opts.now)}; channel ${channel}${speaker}]`, memory: opts.memory };
}

/** The text of a turn context message from its parts. */
export function contextText(c: { head: string; memory: string }): string {
  return [c.head, c.memory].filter(Boolean).join('\n');
}

/** The rules appended to the persona before issue 19 (legacy layout only): they name the input's channel. */
export function outputRules(mode: 'auto' | 'explicit', channel: string, channels: string[]): string {
  const list = channels.filter((c) => !c.startsWith('_')).join(', ');
  if (mode === 'explicit') {
    return `Output rule: nothing you write reaches anyone unless you call an output_send__<channel> tool. The current input came from channel "${channel}"; answer there with output_send__${channel}. Channels: ${list}.`;
  }
  return `Your plain text reply goes back to the channel the input came from ("${channel}"); keep it short and speakable. To send something to another channel, call output_send__<channel>. Channels: ${list}. To call a tool, use the tool-calling interface; never write tool calls as text.`;
}

/** What the model reads after a reply of its own that was cut short: the true reason, never "interrupted by the user". */
const CUT_MARKS: Record<CutReason, string> = {
  connection_lost: '[cut off: the connection to the language model was lost]',
  reply_limit: '[cut off: the reply reached the length limit]',
  tool_call_limit: '[cut off: too many tool calls at once; none of them ran]',
};

/**
 * Render the timeline as chat messages (past turns). `notes`: tool events as
 * compact system notes (the legacy layout); otherwise (the stable layout) as
 * the assistant's tool call and its result, the shape every chat template
 * carries in place.
 */
export function timelineMessages(events: ContextEvent[], opts: { toolNotes?: boolean } = {}): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const e of events) {
    if (e.kind === 'tool' && !opts.toolNotes) {
      const call = pastToolCall(e);
      out.push({ role: 'assistant', content: '', tool_calls: [call] });
      out.push({ role: 'tool', tool_call_id: call.id, name: call.function.name, content: truncate(e.response, 600) });
      continue;
    }
    switch (e.kind) {
      case 'user':
        // With its turn context (which names the speaker): the two messages the turn was sent with, byte for byte.
        if (e.context) {
          out.push({ role: 'user', content: contextText(e.context) });
          out.push({ role: 'user', content: e.input });
        } else out.push({ role: 'user', content: e.speaker ? `${e.speaker}: ${e.input}` : e.input });
        break;
      case 'agent':
        if (e.response) out.push({ role: 'assistant', content: e.interrupted ? `${e.response} [interrupted by the user]` : e.cut ? `${e.response} ${CUT_MARKS[e.cut]}` : e.response });
        break;
      case 'tool':
        out.push({ role: 'system', content: `[tool ${e.tool ?? ''}] ${e.input} -> ${truncate(e.response, 600)}` });
        break;
      case 'cold_storage':
        out.push({ role: 'system', content: `[recalled, ${new Date(e.time).toISOString()}] ${e.input}${e.response ? ` -> ${e.response}` : ''}` });
        break;
    }
  }
  return out;
}

/**
 * A past tool event as the call the model made: the name from the recorded
 * `name({...})` input (else `tool`; a tools_call event's `tool` is the inner
 * tool that ran, its input the tools_call), the arguments parsed from the recorded
 * `name({...})` input ({} when they do not parse), the id from the event's
 * (`<turn>:tool:<call id>`), so the same event always renders the same bytes.
 */
function pastToolCall(e: ContextEvent): ToolCall {
  const open = e.input.indexOf('(');
  const name = open > 0 ? e.input.slice(0, open) : (e.tool ?? e.input);
  let args: Record<string, unknown> = {};
  if (open >= 0 && e.input.endsWith(')')) {
    try {
      const v: unknown = JSON.parse(e.input.slice(open + 1, -1));
      if (v && typeof v === 'object' && !Array.isArray(v)) args = v as Record<string, unknown>;
    } catch {
      /* not JSON: no arguments */
    }
  }
  const at = e.id.lastIndexOf(':tool:');
  return { id: at >= 0 ? e.id.slice(at + 6) : e.id, type: 'function', function: { name: name || 'tool', arguments: args } };
}

/**
 * The history as `viewer` (the person speaking; undefined: unidentified;
 * null: the kernel's own turns, nobody) may read it (issue 18: the box does
 * not volunteer one person's sensitive facts to another speaker). The rule
 * is by turn, as the WebUI reads a turn (src/plugins/webui/turn-privacy.ts):
 * a turn (the events `<turn>:user`, `<turn>:tool:<call>`, `<turn>:agent`)
 * whose own words touch a sensitive topic (src/kernel/sensitive.ts: what
 * was said, the recall block it was sent with, the tool calls and results,
 * the reply) belongs to its speaker, and another viewer reads all of it as
 * placeholders: the words as "[Anna said something private]", the tool
 * calls and the replies as "[private]", the turn context without its recall
 * block. The answer to a sensitive question is as private as the question,
 * even when its own words do not say so. A turn whose user event is not in
 * `events` has no known owner and is shown to nobody; a recalled
 * conversation (`cold_storage`) is its own, by its speaker. Besides, a
 * sensitive recall block is only ever shown to its own speaker. The same
 * events and viewer always give the same bytes, so the prefix stays stable
 * while the speaker does.
 */
export function maskPrivate(events: readonly ContextEvent[], viewer: string | undefined | null): ContextEvent[] {
  const speakers = new Map<string, string>();
  const words = new Map<string, string[]>();
  for (const e of events) {
    if (e.kind === 'cold_storage') continue;
    const turn = turnOfEvent(e);
    if (e.kind === 'user' && e.id.endsWith(':user')) speakers.set(turn, e.speaker ?? UNKNOWN_SPEAKER);
    let w = words.get(turn);
    if (!w) words.set(turn, (w = []));
    w.push(e.input, e.response, e.context?.memory ?? '');
  }
  const secret = new Set<string>();
  for (const [turn, w] of words) if (isSensitiveText(w.join('\n'))) secret.add(turn);
  return events.map((e) => {
    // A recall block shown to its own speaker stays theirs: another viewer sees the context without it.
    if (e.context?.memory && isSensitiveText(e.context.memory) && !visibleTo(true, e.speaker ?? UNKNOWN_SPEAKER, viewer)) e = { ...e, context: { head: e.context.head, memory: '' } };
    if (e.kind === 'cold_storage') {
      if (!isSensitiveText(`${e.input}\n${e.response}`) || visibleTo(true, e.speaker, viewer)) return e;
      return { ...e, input: '[private]', response: '' };
    }
    const turn = turnOfEvent(e);
    if (!secret.has(turn)) return e;
    const owner = e.kind === 'user' ? (e.speaker ?? UNKNOWN_SPEAKER) : speakers.get(turn);
    if (visibleTo(true, owner, viewer)) return e;
    switch (e.kind) {
      case 'user':
        return { ...e, input: `[${owner ?? 'someone'} said something private]`, ...(e.context ? { context: { head: e.context.head, memory: '' } } : {}) };
      case 'tool':
        return { ...e, input: `${e.tool ?? 'tool'}({})`, response: '[private]' };
      case 'agent':
        return { ...e, response: e.response ? '[private]' : '' };
    }
  });
}

/** The turn a context event belongs to (its id before the first `:`: `<turn>:user`, `<turn>:tool:<call>`, `<turn>:agent`). */
function turnOfEvent(e: ContextEvent): string {
  return e.id.split(':')[0]!;
}

/** Estimated tokens of one event as the history shows it (the window's own measure). */
function eventTokens(e: ContextEvent): number {
  return estimateTokens(e.input) + estimateTokens(e.response) + 4;
}

/**
 * The history a prompt shows (issue 19): the context window's events in the
 * order they first appeared, appended turn by turn. Events the window
 * archives (its relevance pruning) stay shown; events the window gets later
 * (new ones, or documents moved back into it) are appended at the end.
 *
 * When the projected prompt would exceed the working band, the turn
 * compacts (`compact`, seed 002 §7, src/kernel/compaction.ts): the older
 * part leaves the prompt and a summary that continues the previous one takes
 * its place right after the system message; both are recorded in the run
 * log, from which `restore` brings the summary back after a restart. As a
 * ceiling without a model (or when compaction cannot get under it), when the
 * shown events outgrow the `update` budget the oldest go in one step down to
 * half the budget, starting at a user message, so the bytes before the
 * history's end stay the same for many turns.
 */
export class PromptHistory {
  private shown: ContextEvent[] = [];
  /** Ids shown now or still in the window (never appended twice). */
  private known = new Set<string>();
  /** The summary in force (shown right after the system message), if any. */
  summary?: CompactionSummary;
  /** After a restore: the events the summary covers, skipped by the next update. */
  private skip?: { ids: Set<string>; through: number };
  /** The compaction in flight (a turn waits for it before assembling its prompt). */
  compacting?: Promise<CompactionOutcome>;
  private compactions = 0;
  /** Ids of the events compacted away in this process (and those the restored summary covers), newest 5000. */
  private compactedIds = new Set<string>();
  /** Turn contexts by user event id (setContext), shown with their events. */
  private contexts = new Map<string, { head: string; memory: string }>();

  /**
   * Remember the turn context user event `id` (`<turn>:user`) is sent with,
   * so later prompts show it again before that event, byte for byte (the
   * prompt grows by appending). Kept in this process only: after a restart
   * the events show without theirs.
   */
  setContext(id: string, context: { head: string; memory: string }): void {
    this.contexts.set(id, context);
  }

  /** Bring back the summary a previous process left (restoreCompaction); call before the first update. */
  restore(r: RestoredCompaction): void {
    if (!r.summary) return;
    this.summary = r.summary;
    this.skip = { ids: new Set(r.summary.covered), through: r.summary.throughTime };
    this.noteCompacted(r.summary.covered);
  }

  /**
   * Take in `window` (the memory's timeline, oldest first) and return the
   * events to show, oldest first, within `budgetTokens` (estimated; at least
   * the newest event when any).
   */
  update(window: readonly ContextEvent[], budgetTokens: number): ContextEvent[] {
    if (this.skip) {
      // After a restart: what the summary covers is not shown again (the events up to the last covered one).
      const { ids, through } = this.skip;
      this.skip = undefined;
      let last = -1;
      window.forEach((e, i) => {
        if (ids.has(e.id)) last = i;
      });
      window.forEach((e, i) => {
        if (i <= last || ids.has(e.id) || (last < 0 && e.time < through)) this.known.add(e.id);
      });
    }
    for (const e of window) {
      if (this.known.has(e.id)) continue;
      this.known.add(e.id);
      this.shown.push(e);
    }
    let used = this.shown.reduce((n, e) => n + eventTokens(e), 0);
    if (used > budgetTokens) {
      // Drop a block: down to half the budget, then on to the next user message (a tool result is never the first).
      let i = 0;
      while (i < this.shown.length - 1 && used > budgetTokens / 2) used -= eventTokens(this.shown[i++]!);
      while (i < this.shown.length - 1 && this.shown[i]!.kind !== 'user') i++;
      this.shown = this.shown.slice(i);
    }
    this.known = new Set([...window.map((e) => e.id), ...this.shown.map((e) => e.id)]);
    this.dropStaleContexts();
    return this.events();
  }

  /** The events shown now, oldest first (user events with their turn contexts). */
  events(): ContextEvent[] {
    return this.shown.map((e) => {
      const context = e.kind === 'user' ? this.contexts.get(e.id) : undefined;
      return context ? { ...e, context } : e;
    });
  }

  /** The ids of events a compaction took out of the prompt (the summary covers them), for recall (KernelMemory.recallForPrompt `covered`). */
  covered(): ReadonlySet<string> {
    return this.compactedIds;
  }

  private noteCompacted(ids: readonly string[]): void {
    for (const id of ids) this.compactedIds.add(id);
    // Bounded: the oldest go first (a Set iterates in insertion order).
    for (const id of this.compactedIds) {
      if (this.compactedIds.size <= 5000) break;
      this.compactedIds.delete(id);
    }
  }

  /** Forget the contexts of events no longer shown (kept while their event may still be appended). */
  private dropStaleContexts(): void {
    for (const id of this.contexts.keys()) if (!this.known.has(id)) this.contexts.delete(id);
  }

  /**
   * Compact (seed 002 §7): keep the newest shown events up to
   * `tailTokens` (estimated, as rendered; cut at a legal point, findCut),
   * and replace the older ones by a summary that continues the one in force.
   * Events `keep` returns false for (the turn's own new message) stay and
   * are not counted. Logs `compaction.started` (the covered events' text)
   * before asking the model and `compaction.finished` after, then changes
   * the history; a stop (`signal`) before the end changes nothing. When the
   * model cannot summarise (down, no text), the older events leave anyway
   * and the previous summary stays (`dropped`). Never throws for the
   * model's failure; the run log's error propagates.
   */
  compact(opts: {
    runLog: RunLog;
    turn: string;
    now: number;
    provider: Provider;
    system: ChatMessage;
    tools: ToolSchema[];
    tailTokens: number;
    summaryTokens: number;
    keep?: (e: ContextEvent) => boolean;
    signal?: AbortSignal;
  }): Promise<CompactionOutcome> {
    const run = this.runCompaction(opts).finally(() => {
      if (this.compacting === run) this.compacting = undefined;
    });
    this.compacting = run;
    return run;
  }

  private async runCompaction(opts: Parameters<PromptHistory['compact']>[0]): Promise<CompactionOutcome> {
    // As the prompt showed them (contexts included): the summary request shares the prompt's prefix, and the tail is measured as sent.
    const events = this.events().filter((e) => !opts.keep || opts.keep(e));
    const msgs: ChatMessage[] = [];
    const owner: number[] = [];
    events.forEach((e, i) => {
      for (const m of timelineMessages([e])) {
        msgs.push(m);
        owner.push(i);
      }
    });
    const cut = findCut(msgs, opts.tailTokens);
    if (cut === 0) return { status: 'none' };
    const older = events.slice(0, cut === msgs.length ? events.length : owner[cut]!);
    if (!older.length) return { status: 'none' };
    const id = `c${opts.now}-${++this.compactions}`;
    const previous = this.summary?.sections;
    opts.runLog.append({ type: 'compaction.started', turn: opts.turn, compaction: id, covered: older, previous: previous ? summaryMessage(previous).content : '' });
    let sections: SummarySections;
    let status: 'summarised' | 'dropped' = 'summarised';
    let reason: string | undefined;
    try {
      sections = await summarise({ provider: opts.provider, system: opts.system, tools: opts.tools, ...(previous ? { previous } : {}), older, render: (ev) => timelineMessages(ev), summaryTokens: opts.summaryTokens, ...(opts.signal ? { signal: opts.signal } : {}) });
    } catch (err) {
      reason = err instanceof Error ? err.message : String(err);
      if (opts.signal?.aborted) {
        opts.runLog.append({ type: 'compaction.finished', turn: opts.turn, compaction: id, status: 'abandoned', sections: previous ?? emptySections(), covered: [], through_time: 0, reason });
        return { status: 'abandoned', id, reason };
      }
      sections = previous ?? emptySections();
      status = 'dropped';
    }
    const covered = older.map((e) => e.id);
    const throughTime = Math.max(...older.map((e) => e.time));
    opts.runLog.append({ type: 'compaction.finished', turn: opts.turn, compaction: id, status, sections, covered, through_time: throughTime, ...(reason ? { reason } : {}) });
    this.summary = { id, sections, covered, throughTime };
    const gone = new Set(covered);
    this.shown = this.shown.filter((e) => !gone.has(e.id));
    for (const id of gone) this.contexts.delete(id);
    this.noteCompacted(covered);
    return { status, id, covered: covered.length, ...(reason ? { reason } : {}) };
  }

  /**
   * Forgetting (issue 18): stop showing the events `gone` says, now and
   * later. `words` are the forgotten texts' rare words: a compaction summary
   * holding one is rewritten without the sentences that hold it.
   */
  forget(gone: (e: ContextEvent) => boolean, words: readonly string[] = []): void {
    for (const e of this.shown) if (gone(e)) this.contexts.delete(e.id);
    this.shown = this.shown.filter((e) => !gone(e));
    const holdsWord = (t: string): boolean => words.some((w) => t.toLowerCase().includes(w.toLowerCase()));
    // A recall block that held a forgotten word is shown no more (the rest of its context stays).
    for (const [id, c] of this.contexts) if (c.memory && holdsWord(c.memory)) this.contexts.set(id, { head: c.head, memory: '' });
    if (this.summary && words.length > 0) {
      const holds = (t: string): boolean => words.some((w) => t.toLowerCase().includes(w.toLowerCase()));
      const sections = { ...this.summary.sections };
      let changed = false;
      for (const k of Object.keys(sections) as Array<keyof typeof sections>) {
        if (!holds(sections[k])) continue;
        sections[k] = sections[k]
          .split(/(?<=[.!?。！？])\s+|\n+/)
          .filter((sentence) => !holds(sentence))
          .join(' ');
        changed = true;
      }
      if (changed) this.summary = { ...this.summary, sections };
    }
  }
}

/** How a compaction ended: `none` when nothing could be taken (no legal cut), else the status logged in `compaction.finished`. */
export type CompactionOutcome =
  | { status: 'none' }
  | { status: 'summarised' | 'dropped'; id: string; covered: number; reason?: string }
  | { status: 'abandoned'; id: string; reason: string };

const histories = new WeakMap<KernelMemory, PromptHistory>();

/**
 * The prompt history kept for `memory` (one per memory instance, for the
 * process's life). Made on first use, with the summary in force restored
 * from `runLog` (restoreCompaction); `onRestore` hears what was found (an
 * orphan compaction: the process died in the middle of one).
 */
export function promptHistoryOf(memory: KernelMemory, runLog?: RunLog, onRestore?: (r: RestoredCompaction) => void): PromptHistory {
  let h = histories.get(memory);
  if (!h) {
    histories.set(memory, (h = new PromptHistory()));
    if (runLog) {
      const r = restoreCompaction(runLog);
      h.restore(r);
      onRestore?.(r);
    }
  }
  return h;
}

/** Estimated tokens of a message list as a request carries it (messageTokens: text, tool calls, framing). */
export function requestTokens(msgs: readonly ChatMessage[]): number {
  return msgs.reduce((n, m) => n + messageTokens(m), 0);
}

/** Tokens of a message list (rough). */
export function messagesTokens(msgs: ChatMessage[]): number {
  let n = 0;
  for (const m of msgs) n += estimateTokens(m.content) + 4;
  return n;
}

function truncate(s: string, n: number): string {
  return s.length > n ? s.slice(0, n) + '…' : s;
}
