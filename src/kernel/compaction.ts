/**
 * Compaction of the conversation history (issue 19 "Compaction"; seed 002 §7
 * 压缩管线). When the projected prompt of a turn would exceed the working
 * band, the older part of the history the prompt shows is summarised and the
 * recent tail kept word for word:
 *
 * - Cut points (the pi rule): from the end, keep messages up to the tail
 *   budget, then cut at a legal point. A tool result is never a cut point,
 *   and a tool call and its results stay on the same side (`legalCut`,
 *   `findCut`). A user message is preferred, so the tail starts a turn.
 * - The summary continues the previous one: the older part is sent to the
 *   model after the previous summary, with an instruction to write the five
 *   sections the seed names (background, facts, relations, open items,
 *   decisions; `SUMMARY_SECTIONS`). The request repeats the turn's prompt up
 *   to the cut (system, tools, previous summary, the older messages) so a
 *   model server with a prompt cache re-reads only the instruction.
 * - The summary sits at a fixed position: the message right after the system
 *   message (`summaryMessage`), so the prefix stays byte-stable between
 *   compactions.
 * - The run log gets `compaction.started` (with the covered events' original
 *   text, retrievable by `compactedOriginal`) before the model is asked and
 *   `compaction.finished` (the summary, the covered ids) after: one row each,
 *   so a crash in between leaves the previous summary and history in force
 *   and the start without an end is detected on the next start (an orphan,
 *   `restoreCompaction`). The summary survives a restart the same way.
 *
 * No IO of its own beyond the provider call and the run log.
 */
import type { ChatMessage, CompletionRequest, Provider, ToolSchema } from './llm-types.js';
import type { ContextEvent } from './memory-port.js';
import type { RunLog, StoredRunEvent } from './run-log.js';
import { estimateTokens } from './memory-port.js';

/** The summary sections of seed 002 §7 (背景/事实/关系/未决事项/关键决定), in order. */
export const SUMMARY_SECTIONS = ['background', 'facts', 'relations', 'open_items', 'decisions'] as const;

/** A summary section's key. */
export type SummarySection = (typeof SUMMARY_SECTIONS)[number];

/** The heading each section is written under (what the model is asked to write and what it reads back). */
export const SECTION_TITLES: Record<SummarySection, string> = {
  background: 'Background',
  facts: 'Facts',
  relations: 'Relations',
  open_items: 'Open items',
  decisions: 'Decisions',
};

/** Headings accepted when reading a summary back (English and the seed's Chinese names), lower case. */
const HEADINGS: Record<string, SummarySection> = {
  background: 'background',
  facts: 'facts',
  relations: 'relations',
  'open items': 'open_items',
  'open item': 'open_items',
  decisions: 'decisions',
  背景: 'background',
  事实: 'facts',
  关系: 'relations',
  未决事项: 'open_items',
  关键决定: 'decisions',
};

/** The five sections' text ('' when empty). */
export type SummarySections = Record<SummarySection, string>;

/** The summary in force: what the prompt shows after the system message, and what it covers. */
export interface CompactionSummary {
  /** The compaction that wrote it (`c<ms>-<n>`). */
  id: string;
  sections: SummarySections;
  /** Ids of the history events the last compaction took out of the prompt (earlier ones went before them). */
  covered: string[];
  /** Time of the newest covered event, ms since epoch. */
  throughTime: number;
}

/** The first line of the summary message (it is context for the model, not something the user said). */
export const SUMMARY_MARK = '[Summary of the earlier conversation, not said by the user]';

/** The first line of the instruction that asks the model for a summary (the LLM test server and the bench recognise it). */
export const COMPACTION_REQUEST_MARK = '[Compaction request, not said by the user]';

/** The summary as the message right after the system message (only the sections that have text). */
export function summaryMessage(s: SummarySections): ChatMessage {
  const lines = SUMMARY_SECTIONS.filter((k) => s[k].trim()).map((k) => `${SECTION_TITLES[k]}: ${s[k].trim()}`);
  return { role: 'user', content: [SUMMARY_MARK, ...lines].join('\n') };
}

/** Empty sections. */
export function emptySections(): SummarySections {
  return { background: '', facts: '', relations: '', open_items: '', decisions: '' };
}

/**
 * Read the model's summary into sections: a line `<Heading>: text` (a
 * heading of SECTION_TITLES or the seed's Chinese names, with or without a
 * leading `-`, `*` or `#`, either colon) starts a section, later lines
 * without a heading continue it; text before the first heading is
 * background. Returns undefined when the text is empty.
 */
export function parseSummary(text: string): SummarySections | undefined {
  const out = emptySections();
  let current: SummarySection = 'background';
  let any = false;
  for (const raw of text.split(/\r?\n/)) {
    const line = raw.trim();
    if (!line) continue;
    const m = /^[-*#\s]*\**([^:：*]{1,20}?)\**\s*[:：]\s*(.*)$/.exec(line);
    const key = m ? HEADINGS[m[1]!.trim().toLowerCase()] : undefined;
    if (key) {
      current = key;
      if (m![2]!.trim()) out[key] = out[key] ? `${out[key]} ${m![2]!.trim()}` : m![2]!.trim();
      any = true;
      continue;
    }
    out[current] = out[current] ? `${out[current]} ${line.replace(/^[-*]\s*/, '')}` : line.replace(/^[-*]\s*/, '');
    any = true;
  }
  return any ? out : undefined;
}

/** Estimated tokens of the sections as the summary message shows them. */
export function sectionsTokens(s: SummarySections): number {
  return messageTokens(summaryMessage(s));
}

/**
 * Cut the sections down to `maxTokens` (estimated, the summary message
 * whole): the longest section loses its end (at a word boundary, marked
 * '…') until it fits, so every section keeps its start.
 */
export function capSections(s: SummarySections, maxTokens: number): SummarySections {
  const out = { ...s };
  for (let guard = 0; guard < 200 && sectionsTokens(out) > maxTokens; guard++) {
    const longest = SUMMARY_SECTIONS.reduce((a, b) => (out[b].length > out[a].length ? b : a));
    const text = out[longest].replace(/…$/, '');
    if (!text) break;
    const keep = Math.floor(text.length * 0.8);
    const cut = text.lastIndexOf(' ', keep);
    out[longest] = keep < 8 ? '' : `${text.slice(0, cut > keep / 2 ? cut : keep).trimEnd()}…`;
  }
  return out;
}

/** Estimated tokens of one chat message: its text, its tool calls' JSON, and 4 for the framing (estimateTokens). */
export function messageTokens(m: ChatMessage): number {
  return estimateTokens(m.content) + (m.tool_calls?.length ? estimateTokens(JSON.stringify(m.tool_calls)) : 0) + 4;
}

/**
 * Whether the tail may start at message `i` of `messages` (seed 002 §7, the
 * pi cut rule): `i` is not a tool result, and no tool call before `i` has a
 * result at or after `i` (a call and its results stay on one side). `i` =
 * messages.length (everything summarised) is legal when no call before it
 * is still waiting for its result after it, which is always the case.
 */
export function legalCut(messages: readonly ChatMessage[], i: number): boolean {
  if (i < 0 || i > messages.length) return false;
  if (i < messages.length && messages[i]!.role === 'tool') return false;
  const before = new Set<string>();
  for (let j = 0; j < i; j++) for (const c of messages[j]!.tool_calls ?? []) before.add(c.id);
  for (let j = i; j < messages.length; j++) {
    const m = messages[j]!;
    if (m.role === 'tool' && m.tool_call_id !== undefined && before.has(m.tool_call_id)) return false;
  }
  return true;
}

/**
 * Where the kept tail of `messages` starts (seed 002 §7): the earliest
 * legal cut (legalCut) whose tail is at most `tailBudget` tokens
 * (`tokens`, default messageTokens), preferring one at a user message (the
 * tail starts a turn; when none fits, the latest one whose tail is at most
 * twice the budget); when no legal cut fits the budget, the latest legal
 * cut before it (the tail is then longer than the budget but legal). Returns
 * 0 when nothing can be taken (no legal cut after the start), never a cut
 * at a tool result.
 */
export function findCut(messages: readonly ChatMessage[], tailBudget: number, tokens: (m: ChatMessage) => number = messageTokens): number {
  const n = messages.length;
  // The earliest index whose tail fits the budget.
  let fit = n;
  let used = 0;
  while (fit > 0 && used + tokens(messages[fit - 1]!) <= tailBudget) used += tokens(messages[--fit]!);
  const legal: boolean[] = [];
  for (let i = 0; i <= n; i++) legal.push(legalCut(messages, i));
  for (let i = Math.max(fit, 1); i < n; i++) if (legal[i] && messages[i]!.role === 'user') return i;
  // No turn starts within the budget: the latest turn start within twice the budget (the last exchange stays whole).
  let over = used;
  for (let i = fit - 1; i >= 1; i--) {
    over += tokens(messages[i]!);
    if (over > 2 * tailBudget) break;
    if (legal[i] && messages[i]!.role === 'user') return i;
  }
  for (let i = Math.max(fit, 1); i <= n; i++) if (legal[i]) return i;
  for (let i = Math.min(fit, n) - 1; i >= 1; i--) if (legal[i]) return i;
  return 0;
}

/** The shape of `compaction.started` / `compaction.finished` run-log events (src/kernel/run-log.ts RunEvent). */
export type CompactionEvent =
  | {
      type: 'compaction.started';
      /** The input whose turn compacted. */
      turn: string;
      compaction: string;
      /** The events taken out of the prompt, word for word (the original text stays retrievable here). */
      covered: ContextEvent[];
      /** The summary it continues ('' when none). */
      previous: string;
    }
  | {
      type: 'compaction.finished';
      turn: string;
      compaction: string;
      /**
       * `summarised`: the new summary is in force; `dropped`: the model could not summarise (down,
       * empty answer), the covered events left the prompt and the previous summary stays;
       * `abandoned`: stopped before the end, nothing changed.
       */
      status: 'summarised' | 'dropped' | 'abandoned';
      sections: SummarySections;
      covered: string[];
      through_time: number;
      /** Why it was dropped or abandoned. */
      reason?: string;
    };

/** What `restoreCompaction` found in the run log. */
export interface RestoredCompaction {
  summary?: CompactionSummary;
  /** A compaction that started after the last finished one and never finished (a crash mid-compaction): its id. */
  orphan?: string;
}

/**
 * The summary in force after a restart: the last `compaction.finished` that
 * changed the history (summarised or dropped), and an orphan start after it
 * (started, never finished: the process died mid-compaction; the summary
 * and history before it are in force, its original text in its start event).
 */
export function restoreCompaction(runLog: RunLog): RestoredCompaction {
  const events = runLog.ofTypes(['compaction.started', 'compaction.finished'], 64);
  const finishedIds = new Set(events.filter((e) => e.type === 'compaction.finished').map((e) => (e as { compaction: string }).compaction));
  let summary: CompactionSummary | undefined;
  let orphan: string | undefined;
  for (let i = events.length - 1; i >= 0; i--) {
    const e = events[i]!;
    if (e.type === 'compaction.started' && !finishedIds.has(e.compaction) && !summary && orphan === undefined) orphan = e.compaction;
    if (e.type === 'compaction.finished' && e.status !== 'abandoned') {
      summary = { id: e.compaction, sections: { ...emptySections(), ...e.sections }, covered: e.covered, throughTime: e.through_time };
      break;
    }
  }
  return { ...(summary ? { summary } : {}), ...(orphan !== undefined ? { orphan } : {}) };
}

/**
 * The original events a compaction took out of the prompt (its start
 * event's `covered`), or undefined when the run log no longer holds it
 * (searches the newest `depth` compaction starts).
 */
export function compactedOriginal(runLog: RunLog, compaction: string, depth = 1000): ContextEvent[] | undefined {
  const e = runLog.ofTypes(['compaction.started'], depth).find((x): x is StoredRunEvent & { type: 'compaction.started' } => x.type === 'compaction.started' && x.compaction === compaction);
  return e?.covered;
}

/** The instruction that asks the model for the summary (after the older messages). `maxWords` bounds the answer. */
export function compactionInstruction(maxWords: number): string {
  return [
    COMPACTION_REQUEST_MARK,
    'The conversation above is leaving your prompt. Write the summary you will read instead of it, for your own later use:',
    'continue the earlier summary (if there is one) with what is new, and drop what no longer holds.',
    `Do not call tools and do not answer anyone. At most ${maxWords} words, in exactly these five lines:`,
    ...SUMMARY_SECTIONS.map((k) => `${SECTION_TITLES[k]}: ...`),
  ].join('\n');
}

/** What a compaction needs from the turn. */
export interface CompactionInput {
  provider: Provider;
  /** The turn's system message and tool schemas (the summary request repeats them so a prompt cache is reused). */
  system: ChatMessage;
  tools: ToolSchema[];
  /** The summary in force (its sections), if any. */
  previous?: SummarySections;
  /** The events leaving the prompt, oldest first, as the prompt showed them. */
  older: ContextEvent[];
  /** Render events as the prompt shows them (src/kernel/prompt.ts timelineMessages). */
  render: (events: ContextEvent[]) => ChatMessage[];
  /** Most tokens of the summary message (estimated). */
  summaryTokens: number;
  signal?: AbortSignal;
}

/**
 * Ask the model for the summary that continues `previous` with `older`.
 * Returns the capped sections, or throws (the provider's error, or an Error
 * when the answer has no text).
 */
export async function summarise(inp: CompactionInput): Promise<SummarySections> {
  const messages: ChatMessage[] = [inp.system, ...(inp.previous ? [summaryMessage(inp.previous)] : []), ...inp.render(inp.older), { role: 'user', content: compactionInstruction(Math.max(20, Math.floor(inp.summaryTokens * 0.6))) }];
  const req: CompletionRequest = { messages, tools: inp.tools, stream: false, max_tokens: inp.summaryTokens * 2 };
  const res = await inp.provider.chat(req, inp.signal);
  const parsed = parseSummary(res.content ?? '');
  if (!parsed) throw new Error(res.tool_calls?.length ? 'the model called a tool instead of writing the summary' : 'the model wrote no summary');
  return capSections(parsed, inp.summaryTokens);
}
