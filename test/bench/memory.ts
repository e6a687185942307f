/**
 * Memory benchmark (issue 5): builds a memory of 100,000 entities, 300,000
 * relations and 20,000 documents (synthetic, varied Chinese and English),
 * then measures per-turn prompt assembly — recallForPrompt (documents +
 * graph BFS + knowledge) and the context timeline — with no caching across
 * turns, and the peak RSS of a fresh child process that opens the same memory
 * (nodejieba included) and assembles prompts.
 *
 * Prints memory.assemble_p50, memory.assemble_p99 (ms), memory.rss (MB).
 * Run: node --import tsx -e "import('./test/bench/memory.ts').then(m=>m.run())"
 * (HOMEAGENT_BENCH_DIR=<dir> reuses a memory built earlier with `build(dir)` instead of building one.)
 */
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { defaultSettings, silentLogger } from '../support/quiet.js';
import { MemorySystem } from '../../src/memory/index.js';

const ENTITIES = 100_000;
const RELATIONS = 300_000;
const DOCS = 20_000;
const TURNS = 400;

const SURNAMES = '王李张刘陈杨黄赵吴周徐孙马朱胡郭何高林罗郑梁谢宋唐许韩冯邓曹彭曾肖田董袁潘于蒋蔡余杜叶程苏魏吕丁任沈姚卢姜崔钟谭陆汪范金石廖贾夏韦付方白邹孟熊秦邱江尹薛闫段雷侯龙史陶黎贺顾毛郝龚邵万钱严覃武戴莫孔向汤';
const GIVEN = '伟芳娜敏静丽强磊军洋勇艳杰娟涛明超秀霞平刚桂英华玉兰萍建国红梅鹏飞宇浩然子涵欣怡思远晨曦嘉文俊博';
const FIRST = ['James', 'Mary', 'John', 'Linda', 'Robert', 'Susan', 'Michael', 'Karen', 'David', 'Lisa', 'Daniel', 'Nancy', 'Paul', 'Emma', 'Mark', 'Olivia', 'Kevin', 'Sophia', 'Brian', 'Grace', 'Anna', 'Peter', 'Laura', 'Tom'];
const LAST = ['Smith', 'Johnson', 'Brown', 'Garcia', 'Miller', 'Davis', 'Lopez', 'Wilson', 'Anderson', 'Taylor', 'Moore', 'Martin', 'Lee', 'Walker', 'Hall', 'Young', 'King', 'Wright', 'Scott', 'Green', 'Baker', 'Adams', 'Nelson', 'Carter'];
const PLACES = ['北京', '上海', '广州', '深圳', '杭州', '成都', '西安', '南京', '武汉', '厦门', 'Boston', 'Seattle', 'Denver', 'Austin', 'Chicago', 'Portland', '海淀区', '浦东', '体育馆', '图书馆', '超市', '公园', 'kitchen', 'garage', 'garden'];
const THINGS = ['羽毛球', '篮球', '钢琴', '吉他', '咖啡', '绿茶', '火锅', '饺子', '猫', '狗', '自行车', '电动车', 'jazz', 'tennis', 'pizza', 'yoga', 'painting', 'hiking', 'chess', 'sushi', 'camping', 'novels', 'gardening', 'pottery'];
const RELS = ['喜欢', '住在', '认识', '工作于', '拥有', '去过', '邻居是', '同事是', 'likes', 'lives_in', 'knows', 'works_at', 'owns', 'visited'];
const ZH_TEMPL = ['{p}说下周要去{l}出差，顺便看看{t}展览', '{p}昨天在{l}买了{t}，花了{n}块钱', '提醒我{n}点给{p}打电话，商量{t}的事', '{p}的孩子今年{n}岁，最近迷上了{t}', '周末和{p}在{l}一起{t}，玩得很开心', '{p}推荐的{t}店在{l}附近，评价不错'];
const EN_TEMPL = ['{p} said the {t} club in {l} meets every {d}', 'Remind me to call {p} about {t} at {n} pm', '{p} moved to {l} last month and started {t}', 'We had {t} with {p} in {l} on {d}', '{p} recommended a {t} place near {l}', 'The {t} lesson with {p} moved to {d} at {n}'];
const DAYS = ['Monday', 'Tuesday', 'Wednesday', 'Thursday', 'Friday', 'Saturday', 'Sunday'];

/** A deterministic PRNG (mulberry32) so every run builds the same memory. */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function pick<T>(r: () => number, xs: readonly T[]): T {
  return xs[Math.floor(r() * xs.length)]!;
}

function personName(i: number): string {
  if (i % 3 === 2) return `${FIRST[i % FIRST.length]} ${LAST[Math.floor(i / FIRST.length) % LAST.length]}${i >= FIRST.length * LAST.length ? ` ${Math.floor(i / (FIRST.length * LAST.length))}` : ''}`;
  const g = GIVEN.length;
  return `${SURNAMES[i % SURNAMES.length]}${GIVEN[Math.floor(i / SURNAMES.length) % g]}${GIVEN[Math.floor(i / (SURNAMES.length * g)) % g]}${i >= SURNAMES.length * g * g ? Math.floor(i / (SURNAMES.length * g * g)) : ''}`;
}

function entityName(i: number): { name: string; type: string } {
  const k = i % 10;
  if (k < 6) return { name: personName(i), type: 'person' };
  if (k < 8) return { name: `${PLACES[i % PLACES.length]}${Math.floor(i / PLACES.length)}号`, type: 'place' };
  return { name: `${THINGS[i % THINGS.length]}-${Math.floor(i / THINGS.length)}`, type: 'thing' };
}

function fill(templ: string, r: () => number, people: string[]): string {
  return templ
    .replace('{p}', pick(r, people))
    .replace('{l}', pick(r, PLACES))
    .replace('{t}', pick(r, THINGS))
    .replace('{d}', pick(r, DAYS))
    .replace(/\{n\}/g, String(1 + Math.floor(r() * 30)));
}


/** Build the synthetic memory into `dir` (bulk inserts in one transaction per layer). */
export function build(dir: string): void {
  const mem = new MemorySystem({ dataDir: dir, settings: defaultSettings(), log: silentLogger });
  const r = rng(42);
  const now = Date.UTC(2026, 5, 1);
  mem.db.pragma('synchronous = OFF');
  const people: string[] = [];
  mem.db.transaction(() => {
    for (let i = 0; i < ENTITIES; i++) {
      const e = entityName(i);
      if (e.type === 'person') people.push(e.name);
      mem.graph.upsertEntity(e.name, e.type, now - Math.floor(r() * 1e10));
    }
  })();
  const ins = mem.db.prepare('INSERT OR IGNORE INTO relations(source, target, relation_type, confidence, sentence, created, updated) VALUES(?, ?, ?, ?, ?, ?, ?)');
  mem.db.transaction(() => {
    let n = 0;
    while (n < RELATIONS) {
      const s = 1 + Math.floor(r() * ENTITIES);
      const t = 1 + Math.floor(r() * ENTITIES);
      if (s === t) continue;
      n += ins.run(s, t, pick(r, RELS), Math.round((0.3 + r() * 0.7) * 100) / 100, '', now, now).changes;
    }
  })();
  mem.db.transaction(() => {
    for (let i = 0; i < DOCS; i++) {
      const zh = i % 2 === 0;
      const text = fill(pick(r, zh ? ZH_TEMPL : EN_TEMPL), r, people);
      const t = now - Math.floor(r() * 180 * 86_400_000);
      mem.docs.add({ event_id: `bench-${i}`, time: t, kind: 'user', source: 'voice', speaker: pick(r, ['Anna', '小王', 'Tom']), input: text, response: '' }, t);
    }
  })();
  for (let i = 0; i < 30; i++) mem.append({ id: `win-${i}`, time: now + i * 1000, kind: i % 2 ? 'agent' : 'user', source: 'voice', input: i % 2 ? '' : `窗口里的第${i}句话`, response: i % 2 ? `reply ${i}` : '' });
  mem.db.pragma('synchronous = FULL');
  mem.db.pragma('wal_checkpoint(TRUNCATE)');
  mem.close();
}

/** Queries: a mix of Chinese and English, naming people, places and things. */
export function queries(n: number): string[] {
  const r = rng(7);
  const out: string[] = [];
  for (let i = 0; i < n; i++) {
    const p = personName(Math.floor(r() * ENTITIES * 0.6));
    out.push(
      i % 2 === 0
        ? `${p}最近在${pick(r, PLACES)}做什么？上次说的${pick(r, THINGS)}怎么样了`
        : `What did ${pick(r, FIRST)} say about ${pick(r, THINGS)} in ${pick(r, PLACES)} on ${pick(r, DAYS)}?`,
    );
  }
  return out;
}

/** Assemble `n` turns against `dir` (after 20 warm-up turns); returns per-turn times in ms. */
async function assemble(dir: string, n: number): Promise<number[]> {
  const mem = new MemorySystem({ dataDir: dir, settings: defaultSettings(), log: silentLogger });
  const times: number[] = [];
  const qs = queries(n + 20);
  try {
    for (let i = 0; i < qs.length; i++) {
      const t0 = process.hrtime.bigint();
      await mem.recallForPrompt(qs[i]!, 4000);
      mem.timeline(8000);
      if (i >= 20) times.push(Number(process.hrtime.bigint() - t0) / 1e6);
    }
  } finally {
    mem.close();
  }
  return times;
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

/** Child mode: open the memory, assemble prompts, print peak RSS in MB. */
async function child(dir: string): Promise<void> {
  await assemble(dir, 100);
  process.stdout.write(`${(process.resourceUsage().maxRSS / 1024).toFixed(1)}\n`);
}

/** Build, measure, print the figures. */
export async function run(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'ha-bench-mem-'));
  try {
    const t0 = Date.now();
    if (process.env.HOMEAGENT_BENCH_DIR) fs.cpSync(process.env.HOMEAGENT_BENCH_DIR, dir, { recursive: true });
    else build(dir);
    process.stderr.write(`built in ${((Date.now() - t0) / 1000).toFixed(1)} s\n`);
    const times = await assemble(dir, TURNS);
    console.log(`memory.assemble_p50: ${pct(times, 50).toFixed(2)} ms`);
    console.log(`memory.assemble_p99: ${pct(times, 99).toFixed(2)} ms`);
    const self = fileURLToPath(import.meta.url);
    const res = spawnSync(process.execPath, ['--import', 'tsx', self, '--rss-child', dir], { encoding: 'utf8' });
    if (res.status !== 0) throw new Error(`rss child failed: ${res.stderr}`);
    console.log(`memory.rss: ${Number(res.stdout.trim()).toFixed(1)} MB`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

if (process.argv[2] === '--rss-child' && process.argv[3]) void child(process.argv[3]);
