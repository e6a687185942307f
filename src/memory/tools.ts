/**
 * Memory tools for the model (seed 001 "Memory Tools", seed 000 §4 工具入口):
 * memory_recall, memory_commit, memory_merge, memory_purge, memory_edit,
 * memory_delete_entity, memory_forget, memory_introspect, doc_query, doc_commit; and the
 * social tools (seed 001 "Social: person_query / set_trait / relate";
 * issue 18): person_query, people_list, set_trait, relate.
 *
 * The person speaking is the turn's input's `user` (src/kernel/people.ts);
 * "me" means them. What the tools return leaves out another person's
 * sensitive facts (src/memory/sensitive.ts): the box does not volunteer
 * one person's health, money, secrets or hidden key to another speaker.
 * Each tool's argument types come from its JSON Schema (defineTool, "schemas
 * once"): the registry's ajv refuses bad arguments before a handler runs, so
 * handlers only check what a schema cannot say (which of several arguments
 * must be given, whether the named entity exists) and throw typed errors the
 * kernel turns into tool errors (MEMORY_BAD_ARGS, MEMORY_NOT_FOUND).
 */
import type { Triple } from '../kernel/memory-types.js';
import type { ToolDef } from '../kernel/stage-types.js';
import { defineTool, type FromSchema } from '../kernel/tool-schema.js';
import { optInt, optNumber, optText, text } from './args.js';
import { MODEL_HIDDEN } from '../kernel/tool-registry.js';
import { MemoryArgumentError, MemoryNotFoundError } from './errors.js';
import type { MemorySystem } from './memory-system.js';
import type { ToolContext } from '../kernel/stage-types.js';
import { UNKNOWN_SPEAKER } from '../kernel/people.js';
import { relationVisible } from './social.js';
import { isSensitiveText, visibleTo } from '../kernel/sensitive.js';
import type { RelationView } from './graph.js';
import { isSelfInput } from '../kernel/turn-types.js';

/** One subject-relation-object fact as memory_commit takes it. */
const TRIPLE_SCHEMA = {
  type: 'object',
  properties: {
    subject: text(200),
    relation: text(200),
    object: text(200),
    subject_type: optText(40),
    // Accepted, not shown to the model (every turn offers memory_commit; issue 19): the type of the object, a confidence,
    // the sentence it came from.
    object_type: { ...optText(40), [MODEL_HIDDEN]: true },
    confidence: { ...optNumber(0, 1), [MODEL_HIDDEN]: true },
    sentence: { ...optText(2000), [MODEL_HIDDEN]: true },
    sensitive: { type: ['boolean', 'null'], description: 'Health, money, passwords, keys: told only to its person' },
  },
  required: ['subject', 'relation', 'object'],
} as const;

/** A memory_commit triple after validation (strings trimmed, absent or null fields left out). */
export function toTriple(t: FromSchema<typeof TRIPLE_SCHEMA>): Triple {
  const triple: Triple = { subject: t.subject.trim(), relation: t.relation.trim(), object: t.object.trim() };
  if (t.subject_type != null) triple.subject_type = t.subject_type.trim();
  if (t.object_type != null) triple.object_type = t.object_type.trim();
  if (t.confidence != null) triple.confidence = t.confidence;
  if (t.sentence != null) triple.sentence = t.sentence.trim();
  if (t.sensitive != null) triple.sensitive = t.sensitive;
  return triple;
}

/** Words by which a speaker talks about themselves. */
const FIRST_PERSON = /\b(?:i|me|my|mine|myself)\b|我/i;

/** "me", "myself", "I", "我": the person speaking. */
const ME = /^(?:me|myself|i|my|mine|the speaker|我|我自己)$/i;

/** The person a social tool is about: `name` (or the speaker for "me" / no name). Throws when nobody is identified and no name was given. */
function personOf(tool: string, name: string | null | undefined, ctx: ToolContext): string {
  const n = name?.trim();
  if (n && !ME.test(n)) return n;
  if (ctx.input.user) return ctx.input.user;
  throw new MemoryArgumentError(tool, `nobody has said who is speaking (${UNKNOWN_SPEAKER}); ask their name ("this is Anna" sets it) or give "person"`);
}

/**
 * Earlier values of `relations` and of the entities `entityIds` (issue 18
 * "Versions") as `viewer` may see them, newest first: `fact` as it was, `until` the day it changed.
 */
function earlierOf(
  mem: MemorySystem,
  relations: ReadonlyArray<Pick<RelationView, 'id' | 'source' | 'relation_type'>>,
  entityIds: readonly number[],
  viewer: string | undefined,
): Array<{ fact: string; until: string }> {
  // Those of the facts found, and those of the entities asked about (a fact retired with no successor).
  const all = new Map([...mem.graph.versionsOf(relations), ...entityIds.flatMap((id) => mem.graph.versionsFrom(id))].map((v) => [v.id, v]));
  return [...all.values()]
    .sort((a, b) => b.replaced - a.replaced || b.id - a.id)
    .filter((v) => visibleTo(v.sensitive === 1, v.owner ?? v.source_name, viewer))
    .map((v) => ({ fact: `${v.source_name} ${v.relation_type} ${v.target_name}`, until: new Date(v.replaced).toISOString().slice(0, 10) }));
}

/** What a forgetting left because it is someone else's (said without saying whose or what). */
function withheldNote(n: number): string {
  return n > 0 ? ` ${n} thing(s) said or stored by someone else were left: only they can have them forgotten.` : '';
}

/** The memory tools over `mem`. */
export function memoryTools(mem: MemorySystem): ToolDef[] {
  return [
    defineTool({
      name: 'memory_recall',
      description: 'Look up what you were told (people, places, preferences); "earlier": true adds values changed since. Example: {"query":"Anna allergies"}',
      parameters: { type: 'object', properties: { query: text(2000), limit: { ...optInt(1, 50), [MODEL_HIDDEN]: true }, earlier: { type: ['boolean', 'null'] } }, required: ['query'] },
      handler: (args, ctx) => {
        // "my ...": the speaker's own entity seeds the search too.
        const query = ctx.input.user && FIRST_PERSON.test(args.query) ? `${args.query.trim()} ${ctx.input.user}` : args.query.trim();
        const g = mem.graph.recall(query, args.limit ?? 12, 2);
        const relations = g.relations.filter((r) => relationVisible(r.relation, ctx.input.user));
        mem.markRecalled(relations.map((r) => `rel:${r.relation.id}`));
        if (g.entities.length === 0) return 'Nothing remembered about that.';
        const earlier = args.earlier === true ? earlierOf(mem, relations.map((r) => r.relation), g.entities.map((e) => e.entity.id), ctx.input.user) : undefined;
        return {
          entities: g.entities.map((e) => ({ name: e.entity.name, type: e.entity.type, mentions: e.entity.mention_count })),
          relations: relations.map((r) => ({
            id: r.relation.id,
            fact: `${r.relation.source_name} ${r.relation.relation_type} ${r.relation.target_name}`,
            confidence: Number(r.relation.confidence.toFixed(2)),
            ...(r.relation.sentence ? { sentence: r.relation.sentence } : {}),
          })),
          ...(earlier !== undefined ? { earlier } : {}),
        };
      },
    }),
    defineTool({
      name: 'memory_commit',
      description: 'Remember facts as triples. Example: {"triples":[{"subject":"Anna","relation":"is allergic to","object":"peanuts"}]}',
      parameters: { type: 'object', properties: { triples: { type: 'array', items: TRIPLE_SCHEMA, minItems: 1, maxItems: 200 } }, required: ['triples'] },
      handler: (args, ctx) => {
        // A fact is the speaker's when it is about them or they said it; sensitive when marked or its words say so.
        // "me" is the person speaking, when known.
        const me = (x: string): string => (ctx.input.user && ME.test(x) ? ctx.input.user : x);
        const triples = args.triples.map(toTriple).map((t) => ({ ...t, subject: me(t.subject), object: me(t.object) })).map((t) => ({
          ...t,
          owner: t.owner ?? (ctx.input.user && !mem.social.isPerson(t.subject) ? ctx.input.user : t.subject),
          sensitive: t.sensitive ?? isSensitiveText(`${t.relation} ${t.object} ${t.sentence ?? ''}`),
        }));
        // The box's own housekeeping turns store on their own: their sensitive facts wait for their person's yes.
        const store = isSelfInput(ctx.input) ? mem.holdSensitive(triples, 'consolidation') : triples;
        const r = mem.graph.commit(store, mem.now());
        const held = triples.length - store.length;
        return `Stored ${r.relations} fact(s) about ${r.entities} entit${r.entities === 1 ? 'y' : 'ies'}.${held > 0 ? ` ${held} sensitive fact(s) wait for their person's yes.` : ''}`;
      },
    }),
    defineTool({
      name: 'memory_confirm',
      group: 'people',
      description:
        'The speaker says yes (keep: true) or no (keep: false) to a sensitive fact heard but not stored, listed under [Waiting for a yes] with its #id. Only its own person may decide. Example: {"id":3,"keep":true}',
      parameters: {
        type: 'object',
        properties: { id: { type: 'integer', minimum: 1 }, keep: { type: 'boolean', description: 'true: remember it; false: drop it' } },
        required: ['id', 'keep'],
      },
      handler: (args, ctx) => {
        const fact = mem.confirmCandidate(args.id, args.keep, ctx.input.user);
        return args.keep ? `Remembered (told only to its person): ${fact}.` : `Dropped, not remembered: ${fact}.`;
      },
    }),
    defineTool({
      name: 'memory_merge',
      description: 'Merge two names of the same entity; the merged name stays an alias. Example: {"keep":"张三","merge":"张先生"}',
      group: 'admin',
      // The memory review and merge decisions of the internal channel call it directly.
      channel: '_consolidation_',
      parameters: {
        type: 'object',
        properties: { keep: text(200, 'Entity that stays'), merge: text(200, 'Entity merged into it') },
        required: ['keep', 'merge'],
      },
      handler: (args) => {
        const keep = args.keep.trim();
        const merge = args.merge.trim();
        const k = mem.graph.resolve(keep);
        const m = mem.graph.resolve(merge);
        if (!k) throw new MemoryNotFoundError('memory_merge', `no entity "${keep}"`);
        if (!m) throw new MemoryNotFoundError('memory_merge', `no entity "${merge}"`);
        if (k.id === m.id) throw new MemoryArgumentError('memory_merge', `"${keep}" and "${merge}" are already the same entity`);
        const r = mem.graph.merge(keep, merge, mem.now());
        if (!r) throw new MemoryNotFoundError('memory_merge', 'entity vanished during merge');
        return `Merged 「${r.merged}」 into 「${r.kept}」: ${r.redirected} relation(s) redirected, ${r.combined} combined with existing ones, mention count now ${r.mention_count}.`;
      },
    }),
    defineTool({
      name: 'memory_purge',
      description: 'Retire wrong or outdated facts (kept as earlier versions): by relation ids, or by subject and relation (and object). Example: {"subject":"Tom","relation":"prefers","object":"sparkling water"}',
      group: 'admin',
      // The memory review and merge decisions of the internal channel call it directly.
      channel: '_consolidation_',
      parameters: {
        type: 'object',
        properties: {
          relation_ids: { type: 'array', items: { type: 'integer' } },
          subject: optText(200),
          relation: optText(200),
          object: optText(200),
        },
      },
      handler: (args) => {
        let ids: number[];
        if (args.relation_ids !== undefined) {
          ids = args.relation_ids;
        } else {
          // Which arguments go together is beyond the schema: relation_ids, or subject with relation.
          const subject = args.subject?.trim();
          const relation = args.relation?.trim();
          const object = args.object?.trim();
          if (!subject || !relation) throw new MemoryArgumentError('memory_purge', 'give "relation_ids", or "subject" and "relation" (and optionally "object")');
          const s = mem.graph.resolve(subject);
          if (!s) throw new MemoryNotFoundError('memory_purge', `no entity "${subject}"`);
          const o = object !== undefined ? mem.graph.resolve(object) : undefined;
          if (object !== undefined && !o) throw new MemoryNotFoundError('memory_purge', `no entity "${object}"`);
          ids = mem.graph
            .relationsOf(s.id, 1000)
            .filter((r) => r.source === s.id && r.relation_type === relation && (o === undefined || r.target === o.id))
            .map((r) => r.id);
        }
        if (ids.length === 0) throw new MemoryNotFoundError('memory_purge', 'no matching relation');
        // A purged fact was true once (the review loop purges what a newer fact replaced): it stays as an earlier version.
        const r = mem.db.transaction(() => {
          for (const id of ids) {
            const old = mem.graph.relation(id);
            if (old) mem.graph.keepVersion(old, mem.now(), null);
          }
          return mem.graph.purgeRelations(ids);
        })();
        if (r.relations === 0) throw new MemoryNotFoundError('memory_purge', `no relation with id ${ids.join(', ')}`);
        return `Removed ${r.relations} fact(s) and ${r.orphans} entit${r.orphans === 1 ? 'y' : 'ies'} left without facts.`;
      },
    }),
    defineTool({
      name: 'memory_edit',
      description: 'Correct memory: rename or retype an entity, or change a relation by its id. Example: {"entity":"Tom","new_name":"Thomas"}',
      group: 'admin',
      // The memory review and merge decisions of the internal channel call it directly.
      channel: '_consolidation_',
      parameters: {
        type: 'object',
        properties: {
          entity: optText(200),
          new_name: optText(200),
          type: optText(40),
          relation_id: optInt(1, Number.MAX_SAFE_INTEGER),
          relation_type: optText(200),
          target: optText(200),
          confidence: optNumber(0, 1),
        },
      },
      handler: (args) => {
        // Which arguments go together is beyond the schema: entity with new_name/type, or relation_id with a change.
        const entity = args.entity?.trim();
        if (entity !== undefined) {
          const newName = args.new_name?.trim();
          const type = args.type?.trim();
          if (newName === undefined && type === undefined) throw new MemoryArgumentError('memory_edit', 'give "new_name" and/or "type" for the entity');
          if (!mem.graph.resolve(entity)) throw new MemoryNotFoundError('memory_edit', `no entity "${entity}"`);
          const ok = mem.graph.editEntity(entity, { ...(newName !== undefined ? { new_name: newName } : {}), ...(type !== undefined ? { type } : {}) }, mem.now());
          if (!ok) throw new MemoryArgumentError('memory_edit', `an entity named "${newName ?? ''}" already exists; use memory_merge`);
          return `Updated entity 「${entity}」.`;
        }
        const id = args.relation_id;
        if (id == null) throw new MemoryArgumentError('memory_edit', 'give "entity" or "relation_id"');
        if (!mem.graph.relation(id)) throw new MemoryNotFoundError('memory_edit', `no relation with id ${id}`);
        const relationType = args.relation_type?.trim();
        const target = args.target?.trim();
        const confidence = args.confidence ?? undefined;
        if (relationType === undefined && target === undefined && confidence === undefined) {
          throw new MemoryArgumentError('memory_edit', 'give "relation_type", "target" or "confidence" to change');
        }
        const ok = mem.graph.editRelation(
          id,
          { ...(relationType !== undefined ? { relation_type: relationType } : {}), ...(target !== undefined ? { target } : {}), ...(confidence !== undefined ? { confidence } : {}) },
          mem.now(),
        );
        if (!ok) throw new MemoryArgumentError('memory_edit', 'that change duplicates an existing relation');
        const r = mem.graph.relation(id)!;
        return `Relation ${id} is now: ${r.source_name} ${r.relation_type} ${r.target_name} (${r.confidence.toFixed(2)}).`;
      },
    }),
    defineTool({
      name: 'memory_delete_entity',
      description: 'Forget an entity for good: its facts, earlier versions and every conversation naming it. Example: {"name":"old car"}',
      group: 'admin',
      parameters: { type: 'object', properties: { name: text(200) }, required: ['name'] },
      handler: (args, ctx) => {
        const name = args.name.trim();
        const r = mem.forget({ entity: name, turns: [ctx.input.id] }, { speaker: ctx.input.user });
        if (r.relations + r.turns.length - 1 === 0 && r.withheld > 0) return `Nothing about 「${name}」 is yours to forget.${withheldNote(r.withheld)}`;
        return `Forgot 「${name}」: ${r.relations} fact(s), ${r.turns.length - 1} conversation turn(s) naming it.${withheldNote(r.withheld)}`;
      },
    }),
    defineTool({
      name: 'memory_forget',
      description:
        'Forget for good what the person asks to forget ("forget that I ..."): every conversation, note, fact and earlier version holding all these words. Example: {"about":"my bike lock code"}',
      group: 'admin',
      parameters: { type: 'object', properties: { about: text(500, 'The words of what to forget') }, required: ['about'] },
      handler: (args, ctx) => {
        const r = mem.forget({ about: args.about, turns: [ctx.input.id] }, { speaker: ctx.input.user });
        const turns = r.turns.length - 1;
        if (turns + r.documents + r.relations + r.versions + r.candidates + r.queued + r.knowledge === 0) return `Nothing of yours says that; there is nothing to forget.${withheldNote(r.withheld)}`;
        return `Forgotten for good: ${turns} conversation turn(s), ${r.relations} fact(s), ${r.versions} earlier version(s)${r.knowledge > 0 ? `, ${r.knowledge} paragraph(s) of notes` : ''}.${withheldNote(r.withheld)}`;
      },
    }),
    defineTool({
      name: 'memory_introspect',
      description: 'Memory statistics: events, documents, entities, relations, top entities. Example: {}',
      group: 'admin',
      parameters: { type: 'object', properties: {} },
      handler: () => mem.introspect(),
    }),
    defineTool({
      name: 'doc_query',
      description: 'Search archived past conversations and notes; what is found comes back into the conversation. Example: {"query":"plumber visit"}',
      group: 'knowledge',
      parameters: { type: 'object', properties: { query: text(2000), limit: optInt(1, 10) }, required: ['query'] },
      handler: (args, ctx) => {
        const docs = mem.consumeDocuments(args.query.trim(), args.limit ?? 3, ctx.input.user);
        if (docs.length === 0) return 'No documents match.';
        return docs.map((d) => ({
          time: new Date(d.time).toISOString(),
          ...(d.speaker ? { speaker: d.speaker } : {}),
          ...(d.title ? { title: d.title } : {}),
          text: [d.input, d.response].filter((s) => s !== '').join('\n'),
        }));
      },
    }),
    defineTool({
      name: 'doc_commit',
      description: 'Save a note (title and content) to find later with doc_query. Example: {"title":"Wifi","content":"Guest network: HomeGuest"}',
      group: 'knowledge',
      parameters: { type: 'object', properties: { title: text(200), content: text(100000) }, required: ['title', 'content'] },
      handler: (args, ctx) => {
        const title = args.title.trim();
        const id = mem.commitDocument(title, args.content.trim(), 'doc_commit', ctx.input.user);
        return `Stored document ${id} "${title}".`;
      },
    }),
    ...socialTools(mem),
  ];
}

/** person_query, people_list, set_trait and relate (seed 001 "Social"). */
function socialTools(mem: MemorySystem): ToolDef[] {
  return [
    defineTool({
      name: 'person_query',
      group: 'people',
      description:
        'What is known about a person: traits, facts, relations. Without "person" (or "me"): the person speaking ("what do you know about me?"). "earlier": true adds values changed since. Example: {"person":"Anna"}',
      parameters: {
        type: 'object',
        properties: { person: optText(200, 'A name; leave out for the person speaking'), earlier: { type: ['boolean', 'null'], description: 'Also the earlier values of the facts' } },
      },
      handler: (args, ctx) => {
        const name = personOf('person_query', args.person, ctx);
        const p = mem.social.person(name, ctx.input.user);
        if (!p) throw new MemoryNotFoundError('person_query', `nothing is known about "${name}"`);
        const e = args.earlier === true ? mem.graph.resolve(p.name) : undefined;
        const earlier = e
          ? mem.graph
              .versionsFrom(e.id)
              .filter((v) => visibleTo(v.sensitive === 1, v.owner ?? v.source_name, ctx.input.user))
              .map((v) => ({ fact: `${v.source_name} ${v.relation_type} ${v.target_name}`, until: new Date(v.replaced).toISOString().slice(0, 10) }))
          : undefined;
        return {
          person: p.name,
          ...(p.aliases.length ? { also_called: p.aliases } : {}),
          ...(p.first_seen !== undefined ? { first_heard: new Date(p.first_seen).toISOString().slice(0, 10) } : {}),
          traits: p.traits,
          facts: p.facts.map((f) => `${f.subject} ${f.relation} ${f.object}`),
          ...(earlier !== undefined ? { earlier } : {}),
        };
      },
    }),
    defineTool({
      name: 'people_list',
      group: 'people',
      description: "The household's people, most recently heard first. Example: {}",
      parameters: { type: 'object', properties: {} },
      handler: (_args, ctx) => ({
        speaking_now: ctx.input.user ?? UNKNOWN_SPEAKER,
        people: mem.social.list().map((p) => ({ name: p.name, last_heard: new Date(p.last_seen).toISOString().slice(0, 16).replace('T', ' '), facts: p.facts })),
      }),
    }),
    defineTool({
      name: 'set_trait',
      group: 'people',
      description:
        'Remember a trait of a person (one value per trait; a new value replaces the old, which stays as an earlier version). Without "person": the person speaking. Mark health, money, passwords and hidden keys sensitive. Example: {"trait":"favourite colour","value":"green"}',
      parameters: {
        type: 'object',
        properties: {
          person: optText(200, 'A name; leave out for the person speaking'),
          trait: text(200),
          value: text(500),
          sensitive: { type: ['boolean', 'null'], description: 'Told only to that person (health, money, passwords, where the key is)' },
        },
        required: ['trait', 'value'],
      },
      handler: (args, ctx) => {
        const name = personOf('set_trait', args.person, ctx);
        const stored = mem.social.setTrait(name, args.trait, args.value, { ...(args.sensitive != null ? { sensitive: args.sensitive } : {}), sentence: ctx.input.text.slice(0, 300) });
        return `Remembered: ${stored} ${args.trait.trim()} ${args.value.trim()}.`;
      },
    }),
    defineTool({
      name: 'relate',
      group: 'people',
      description: 'Remember how two people are related; no "person": the one speaking. Example: {"relation":"sister_of","other":"Ben"}',
      parameters: {
        type: 'object',
        properties: { person: optText(200, 'A name; leave out for the person speaking'), relation: text(200), other: text(200), sensitive: { type: ['boolean', 'null'] } },
        required: ['relation', 'other'],
      },
      handler: (args, ctx) => {
        const name = personOf('relate', args.person, ctx);
        const other = ME.test(args.other.trim()) ? personOf('relate', undefined, ctx) : args.other;
        const r = mem.social.relate(name, args.relation, other, { ...(args.sensitive != null ? { sensitive: args.sensitive } : {}), sentence: ctx.input.text.slice(0, 300) });
        return `Remembered: ${r.person} ${args.relation.trim()} ${r.other}.`;
      },
    }),
  ];
}
