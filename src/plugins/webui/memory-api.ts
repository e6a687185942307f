/**
 * The Memory page's API (issue 16 page 3): the graph of people, entities and
 * relations (GET /memory/graph: the most mentioned ones, or one entity with
 * its relations and neighbours), what was recalled for the last turn (GET
 * /memory/recalled, from the run log: the memory block of the turn's context
 * and the memory tools it called), and correcting and forgetting (POST
 * /memory/edit, POST /memory/forget). Edits and forgetting run the model's
 * own tool implementations (memory_edit, memory_delete_entity,
 * memory_forget in src/memory/tools.ts) as the session's person, with the
 * same argument validation, so what the page forgets is forgotten everywhere
 * those tools forget it (graph, documents, run log, earlier versions), and
 * another person's facts stay theirs to forget. Other people's sensitive
 * facts are left out of the graph as the tools leave them out, and another
 * person's turn is recalled with its private words masked (turn-privacy.ts).
 * A document of the page's list (memory-lists-api.ts) is forgotten through
 * memory_forget too, by its words (POST /memory/forget {"document": id}).
 */
import { randomUUID } from 'node:crypto';
import type { GraphStore, RelationView } from '../../memory/graph.js';
import type { DocRow, DocStore } from '../../memory/documents.js';
import type { KnowledgeBase } from '../../knowledge/store.js';
import { forgetWords } from '../../memory/forget.js';
import { relationVisible } from '../../memory/social.js';
import type { ToolRegistry } from '../../kernel/tool-registry.js';
import type { InputMessage } from '../../kernel/turn-types.js';
import type { StoredRunEvent, RunLog } from '../../kernel/run-log.js';
import { isTombstoned } from '../../kernel/run-log.js';
import { TURN_CONTEXT_MARK } from '../../kernel/prompt.js';
import { HomeAgentError, errorMessage } from '../../kernel/errors.js';
import { ApiError, readJsonBody } from './http.js';
import type { SessionRecord } from './auth.js';
import type { Route } from './api.js';
import { maskTurn, type TurnViewer } from './turn-privacy.js';
import { visibleDocument } from './memory-lists-api.js';

/** Entities the graph starts with by default (GET /memory/graph without `limit`). */
export const GRAPH_DEFAULT_ENTITIES = 40;
/** Largest `limit` of GET /memory/graph. */
export const GRAPH_MAX_ENTITIES = 200;
/** Relations of one entity shown when it is explored. */
const NEIGHBOUR_RELATIONS = 50;
/** Longest name or text accepted from the page (the tools' own limits). */
const MAX_NAME = 200;
const MAX_ABOUT = 500;

/** What the memory routes need. */
export interface MemoryBackend {
  /** The memory's graph store (undefined: the memory is not running). */
  graph(): GraphStore | undefined;
  /** The kernel's tool registry (the model's tools, memory_edit and the forgetting tools among them). */
  tools(): ToolRegistry | undefined;
  /** The run log (the last turn's recall). */
  runLog(): RunLog | undefined;
  /** The memory's documents (the page's list of conversations and notes; undefined: the memory is not running). */
  documents(): DocStore | undefined;
  /** The knowledge base (undefined: the memory is not running). */
  knowledge(): KnowledgeBase | undefined;
  /** Now, ms (the synthetic input's arrival). */
  now(): number;
}

/** An entity of the graph as the page draws it. */
export interface GraphEntity {
  id: number;
  name: string;
  type: string;
  mentions: number;
}

/** A relation of the graph: `source` → `target` entity ids. */
export interface GraphRelation {
  id: number;
  source: number;
  target: number;
  relation: string;
  confidence: number;
  sentence?: string;
}

/** GET /memory/graph's answer. `focus`: the entity explored, when one was asked for. */
export interface MemoryGraph {
  entities: GraphEntity[];
  relations: GraphRelation[];
  focus?: number;
  /** Entities the memory holds in all (the graph shows at most `limit`). */
  total: number;
}

/** One section of a turn's recalled memory (its title as the model read it, and its lines). */
export interface RecallSection {
  title: string;
  items: string[];
}

/** GET /memory/recalled's answer: what the memory gave a turn. */
export interface TurnRecall {
  /** The turn (its input id), or null when the run log has no turn yet. */
  turn: string | null;
  at?: number;
  text?: string;
  speaker?: string;
  channel?: string;
  /** The memory block of the turn's context, by section. */
  sections: RecallSection[];
  /** Memory tools the model called in the turn (memory_recall, person_query, doc_query) and what they returned. */
  tools: Array<{ name: string; arguments: Record<string, unknown>; result: string }>;
  /** Something of the turn was forgotten since: its context cannot be shown. */
  forgotten?: boolean;
}

/** Tools whose results are memory recalled during a turn. */
const RECALL_TOOLS = new Set(['memory_recall', 'person_query', 'people_list', 'doc_query']);

/** The memory routes (see module comment). */
export function memoryRoutes(m: MemoryBackend): Route[] {
  return [
    {
      method: 'GET',
      path: '/memory/graph',
      auth: true,
      handle: ({ query, session }) => {
        const limitText = query.get('limit');
        const limit = limitText === null ? GRAPH_DEFAULT_ENTITIES : Number(limitText);
        if (!Number.isInteger(limit) || limit < 1 || limit > GRAPH_MAX_ENTITIES) throw new ApiError(400, 'BAD_ARGUMENT', `"limit" must be a whole number from 1 to ${GRAPH_MAX_ENTITIES}, got ${JSON.stringify(limitText)}`);
        const entity = query.get('entity');
        if (entity !== null && (!entity.trim() || entity.length > MAX_NAME)) throw new ApiError(400, 'BAD_ARGUMENT', `"entity" must be a name of 1 to ${MAX_NAME} characters`);
        return graphView(graphOf(m), { limit, ...(entity !== null ? { entity: entity.trim() } : {}), viewer: session!.person });
      },
    },
    {
      method: 'GET',
      path: '/memory/recalled',
      auth: true,
      handle: ({ query, session }) => {
        const log = m.runLog();
        if (!log) throw new ApiError(503, 'UNAVAILABLE', 'the run log is not available');
        const turn = query.get('turn');
        if (turn !== null && !turn.trim()) throw new ApiError(400, 'BAD_ARGUMENT', '"turn" must be a turn id (an input id, as the Activity page and GET /turns/{id} use)');
        return turnRecall(log, turn ?? undefined, session!.person);
      },
    },
    {
      method: 'POST',
      path: '/memory/edit',
      auth: true,
      handle: async ({ req, session }) => {
        const body = await readJsonBody(req);
        const args = editArgs(body);
        return { tool: 'memory_edit', result: await runMemoryTool(m, 'memory_edit', args, session!) };
      },
    },
    {
      method: 'POST',
      path: '/memory/forget',
      auth: true,
      handle: async ({ req, session }) => {
        const body = await readJsonBody(req);
        const hasEntity = body.entity !== undefined;
        const hasAbout = body.about !== undefined;
        const hasDocument = body.document !== undefined;
        if (Number(hasEntity) + Number(hasAbout) + Number(hasDocument) !== 1) {
          throw new ApiError(400, 'BAD_ARGUMENT', 'send {"entity": "<name>"} to forget an entity, {"about": "<words>"} to forget what holds all these words, or {"document": <id>} to forget a document by its words (one of them)');
        }
        if (hasDocument) {
          const id = body.document;
          if (typeof id !== 'number' || !Number.isInteger(id) || id < 1) throw new ApiError(400, 'BAD_ARGUMENT', `"document" must be a document id (a whole number from 1), got ${JSON.stringify(id)}`);
          const docs = m.documents();
          if (!docs) throw new ApiError(503, 'UNAVAILABLE', 'the memory is not running');
          const about = documentAbout(visibleDocument(docs, id, session!.person));
          if (forgetWords(about).length === 0) throw new ApiError(409, 'NO_WORDS', `document ${id} holds only common words, which would find too much: forget it by an entity or by words instead`);
          return { tool: 'memory_forget', document: id, about, result: await runMemoryTool(m, 'memory_forget', { about }, session!) };
        }
        if (hasEntity) {
          const name = nameField(body, 'entity', MAX_NAME);
          return { tool: 'memory_delete_entity', result: await runMemoryTool(m, 'memory_delete_entity', { name }, session!) };
        }
        const about = nameField(body, 'about', MAX_ABOUT);
        return { tool: 'memory_forget', result: await runMemoryTool(m, 'memory_forget', { about }, session!) };
      },
    },
  ];
}

function graphOf(m: MemoryBackend): GraphStore {
  const g = m.graph();
  if (!g) throw new ApiError(503, 'UNAVAILABLE', 'the memory is not running');
  return g;
}

/** A required string field of the body, trimmed: 400 naming the field when missing, empty or too long. */
function nameField(body: Record<string, unknown>, field: string, max: number): string {
  const v = body[field];
  if (typeof v !== 'string' || !v.trim()) throw new ApiError(400, 'BAD_ARGUMENT', `"${field}" must be a non-empty string`);
  if (v.length > max) throw new ApiError(400, 'BAD_ARGUMENT', `"${field}" is ${v.length} characters; at most ${max}`);
  return v.trim();
}

/**
 * The words by which a document is forgotten (memory_forget's `about`): its
 * title, what was said and the answer, cut to MAX_ABOUT characters at a word
 * boundary. Every text holding all of them goes with it (the same turn
 * archived twice, a fact said in it), as when someone asks the box.
 */
export function documentAbout(d: Pick<DocRow, 'title' | 'input' | 'response'>): string {
  const all = [d.title, d.input, d.response].filter((s) => s.trim() !== '').join(' ').replace(/\s+/g, ' ').trim();
  if (all.length <= MAX_ABOUT) return all;
  const head = all.slice(0, MAX_ABOUT + 1);
  const space = head.lastIndexOf(' ');
  return (space > 0 ? head.slice(0, space) : head.slice(0, MAX_ABOUT)).trim();
}

/** memory_edit's arguments from a POST /memory/edit body (400 naming the field that is wrong). */
function editArgs(body: Record<string, unknown>): Record<string, unknown> {
  const known = new Set(['entity', 'new_name', 'type', 'relation_id', 'relation_type', 'target']);
  for (const k of Object.keys(body)) if (!known.has(k)) throw new ApiError(400, 'BAD_ARGUMENT', `unknown field "${k}"; an edit takes "entity" with "new_name" and/or "type", or "relation_id" with "relation_type" and/or "target"`);
  const hasEntity = body.entity !== undefined;
  const hasRelation = body.relation_id !== undefined;
  if (hasEntity === hasRelation) throw new ApiError(400, 'BAD_ARGUMENT', 'send "entity" (a name, with "new_name" and/or "type") or "relation_id" (with "relation_type" and/or "target"), one of them');
  if (hasEntity) {
    if (body.relation_type !== undefined || body.target !== undefined) throw new ApiError(400, 'BAD_ARGUMENT', '"relation_type" and "target" change a relation: send them with "relation_id", not "entity"');
    const args: Record<string, unknown> = { entity: nameField(body, 'entity', MAX_NAME) };
    if (body.new_name !== undefined) args.new_name = nameField(body, 'new_name', MAX_NAME);
    if (body.type !== undefined) args.type = nameField(body, 'type', 40);
    if (args.new_name === undefined && args.type === undefined) throw new ApiError(400, 'BAD_ARGUMENT', 'give "new_name" and/or "type" for the entity');
    return args;
  }
  const id = body.relation_id;
  if (typeof id !== 'number' || !Number.isInteger(id) || id < 1) throw new ApiError(400, 'BAD_ARGUMENT', `"relation_id" must be a whole number from 1, got ${JSON.stringify(id)}`);
  if (body.new_name !== undefined || body.type !== undefined) throw new ApiError(400, 'BAD_ARGUMENT', '"new_name" and "type" change an entity: send them with "entity", not "relation_id"');
  const args: Record<string, unknown> = { relation_id: id };
  if (body.relation_type !== undefined) args.relation_type = nameField(body, 'relation_type', MAX_NAME);
  if (body.target !== undefined) args.target = nameField(body, 'target', MAX_NAME);
  if (args.relation_type === undefined && args.target === undefined) throw new ApiError(400, 'BAD_ARGUMENT', 'give "relation_type" and/or "target" for the relation');
  return args;
}

/**
 * Run memory tool `name` as the model's call would (the registry's argument
 * validation, then the tool's own handler) for `session`'s person, on a
 * synthetic input of the `webui` channel. Its answer text; a tool's refusal
 * as 404 (MEMORY_NOT_FOUND) or 400 (anything else) with the tool's message.
 */
export async function runMemoryTool(m: MemoryBackend, name: string, args: Record<string, unknown>, session: SessionRecord): Promise<string> {
  const tools = m.tools();
  const def = tools?.get(name);
  if (!tools || !def) throw new ApiError(503, 'UNAVAILABLE', `the memory tool ${name} is not available (is the memory running?)`);
  const invalid = tools.validate(name, args);
  if (invalid) throw new ApiError(400, 'BAD_ARGUMENT', invalid.message);
  const input: InputMessage = {
    id: `webui-${randomUUID()}`,
    source: `webui:${session.id}`,
    channel: 'webui',
    text: '',
    kind: 'queued',
    level: 0,
    received_at: m.now(),
    ...(session.person ? { user: session.person, user_via: 'given' as const } : {}),
    meta: { webui_session: session.id },
  };
  try {
    const out = await def.handler(args, { input, signal: new AbortController().signal, call_id: `webui_${randomUUID()}` });
    return typeof out === 'string' ? out : JSON.stringify(out);
  } catch (err) {
    const code = err instanceof HomeAgentError ? err.code : 'INTERNAL';
    if (code === 'MEMORY_NOT_FOUND') throw new ApiError(404, code, errorMessage(err));
    if (err instanceof HomeAgentError) throw new ApiError(400, code, errorMessage(err));
    throw err;
  }
}

/** The graph the page draws: `entity`'s neighbourhood, or the `limit` most mentioned entities; `viewer`'s view (others' sensitive facts left out). */
export function graphView(g: GraphStore, o: { limit: number; entity?: string; viewer?: string }): MemoryGraph {
  const total = g.stats().entities;
  const entity = (e: { id: number; name: string; type: string; mention_count: number }): GraphEntity => ({ id: e.id, name: e.name, type: e.type, mentions: e.mention_count });
  const relation = (r: RelationView): GraphRelation => ({ id: r.id, source: r.source, target: r.target, relation: r.relation_type, confidence: Number(r.confidence.toFixed(2)), ...(r.sentence ? { sentence: r.sentence } : {}) });
  // A thing known only through facts the viewer may not see (another person's sensitive ones) is not shown either.
  const hidden = (e: { id: number; type: string }): boolean => {
    if (e.type === 'person') return false;
    const rels = g.relationsOf(e.id, 200);
    return rels.length > 0 && !rels.some((r) => relationVisible(r, o.viewer));
  };
  if (o.entity !== undefined) {
    const e = g.resolve(o.entity);
    if (!e || hidden(e)) throw new ApiError(404, 'NOT_FOUND', `no entity ${JSON.stringify(o.entity)} in the memory`);
    const rels = g.relationsOf(e.id, NEIGHBOUR_RELATIONS).filter((r) => relationVisible(r, o.viewer));
    const ids = new Set([e.id, ...rels.flatMap((r) => [r.source, r.target])]);
    const entities = [...ids].map((id) => g.byId(id)).filter((x) => x !== undefined).map(entity);
    return { entities, relations: rels.map(relation), focus: e.id, total };
  }
  const ov = g.overview(o.limit);
  return { entities: ov.entities.filter((e) => !hidden(e)).map(entity), relations: ov.relations.filter((r) => relationVisible(r, o.viewer)).map(relation), total };
}

/**
 * What the memory gave turn `id` (default: the last turn a person had, the
 * box's own housekeeping turns skipped): the memory block of its context
 * message, by section, and the memory tools it called, as `viewer` may read
 * them (another person's private turn masked: turn-privacy.ts maskTurn).
 * Throws ApiError 404 when the log has no such turn.
 */
export function turnRecall(log: RunLog, id: string | undefined, viewer: TurnViewer): TurnRecall {
  let turn = id;
  if (turn === undefined) {
    const started = log.ofTypes(['turn.started'], 50).reverse();
    const last = started.find((e) => e.type === 'turn.started' && !e.input.channel.startsWith('_'));
    if (!last || last.type !== 'turn.started') return { turn: null, sections: [], tools: [] };
    turn = last.turn;
  }
  const stored = log.turn(turn);
  if (stored.length === 0) throw new ApiError(404, 'NOT_FOUND', `no turn ${JSON.stringify(turn)} in the run log`);
  const events = maskTurn(stored, viewer);
  const start = events.find((e): e is Extract<StoredRunEvent, { type: 'turn.started' }> => e.type === 'turn.started');
  const head = { turn, ...(start ? { at: start.at, text: start.input.text, channel: start.input.channel, ...(start.input.user ? { speaker: start.input.user } : {}) } : {}) };
  if (isTombstoned(events)) return { ...head, sections: [], tools: [], forgotten: true };
  // The turn's own context message: the last one with the turn-context mark in its first projection.
  const projected = events.find((e): e is Extract<StoredRunEvent, { type: 'context.projected' }> => e.type === 'context.projected');
  const contexts = (projected?.messages ?? []).filter((msg) => msg.role === 'user' && typeof msg.content === 'string' && msg.content.startsWith(TURN_CONTEXT_MARK));
  const block = contexts.length ? String(contexts[contexts.length - 1]!.content).split('\n').slice(1) : [];
  const sections: RecallSection[] = [];
  for (const line of block) {
    if (line.startsWith('[')) sections.push({ title: line, items: [] });
    else if (line.startsWith('- ') && sections.length) sections[sections.length - 1]!.items.push(line.slice(2));
  }
  const tools = events
    .filter((e): e is Extract<StoredRunEvent, { type: 'tool.executed' }> => e.type === 'tool.executed' && RECALL_TOOLS.has(e.name))
    .map((e) => ({ name: e.name, arguments: e.arguments, result: e.result.length > 2000 ? `${e.result.slice(0, 2000)}…` : e.result }));
  return { ...head, sections, tools };
}
