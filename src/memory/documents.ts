/**
 * Layer 2, documents (seed 001 "Document Layer", seed 000 §4): archived
 * context events and doc_commit notes. Recall fuses by rank (RRF, k = 60):
 * TF-IDF cosine over the shared vector space (postings in doc_terms; an
 * archived turn's vector also holds its neighbouring turns at lower weight),
 * BM25 over word keywords (postings in kw_terms) and, when the query names a
 * time, the documents of that time range. Then: speaker awareness (documents
 * of a speaker the query names ranked up), when awareness (for a question
 * asking when, turns that say when ranked up), adjacency expansion (the turns next
 * to a top hit share its score) and episode awareness (turns of a day whose
 * best turns score high are lifted). The knobs are `RankWeights`; the
 * service uses DEFAULT_RANK_WEIGHTS, measured on LoCoMo (test/bench/locomo.ts). Posting lists are impact-ordered and read with a
 * cap, so a query costs about the same at 600 or 20,000 documents.
 * Consume-on-read for doc_query; access counts drive cold-document
 * distillation (72 h unaccessed, <= 2 accesses).
 */
import type { Db } from './db.js';
import { mentionsTime, type TimeRange } from './time-query.js';
import { VECTOR_FINGERPRINT } from './text.js';
import { addScaled, cosine, docWeights, idf, keywordTokens, parseVector, tfVector, type TfVector } from './vector-space.js';

/** A stored document. `time` is the original event time (ms since epoch). */
export interface DocRow {
  id: number;
  event_id: string | null;
  time: number;
  kind: string;
  source: string;
  speaker: string | null;
  title: string;
  input: string;
  response: string;
  tool: string | null;
  access_count: number;
  last_access: number;
  distilled: number;
}

/** A document to store; `vectorText` is the three-branch text (defaults to title + input + response). */
export interface NewDoc {
  event_id?: string;
  time: number;
  kind: string;
  source: string;
  speaker?: string;
  title?: string;
  input: string;
  response: string;
  tool?: string;
  vectorText?: string;
  /** Neighbouring turns' text with weights, folded into the cosine vector (a reply is found by what it answers). */
  context?: ReadonlyArray<{ text: string; weight: number }>;
}

/** A search hit: the document and its fused score (higher is better). */
export interface DocHit {
  doc: DocRow;
  score: number;
}

/** Ranking options of `DocStore.search`. */
export interface SearchOptions {
  /** Speakers named in the query: their documents are ranked up. */
  speakers?: ReadonlySet<string>;
  /** The time range the query names (see time-query.ts): its documents form a third channel. */
  range?: TimeRange;
  /** The query asks when (time-query.ts asksWhen): documents that say when are ranked up by `whenBoost`. */
  when?: boolean;
  /** Candidates taken from each channel before fusion, overriding the weights' `depth` (default max(depth, 4 x limit)). */
  depth?: number;
  /** Document ids of the dense channel (provider embeddings, dense.ts), best first: fused like the others (issue 19). */
  dense?: readonly number[];
  /** Ranking knobs overriding DEFAULT_RANK_WEIGHTS (benches; the service passes none). */
  weights?: Partial<RankWeights>;
}

/**
 * The knobs of `DocStore.search`'s ranking (issue 18). Scores are
 * dimensionless: a channel adds `weight / (rrfK + rank)` (rank from 1) to a
 * document's fused score; the boosts then multiply or add to that score.
 * `DEFAULT_RANK_WEIGHTS` is what the service uses; benches pass others
 * through `SearchOptions.weights` to try them without editing code.
 */
export interface RankWeights {
  /** Candidates (documents) taken from each channel before fusion, at least 4 x the limit: the pool the boosts, the spread and the episode lift can reorder. */
  depth: number;
  /** Reciprocal-rank-fusion constant k (ranks, > 0): larger flattens the difference between a channel's first and tenth hit. */
  rrfK: number;
  /** Fusion weight of the TF-IDF cosine channel (>= 0). */
  wVec: number;
  /** Fusion weight of the BM25 keyword channel (>= 0). */
  wKw: number;
  /** Fusion weight of the time channel: the documents inside the time range the query names (>= 0). */
  wTime: number;
  /** Fusion weight of the dense channel (provider embeddings, dense.ts; >= 0). */
  wDense: number;
  /** Score factor (>= 1 ranks up) for documents spoken by a speaker the query names. */
  speakerBoost: number;
  /**
   * Score factor (>= 1 ranks up), when the query asks when something happened
   * (time-query.ts asksWhen), for documents that say when (mentionsTime:
   * "yesterday", "last Friday", "two years ago", a year or month): the answer
   * to "When did Caroline pass the interview?" is the turn "I passed it last Friday".
   */
  whenBoost: number;
  /** Share (0..1) of a top hit's score given to the turn right after it (the answer to a question is often the next turn); 0 turns spreading off. */
  neighbourSpread: number;
  /** Share (0..1) of a top hit's score given to the turn right before it. */
  neighbourSpreadBefore: number;
  /** How many of the top hits spread to their neighbours (count). */
  spreadFrom: number;
  /** Episode lift: a document's score is multiplied by 1 + sessionBoost · (its day's summed score / the best day's), 0 turns it off. */
  sessionBoost: number;
}

/** The ranking the service uses; measured on LoCoMo (test/bench/locomo.ts, which also reports them chosen leave-one-conversation-out). */
export const DEFAULT_RANK_WEIGHTS: Readonly<RankWeights> = Object.freeze({
  depth: 50,
  rrfK: 60,
  wVec: 1,
  wKw: 0.5,
  wTime: 1,
  wDense: 1,
  speakerBoost: 1.25,
  whenBoost: 1.25,
  neighbourSpread: 0.3,
  neighbourSpreadBefore: 0.15,
  spreadFrom: 15,
  sessionBoost: 0.3,
});
const DOC_COLUMNS = 'id, event_id, time, kind, source, speaker, title, input, response, tool, access_count, last_access, distilled';
const MAX_QUERY_TERMS = 24;
/** Terms in more documents than this carry almost no information and cost the most; skipped. */
const MAX_DF = 20000;
/** Impact-ordered postings: at most this many (highest weight first) per query term. */
const POSTING_CAP = 120;
/** Cosine channel: at most this many posting rows per query in total (rarest terms first). */
const POSTING_BUDGET = 1000;
/** Typical terms per utterance, the BM25 length pivot. */
const AVG_LEN = 16;

/** A search whose channels are computed (DocStore.prepare): fuse them under `weights` (default DEFAULT_RANK_WEIGHTS). */
export interface PreparedSearch {
  /** The hits, best first, at most the prepared `take` (default its limit); fused scores as `DocStore.search`'s. */
  rank(weights?: Partial<RankWeights>): DocHit[];
}

/** The turns right before and after a document within an hour: [id, time ms] each, if any. */
interface Neighbours {
  before: [number, number] | undefined;
  after: [number, number] | undefined;
}

/** The document store over the memory database. */
export class DocStore {
  private n: number;
  private readonly pendingAccess = new Map<number, number>();
  private readonly st;

  constructor(private readonly db: Db) {
    this.st = {
      insert: db.prepare(
        `INSERT INTO docs(event_id, time, kind, source, speaker, title, input, response, tool, last_access, vec, fp)
         VALUES(@event_id, @time, @kind, @source, @speaker, @title, @input, @response, @tool, @last_access, @vec, @fp)`,
      ),
      insertTerm: db.prepare('INSERT OR IGNORE INTO doc_terms(term, doc_id, w) VALUES(?, ?, ?)'),
      dfUp: db.prepare('INSERT INTO term_df(term, df) VALUES(?, 1) ON CONFLICT(term) DO UPDATE SET df = df + 1'),
      dfDown: db.prepare('UPDATE term_df SET df = df - 1 WHERE term = ?'),
      dfGet: db.prepare('SELECT df FROM term_df WHERE term = ?'),
      kwInsert: db.prepare('INSERT OR IGNORE INTO kw_terms(term, s, doc_id) VALUES(?, ?, ?)'),
      kwDelete: db.prepare('DELETE FROM kw_terms WHERE doc_id = ?'),
      kwPostings: db.prepare(`SELECT doc_id, s FROM kw_terms WHERE term = ? ORDER BY s DESC LIMIT ${POSTING_CAP}`).raw(),
      termsOf: db.prepare('SELECT term FROM doc_terms WHERE doc_id = ?').pluck(),
      delTerms: db.prepare('DELETE FROM doc_terms WHERE doc_id = ?'),
      delDoc: db.prepare('DELETE FROM docs WHERE id = ?'),
      get: db.prepare(`SELECT ${DOC_COLUMNS} FROM docs WHERE id = ?`),
      postings: db.prepare(`SELECT doc_id, w FROM doc_terms WHERE term = ? ORDER BY w DESC LIMIT ${POSTING_CAP}`).raw(),
      before: db.prepare('SELECT id, time FROM docs WHERE time < ? AND time > ? - 3600000 ORDER BY time DESC LIMIT 1').raw(),
      after: db.prepare('SELECT id, time FROM docs WHERE time > ? AND time < ? + 3600000 ORDER BY time ASC LIMIT 1').raw(),
      inRange: db.prepare('SELECT id FROM docs WHERE time >= ? AND time < ? LIMIT 500').pluck(),
      brief: db.prepare('SELECT id, speaker, time, input FROM docs WHERE id IN (SELECT value FROM json_each(?))').raw(),
      touch: db.prepare('UPDATE docs SET access_count = access_count + ?, last_access = ? WHERE id = ?'),
      count: db.prepare('SELECT count(*) FROM docs').pluck(),
    };
    this.n = Number(this.st.count.get());
  }

  /** Number of stored documents. */
  count(): number {
    return this.n;
  }

  /** IDF of `term` in the document space (0 when unseen). */
  idfOf(term: string): number {
    const row = this.st.dfGet.get(term) as { df: number } | undefined;
    return idf(this.n, row?.df ?? 0);
  }

  /**
   * How close document `id` is to `query`: the IDF-weighted cosine of the
   * query's terms and the document's stored vector, 0..1 (0 for a document
   * that does not exist). Unlike the fused search score it is absolute, so a
   * floor can tell a document that matches from one that only ranked first.
   */
  similarity(query: string, id: number): number {
    return cosine(tfVector(query), this.vectorOf(id), (t) => this.idfOf(t));
  }

  /** Store a document and index it; returns its id. Call inside a transaction for atomicity with other writes. */
  add(doc: NewDoc, now: number): number {
    const text = doc.vectorText ?? [doc.title ?? '', doc.input, doc.response].filter((s) => s !== '').join('\n');
    const own = tfVector(text);
    let tf = own;
    for (const c of doc.context ?? []) tf = addScaled(tf, tfVector(c.text), c.weight);
    const info = this.st.insert.run({
      event_id: doc.event_id ?? null,
      time: doc.time,
      kind: doc.kind,
      source: doc.source,
      speaker: doc.speaker ?? null,
      title: doc.title ?? '',
      input: doc.input,
      response: doc.response,
      tool: doc.tool ?? null,
      last_access: now,
      vec: JSON.stringify(tf),
      fp: VECTOR_FINGERPRINT,
    });
    const id = Number(info.lastInsertRowid);
    this.index(id, tf, own);
    this.n++;
    return id;
  }

  private index(id: number, tf: TfVector, own: TfVector = tf): void {
    for (const [t, w] of docWeights(tf)) {
      this.st.insertTerm.run(t, id, w);
      this.st.dfUp.run(t);
    }
    // BM25 term part tf·(k1+1) / (tf + k1·(1 - b + b·len/avglen)), k1 = 1.2, b = 0.75, avglen fixed at indexing time.
    const kws = keywordTokens(own);
    const len = Object.values(own).reduce((a, b) => a + b, 0);
    for (const k of kws) {
      const key = /^[a-z0-9]/.test(k) ? k : `w:${k}`;
      const c = own[key] ?? 1;
      this.st.kwInsert.run(k, (c * 2.2) / (c + 1.2 * (0.25 + (0.75 * len) / AVG_LEN)), id);
    }
  }

  private unindex(id: number): void {
    for (const t of this.st.termsOf.all(id) as string[]) this.st.dfDown.run(t);
    this.st.delTerms.run(id);
    this.st.kwDelete.run(id);
  }

  /** Delete a document and its index entries; false when absent. */
  remove(id: number): boolean {
    if (!this.st.get.get(id)) return false;
    this.unindex(id);
    this.st.delDoc.run(id);
    this.pendingAccess.delete(id);
    this.n--;
    return true;
  }

  /**
   * Re-index a document from its own text only (title, input, response):
   * the neighbouring turns folded into its vector at archive time are
   * dropped (forgetting: a forgotten turn's words must not live on in its
   * neighbours' vectors). False when absent.
   */
  reindexOwn(id: number): boolean {
    const d = this.get(id);
    if (!d) return false;
    const tf = tfVector([d.title, d.input, d.response].filter((s) => s !== '').join('\n'));
    this.unindex(id);
    this.index(id, tf);
    this.db.prepare('UPDATE docs SET vec = ?, fp = ? WHERE id = ?').run(JSON.stringify(tf), VECTOR_FINGERPRINT, id);
    return true;
  }

  /** Ids of documents whose vector holds `term` (at most `limit`). */
  withTerm(term: string, limit: number): number[] {
    return this.db.prepare('SELECT doc_id FROM doc_terms WHERE term = ? LIMIT ?').pluck().all(term, limit) as number[];
  }

  /** Delete document-frequency rows no document uses any more (their term would outlive the text). Returns how many. */
  dropUnusedTerms(): number {
    return this.db.prepare('DELETE FROM term_df WHERE df <= 0').run().changes;
  }

  /** A document by id. */
  get(id: number): DocRow | undefined {
    return this.st.get.get(id) as DocRow | undefined;
  }

  /**
   * Recompute the vectors of documents stored under another fingerprint
   * (tokenizer or dictionary changed), from their own text: the neighbouring
   * turns folded in at archive time are no longer known. Returns how many.
   */
  recomputeMismatched(): number {
    const rows = this.db.prepare('SELECT id, title, input, response FROM docs WHERE fp != ?').all(VECTOR_FINGERPRINT) as Array<
      Pick<DocRow, 'id' | 'title' | 'input' | 'response'>
    >;
    const upd = this.db.prepare('UPDATE docs SET vec = ?, fp = ? WHERE id = ?');
    this.db.transaction(() => {
      for (const r of rows) {
        const tf = tfVector([r.title, r.input, r.response].filter((s) => s !== '').join('\n'));
        this.unindex(r.id);
        this.index(r.id, tf);
        upd.run(JSON.stringify(tf), VECTOR_FINGERPRINT, r.id);
      }
    }).immediate();
    return rows.length;
  }

  /** The stored vector of a document (parsed). */
  vectorOf(id: number): TfVector {
    const row = this.db.prepare('SELECT vec FROM docs WHERE id = ?').get(id) as { vec: string } | undefined;
    return row ? parseVector(row.vec) : {};
  }

  /**
   * Rank documents for `query`: cosine channel and keyword (BM25) channel,
   * fused by reciprocal rank (k = 60), documents of speakers named in the
   * query ranked up. Non-consuming; returns at most `limit` hits.
   */
  search(query: string, limit: number, opts: SearchOptions = {}): DocHit[] {
    return this.prepare(query, limit, { ...opts, ...(opts.weights?.depth !== undefined ? { maxDepth: opts.weights.depth } : {}) }).rank(opts.weights);
  }

  /**
   * The channels of `search` for `query` (cosine, keyword, time range,
   * dense), computed once: `rank(weights)` then fuses them under any
   * RankWeights (default DEFAULT_RANK_WEIGHTS) and returns at most `limit`
   * hits, as `search` would. The neighbours and rows it looks up are cached,
   * so a bench can try a grid of weights for the cost of one search. Only
   * valid while the store is unchanged; `opts.weights` is ignored here.
   * `opts.maxDepth`: the largest `depth` of the weights `rank` will be given
   * (default DEFAULT_RANK_WEIGHTS.depth); channels are read that deep once
   * and cut to each call's depth. `opts.take`: how many hits `rank` returns
   * at most (default `limit`; more for a caller that filters them), without
   * changing the ranking, whose depth follows `limit`.
   */
  prepare(query: string, limit: number, opts: Omit<SearchOptions, 'weights'> & { maxDepth?: number; take?: number } = {}): PreparedSearch {
    if (this.n === 0 || limit <= 0) return { rank: () => [] };
    const take = Math.max(limit, opts.take ?? limit);
    const depth = opts.depth ?? Math.max(opts.maxDepth ?? DEFAULT_RANK_WEIGHTS.depth, limit * 4);
    const qtf = tfVector(query);
    if (opts.speakers && opts.speakers.size > 0) {
      // A speaker's name in the query selects whose words to prefer (boost below); as a term it only matches greetings.
      const reduced = { ...qtf };
      for (const sp of opts.speakers) for (const t of Object.keys(tfVector(sp))) delete reduced[t];
      if (Object.keys(reduced).length > 0) Object.assign(qtf, reduced, Object.fromEntries(Object.keys(qtf).filter((k) => !(k in reduced)).map((k) => [k, 0])));
      for (const [k, v] of Object.entries(qtf)) if (v === 0) delete qtf[k];
    }
    const vecScores = this.vectorScores(qtf);
    const vec = [...vecScores.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, depth)
      .map((e) => e[0]);
    const inRange = opts.range
      ? (this.st.inRange.all(opts.range.from, opts.range.to) as number[])
          .map((id) => [id, vecScores.get(id) ?? 0] as const)
          .sort((a, b) => b[1] - a[1])
          .slice(0, depth)
          .map((e) => e[0])
      : [];
    const dense = opts.dense?.slice(0, depth) ?? [];
    const kw = this.keywordChannel(qtf, depth);
    const speakerOf = new Map<number, string | null>();
    const timeOf = new Map<number, number>();
    const saysWhen = new Set<number>();
    const candidates = [...new Set([...inRange, ...vec, ...dense, ...kw])];
    if (candidates.length > 0) {
      for (const [id, speaker, time, input] of this.st.brief.all(JSON.stringify(candidates)) as Array<[number, string | null, number, string]>) {
        speakerOf.set(id, speaker);
        timeOf.set(id, time);
        if (opts.when && mentionsTime(input)) saysWhen.add(id);
      }
    }
    const neighbours = new Map<number, Neighbours>();
    const rows = new Map<number, DocRow | undefined>();
    return {
      rank: (weights) => {
        const w: RankWeights = weights ? { ...DEFAULT_RANK_WEIGHTS, ...weights } : DEFAULT_RANK_WEIGHTS;
        const d = opts.depth ?? Math.max(w.depth, limit * 4);
        const fused = new Map<number, number>();
        inRange.slice(0, d).forEach((id, rank) => fused.set(id, (fused.get(id) ?? 0) + w.wTime / (w.rrfK + rank + 1)));
        vec.slice(0, d).forEach((id, rank) => fused.set(id, (fused.get(id) ?? 0) + w.wVec / (w.rrfK + rank + 1)));
        dense.slice(0, d).forEach((id, rank) => fused.set(id, (fused.get(id) ?? 0) + w.wDense / (w.rrfK + rank + 1)));
        kw.slice(0, d).forEach((id, rank) => fused.set(id, (fused.get(id) ?? 0) + w.wKw / (w.rrfK + rank + 1)));
        const ranked: Array<{ id: number; score: number }> = [];
        for (const [id, score] of fused) {
          const speaker = speakerOf.get(id);
          const boost = (speaker && opts.speakers?.has(speaker.toLowerCase()) ? w.speakerBoost : 1) * (saysWhen.has(id) ? w.whenBoost : 1);
          ranked.push({ id, score: score * boost });
        }
        ranked.sort((a, b) => b.score - a.score || b.id - a.id);
        if (w.neighbourSpread > 0 || w.neighbourSpreadBefore > 0) this.spread(ranked, timeOf, w, neighbours);
        if (w.sessionBoost > 0) this.sessionBoost(ranked, timeOf, w.sessionBoost);
        const hits: DocHit[] = [];
        for (const r of ranked) {
          if (hits.length >= take) break;
          if (!rows.has(r.id)) rows.set(r.id, this.get(r.id));
          const doc = rows.get(r.id);
          if (doc) hits.push({ doc, score: r.score });
        }
        return hits;
      },
    };
  }

  /**
   * Conversation adjacency expansion: the turns right before and after each
   * of the first `w.spreadFrom` hits get a share of its score
   * (`w.neighbourSpreadBefore` before, `w.neighbourSpread` after: the answer
   * to a question is often the next turn). Re-sorts `ranked` in place.
   */
  private spread(ranked: Array<{ id: number; score: number }>, timeOf: Map<number, number>, w: RankWeights, cache: Map<number, Neighbours>): void {
    const byId = new Map(ranked.map((r) => [r.id, r]));
    const add = new Map<number, number>();
    for (const r of ranked.slice(0, w.spreadFrom)) {
      const t = timeOf.get(r.id);
      if (t === undefined) continue;
      let nb = cache.get(r.id);
      if (!nb) {
        nb = { before: this.st.before.get(t, t) as [number, number] | undefined, after: this.st.after.get(t, t) as [number, number] | undefined };
        cache.set(r.id, nb);
      }
      const pairs: Array<[[number, number] | undefined, number]> = [
        [nb.before, w.neighbourSpreadBefore],
        [nb.after, w.neighbourSpread],
      ];
      for (const [n, share] of pairs) {
        if (n === undefined) continue;
        timeOf.set(n[0], n[1]);
        add.set(n[0], Math.max(add.get(n[0]) ?? 0, r.score * share));
      }
    }
    for (const [id, extra] of add) {
      const r = byId.get(id);
      if (r) r.score += extra;
      else ranked.push({ id, score: extra });
    }
    ranked.sort((a, b) => b.score - a.score || b.id - a.id);
  }

  /**
   * Episode awareness: turns of the same day form an episode; an episode
   * whose best turns score high lifts its other turns by a factor up to 1 + `boost`.
   */
  private sessionBoost(ranked: Array<{ id: number; score: number }>, timeOf: ReadonlyMap<number, number>, boost: number): void {
    const top = ranked.slice(0, 60);
    const dayOf = new Map<number, number>();
    const dayScore = new Map<number, number>();
    for (const r of top) {
      const t = timeOf.get(r.id);
      if (t === undefined) continue;
      const d = Math.floor(t / 86_400_000);
      dayOf.set(r.id, d);
      dayScore.set(d, (dayScore.get(d) ?? 0) + r.score);
    }
    const max = Math.max(0, ...dayScore.values());
    if (max <= 0) return;
    for (const r of top) {
      const d = dayOf.get(r.id);
      if (d !== undefined) r.score *= 1 + (boost * (dayScore.get(d) ?? 0)) / max;
    }
    ranked.sort((a, b) => b.score - a.score || b.id - a.id);
  }

  /** Cosine channel scores: Σ q(t)·idf(t)²·w(d,t) over postings of the query's most informative terms. */
  private vectorScores(qtf: TfVector): Map<number, number> {
    const qterms: Array<{ t: string; q: number; df: number }> = [];
    for (const [t, c] of Object.entries(qtf)) {
      const df = (this.st.dfGet.get(t) as { df: number } | undefined)?.df ?? 0;
      if (df > 0 && df <= MAX_DF) qterms.push({ t, q: 1 + Math.log(c), df });
    }
    qterms.sort((a, b) => a.df - b.df);
    const scores = new Map<number, number>();
    let rows = 0;
    for (const { t, q, df } of qterms.slice(0, MAX_QUERY_TERMS)) {
      if (rows >= POSTING_BUDGET) break;
      const i = idf(this.n, df);
      const f = q * i * i;
      const postings = this.st.postings.all(t) as Array<[number, number]>;
      rows += postings.length;
      for (const row of postings) scores.set(row[0], (scores.get(row[0]) ?? 0) + f * row[1]);
    }
    return scores;
  }

  /** Keyword channel: BM25 over the query's word tokens (rarest first, capped postings). */
  private keywordChannel(qtf: TfVector, depth: number): number[] {
    const withDf = keywordTokens(qtf)
      .map((t) => t.replace(/["'’]/g, ''))
      .filter((t) => t !== '')
      .map((t) => ({ t, df: (this.st.dfGet.get(/^[a-z0-9]/.test(t) ? t : `w:${t}`) as { df: number } | undefined)?.df ?? 0 }))
      .filter((x) => x.df > 0)
      .sort((a, b) => a.df - b.df);
    const scores = new Map<number, number>();
    let rows = 0;
    for (const x of withDf) {
      if (rows >= POSTING_BUDGET) break;
      const i = Math.log(1 + (this.n - x.df + 0.5) / (x.df + 0.5));
      const postings = this.st.kwPostings.all(x.t) as Array<[number, number]>;
      rows += postings.length;
      for (const [id, s] of postings) scores.set(id, (scores.get(id) ?? 0) + i * s);
    }
    return [...scores.entries()]
      .sort((a, b) => b[1] - a[1])
      .slice(0, depth)
      .map((e) => e[0]);
  }

  /** Count an access (auto-injection or tool read); kept in memory until `flushAccess`. */
  touch(id: number): void {
    this.pendingAccess.set(id, (this.pendingAccess.get(id) ?? 0) + 1);
  }

  /** Write pending access counts with `now` as the last access time. */
  flushAccess(now: number): void {
    if (this.pendingAccess.size === 0) return;
    const entries = [...this.pendingAccess];
    this.pendingAccess.clear();
    this.db.transaction(() => {
      for (const [id, c] of entries) this.st.touch.run(c, now, id);
    }).immediate();
  }

  /** Cold documents: not distilled, last access before `before`, at most `maxAccess` accesses. */
  cold(before: number, maxAccess: number, limit: number): DocRow[] {
    return this.db
      .prepare(`SELECT ${DOC_COLUMNS} FROM docs WHERE distilled = 0 AND last_access < ? AND access_count <= ? ORDER BY time LIMIT ?`)
      .all(before, maxAccess, limit) as DocRow[];
  }

  /**
   * The newest documents first (by time, then id), at most `limit`; with
   * `before`, only those after it in that order (a page's last document:
   * the next page). For listing (the WebUI's Memory page); no viewer
   * filtering here (MemorySystem's docVisible is the caller's).
   */
  recent(limit: number, before?: { time: number; id: number }): DocRow[] {
    if (!before) return this.db.prepare(`SELECT ${DOC_COLUMNS} FROM docs ORDER BY time DESC, id DESC LIMIT ?`).all(limit) as DocRow[];
    return this.db
      .prepare(`SELECT ${DOC_COLUMNS} FROM docs WHERE time < @time OR (time = @time AND id < @id) ORDER BY time DESC, id DESC LIMIT @limit`)
      .all({ time: before.time, id: before.id, limit }) as DocRow[];
  }

  /** Document `id` while it is not yet distilled; undefined once distilled or forgotten. */
  undistilled(id: number): DocRow | undefined {
    return this.db.prepare(`SELECT ${DOC_COLUMNS} FROM docs WHERE id = ? AND distilled = 0`).get(id) as DocRow | undefined;
  }

  /** Mark a document as distilled into the graph (it stays searchable). */
  markDistilled(id: number): void {
    this.db.prepare('UPDATE docs SET distilled = 1 WHERE id = ?').run(id);
  }
}
