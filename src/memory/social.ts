/**
 * The household's people (seed 001 "Social: person_query / set_trait /
 * relate (wraps GraphDB)"; issue 18 "People"): the `people` table lists
 * everyone identified speaking or added as a person; what is known about
 * them lives in the graph, as relations of their entity (type `person`).
 *
 * - A trait is a relation from the person to a value (`Anna favourite_colour
 *   blue`); set_trait keeps one value per trait. What the rule distiller
 *   took from "I live in X" is a trait of the same kind (`lives_in`).
 * - A relation between people (`Anna sister_of Ben`) makes both persons.
 * - Reads take a viewer, the person speaking (undefined: unidentified; null:
 *   a reader with no person, a plugin): a sensitive fact is shown only to
 *   its owner (src/memory/sensitive.ts `visibleTo`).
 */
import type { PersonFact, PersonSummary, PersonView, SocialAPI, SocialReadAPI } from '../kernel/memory-types.js';
import { MAX_PERSON_NAME, normalisePersonName } from '../kernel/people.js';
import type { Db } from './db.js';
import type { GraphStore, RelationView } from './graph.js';
import { isSensitiveText, personKey, visibleTo } from '../kernel/sensitive.js';

/** Who reads: a person's name, undefined for an unidentified speaker, null for a reader with no person (plugins). */
export type Viewer = string | undefined | null;

interface PeopleRow {
  name: string;
  created: number;
  last_seen: number;
}

function checkName(v: string, what: string, max = MAX_PERSON_NAME): string {
  if (typeof v !== 'string') throw new TypeError(`${what} must be a string`);
  const n = v.normalize('NFKC').trim().replace(/\s+/g, ' ');
  if (n === '') throw new TypeError(`${what} is empty`);
  if (n.length > max) throw new TypeError(`${what} is longer than ${max} characters`);
  return n;
}

/** A relation as a PersonFact. */
export function personFact(r: RelationView): PersonFact {
  return {
    id: r.id,
    subject: r.source_name,
    relation: r.relation_type,
    object: r.target_name,
    sensitive: r.sensitive === 1,
    owner: r.owner ?? r.source_name,
    ...(r.sentence ? { sentence: r.sentence } : {}),
    updated: r.updated,
  };
}

/** Whether `viewer` may see relation `r`. */
export function relationVisible(r: Pick<RelationView, 'sensitive' | 'owner' | 'source_name'>, viewer: Viewer): boolean {
  return visibleTo(r.sensitive === 1, r.owner ?? r.source_name, viewer);
}

/** The household's people over the memory database; see the module comment. */
export class Social {
  constructor(
    private readonly db: Db,
    private readonly graph: GraphStore,
    private readonly now: () => number,
  ) {}

  private row(name: string): PeopleRow | undefined {
    return this.db.prepare('SELECT name, created, last_seen FROM people WHERE name = ?').get(name.trim()) as PeopleRow | undefined;
  }

  /**
   * Note that `name` was heard speaking at `time` (ms): a new person is added
   * to the household and gets a `person` entity; a known one's last_seen moves on.
   */
  heard(name: string, time: number): void {
    const n = name.trim();
    if (n === '') return;
    const known = this.row(n);
    if (known) {
      if (time > known.last_seen) this.db.prepare('UPDATE people SET last_seen = ? WHERE name = ?').run(time, known.name);
      return;
    }
    this.addPerson(n, time);
  }

  /**
   * The entity of a person set_trait or relate is about, made a `person` when
   * it is not one yet (created when unknown), without adding them to the
   * household's list (Anna's sister may live elsewhere). Returns its name.
   */
  ensurePerson(name: string): string {
    const n = normalisePersonName(checkName(name, 'person name'));
    return this.db
      .transaction(() => {
        const e = this.entityOf(n);
        if (!e) return this.graph.upsertEntity(n, 'person', this.now(), 0).name;
        if (e.type !== 'person') this.db.prepare("UPDATE entities SET type = 'person' WHERE id = ?").run(e.id);
        return e.name;
      })
      .immediate();
  }

  /** Add a person to the household's list (idempotent; a WebUI pairing, or heard speaking); their entity becomes a `person`. Returns the stored name. */
  addPerson(name: string, time = this.now()): string {
    const n = normalisePersonName(checkName(name, 'person name'));
    return this.db
      .transaction(() => {
        const known = this.row(n);
        if (known) return known.name;
        const entity = this.graph.resolve(n);
        const stored = entity?.name ?? n;
        this.db.prepare('INSERT INTO people(name, created, last_seen) VALUES(?, ?, ?)').run(stored, time, time);
        if (!entity) this.graph.upsertEntity(stored, 'person', time, 0);
        else if (entity.type !== 'person') this.db.prepare("UPDATE entities SET type = 'person' WHERE id = ?").run(entity.id);
        return stored;
      })
      .immediate();
  }

  /** The entity of a person by name or alias, the household's spelling first ("anna" finds Anna). */
  entityOf(name: string) {
    const n = name.trim();
    const row = this.row(n);
    return (row ? this.graph.resolve(row.name) : undefined) ?? this.graph.resolve(n);
  }

  /** The household's spelling of a name ("ANNA" -> "Anna"), or the name itself when no such person is listed. */
  canonicalName(name: string): string {
    return this.row(name)?.name ?? name.trim();
  }

  /** Whether the household knows a person of this name (case-insensitive). */
  isPerson(name: string): boolean {
    return this.row(name) !== undefined;
  }

  /** The household's people, most recently heard first. */
  list(): PersonSummary[] {
    const rows = this.db.prepare('SELECT name, created, last_seen FROM people ORDER BY last_seen DESC, name').all() as PeopleRow[];
    return rows.map((r) => {
      const e = this.graph.resolve(r.name);
      const facts = e ? Number(this.db.prepare('SELECT count(*) FROM relations WHERE source = ? OR target = ?').pluck().get(e.id, e.id)) : 0;
      return { name: r.name, first_seen: r.created, last_seen: r.last_seen, facts };
    });
  }

  /** Every fact about `name` that `viewer` may see, best first (at most `limit`); [] for an unknown name. */
  facts(name: string, viewer: Viewer, limit = 200): PersonFact[] {
    const e = this.entityOf(name);
    if (!e) return [];
    return this.graph
      .relationsOf(e.id, limit)
      .filter((r) => relationVisible(r, viewer))
      .map(personFact);
  }

  /** A person as `viewer` may see them; undefined when neither a household person nor a person entity has that name. */
  person(name: string, viewer: Viewer): PersonView | undefined {
    const e = this.entityOf(name);
    const row = this.row(e?.name ?? name);
    if (!e && !row) return undefined;
    if (e && !row && e.type !== 'person') return undefined;
    const facts = e ? this.facts(e.name, viewer) : [];
    const traits: Record<string, string> = {};
    const people = new Set(this.list().map((p) => personKey(p.name)));
    for (const f of facts) {
      if (personKey(f.subject) !== personKey(e!.name) || people.has(personKey(f.object))) continue;
      const targetType = this.graph.resolve(f.object)?.type;
      if (targetType === 'person') continue;
      traits[f.relation] = traits[f.relation] ? `${traits[f.relation]}, ${f.object}` : f.object;
    }
    const aliases = e ? (this.db.prepare('SELECT alias FROM aliases WHERE entity_id = ? ORDER BY alias').pluck().all(e.id) as string[]) : [];
    return {
      name: e?.name ?? row!.name,
      aliases,
      ...(row ? { first_seen: row.created, last_seen: row.last_seen } : {}),
      traits,
      facts,
    };
  }

  /** One trait's value as `viewer` may see it. */
  trait(name: string, trait: string, viewer: Viewer): string | undefined {
    return this.person(name, viewer)?.traits[trait.trim()];
  }

  /** People reachable from `name` over relations between people, up to `depth` steps, with those relations. */
  network(name: string, depth: number, viewer: Viewer): { people: string[]; relations: PersonFact[] } {
    const start = this.entityOf(name);
    if (!start) return { people: [], relations: [] };
    const household = new Set(this.list().map((p) => personKey(p.name)));
    const isPerson = (id: number): boolean => {
      const e = this.graph.byId(id);
      return !!e && (e.type === 'person' || household.has(personKey(e.name)));
    };
    const seen = new Set([start.id]);
    const rels = new Map<number, PersonFact>();
    let frontier = [start.id];
    for (let d = 0; d < Math.max(1, Math.min(depth, 4)) && frontier.length > 0; d++) {
      const next: number[] = [];
      for (const id of frontier) {
        for (const r of this.graph.relationsOf(id, 100)) {
          const other = r.source === id ? r.target : r.source;
          if (!isPerson(other) || !relationVisible(r, viewer)) continue;
          rels.set(r.id, personFact(r));
          if (!seen.has(other)) {
            seen.add(other);
            next.push(other);
          }
        }
      }
      frontier = next;
    }
    seen.delete(start.id);
    return { people: [...seen].map((id) => this.graph.byId(id)!.name), relations: [...rels.values()] };
  }

  /**
   * Set `trait` of `name` to `value` (one value per trait: other values of
   * that trait are removed), making them a person when new. Sensitive when
   * `opts.sensitive` or the words say so. Returns the person's stored name.
   */
  setTrait(name: string, trait: string, value: string, opts: { sensitive?: boolean; sentence?: string } = {}): string {
    const person = this.ensurePerson(name);
    const t = checkName(trait, 'trait', 200);
    const v = checkName(value, 'value', 500);
    const sensitive = opts.sensitive ?? isSensitiveText(`${t} ${v} ${opts.sentence ?? ''}`);
    const now = this.now();
    this.db
      .transaction(() => {
        const e = this.graph.resolve(person)!;
        const old = this.graph.relationsOf(e.id, 1000).filter((r) => r.source === e.id && r.relation_type === t && personKey(r.target_name) !== personKey(v));
        if (old.length > 0) this.graph.purgeRelations(old.map((r) => r.id));
        this.graph.commit([{ subject: person, subject_type: 'person', relation: t, object: v, object_type: 'value', confidence: 1, owner: person, sensitive, sentence: opts.sentence ?? '' }], now);
      })
      .immediate();
    return person;
  }

  /** Record `name relation other` between two people (both made persons when new). Returns the stored names. */
  relate(name: string, relation: string, other: string, opts: { sensitive?: boolean; sentence?: string } = {}): { person: string; other: string } {
    const a = this.ensurePerson(name);
    const b = this.ensurePerson(other);
    const rel = checkName(relation, 'relation', 200);
    const sensitive = opts.sensitive ?? isSensitiveText(`${rel} ${opts.sentence ?? ''}`);
    this.graph.commit([{ subject: a, subject_type: 'person', relation: rel, object: b, object_type: 'person', confidence: 1, owner: a, sensitive, sentence: opts.sentence ?? '' }], this.now());
    return { person: a, other: b };
  }

  /** The reading half for a reader with no person (plugins: sensitive facts left out). */
  readApi(viewer: Viewer = null): SocialReadAPI {
    return Object.freeze({
      listPersons: async () => this.list(),
      getPerson: async (name: string) => this.person(name, viewer),
      getTrait: async (name: string, trait: string) => this.trait(name, trait, viewer),
      getRelations: async (name: string) => this.facts(name, viewer),
      getNetwork: async (name: string, depth?: number) => this.network(name, depth ?? 2, viewer),
    });
  }

  /** The whole API (built-in plugins). */
  api(): SocialAPI {
    return Object.freeze({
      ...this.readApi(null),
      setTrait: async (name: string, trait: string, value: string, opts?: { sensitive?: boolean }) => void this.setTrait(name, trait, value, opts),
      relate: async (name: string, relation: string, other: string, opts?: { sensitive?: boolean }) => void this.relate(name, relation, other, opts),
    });
  }
}
