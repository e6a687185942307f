/**
 * Memory tools for the model (seed 001 "Memory Tools", seed 000 §4 工具入口):
 * memory_recall, memory_commit, memory_merge, memory_purge, memory_edit,
 * memory_delete_entity, memory_introspect, doc_query, doc_commit.
 * Handlers validate their arguments and throw typed errors the kernel turns
 * into tool errors (MEMORY_BAD_ARGS, MEMORY_NOT_FOUND).
 */
import type { Triple } from '../kernel/memory-types.js';
import type { ToolDef } from '../kernel/stage-types.js';
import { optInt, optNumber, optString, reqString } from './args.js';
import { MemoryArgumentError, MemoryNotFoundError } from './errors.js';
import type { MemorySystem } from './memory-system.js';

const TRIPLE_SCHEMA = {
  type: 'object',
  properties: {
    subject: { type: 'string' },
    relation: { type: 'string' },
    object: { type: 'string' },
    subject_type: { type: 'string', description: 'person, place, thing, device, ...' },
    object_type: { type: 'string' },
    confidence: { type: 'number', minimum: 0, maximum: 1 },
    sentence: { type: 'string', description: 'The sentence the fact comes from' },
  },
  required: ['subject', 'relation', 'object'],
};

/** Parse and validate memory_commit triples. Throws MemoryArgumentError. */
export function parseTriples(tool: string, value: unknown): Triple[] {
  if (!Array.isArray(value) || value.length === 0) throw new MemoryArgumentError(tool, '"triples" must be a non-empty array of {subject, relation, object}');
  if (value.length > 200) throw new MemoryArgumentError(tool, 'at most 200 triples per call');
  return value.map((raw, i) => {
    if (raw === null || typeof raw !== 'object') throw new MemoryArgumentError(tool, `triples[${i}] must be an object`);
    const t = raw as Record<string, unknown>;
    const field = (k: string): string => reqString(tool, t, k, 200);
    const triple: Triple = { subject: field('subject'), relation: field('relation'), object: field('object') };
    const st = optString(tool, t, 'subject_type', 40);
    const ot = optString(tool, t, 'object_type', 40);
    const conf = optNumber(tool, t, 'confidence', 0, 1);
    const sentence = optString(tool, t, 'sentence', 2000);
    if (st !== undefined) triple.subject_type = st;
    if (ot !== undefined) triple.object_type = ot;
    if (conf !== undefined) triple.confidence = conf;
    if (sentence !== undefined) triple.sentence = sentence;
    return triple;
  });
}

/** The nine memory tools over `mem`. */
export function memoryTools(mem: MemorySystem): ToolDef[] {
  return [
    {
      name: 'memory_recall',
      description: 'Recall facts from long-term memory (the graph): people, places, preferences and how they relate.',
      parameters: { type: 'object', properties: { query: { type: 'string' }, limit: { type: 'integer', minimum: 1, maximum: 50 } }, required: ['query'] },
      handler: (args) => {
        const query = reqString('memory_recall', args, 'query', 2000);
        const limit = optInt('memory_recall', args, 'limit', 1, 50, 12);
        const g = mem.graph.recall(query, limit, 2);
        mem.markRecalled(g.relations.map((r) => `rel:${r.relation.id}`));
        if (g.entities.length === 0) return 'Nothing remembered about that.';
        return {
          entities: g.entities.map((e) => ({ name: e.entity.name, type: e.entity.type, mentions: e.entity.mention_count })),
          relations: g.relations.map((r) => ({
            id: r.relation.id,
            fact: `${r.relation.source_name} ${r.relation.relation_type} ${r.relation.target_name}`,
            confidence: Number(r.relation.confidence.toFixed(2)),
            ...(r.relation.sentence ? { sentence: r.relation.sentence } : {}),
          })),
        };
      },
    },
    {
      name: 'memory_commit',
      description: 'Store facts in long-term memory as subject-relation-object triples. Existing facts are updated, not duplicated.',
      parameters: { type: 'object', properties: { triples: { type: 'array', items: TRIPLE_SCHEMA, minItems: 1 } }, required: ['triples'] },
      handler: (args) => {
        const triples = parseTriples('memory_commit', args.triples);
        const r = mem.graph.commit(triples, mem.now());
        return `Stored ${r.relations} fact(s) about ${r.entities} entit${r.entities === 1 ? 'y' : 'ies'}.`;
      },
    },
    {
      name: 'memory_merge',
      description: 'Merge two entities that are the same (e.g. 张先生 into 张三): relations are redirected, mention counts summed, the merged name kept as an alias.',
      parameters: {
        type: 'object',
        properties: { keep: { type: 'string', description: 'Entity that stays' }, merge: { type: 'string', description: 'Entity merged into it' } },
        required: ['keep', 'merge'],
      },
      handler: (args) => {
        const keep = reqString('memory_merge', args, 'keep', 200);
        const merge = reqString('memory_merge', args, 'merge', 200);
        const k = mem.graph.resolve(keep);
        const m = mem.graph.resolve(merge);
        if (!k) throw new MemoryNotFoundError('memory_merge', `no entity "${keep}"`);
        if (!m) throw new MemoryNotFoundError('memory_merge', `no entity "${merge}"`);
        if (k.id === m.id) throw new MemoryArgumentError('memory_merge', `"${keep}" and "${merge}" are already the same entity`);
        const r = mem.graph.merge(keep, merge, mem.now());
        if (!r) throw new MemoryNotFoundError('memory_merge', 'entity vanished during merge');
        return `Merged 「${r.merged}」 into 「${r.kept}」: ${r.redirected} relation(s) redirected, ${r.combined} combined with existing ones, mention count now ${r.mention_count}.`;
      },
    },
    {
      name: 'memory_purge',
      description: 'Remove outdated or wrong facts: by relation ids, or by subject + relation (+ object). Entities left without facts are removed too.',
      parameters: {
        type: 'object',
        properties: {
          relation_ids: { type: 'array', items: { type: 'integer' } },
          subject: { type: 'string' },
          relation: { type: 'string' },
          object: { type: 'string' },
        },
      },
      handler: (args) => {
        let ids: number[] = [];
        if (args.relation_ids !== undefined) {
          if (!Array.isArray(args.relation_ids) || !args.relation_ids.every((x) => Number.isInteger(x))) {
            throw new MemoryArgumentError('memory_purge', '"relation_ids" must be an array of integers');
          }
          ids = args.relation_ids as number[];
        } else {
          const subject = optString('memory_purge', args, 'subject', 200);
          const relation = optString('memory_purge', args, 'relation', 200);
          const object = optString('memory_purge', args, 'object', 200);
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
        const r = mem.graph.purgeRelations(ids);
        if (r.relations === 0) throw new MemoryNotFoundError('memory_purge', `no relation with id ${ids.join(', ')}`);
        return `Removed ${r.relations} fact(s) and ${r.orphans} entit${r.orphans === 1 ? 'y' : 'ies'} left without facts.`;
      },
    },
    {
      name: 'memory_edit',
      description: 'Correct memory: rename or retype an entity ({entity, new_name?, type?}) or change a relation ({relation_id, relation_type?, target?, confidence?}).',
      parameters: {
        type: 'object',
        properties: {
          entity: { type: 'string' },
          new_name: { type: 'string' },
          type: { type: 'string' },
          relation_id: { type: 'integer' },
          relation_type: { type: 'string' },
          target: { type: 'string' },
          confidence: { type: 'number', minimum: 0, maximum: 1 },
        },
      },
      handler: (args) => {
        const entity = optString('memory_edit', args, 'entity', 200);
        if (entity !== undefined) {
          const newName = optString('memory_edit', args, 'new_name', 200);
          const type = optString('memory_edit', args, 'type', 40);
          if (newName === undefined && type === undefined) throw new MemoryArgumentError('memory_edit', 'give "new_name" and/or "type" for the entity');
          if (!mem.graph.resolve(entity)) throw new MemoryNotFoundError('memory_edit', `no entity "${entity}"`);
          const ok = mem.graph.editEntity(entity, { ...(newName !== undefined ? { new_name: newName } : {}), ...(type !== undefined ? { type } : {}) }, mem.now());
          if (!ok) throw new MemoryArgumentError('memory_edit', `an entity named "${newName ?? ''}" already exists; use memory_merge`);
          return `Updated entity 「${entity}」.`;
        }
        if (args.relation_id === undefined) throw new MemoryArgumentError('memory_edit', 'give "entity" or "relation_id"');
        const id = optInt('memory_edit', args, 'relation_id', 1, Number.MAX_SAFE_INTEGER, 0);
        if (!mem.graph.relation(id)) throw new MemoryNotFoundError('memory_edit', `no relation with id ${id}`);
        const relationType = optString('memory_edit', args, 'relation_type', 200);
        const target = optString('memory_edit', args, 'target', 200);
        const confidence = optNumber('memory_edit', args, 'confidence', 0, 1);
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
    },
    {
      name: 'memory_delete_entity',
      description: 'Forget an entity entirely, with all its relations.',
      parameters: { type: 'object', properties: { name: { type: 'string' } }, required: ['name'] },
      handler: (args) => {
        const name = reqString('memory_delete_entity', args, 'name', 200);
        const n = mem.graph.deleteEntity(name);
        if (n === undefined) throw new MemoryNotFoundError('memory_delete_entity', `no entity "${name}"`);
        return `Forgot 「${name}」 and ${n} relation(s).`;
      },
    },
    {
      name: 'memory_introspect',
      description: 'Statistics of memory: context events, documents, entities, relations, top entities.',
      parameters: { type: 'object', properties: {} },
      handler: () => mem.introspect(),
    },
    {
      name: 'doc_query',
      description: 'Search archived conversation documents. The documents found are moved back into the conversation timeline at their original times.',
      parameters: { type: 'object', properties: { query: { type: 'string' }, limit: { type: 'integer', minimum: 1, maximum: 10 } }, required: ['query'] },
      handler: (args) => {
        const query = reqString('doc_query', args, 'query', 2000);
        const docs = mem.consumeDocuments(query, optInt('doc_query', args, 'limit', 1, 10, 3));
        if (docs.length === 0) return 'No documents match.';
        return docs.map((d) => ({
          time: new Date(d.time).toISOString(),
          ...(d.speaker ? { speaker: d.speaker } : {}),
          ...(d.title ? { title: d.title } : {}),
          text: [d.input, d.response].filter((s) => s !== '').join('\n'),
        }));
      },
    },
    {
      name: 'doc_commit',
      description: 'Write a note into document memory (title and content); it can be found later by doc_query and is recalled automatically when relevant.',
      parameters: { type: 'object', properties: { title: { type: 'string' }, content: { type: 'string' } }, required: ['title', 'content'] },
      handler: (args) => {
        const title = reqString('doc_commit', args, 'title', 200);
        const content = reqString('doc_commit', args, 'content', 100000);
        const id = mem.commitDocument(title, content);
        return `Stored document ${id} "${title}".`;
      },
    },
  ];
}
