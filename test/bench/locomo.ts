/**
 * LoCoMo recall benchmark (issue 5): feeds the turns of the five dev
 * conversations (speaker, text and an image's blip_caption; never the
 * dataset's observations or summaries) into a fresh memory as conversation
 * events at their session times, pruning every turn as the kernel does; then
 * for each question of categories 1-4 with well-formed evidence runs the
 * memory's non-consuming recall (MemorySystem.search: the document ranking of
 * the prompt plus the context window) and counts a hit at k when the top
 * items, taken until they cover k turns, include an evidence turn. Baseline in
 * the same run: SQLite FTS5 BM25 over the raw turns.
 *
 * Prints locomo.recall_at_5, locomo.recall_at_10, locomo.bm25_recall_at_5,
 * locomo.bm25_recall_at_10 (fractions of questions; the ranking with
 * DEFAULT_RANK_WEIGHTS, which were tuned on these same five conversations).
 * Then leave-one-conversation-out (issue 18): for each conversation the
 * weights of LOO_GRID with the most hits at 10 on the other four are chosen
 * and measured on it; pooled over the five folds as locomo.recall_at_5_loo
 * and locomo.recall_at_10_loo, the honest estimate of how the ranking does on
 * a conversation it was not tuned on. The weights each fold chose go to stderr.
 * Run: node --import tsx -e "import('./test/bench/locomo.ts').then(m=>m.run())"
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { defaultSettings, silentLogger } from '../support/quiet.js';
import { DEFAULT_RANK_WEIGHTS, MemorySystem, type RankWeights } from '../../src/memory/index.js';

interface Turn {
  speaker: string;
  dia_id: string;
  text: string;
  blip_caption?: string;
}
interface Qa {
  question: string;
  category: number;
  evidence?: unknown;
}
interface Sample {
  sample_id?: string;
  qa: Qa[];
  conversation: Record<string, unknown>;
}

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const FIXTURE = path.resolve(repoRoot, '../shared/fixtures/memory/locomo-dev.json');
const MONTHS = ['january', 'february', 'march', 'april', 'may', 'june', 'july', 'august', 'september', 'october', 'november', 'december'];

/** Parse LoCoMo's "1:56 pm on 8 May, 2023" into ms since epoch (UTC). Throws on another format. */
export function parseSessionTime(s: string): number {
  const m = /^(\d{1,2}):(\d{2})\s*(am|pm)\s+on\s+(\d{1,2})\s+([A-Za-z]+),?\s+(\d{4})$/i.exec(s.trim());
  if (!m) throw new Error(`unrecognised session time "${s}"`);
  let h = Number(m[1]) % 12;
  if (m[3]!.toLowerCase() === 'pm') h += 12;
  const month = MONTHS.indexOf(m[5]!.toLowerCase());
  if (month < 0) throw new Error(`unrecognised month in "${s}"`);
  return Date.UTC(Number(m[6]), month, Number(m[4]), h, Number(m[2]));
}

/** The sessions of a conversation in order: turns with their start time. */
function sessions(conv: Record<string, unknown>): Array<{ time: number; turns: Turn[] }> {
  const out: Array<{ n: number; time: number; turns: Turn[] }> = [];
  for (const [k, v] of Object.entries(conv)) {
    const m = /^session_(\d+)$/.exec(k);
    if (!m || !Array.isArray(v)) continue;
    const when = conv[`session_${m[1]}_date_time`];
    if (typeof when !== 'string') continue;
    out.push({ n: Number(m[1]), time: parseSessionTime(when), turns: v as Turn[] });
  }
  return out.sort((a, b) => a.n - b.n);
}

function turnText(t: Turn): string {
  return t.blip_caption ? `${t.text} [image: ${t.blip_caption}]` : t.text;
}


/** Hit at k: the ranked turn ids, taken until they cover k turns, include an evidence turn. */
function hitAt(ranked: string[][], evidence: ReadonlySet<string>, k: number): boolean {
  let covered = 0;
  for (const item of ranked) {
    if (covered >= k) break;
    covered += item.length;
    if (item.some((id) => evidence.has(id))) return true;
  }
  return false;
}

/** Question words the baseline drops (function words that only add noise to an OR query). */
const BM25_STOP = new Set(
  'a an the and or but if of at by for with about to from in on is are was were be been do does did what when where who whom which why how that this these those it its i you he she they we me my your his her their our has have had will would can could should any some there'.split(' '),
);

/** FTS5 BM25 over raw turns (porter stemming, stop words dropped from the question): the baseline. Returns a ranking function. */
function bm25Index(turns: Turn[]): { rank: (q: string, k: number) => string[][]; close: () => void } {
  const db = new Database(':memory:');
  db.exec("CREATE VIRTUAL TABLE t USING fts5(dia_id UNINDEXED, text, tokenize = 'porter unicode61')");
  const ins = db.prepare('INSERT INTO t(dia_id, text) VALUES(?, ?)');
  db.transaction(() => {
    for (const t of turns) ins.run(t.dia_id, turnText(t));
  })();
  const q = db.prepare('SELECT dia_id FROM t WHERE t MATCH ? ORDER BY rank LIMIT ?').pluck();
  return {
    rank: (question, k) => {
      const toks = (question.toLowerCase().match(/[a-z0-9]+/g) ?? []).filter((w) => !BM25_STOP.has(w)).map((w) => `"${w}"`);
      if (toks.length === 0) return [];
      return (q.all(toks.join(' OR '), k) as string[]).map((id) => [id]);
    },
    close: () => db.close(),
  };
}

/**
 * The grid leave-one-conversation-out chooses from: knobs a person can
 * explain, each around its default (DEFAULT_RANK_WEIGHTS, always a point of
 * the grid). depth: how many candidates each channel hands to the fusion
 * (the pool the boosts below can reorder); wKw: how much exact keywords
 * count against the TF-IDF cosine; speakerBoost: how much the words of a
 * person the question names are preferred; neighbourSpread: how much the
 * turn after a hit (its reply) shares the hit's score; sessionBoost: how much
 * a day with several good turns is lifted; whenBoost: how much, for a
 * question asking when, a turn that says when ("last Friday", "two years
 * ago") is preferred. wTime (the weight of a date the question names) stays
 * at its default: every fold chose it in a grid that also tried 0.5 and 2.
 */
const LOO_GRID: { readonly [K in keyof RankWeights]?: readonly number[] } = {
  depth: [50, 100, 200],
  wKw: [0.25, 0.5, 1],
  speakerBoost: [1, 1.25, 1.5],
  neighbourSpread: [0.15, 0.3, 0.5],
  sessionBoost: [0, 0.3, 0.6],
  whenBoost: [1, 1.25, 1.5],
};

/** Every combination of LOO_GRID's values (the other knobs at their defaults); the defaults come first so a tie keeps them. */
function gridPoints(): Array<Partial<RankWeights>> {
  let points: Array<Partial<RankWeights>> = [{}];
  for (const [k, values] of Object.entries(LOO_GRID) as Array<[keyof RankWeights, readonly number[]]>) {
    const ordered = [DEFAULT_RANK_WEIGHTS[k], ...values.filter((v) => v !== DEFAULT_RANK_WEIGHTS[k])];
    points = points.flatMap((p) => ordered.map((v) => ({ ...p, [k]: v })));
  }
  return points;
}

/** One conversation's questions, for the grid: the question and its evidence turn ids. */
interface Question {
  question: string;
  evidence: ReadonlySet<string>;
}

/** Per grid point, hits at 5 and at 10 of `mem`'s recall over `qs`: each question's channels are computed once on the built store, then ranked under every point. */
function scoreGrid(mem: MemorySystem, qs: readonly Question[], grid: ReadonlyArray<Partial<RankWeights>>): Array<{ r5: number; r10: number }> {
  const out = grid.map(() => ({ r5: 0, r10: 0 }));
  for (const q of qs) {
    const rank = mem.prepareSearch(q.question, 10, Math.max(...(LOO_GRID.depth ?? [DEFAULT_RANK_WEIGHTS.depth])));
    grid.forEach((weights, g) => {
      const ranked = rank(weights).map((h) => (h.event_id ? [h.event_id] : []));
      if (hitAt(ranked, q.evidence, 5)) out[g]!.r5++;
      if (hitAt(ranked, q.evidence, 10)) out[g]!.r10++;
    });
  }
  return out;
}

/** Run the benchmark and print its figures. */
export async function run(): Promise<void> {
  const data = JSON.parse(fs.readFileSync(FIXTURE, 'utf8')) as Sample[];
  let total = 0;
  const hits = { r5: 0, r10: 0, b5: 0, b10: 0 };
  const perCat = new Map<number, { n: number; r10: number; b10: number }>();
  const grid = gridPoints();
  /** Per conversation: its name, question count and, per grid point, hits at 5 and 10. */
  const convs: Array<{ name: string; n: number; byPoint: Array<{ r5: number; r10: number }> }> = [];
  const t0 = Date.now();
  let tGrid = 0;
  for (const [ci, sample] of data.entries()) {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ha-locomo-'));
    let now = 0;
    const mem = new MemorySystem({ dataDir: dir, settings: defaultSettings(), log: silentLogger, clock: { now: () => now }, knowledgeSeedDir: path.join(dir, 'none') });
    try {
      const all: Turn[] = [];
      for (const s of sessions(sample.conversation)) {
        s.turns.forEach((t, i) => {
          now = s.time + i * 30_000;
          const text = turnText(t);
          mem.append({ id: t.dia_id, time: now, kind: 'user', source: 'locomo', speaker: t.speaker, input: text, response: '' });
          mem.prune(text);
          all.push(t);
        });
      }
      const ids = new Set(all.map((t) => t.dia_id));
      const bm25 = bm25Index(all);
      const qs: Question[] = [];
      for (const qa of sample.qa) {
        if (![1, 2, 3, 4].includes(qa.category)) continue;
        const ev = qa.evidence;
        if (!Array.isArray(ev) || ev.length === 0 || !ev.every((e) => typeof e === 'string' && /^D\d+:\d+$/.test(e) && ids.has(e))) continue;
        const evidence = new Set(ev as string[]);
        qs.push({ question: qa.question, evidence });
        total++;
        const ranked = mem.search(qa.question, 10).map((h) => (h.event_id ? [h.event_id] : []));
        const base = bm25.rank(qa.question, 10);
        const r10 = hitAt(ranked, evidence, 10);
        const b10 = hitAt(base, evidence, 10);
        if (hitAt(ranked, evidence, 5)) hits.r5++;
        if (r10) hits.r10++;
        if (hitAt(base, evidence, 5)) hits.b5++;
        if (b10) hits.b10++;
        const c = perCat.get(qa.category) ?? { n: 0, r10: 0, b10: 0 };
        c.n++;
        c.r10 += r10 ? 1 : 0;
        c.b10 += b10 ? 1 : 0;
        perCat.set(qa.category, c);
      }
      bm25.close();
      const tg = Date.now();
      convs.push({ name: sample.sample_id ?? `conv-${ci + 1}`, n: qs.length, byPoint: scoreGrid(mem, qs, grid) });
      tGrid += Date.now() - tg;
    } finally {
      mem.close();
      fs.rmSync(dir, { recursive: true, force: true });
    }
  }
  // Leave one conversation out: the grid point with the most hits at 10 on the other four, measured on the held-out one.
  const loo = { r5: 0, r10: 0 };
  const chosen: string[] = [];
  for (const [held, c] of convs.entries()) {
    let best = 0;
    let bestHits = -1;
    grid.forEach((_, g) => {
      const h = convs.reduce((sum, o, i) => sum + (i === held ? 0 : o.byPoint[g]!.r10), 0);
      if (h > bestHits) {
        best = g;
        bestHits = h;
      }
    });
    loo.r5 += c.byPoint[best]!.r5;
    loo.r10 += c.byPoint[best]!.r10;
    const w = grid[best]!;
    chosen.push(`${c.name}: ${(Object.keys(LOO_GRID) as Array<keyof RankWeights>).map((k) => `${k}=${w[k]}`).join(' ')} (held-out r@10 ${(c.byPoint[best]!.r10 / c.n).toFixed(3)})`);
  }
  const f = (n: number): string => (n / total).toFixed(3);
  process.stderr.write(`locomo: ${total} questions in ${((Date.now() - t0) / 1000).toFixed(1)} s (grid of ${grid.length} points: ${(tGrid / 1000).toFixed(1)} s); per category r@10/bm25@10: ${[...perCat].sort((a, b) => a[0] - b[0]).map(([c, v]) => `${c}:${(v.r10 / v.n).toFixed(2)}/${(v.b10 / v.n).toFixed(2)}`).join(' ')}\n`);
  process.stderr.write(`locomo: weights chosen leave-one-conversation-out (max recall@10 on the other four): ${chosen.join('; ')}\n`);
  console.log(`locomo.recall_at_5: ${f(hits.r5)}`);
  console.log(`locomo.recall_at_10: ${f(hits.r10)}`);
  console.log(`locomo.bm25_recall_at_5: ${f(hits.b5)}`);
  console.log(`locomo.bm25_recall_at_10: ${f(hits.b10)}`);
  console.log(`locomo.recall_at_5_loo: ${f(loo.r5)}`);
  console.log(`locomo.recall_at_10_loo: ${f(loo.r10)}`);
}
