/**
 * The one ranking of what was said (issue 18 "Recall that generalises"):
 * every path that recalls conversation ranks through `prepareRecall` with
 * the same rules and RankWeights — the prompt's automatic recall
 * (MemorySystem.recallForPrompt), doc_query (MemorySystem.consumeDocuments),
 * the plugins' MemoryAPI.recall and the LoCoMo bench (test/bench/locomo.ts),
 * so the bench's figures describe what the box recalls. What a path
 * legitimately leaves out (another person's sensitive words, what the prompt
 * already shows, window events for doc_query) is a `keep` filter on top of
 * this ranking, never a ranking of its own.
 *
 * The reading of the question (recallReading): the speakers it names and,
 * when it speaks in the first person ("my", "we"), the person speaking;
 * the time range it names, relative to the time of the turn and the
 * household's time zone (time-query.ts); whether it asks when. Documents are
 * ranked by DocStore (documents.ts: cosine, BM25, time and dense channels,
 * speaker and when boosts, neighbour spread, episode lift); the turns of the
 * last, unarchived session (the context window) join them on the same scale.
 */
import type { ContextEvent } from '../kernel/memory-port.js';
import type { ContextWindow } from './context-window.js';
import { DEFAULT_RANK_WEIGHTS, type DocRow, type DocStore, type RankWeights, type SearchOptions } from './documents.js';
import { cleanText } from './text.js';
import { asksWhen, mentionsTime, queryTimeRange } from './time-query.js';

/** One item of the recall ranking: an archived document or an event of the context window. */
export interface RecallHit {
  /** `doc:<id>` or `event:<event id>`. */
  id: string;
  kind: 'document' | 'event';
  /** The original event id (archived events keep theirs). */
  event_id: string | null;
  time: number;
  speaker: string | null;
  /** `speaker: input / response` (recallText). */
  text: string;
  score: number;
}

/**
 * Recall rules that are not weights (those are RankWeights), all on in the
 * service. Each was written after reading misses of the five LoCoMo dev
 * conversations; the LoCoMo bench turns one off at a time (an ablation) to
 * see what it does on conversations it was not designed on.
 */
export interface RecallRules {
  /** Read a month or day named without its year, or a year alone, as the question's time range (time-query.ts TimeQueryOptions.partialDates). */
  partialDates: boolean;
  /**
   * Score a window event (a turn of the last, unarchived session) like a
   * document found at its window rank by the cosine and keyword channels,
   * plus the time channel; off: as one channel of weight 1 at that rank.
   */
  windowAsDocument: boolean;
  /**
   * An archived turn's vector also holds the words of the two turns before
   * and after it (context-window.ts NEIGHBOUR_WEIGHTS). Read when turns are
   * archived, so only MemorySystemOptions.recallRules turns it off.
   */
  neighbourContext: boolean;
}

/** A question to recall for, with who asks and when. */
export interface RecallQuery {
  /** The question (the turn's words, a tool's or plugin's query). */
  text: string;
  /** The person speaking the turn, when known: their own words rank up (speakerBoost) when the question speaks in the first person. */
  speaker?: string;
  /** Document ids of the dense channel (provider embeddings, dense.ts), best first; none: lexical only. */
  dense?: readonly number[];
}

/** What a hit was ranked from, for `keep` filters. */
export type RecallSource = { kind: 'document'; doc: DocRow } | { kind: 'event'; event: ContextEvent };

/** Options of `prepareRecall`. */
export interface RecallOptions {
  /** The largest `depth` among the weights the prepared ranking will be given (default DEFAULT_RANK_WEIGHTS.depth). */
  maxDepth?: number;
  /** Rules in force (RecallRules; absent ones on). */
  rules?: Partial<RecallRules>;
  /** Hits to keep (a path's filter on top of the ranking): the ranking is walked best first until `limit` are kept. */
  keep?: (source: RecallSource) => boolean;
}

/** What `prepareRecall` reads: the stores, the household's speakers, the clock and time zone. */
export interface RecallSources {
  docs: DocStore;
  window: ContextWindow;
  /** Household speakers named in `text` (cleanText form). */
  speakersIn(text: string): Set<string>;
  /** The time of the turn (ms since epoch): "yesterday", "last week" are read from it. */
  now: number;
  /** The household's time zone offset from UTC at `now` (ms, east positive): its days for "yesterday". */
  offsetMs: number;
}

/** Words by which a speaker talks about themselves (or about a "we" they are part of). */
const SELF = /\b(?:i|me|my|mine|myself|we|us|our|ours)\b|我/i;

/**
 * How the ranking reads `q`: the speakers it names (and the person speaking
 * when it speaks in the first person), the time range it names relative to
 * `src.now` and whether it asks when.
 */
export function recallReading(src: Pick<RecallSources, 'speakersIn' | 'now' | 'offsetMs'>, q: RecallQuery, rules: Partial<RecallRules> = {}): SearchOptions & { speakers: Set<string> } {
  const speakers = src.speakersIn(q.text);
  if (q.speaker && SELF.test(q.text)) speakers.add(cleanText(q.speaker));
  const range = queryTimeRange(q.text, src.now, src.offsetMs, { partialDates: rules.partialDates !== false });
  return { speakers, ...(range ? { range } : {}), ...(asksWhen(q.text) ? { when: true } : {}) };
}

/** A document or event as one line's text: `speaker: title / input / response` (the kind when nobody spoke). */
export function recallText(d: { title?: string; input: string; response: string; speaker?: string | null; kind: string }): string {
  const who = d.speaker ?? (d.kind === 'agent' ? 'assistant' : d.kind === 'user' ? 'user' : d.kind);
  const body = [d.title ?? '', d.input, d.response].filter((s) => s !== '').join(' / ');
  return `${who}: ${body}`;
}

/**
 * The recall ranking of `q` in two steps: the channels are computed once,
 * the returned function ranks them under any weights (default
 * DEFAULT_RANK_WEIGHTS) and returns at most `limit` hits, best first, of
 * those `opts.keep` keeps. Documents are ranked by DocStore.prepare; a
 * window event is scored as a document found at its window rank by the
 * cosine and keyword channels, plus the time channel when it lies in the
 * range the question names, with the same speaker and when boosts
 * (RecallRules.windowAsDocument). A filter never changes the order of what
 * it keeps. Benches try a grid of weights on one prepared ranking.
 */
export function prepareRecall(src: RecallSources, q: RecallQuery, limit: number, opts: RecallOptions = {}): (weights?: Partial<RankWeights>) => RecallHit[] {
  const rules = opts.rules ?? {};
  const reading = recallReading(src, q, rules);
  const { range, when, speakers } = reading;
  // A filter may drop hits: more are ranked so `limit` remain (the channels' depth still follows `limit`).
  const take = opts.keep ? 3 * limit + 3 : limit;
  const docs = src.docs.prepare(q.text, limit, { ...reading, ...(q.dense?.length ? { dense: q.dense } : {}), ...(opts.maxDepth !== undefined ? { maxDepth: opts.maxDepth } : {}), take });
  const events = src.window.rank(q.text, take);
  return (weights) => {
    const w = weights ? { ...DEFAULT_RANK_WEIGHTS, ...weights } : DEFAULT_RANK_WEIGHTS;
    const ranked: Array<{ hit: RecallHit; source: RecallSource }> = docs.rank(weights).map((h) => ({
      hit: { id: `doc:${h.doc.id}`, kind: 'document', event_id: h.doc.event_id, time: h.doc.time, speaker: h.doc.speaker, text: recallText(h.doc), score: h.score },
      source: { kind: 'document', doc: h.doc },
    }));
    let inRangeRank = 0;
    events.forEach((e, rank) => {
      const ev = e.entry.event;
      const boost = (ev.speaker && speakers.has(cleanText(ev.speaker)) ? w.speakerBoost : 1) * (when && mentionsTime(ev.input) ? w.whenBoost : 1);
      const timeScore = range && ev.time >= range.from && ev.time < range.to ? w.wTime / (w.rrfK + ++inRangeRank) : 0;
      const fused = rules.windowAsDocument === false ? 1 / (w.rrfK + rank + 1) : (w.wVec + w.wKw) / (w.rrfK + rank + 1) + timeScore;
      ranked.push({
        hit: { id: `event:${ev.id}`, kind: 'event', event_id: ev.id, time: ev.time, speaker: ev.speaker ?? null, text: recallText(ev), score: boost * fused },
        source: { kind: 'event', event: ev },
      });
    });
    ranked.sort((a, b) => b.hit.score - a.hit.score);
    const out: RecallHit[] = [];
    for (const r of ranked) {
      if (out.length >= limit) break;
      if (!opts.keep || opts.keep(r.source)) out.push(r.hit);
    }
    return out;
  };
}
