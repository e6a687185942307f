/**
 * Heartbeat consolidation detectors (seed 000 §8 "启发式检测，LLM 决策"):
 * duplicate-entity candidates by character-bigram Jaccard (same type,
 * threshold a setting, default 0.5) and by name-form rules (张先生 / 王老师
 * beside a full name with that surname; "Mr. Smith" beside "John Smith"),
 * and conflicting single-valued relations for the review loop. Each finding is
 * turned into a prompt for the LLM; the caller enqueues it on `_consolidation_`.
 */
import type { Db } from './db.js';
import type { EntityRow, GraphStore, RelationView } from './graph.js';
import { HAN, isAllHan } from '../kernel/language.js';
import { jaccard, nameBigrams, stem } from './text.js';

/** A candidate pair: `keep` is the suggested survivor (full name, else more mentions). */
export interface MergeCandidate {
  keep: EntityRow;
  merge: EntityRow;
  score: number;
  reason: 'bigram' | 'name_form';
}

const ZH_HONORIFIC = ['先生', '女士', '小姐', '太太', '老师', '老板', '师傅', '医生', '经理', '阿姨', '叔叔', '总'];
const ZH_FORM = new RegExp(`^(${HAN})(${ZH_HONORIFIC.join('|')})$`, 'u');
const ZH_FULL_NAME = new RegExp(`^${HAN}{2,3}$`, 'u');
const EN_TITLES = ['Mr.', 'Mr', 'Mrs.', 'Mrs', 'Ms.', 'Ms', 'Miss', 'Dr.', 'Dr', 'Prof.', 'Prof'];
const EN_FORM = /^(?:mr|mrs|ms|miss|dr|prof)\.?\s+([a-z][\w'-]*)$/i;
const EN_FULL = /^[A-Z][\w'-]*(?:\s+[A-Z][\w'-]*)*\s+([A-Z][\w'-]*)$/;

/** Relation types that hold one value per subject; two targets are a conflict to review. */
export const SINGLE_VALUED = new Set(['名字是', '住在', '年龄', '工作是', 'name', 'lives_in', 'age', 'works_as']);

function compatible(a: EntityRow, b: EntityRow): boolean {
  return a.type === b.type || a.type === 'thing' || b.type === 'thing';
}

function pairKey(a: EntityRow, b: EntityRow): string {
  return `merge:${Math.min(a.id, b.id)}:${Math.max(a.id, b.id)}`;
}

/** Order a pair so the full name (or the entity with more mentions) is kept. */
function order(a: EntityRow, b: EntityRow, score: number, reason: MergeCandidate['reason']): MergeCandidate {
  const formA = ZH_FORM.test(a.name) || EN_FORM.test(a.name);
  const formB = ZH_FORM.test(b.name) || EN_FORM.test(b.name);
  const keepA = formA !== formB ? formB : a.mention_count >= b.mention_count;
  return keepA ? { keep: a, merge: b, score, reason } : { keep: b, merge: a, score, reason };
}

/**
 * Candidate pairs among entities updated at or after `since` (ms), skipping
 * pairs already handed to the LLM (table consolidation_seen). At most `limit`.
 */
export function detectMergeCandidates(db: Db, graph: GraphStore, since: number, threshold: number, limit: number): MergeCandidate[] {
  const changed = db.prepare('SELECT * FROM entities WHERE updated >= ? ORDER BY updated LIMIT 2000').all(since) as EntityRow[];
  const seen = db.prepare('SELECT 1 FROM consolidation_seen WHERE key = ?');
  const posting = db.prepare('SELECT entity_id FROM entity_terms WHERE term = ? LIMIT 200').pluck();
  const prefix = db.prepare("SELECT * FROM entities WHERE name >= ? AND name < ? || '\uffff' AND length(name) BETWEEN 2 AND 3 LIMIT 50");
  const out = new Map<string, MergeCandidate>();
  const consider = (a: EntityRow, b: EntityRow | undefined, score: number, reason: MergeCandidate['reason']): void => {
    if (!b || a.id === b.id || !compatible(a, b)) return;
    const key = pairKey(a, b);
    if (out.has(key) || seen.get(key)) return;
    out.set(key, order(a, b, score, reason));
  };
  for (const e of changed) {
    if (out.size >= limit) break;
    const grams = nameBigrams(e.name);
    const counts = new Map<number, number>();
    for (const g of grams) for (const id of posting.all(`b:${g}`) as number[]) counts.set(id, (counts.get(id) ?? 0) + 1);
    for (const id of counts.keys()) {
      if (id === e.id) continue;
      const o = graph.byId(id);
      if (!o) continue;
      const j = jaccard(grams, nameBigrams(o.name));
      if (j >= threshold) consider(e, o, j, 'bigram');
    }
    const zh = ZH_FORM.exec(e.name);
    if (zh) {
      for (const o of prefix.all(zh[1], zh[1]) as EntityRow[]) if (!ZH_FORM.test(o.name) && isAllHan(o.name)) consider(e, o, 0.75, 'name_form');
    } else if (ZH_FULL_NAME.test(e.name)) {
      for (const h of ZH_HONORIFIC) consider(e, graph.resolve(`${e.name[0]}${h}`), 0.75, 'name_form');
    }
    const en = EN_FORM.exec(e.name);
    if (en) {
      const surname = en[1]!.toLowerCase();
      for (const id of posting.all(stem(surname)) as number[]) {
        const o = graph.byId(id);
        if (o && !EN_FORM.test(o.name) && new RegExp(`\\s${surname}$`, 'i').test(o.name)) consider(e, o, 0.75, 'name_form');
      }
    } else {
      const full = EN_FULL.exec(e.name);
      if (full) for (const t of EN_TITLES) consider(e, graph.resolve(`${t} ${full[1]}`), 0.75, 'name_form');
    }
  }
  return [...out.values()].slice(0, limit);
}

/** Remember that a finding was handed to the LLM so it is not enqueued again. */
export function markSeen(db: Db, key: string, now: number): void {
  db.prepare('INSERT OR REPLACE INTO consolidation_seen(key, time) VALUES(?, ?)').run(key, now);
}

/** The key under which a merge candidate is remembered. */
export function candidateKey(c: MergeCandidate): string {
  return pairKey(c.keep, c.merge);
}

function describe(graph: GraphStore, e: EntityRow): string {
  const rels = graph.relationsOf(e.id, 5).map((r) => `${r.source_name} ${r.relation_type} ${r.target_name}`);
  return `「${e.name}」 (${e.type}, ${e.mention_count} mentions)${rels.length ? ` — ${rels.join('; ')}` : ''}`;
}

/** The `_consolidation_` prompt for a merge candidate (seed 000 §8 LLM decision: merge, skip or pending). */
export function mergePrompt(graph: GraphStore, c: MergeCandidate): string {
  const why = c.reason === 'bigram' ? `character-bigram Jaccard ${c.score.toFixed(2)}` : 'name form (surname with honorific / title beside a full name)';
  return [
    '[memory consolidation] Possible duplicate entities / 可能重复的实体:',
    `A: ${describe(graph, c.keep)}`,
    `B: ${describe(graph, c.merge)}`,
    `Why: ${why}.`,
    `If they are the same, call memory_merge with {"keep": "${c.keep.name}", "merge": "${c.merge.name}"}. If they are different, reply "skip". If unsure, reply "pending".`,
  ].join('\n');
}

/** A conflict: one subject with several targets of a single-valued relation. */
export interface RelationConflict {
  key: string;
  relations: RelationView[];
}

/** Conflicts among relations updated at or after `since` (ms), not yet reviewed; at most `limit`. */
export function detectConflicts(db: Db, graph: GraphStore, since: number, limit: number): RelationConflict[] {
  const types = [...SINGLE_VALUED];
  const rows = db
    .prepare(
      `SELECT DISTINCT source, relation_type FROM relations WHERE updated >= ? AND relation_type IN (${types.map(() => '?').join(',')}) LIMIT 1000`,
    )
    .all(since, ...types) as Array<{ source: number; relation_type: string }>;
  const seen = db.prepare('SELECT 1 FROM consolidation_seen WHERE key = ?');
  const out: RelationConflict[] = [];
  for (const r of rows) {
    if (out.length >= limit) break;
    const rels = graph.relationsOf(r.source, 50).filter((x) => x.source === r.source && x.relation_type === r.relation_type);
    if (rels.length < 2) continue;
    const key = `review:${r.source}:${r.relation_type}:${rels.map((x) => x.id).sort((a, b) => a - b).join(',')}`;
    if (seen.get(key)) continue;
    out.push({ key, relations: rels });
  }
  return out;
}

/** The `_consolidation_` prompt for a relation conflict (seed 001 reviewLoop: SentenceRef recall -> LLM fix). */
export function reviewPrompt(c: RelationConflict): string {
  const lines = c.relations.map(
    (r) => `- relation ${r.id}: ${r.source_name} ${r.relation_type} ${r.target_name} (confidence ${r.confidence.toFixed(2)}, updated ${new Date(r.updated).toISOString()})${r.sentence ? ` — said: "${r.sentence.slice(0, 160)}"` : ''}`,
  );
  return [
    '[memory review] These facts may conflict / 这些记忆可能矛盾:',
    ...lines,
    'If one is outdated, call memory_purge with {"relation_ids": [id]} or memory_edit to correct it. If both are true, reply "skip".',
  ].join('\n');
}
