/**
 * LoCoMo recall benchmark (issue 5): feeds the turns of the five dev
 * conversations (speaker, text and an image's blip_caption; never the
 * dataset's observations or summaries) into a fresh memory as conversation
 * events at their session times, pruning every turn as the kernel does; then
 * for each question of categories 1-4 with well-formed evidence ranks with
 * the memory's recall ranking (MemorySystem.prepareRecall, src/memory/recall.ts:
 * the one the prompt's automatic recall, doc_query and MemoryAPI.recall use;
 * the question asked by nobody of the conversation, at the time of its last
 * turn, in UTC) without the filters a prompt adds (what its history already
 * shows, another person's sensitive words) and counts a hit at k when the
 * top items, taken until they cover k turns, include an evidence turn.
 * Baseline in the same run: SQLite FTS5 BM25 over the raw turns.
 *
 * Prints locomo.recall_at_5, locomo.recall_at_10, locomo.bm25_recall_at_5,
 * locomo.bm25_recall_at_10 (fractions of questions; the ranking with
 * DEFAULT_RANK_WEIGHTS, which were tuned on these same five conversations).
 * Then leave-one-conversation-out (issue 18): for each conversation the
 * weights of LOO_GRID with the most hits at 10 on the other four are chosen
 * and measured on it; pooled over the five folds as locomo.recall_at_5_loo
 * and locomo.recall_at_10_loo, the honest estimate of how the ranking does on
 * a conversation it was not tuned on. The weights each fold chose go to stderr.
 * With HOMEAGENT_LOCOMO_HELDOUT=<file> (the other five LoCoMo conversations in
 * the same shape; not in the repository), also the held-out check
 * (heldoutCheck): that file ranked with the weights chosen on the dev five
 * and with the defaults, BM25 alongside, and each hand-written rule turned
 * off (ABLATIONS) there and on dev; nothing is chosen on that file.
 * Run: node --import tsx -e "import('./test/bench/locomo.ts').then(m=>m.run())"
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { defaultSettings, silentLogger } from '../support/quiet.js';
import { DEFAULT_RANK_WEIGHTS, MemorySystem, type RankWeights, type RecallRules } from '../../src/memory/index.js';

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
/** Environment variable naming a second file of LoCoMo conversations (the dev fixture's shape) for the held-out check; unset: no check. */
const HELDOUT_ENV = 'HOMEAGENT_LOCOMO_HELDOUT';
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

/** One conversation's question: its text, category and evidence turn ids. */
interface Question {
  question: string;
  category: number;
  evidence: ReadonlySet<string>;
  /** Whether the BM25 baseline has an evidence turn at 10. */
  bm25At10: boolean;
}

/** A conversation fed into a fresh memory, its questions and the BM25 baseline's hits; `close` removes the store. */
interface Built {
  name: string;
  mem: MemorySystem;
  qs: Question[];
  bm25: { r5: number; r10: number };
  close: () => void;
}

/**
 * Feed `sample`'s turns into a fresh memory (pruned as the kernel does) and
 * score the BM25 baseline on its questions (categories 1-4 with well-formed
 * evidence). `recallRules`: rules turned off in that memory (an ablation).
 */
function build(sample: Sample, name: string, recallRules?: Partial<RecallRules>): Built {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ha-locomo-'));
  let now = 0;
  const settings = defaultSettings();
  // LoCoMo's session times are UTC: its days are the household's days ("yesterday"), whatever this machine's zone.
  settings.register({ key: 'plugin.home.time_zone', type: 'string', default: 'UTC', description: 'the household time zone' });
  const mem = new MemorySystem({ dataDir: dir, settings, log: silentLogger, clock: { now: () => now }, knowledgeSeedDir: path.join(dir, 'none'), ...(recallRules ? { recallRules } : {}) });
  const close = (): void => {
    mem.close();
    fs.rmSync(dir, { recursive: true, force: true });
  };
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
    const hits = { r5: 0, r10: 0 };
    for (const qa of sample.qa) {
      if (![1, 2, 3, 4].includes(qa.category)) continue;
      const ev = qa.evidence;
      if (!Array.isArray(ev) || ev.length === 0 || !ev.every((e) => typeof e === 'string' && /^D\d+:\d+$/.test(e) && ids.has(e))) continue;
      const evidence = new Set(ev as string[]);
      const base = bm25.rank(qa.question, 10);
      const q: Question = { question: qa.question, category: qa.category, evidence, bm25At10: hitAt(base, evidence, 10) };
      qs.push(q);
      if (hitAt(base, evidence, 5)) hits.r5++;
      if (q.bm25At10) hits.r10++;
    }
    bm25.close();
    return { name, mem, qs, bm25: hits, close };
  } catch (err) {
    close();
    throw err;
  }
}

/** Per grid point, hits at 5 and at 10 of `mem`'s recall over `qs`: each question's channels are computed once on the built store, then ranked under every point. */
function scoreGrid(mem: MemorySystem, qs: readonly Question[], grid: ReadonlyArray<Partial<RankWeights>>): Array<{ r5: number; r10: number }> {
  const out = grid.map(() => ({ r5: 0, r10: 0 }));
  for (const q of qs) {
    const rank = mem.prepareRecall({ text: q.question }, 10, { maxDepth: Math.max(...(LOO_GRID.depth ?? [DEFAULT_RANK_WEIGHTS.depth])) });
    grid.forEach((weights, g) => {
      const ranked = rank(weights).map((h) => (h.event_id ? [h.event_id] : []));
      if (hitAt(ranked, q.evidence, 5)) out[g]!.r5++;
      if (hitAt(ranked, q.evidence, 10)) out[g]!.r10++;
    });
  }
  return out;
}

/**
 * The hand-designed recall rules, each with how to turn it off (weights at
 * which it does nothing, or RecallRules), for the held-out check's ablation.
 * Each was written after reading misses of the five dev conversations.
 * time_channel: the date a question names ranks up that date's turns (every
 * reading; wTime 0); partial_dates: a month or day without its year, or a
 * year alone, is read as such a date; when_boost: a question asking when
 * prefers turns that say when; last_session: a turn of the last, unarchived
 * session scores like a document (the prompt holds that session as
 * history and leaves out what it shows); speaker_boost: the words of a person the
 * question names are preferred; neighbour_spread: the turns next to a hit
 * share its score; session_boost: a day with several good turns is lifted;
 * neighbour_context: an archived turn's vector holds its neighbours' words
 * (read when the store is built, so that one builds the stores again).
 */
const ABLATIONS: ReadonlyArray<{ rule: string; weights?: Partial<RankWeights>; rules?: Partial<RecallRules>; build?: Partial<RecallRules> }> = [
  { rule: 'time_channel', weights: { wTime: 0 } },
  { rule: 'partial_dates', rules: { partialDates: false } },
  { rule: 'when_boost', weights: { whenBoost: 1 } },
  { rule: 'last_session', rules: { windowAsDocument: false } },
  { rule: 'speaker_boost', weights: { speakerBoost: 1 } },
  { rule: 'neighbour_spread', weights: { neighbourSpread: 0, neighbourSpreadBefore: 0 } },
  { rule: 'session_boost', weights: { sessionBoost: 0 } },
  { rule: 'neighbour_context', build: { neighbourContext: false } },
];

/** A ranking to measure: weights over DEFAULT_RANK_WEIGHTS and rules turned off for the search. */
interface Variant {
  weights: Partial<RankWeights>;
  rules?: Partial<RecallRules>;
}

/** Hit at 5 and at 10 of one question. */
type Hit = { h5: boolean; h10: boolean };

/** Per variant, per question of `qs`: hit at 5 and at 10. Channels are computed once per question and set of rules. */
function scoreVariants(mem: MemorySystem, qs: readonly Question[], variants: readonly Variant[]): Hit[][] {
  const out = variants.map(() => [] as Hit[]);
  const groups = new Map<string, number[]>();
  variants.forEach((v, i) => {
    const key = JSON.stringify(v.rules ?? {});
    groups.set(key, [...(groups.get(key) ?? []), i]);
  });
  for (const q of qs) {
    for (const members of groups.values()) {
      const maxDepth = Math.max(...members.map((i) => variants[i]!.weights.depth ?? DEFAULT_RANK_WEIGHTS.depth));
      const rank = mem.prepareRecall({ text: q.question }, 10, { maxDepth, rules: variants[members[0]!]!.rules ?? {} });
      for (const i of members) {
        const ranked = rank(variants[i]!.weights).map((h) => (h.event_id ? [h.event_id] : []));
        out[i]!.push({ h5: hitAt(ranked, q.evidence, 5), h10: hitAt(ranked, q.evidence, 10) });
      }
    }
  }
  return out;
}

/** Per question (pooled over conversations, in order), under the dev-tuned weights and the defaults: all rules on, then each ablation. */
interface Check {
  tuned: Hit[];
  defaults: Hit[];
  without: Map<string, { tuned: Hit[]; defaults: Hit[] }>;
}

/**
 * The check's figures on `samples`: each conversation built once with every
 * rule on and ranked under `tuned` and the defaults, each with every
 * rank-time ablation; built again per build-time ablation. `onBuilt` sees
 * each all-rules store (the BM25 baseline's hits).
 */
function check(samples: readonly Sample[], tuned: Partial<RankWeights>, onBuilt: (b: Built) => void = () => {}): Check {
  const atRank = ABLATIONS.filter((a) => !a.build);
  const variants: Variant[] = [{ weights: tuned }, { weights: {} }];
  for (const a of atRank) for (const base of [tuned, {}]) variants.push({ weights: { ...base, ...a.weights }, ...(a.rules ? { rules: a.rules } : {}) });
  const out: Check = { tuned: [], defaults: [], without: new Map(ABLATIONS.map((a) => [a.rule, { tuned: [], defaults: [] }])) };
  for (const [ci, sample] of samples.entries()) {
    const name = sample.sample_id ?? `conv-${ci + 1}`;
    const b = build(sample, name);
    try {
      onBuilt(b);
      const r = scoreVariants(b.mem, b.qs, variants);
      out.tuned.push(...r[0]!);
      out.defaults.push(...r[1]!);
      atRank.forEach((a, i) => {
        out.without.get(a.rule)!.tuned.push(...r[2 + 2 * i]!);
        out.without.get(a.rule)!.defaults.push(...r[3 + 2 * i]!);
      });
    } finally {
      b.close();
    }
    for (const a of ABLATIONS.filter((x) => x.build)) {
      const ab = build(sample, name, a.build);
      try {
        const r = scoreVariants(ab.mem, ab.qs, [{ weights: tuned }, { weights: {} }]);
        out.without.get(a.rule)!.tuned.push(...r[0]!);
        out.without.get(a.rule)!.defaults.push(...r[1]!);
      } finally {
        ab.close();
      }
    }
  }
  return out;
}

/** The share of `hits` with an evidence turn at k, three decimals. */
function recall(hits: readonly Hit[], k: 'h5' | 'h10'): string {
  return (hits.filter((h) => h[k]).length / hits.length).toFixed(3);
}

/** How many questions a rule wins (hit at 10 with it, missed without) and loses, as "+won/-lost". */
function wonLost(withRule: readonly Hit[], without: readonly Hit[]): string {
  let won = 0;
  let lost = 0;
  withRule.forEach((h, i) => {
    if (h.h10 && !without[i]!.h10) won++;
    if (!h.h10 && without[i]!.h10) lost++;
  });
  return `+${won}/-${lost}`;
}

/**
 * The held-out check (HOMEAGENT_LOCOMO_HELDOUT=file): nothing is chosen on
 * the file. Its conversations are ranked with the weights chosen on all five
 * dev conversations (`tuned`: the grid point with the most hits at 10 on
 * them) and with DEFAULT_RANK_WEIGHTS, BM25 alongside; then with each rule
 * of ABLATIONS turned off, on the held-out file and on the dev conversations
 * (in-sample), to see whether a rule that helps where it was designed also
 * helps where it was not.
 */
function heldoutCheck(file: string, devSamples: readonly Sample[], tuned: Partial<RankWeights>, describe: (w: Partial<RankWeights>) => string): void {
  const dev = check(devSamples, tuned);
  const samples = JSON.parse(fs.readFileSync(file, 'utf8')) as Sample[];
  const bm25 = { r5: 0, r10: 0 };
  const names: string[] = [];
  const held = check(samples, tuned, (b) => {
    names.push(b.name);
    bm25.r5 += b.bm25.r5;
    bm25.r10 += b.bm25.r10;
  });
  const n = held.tuned.length;
  process.stderr.write(`locomo: held-out ${names.join(', ')}: ${n} questions; weights chosen on the five dev conversations: ${describe(tuned)}\n`);
  process.stderr.write(
    `locomo: each rule off, r@10 dev (in-sample) / held-out, and the questions the rule wins/loses there; over the dev-tuned weights | over the defaults: ${ABLATIONS.map((a) => {
      const d = dev.without.get(a.rule)!;
      const h = held.without.get(a.rule)!;
      return `${a.rule} ${recall(d.tuned, 'h10')}/${recall(h.tuned, 'h10')} (dev ${wonLost(dev.tuned, d.tuned)}, held-out ${wonLost(held.tuned, h.tuned)}) | ${recall(d.defaults, 'h10')}/${recall(h.defaults, 'h10')} (dev ${wonLost(dev.defaults, d.defaults)}, held-out ${wonLost(held.defaults, h.defaults)})`;
    }).join('; ')}\n`,
  );
  console.log(`locomo.recall_at_10_tuned: ${recall(dev.tuned, 'h10')}`);
  console.log(`locomo.heldout_recall_at_5: ${recall(held.tuned, 'h5')}`);
  console.log(`locomo.heldout_recall_at_10: ${recall(held.tuned, 'h10')}`);
  console.log(`locomo.heldout_recall_at_5_defaults: ${recall(held.defaults, 'h5')}`);
  console.log(`locomo.heldout_recall_at_10_defaults: ${recall(held.defaults, 'h10')}`);
  console.log(`locomo.heldout_bm25_recall_at_5: ${(bm25.r5 / n).toFixed(3)}`);
  console.log(`locomo.heldout_bm25_recall_at_10: ${(bm25.r10 / n).toFixed(3)}`);
  for (const a of ABLATIONS) {
    console.log(`locomo.recall_at_10_tuned_without_${a.rule}: ${recall(dev.without.get(a.rule)!.tuned, 'h10')}`);
    console.log(`locomo.heldout_recall_at_10_without_${a.rule}: ${recall(held.without.get(a.rule)!.tuned, 'h10')}`);
  }
}

/** Run the benchmark and print its figures. */
export async function run(): Promise<void> {
  const heldoutFile = process.env[HELDOUT_ENV];
  if (heldoutFile !== undefined && !fs.existsSync(heldoutFile)) throw new Error(`${HELDOUT_ENV}=${heldoutFile}: no such file (it should hold LoCoMo conversations in the dev fixture's JSON shape)`);
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
    const built = build(sample, sample.sample_id ?? `conv-${ci + 1}`);
    try {
      hits.b5 += built.bm25.r5;
      hits.b10 += built.bm25.r10;
      for (const q of built.qs) {
        total++;
        const ranked = built.mem.prepareRecall({ text: q.question }, 10)().map((h) => (h.event_id ? [h.event_id] : []));
        const r10 = hitAt(ranked, q.evidence, 10);
        if (hitAt(ranked, q.evidence, 5)) hits.r5++;
        if (r10) hits.r10++;
        const c = perCat.get(q.category) ?? { n: 0, r10: 0, b10: 0 };
        c.n++;
        c.r10 += r10 ? 1 : 0;
        c.b10 += q.bm25At10 ? 1 : 0;
        perCat.set(q.category, c);
      }
      const tg = Date.now();
      convs.push({ name: built.name, n: built.qs.length, byPoint: scoreGrid(built.mem, built.qs, grid) });
      tGrid += Date.now() - tg;
    } finally {
      built.close();
    }
  }
  /** The grid point with the most hits at 10 on every conversation but `skip` (-1: on all five). */
  const best = (skip: number): number => {
    let b = 0;
    let bestHits = -1;
    grid.forEach((_, g) => {
      const h = convs.reduce((sum, o, i) => sum + (i === skip ? 0 : o.byPoint[g]!.r10), 0);
      if (h > bestHits) {
        b = g;
        bestHits = h;
      }
    });
    return b;
  };
  const describe = (w: Partial<RankWeights>): string => (Object.keys(LOO_GRID) as Array<keyof RankWeights>).map((k) => `${k}=${w[k]}`).join(' ');
  // Leave one conversation out: the grid point with the most hits at 10 on the other four, measured on the held-out one.
  const loo = { r5: 0, r10: 0 };
  const chosen: string[] = [];
  for (const [held, c] of convs.entries()) {
    const b = best(held);
    loo.r5 += c.byPoint[b]!.r5;
    loo.r10 += c.byPoint[b]!.r10;
    chosen.push(`${c.name}: ${describe(grid[b]!)} (held-out r@10 ${(c.byPoint[b]!.r10 / c.n).toFixed(3)})`);
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
  if (heldoutFile !== undefined) heldoutCheck(heldoutFile, data, grid[best(-1)]!, describe);
}
