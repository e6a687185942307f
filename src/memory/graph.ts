/**
 * Layer 3, the graph (seed 001 "Graph Layer", seed 000 §4): entities (name,
 * type, mention_count) and relations (source -> target, relation_type,
 * confidence, sentence reference) in SQLite. Commit is an upsert; recall is
 * keyword/term seeds -> BFS depth 2; merge redirects relations and sums
 * mention counts (seed 000 §8), leaving the merged name as an alias.
 */
import type { Triple } from '../kernel/memory-types.js';
import type { Db } from './db.js';
import { hasHan } from '../kernel/language.js';
import { cleanText, keywords, nameBigrams, terms } from './text.js';

/** An entity row. Times are ms since epoch. */
export interface EntityRow {
  id: number;
  name: string;
  type: string;
  mention_count: number;
  nterms: number;
  created: number;
  updated: number;
}

/** A relation with its endpoints' names. */
export interface RelationView {
  id: number;
  source: number;
  target: number;
  source_name: string;
  target_name: string;
  relation_type: string;
  confidence: number;
  sentence: string;
  doc_id: number | null;
  updated: number;
  /** 1 when the fact is sensitive (health, money, secrets, the hidden key; src/memory/sensitive.ts). */
  sensitive: number;
  /** The person the fact belongs to; null: its source entity. */
  owner: string | null;
}

/**
 * An earlier value of a fact (issue 18 "Versions"): what the relation said
 * before memory_edit changed it or a trait was set again. `valid_from` and
 * `replaced` are ms since epoch.
 */
export interface RelationVersion {
  id: number;
  /** The relation it was an earlier value of (null: that relation was replaced by a new one, e.g. a trait set again). */
  relation_id: number | null;
  source: number;
  source_name: string;
  relation_type: string;
  target_name: string;
  confidence: number;
  sentence: string;
  sensitive: number;
  owner: string | null;
  valid_from: number;
  replaced: number;
}

/** Result of a graph recall: seed entities and relations found by BFS, best first. */
export interface GraphRecall {
  entities: Array<{ entity: EntityRow; score: number }>;
  relations: Array<{ relation: RelationView; score: number }>;
}

/** Result of a merge (seed 000 §8: "3 条关系已重定向"). */
export interface MergeResult {
  kept: string;
  merged: string;
  redirected: number;
  combined: number;
  dropped_self_loops: number;
  mention_count: number;
}

const POSTING_CAP = 300;
const FANOUT = 16;
/** Nodes expanded per BFS depth at most. */
const FRONTIER_CAP = 12;
const REL_SELECT = `SELECT r.id, r.source, r.target, s.name AS source_name, t.name AS target_name, r.relation_type,
  r.confidence, r.sentence, r.doc_id, r.updated, r.sensitive, r.owner FROM relations r JOIN entities s ON s.id = r.source JOIN entities t ON t.id = r.target`;

/** Index terms of an entity name: vector terms, name bigrams (`b:`) and the whole name (`n:`). */
export function entityTerms(name: string): { all: string[]; scored: number } {
  const main = new Set(terms(name));
  main.add(`n:${cleanText(name)}`);
  const all = new Set(main);
  for (const b of nameBigrams(name)) all.add(`b:${b}`);
  return { all: [...all], scored: Math.max(1, main.size - 1) };
}

/** The graph store over the memory database. */
export class GraphStore {
  private readonly st;

  constructor(private readonly db: Db) {
    this.st = {
      byName: db.prepare('SELECT * FROM entities WHERE name = ?'),
      byId: db.prepare('SELECT * FROM entities WHERE id = ?'),
      alias: db.prepare('SELECT entity_id FROM aliases WHERE alias = ?').pluck(),
      insEntity: db.prepare('INSERT INTO entities(name, type, mention_count, nterms, created, updated) VALUES(?, ?, ?, ?, ?, ?)'),
      bump: db.prepare('UPDATE entities SET mention_count = mention_count + ?, updated = ?, type = CASE WHEN type = \'thing\' THEN ? ELSE type END WHERE id = ?'),
      insTerm: db.prepare('INSERT OR IGNORE INTO entity_terms(term, entity_id) VALUES(?, ?)'),
      posting: db.prepare(`SELECT entity_id FROM entity_terms WHERE term = ? LIMIT ${POSTING_CAP}`).pluck(),
      upRel: db.prepare(`INSERT INTO relations(source, target, relation_type, confidence, sentence, doc_id, created, updated, sensitive, owner)
        VALUES(@source, @target, @relation_type, @confidence, @sentence, @doc_id, @now, @now, @sensitive, @owner)
        ON CONFLICT(source, relation_type, target) DO UPDATE SET confidence = max(confidence, excluded.confidence),
        sentence = CASE WHEN excluded.sentence != '' THEN excluded.sentence ELSE sentence END,
        doc_id = coalesce(excluded.doc_id, doc_id), updated = excluded.updated,
        sensitive = max(sensitive, excluded.sensitive), owner = coalesce(owner, excluded.owner)`),
      out: db.prepare(`${REL_SELECT} WHERE r.source = ? ORDER BY r.confidence DESC, r.updated DESC LIMIT ${FANOUT}`),
      in: db.prepare(`${REL_SELECT} WHERE r.target = ? ORDER BY r.confidence DESC, r.updated DESC LIMIT ${FANOUT}`),
      relById: db.prepare(`${REL_SELECT} WHERE r.id = ?`),
    };
  }

  /** An entity by name or alias (aliases are left by merges). */
  resolve(name: string): EntityRow | undefined {
    const n = name.trim();
    const row = this.st.byName.get(n) as EntityRow | undefined;
    if (row) return row;
    const id = this.st.alias.get(n) as number | undefined;
    return id === undefined ? undefined : (this.st.byId.get(id) as EntityRow | undefined);
  }

  /** An entity by id. */
  byId(id: number): EntityRow | undefined {
    return this.st.byId.get(id) as EntityRow | undefined;
  }

  /** Insert or bump an entity (mention_count + `mentions`); call inside a transaction. */
  upsertEntity(name: string, type: string | undefined, now: number, mentions = 1): EntityRow {
    const existing = this.resolve(name);
    if (existing) {
      this.st.bump.run(mentions, now, type ?? 'thing', existing.id);
      return this.byId(existing.id)!;
    }
    const t = entityTerms(name);
    const info = this.st.insEntity.run(name.trim(), type ?? 'thing', mentions, t.scored, now, now);
    const id = Number(info.lastInsertRowid);
    for (const term of t.all) this.st.insTerm.run(term, id);
    return this.byId(id)!;
  }

  /**
   * Commit triples as upserts (entities bumped, relations inserted or their
   * confidence raised; once sensitive, a relation stays so), in one
   * IMMEDIATE transaction. Returns counts touched.
   */
  commit(triples: readonly Triple[], now: number, docId?: number): { entities: number; relations: number } {
    return this.db
      .transaction(() => {
        const touched = new Set<number>();
        let relations = 0;
        for (const tr of triples) {
          const s = this.upsertEntity(tr.subject, tr.subject_type, now);
          const o = this.upsertEntity(tr.object, tr.object_type, now);
          touched.add(s.id).add(o.id);
          this.st.upRel.run({
            source: s.id,
            target: o.id,
            relation_type: tr.relation.trim(),
            confidence: tr.confidence ?? 0.8,
            sentence: tr.sentence ?? '',
            doc_id: docId ?? null,
            now,
            sensitive: tr.sensitive ? 1 : 0,
            owner: tr.owner?.trim() || null,
          });
          relations++;
        }
        return { entities: touched.size, relations };
      })
      .immediate();
  }

  /** Seed entities for `query`: keyword and term postings, scored by the share of the name's terms matched. */
  seeds(query: string, limit: number): Array<{ entity: EntityRow; score: number }> {
    const qterms = new Set(terms(query));
    for (const k of keywords(query)) {
      qterms.add(hasHan(k) ? `w:${k}` : k);
      qterms.add(`n:${cleanText(k)}`);
    }
    const hits = new Map<number, number>();
    for (const t of qterms) {
      const ids = this.st.posting.all(t) as number[];
      // A term shared by POSTING_CAP entities or more cannot make a name match on its own; skip it (exact names never are).
      if (ids.length >= POSTING_CAP && !t.startsWith('n:')) continue;
      for (const id of ids) hits.set(id, (hits.get(id) ?? 0) + 1);
    }
    const scored: Array<{ entity: EntityRow; score: number }> = [];
    const top = [...hits.entries()].sort((a, b) => b[1] - a[1]).slice(0, 40);
    for (const [id, c] of top) {
      const e = this.byId(id);
      if (!e) continue;
      const score = Math.min(1, c / (e.nterms + 1));
      if (score >= 0.5) scored.push({ entity: e, score });
    }
    scored.sort((a, b) => b.score - a.score || b.entity.mention_count - a.entity.mention_count);
    return scored.slice(0, limit);
  }

  /** Recall: seeds from `query`, then BFS to `depth` over relations (fan-out 16 per node by confidence). */
  recall(query: string, limit = 12, depth = 2): GraphRecall {
    const seeds = this.seeds(query, 5);
    const rels = new Map<number, { relation: RelationView; score: number }>();
    let frontier = seeds.map((s) => ({ id: s.entity.id, score: s.score }));
    const seen = new Set(frontier.map((f) => f.id));
    for (let d = 1; d <= depth && frontier.length > 0; d++) {
      const next: Array<{ id: number; score: number }> = [];
      for (const node of frontier) {
        const found = [...(this.st.out.all(node.id) as RelationView[]), ...(this.st.in.all(node.id) as RelationView[])];
        for (const r of found) {
          const score = node.score * r.confidence * (d === 1 ? 1 : 0.5);
          const prev = rels.get(r.id);
          if (!prev || prev.score < score) rels.set(r.id, { relation: r, score });
          const other = r.source === node.id ? r.target : r.source;
          if (!seen.has(other)) {
            seen.add(other);
            next.push({ id: other, score: node.score * 0.5 });
          }
        }
      }
      // Bound the work per depth: only the best-scored neighbours are expanded further.
      frontier = next.sort((a, b) => b.score - a.score).slice(0, FRONTIER_CAP);
    }
    const relations = [...rels.values()].sort((a, b) => b.score - a.score || b.relation.updated - a.relation.updated).slice(0, limit);
    return { entities: seeds, relations };
  }

  /** A relation by id, with names. */
  relation(id: number): RelationView | undefined {
    return this.st.relById.get(id) as RelationView | undefined;
  }

  /** Relations touching an entity (both directions), at most `limit`. */
  relationsOf(entityId: number, limit = 50): RelationView[] {
    return this.db.prepare(`${REL_SELECT} WHERE r.source = ? OR r.target = ? ORDER BY r.confidence DESC LIMIT ?`).all(entityId, entityId, limit) as RelationView[];
  }

  /**
   * Merge entity `mergeName` into `keepName` (seed 000 §8): relations
   * redirected (a duplicate of an existing relation is combined, keeping the
   * higher confidence; a relation between the two becomes a self-loop and is
   * dropped), mention counts summed, the merged name kept as an alias.
   * Returns undefined when either name is unknown or both are the same entity.
   */
  merge(keepName: string, mergeName: string, now: number): MergeResult | undefined {
    return this.db
      .transaction((): MergeResult | undefined => {
        const keep = this.resolve(keepName);
        const gone = this.resolve(mergeName);
        if (!keep || !gone || keep.id === gone.id) return undefined;
        let redirected = 0;
        let combined = 0;
        let selfLoops = 0;
        const rels = this.db.prepare('SELECT * FROM relations WHERE source = ? OR target = ?').all(gone.id, gone.id) as Array<{
          id: number;
          source: number;
          target: number;
          relation_type: string;
          confidence: number;
          sentence: string;
          sensitive: number;
        }>;
        for (const r of rels) {
          const s = r.source === gone.id ? keep.id : r.source;
          const t = r.target === gone.id ? keep.id : r.target;
          if (s === t) {
            this.db.prepare('DELETE FROM relations WHERE id = ?').run(r.id);
            selfLoops++;
            continue;
          }
          const dup = this.db.prepare('SELECT id FROM relations WHERE source = ? AND relation_type = ? AND target = ?').get(s, r.relation_type, t) as
            | { id: number }
            | undefined;
          if (dup) {
            this.db
              .prepare("UPDATE relations SET confidence = max(confidence, ?), sentence = CASE WHEN sentence = '' THEN ? ELSE sentence END, sensitive = max(sensitive, ?), updated = ? WHERE id = ?")
              .run(r.confidence, r.sentence, r.sensitive, now, dup.id);
            this.db.prepare('DELETE FROM relations WHERE id = ?').run(r.id);
            combined++;
          } else {
            this.db.prepare('UPDATE relations SET source = ?, target = ?, updated = ? WHERE id = ?').run(s, t, now, r.id);
            redirected++;
          }
        }
        this.db.prepare('UPDATE entities SET mention_count = mention_count + ?, updated = ? WHERE id = ?').run(gone.mention_count, now, keep.id);
        this.db.prepare('UPDATE aliases SET entity_id = ? WHERE entity_id = ?').run(keep.id, gone.id);
        this.db.prepare('UPDATE relation_versions SET source = ? WHERE source = ?').run(keep.id, gone.id);
        this.db.prepare('INSERT OR REPLACE INTO aliases(alias, entity_id) VALUES(?, ?)').run(gone.name, keep.id);
        this.db.prepare('UPDATE OR IGNORE entity_terms SET entity_id = ? WHERE entity_id = ?').run(keep.id, gone.id);
        this.db.prepare('DELETE FROM entity_terms WHERE entity_id = ?').run(gone.id);
        this.db.prepare('DELETE FROM entities WHERE id = ?').run(gone.id);
        const mention = (this.byId(keep.id)?.mention_count ?? 0);
        return { kept: keep.name, merged: gone.name, redirected, combined, dropped_self_loops: selfLoops, mention_count: mention };
      })
      .immediate();
  }

  /** Delete an entity, its relations, terms and aliases. Returns the number of relations removed, or undefined when unknown. */
  deleteEntity(name: string): number | undefined {
    return this.db
      .transaction(() => {
        const e = this.resolve(name);
        if (!e) return undefined;
        const n = this.db.prepare('DELETE FROM relations WHERE source = ? OR target = ?').run(e.id, e.id).changes;
        this.db.prepare('DELETE FROM entity_terms WHERE entity_id = ?').run(e.id);
        this.db.prepare('DELETE FROM aliases WHERE entity_id = ?').run(e.id);
        this.db.prepare('DELETE FROM entities WHERE id = ?').run(e.id);
        return n;
      })
      .immediate();
  }

  /** Delete relations by id; then delete entities left with no relation and at most one mention. Returns counts. */
  purgeRelations(ids: readonly number[]): { relations: number; orphans: number } {
    return this.db
      .transaction(() => {
        const ends = new Set<number>();
        let relations = 0;
        for (const id of ids) {
          const r = this.db.prepare('SELECT source, target FROM relations WHERE id = ?').get(id) as { source: number; target: number } | undefined;
          if (!r) continue;
          ends.add(r.source).add(r.target);
          relations += this.db.prepare('DELETE FROM relations WHERE id = ?').run(id).changes;
        }
        let orphans = 0;
        for (const id of ends) {
          const used = this.db.prepare('SELECT 1 FROM relations WHERE source = ? OR target = ? LIMIT 1').get(id, id);
          const e = this.byId(id);
          if (!used && e && e.mention_count <= 1) {
            this.db.prepare('DELETE FROM entity_terms WHERE entity_id = ?').run(id);
            this.db.prepare('DELETE FROM aliases WHERE entity_id = ?').run(id);
            this.db.prepare('DELETE FROM entities WHERE id = ?').run(id);
            orphans++;
          }
        }
        return { relations, orphans };
      })
      .immediate();
  }

  /** Rename and/or retype an entity (terms reindexed, old name kept as alias). False when unknown or the new name is taken. */
  editEntity(name: string, change: { new_name?: string; type?: string }, now: number): boolean {
    return this.db
      .transaction(() => {
        const e = this.resolve(name);
        if (!e) return false;
        if (change.new_name !== undefined && change.new_name.trim() !== e.name) {
          const newName = change.new_name.trim();
          if (this.st.byName.get(newName)) return false;
          const t = entityTerms(newName);
          this.db.prepare('DELETE FROM entity_terms WHERE entity_id = ?').run(e.id);
          for (const term of t.all) this.st.insTerm.run(term, e.id);
          this.db.prepare('UPDATE entities SET name = ?, nterms = ? WHERE id = ?').run(newName, t.scored, e.id);
          this.db.prepare('DELETE FROM aliases WHERE alias = ?').run(newName);
          this.db.prepare('INSERT OR REPLACE INTO aliases(alias, entity_id) VALUES(?, ?)').run(e.name, e.id);
        }
        if (change.type !== undefined) this.db.prepare('UPDATE entities SET type = ? WHERE id = ?').run(change.type, e.id);
        this.db.prepare('UPDATE entities SET updated = ? WHERE id = ?').run(now, e.id);
        return true;
      })
      .immediate();
  }

  /**
   * Keep a relation's present value as an earlier version (before it is
   * changed or replaced, `now` the time it stops being current); call inside
   * the transaction that changes it. `relationId` null: the relation is
   * replaced by another (a trait set again).
   */
  keepVersion(r: RelationView, now: number, relationId: number | null = r.id): void {
    this.db
      .prepare(
        `INSERT INTO relation_versions(relation_id, source, relation_type, target_name, confidence, sentence, sensitive, owner, valid_from, replaced)
         VALUES(?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
      )
      .run(relationId, r.source, r.relation_type, r.target_name, r.confidence, r.sentence, r.sensitive, r.owner, r.updated, now);
  }

  /**
   * Earlier versions of relations (newest first): those of the relations
   * `ids` (however their type changed since), and those of the same source
   * and relation type (a trait set again). Normal recall never reads them.
   */
  versionsOf(relations: ReadonlyArray<Pick<RelationView, 'id' | 'source' | 'relation_type'>>): RelationVersion[] {
    const out = new Map<number, RelationVersion>();
    const sel = this.db.prepare(
      `SELECT v.*, e.name AS source_name FROM relation_versions v JOIN entities e ON e.id = v.source
       WHERE v.relation_id = ? OR (v.source = ? AND v.relation_type = ?) ORDER BY v.replaced DESC, v.id DESC`,
    );
    for (const r of relations) for (const v of sel.all(r.id, r.source, r.relation_type) as RelationVersion[]) out.set(v.id, v);
    return [...out.values()].sort((a, b) => b.replaced - a.replaced || b.id - a.id);
  }

  /** Earlier versions of every relation whose source is `entityId` (newest first). */
  versionsFrom(entityId: number): RelationVersion[] {
    return this.db
      .prepare('SELECT v.*, e.name AS source_name FROM relation_versions v JOIN entities e ON e.id = v.source WHERE v.source = ? ORDER BY v.replaced DESC, v.id DESC')
      .all(entityId) as RelationVersion[];
  }

  /**
   * Change a relation's type, confidence or target; a change of type or
   * target keeps the old value as an earlier version (issue 18). False when
   * the relation (or new target) is unknown or the change collides.
   */
  editRelation(id: number, change: { relation_type?: string; confidence?: number; target?: string }, now: number): boolean {
    return this.db
      .transaction(() => {
        const r = this.relation(id);
        if (!r) return false;
        const target = change.target !== undefined ? this.upsertEntity(change.target, undefined, now, 0).id : r.target;
        const type = change.relation_type?.trim() ?? r.relation_type;
        const clash = this.db.prepare('SELECT id FROM relations WHERE source = ? AND relation_type = ? AND target = ? AND id != ?').get(r.source, type, target, id);
        if (clash) return false;
        if (type !== r.relation_type || target !== r.target) this.keepVersion(r, now);
        this.db
          .prepare('UPDATE relations SET relation_type = ?, target = ?, confidence = ?, updated = ? WHERE id = ?')
          .run(type, target, change.confidence ?? r.confidence, now, id);
        return true;
      })
      .immediate();
  }

  /**
   * The most mentioned entities (at most `limit`, most mentioned and most
   * recently updated first) with the relations between them: the start of
   * the WebUI's memory graph. Read only.
   */
  overview(limit = 40): { entities: EntityRow[]; relations: RelationView[] } {
    const entities = this.db.prepare('SELECT * FROM entities ORDER BY mention_count DESC, updated DESC, id LIMIT ?').all(Math.max(1, limit)) as EntityRow[];
    if (entities.length === 0) return { entities, relations: [] };
    const ids = entities.map((e) => e.id);
    const marks = ids.map(() => '?').join(',');
    const relations = this.db.prepare(`${REL_SELECT} WHERE r.source IN (${marks}) AND r.target IN (${marks}) ORDER BY r.confidence DESC, r.updated DESC LIMIT ?`).all(...ids, ...ids, limit * 4) as RelationView[];
    return { entities, relations };
  }

  /** Counts for introspection. */
  stats(): { entities: number; relations: number; aliases: number } {
    const c = (sql: string): number => Number(this.db.prepare(sql).pluck().get());
    return {
      entities: c('SELECT count(*) FROM entities'),
      relations: c('SELECT count(*) FROM relations'),
      aliases: c('SELECT count(*) FROM aliases'),
    };
  }
}
