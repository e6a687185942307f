/**
 * The Memory page's lists (issue 16 page 3 "documents; knowledge"): the
 * memory's documents (the conversations archived from the context window and
 * the notes doc_commit stored, src/memory/documents.ts), newest first and
 * paged (GET /memory/documents), and the knowledge base (the shipped guides
 * and the notes knowledge_create wrote, src/knowledge/store.ts: GET
 * /knowledge, GET /knowledge/{name}).
 *
 * Documents are shown to a session as recall shows them to its person
 * (MemorySystem `docVisible`: a document touching a sensitive topic only to
 * the person who said it or had it noted; an unnamed session reads as the
 * unidentified speaker, as its typed turns are spoken). The knowledge base
 * is the household's and is read as the model's knowledge tools read it,
 * for anyone. Forgetting a document is POST /memory/forget {"document": id}
 * (memory-api.ts), through the model's memory_forget.
 */
import type { DocRow, DocStore, NewDoc } from '../../memory/documents.js';
import { docVisible } from '../../memory/memory-system.js';
import type { KnowledgeBase, KnowledgeEntry } from '../../knowledge/store.js';
import type { Viewer } from '../../memory/social.js';
import { ApiError } from './http.js';
import type { Route } from './api.js';
import type { MemoryBackend } from './memory-api.js';

/** Documents per page by default (GET /memory/documents without `limit`). */
export const DOCUMENTS_DEFAULT = 20;
/** Largest `limit` of GET /memory/documents. */
export const DOCUMENTS_MAX = 100;
/** Longest text of one document field in a listing (characters; longer is cut with "…"). */
const DOC_TEXT_MAX = 600;
/** Documents read per page at most while skipping those the viewer may not see (then the page ends early, with `next`). */
const DOC_SCAN_MAX = 2000;

/** A document as the page lists it (times in ms since the epoch; texts cut at DOC_TEXT_MAX; kind: `user`, `agent`, `tool`, `cold_storage` (archived turns) or `note` (doc_commit)). */
export type DocumentView = { id: number } & Pick<NewDoc, 'time' | 'kind' | 'source' | 'speaker' | 'title' | 'input' | 'response'>;

/** GET /memory/documents's answer: one page, and `next` (the `before` of the following page) when there may be more. */
export interface DocumentPage {
  documents: DocumentView[];
  next?: string;
  /** Documents the memory holds in all (every person's: the count, not what they say). */
  total: number;
}

/** A page cursor: `<time ms>-<id>` of the last document of the page before. */
function parseCursor(text: string): { time: number; id: number } {
  const m = /^(\d{1,15})-(\d{1,15})$/.exec(text);
  if (!m) throw new ApiError(400, 'BAD_ARGUMENT', `"before" must be the "next" of the page before (<time ms>-<id>), got ${JSON.stringify(text)}`);
  return { time: Number(m[1]), id: Number(m[2]) };
}

const cut = (s: string): string => (s.length > DOC_TEXT_MAX ? `${s.slice(0, DOC_TEXT_MAX)}…` : s);

function documentView(d: DocRow): DocumentView {
  return {
    id: d.id,
    time: d.time,
    kind: d.kind,
    source: d.source,
    ...(d.speaker !== null ? { speaker: d.speaker } : {}),
    ...(d.title !== '' ? { title: cut(d.title) } : {}),
    input: cut(d.input),
    response: cut(d.response),
  };
}

/**
 * One page of `docs`, newest first, of what `viewer` may see: at most
 * `limit` documents after `before` (a cursor from an earlier page). Reads
 * at most DOC_SCAN_MAX documents; `next` is set whenever more may follow.
 */
export function documentPage(docs: DocStore, o: { limit: number; before?: { time: number; id: number }; viewer: Viewer }): DocumentPage {
  const out: DocumentView[] = [];
  let cursor = o.before;
  let scanned = 0;
  let more = true;
  const batch = Math.max(o.limit * 2, 50);
  while (out.length < o.limit && more && scanned < DOC_SCAN_MAX) {
    const rows = docs.recent(batch, cursor);
    more = rows.length === batch;
    for (const d of rows) {
      scanned++;
      cursor = { time: d.time, id: d.id };
      if (docVisible(d, o.viewer)) out.push(documentView(d));
      if (out.length === o.limit) {
        more = more || d !== rows[rows.length - 1];
        break;
      }
    }
  }
  return { documents: out, ...(more && cursor ? { next: `${cursor.time}-${cursor.id}` } : {}), total: docs.count() };
}

/** A document `viewer` may see, by id: 404 NOT_FOUND when there is none (or it is another person's sensitive one: not said which). */
export function visibleDocument(docs: DocStore, id: number, viewer: Viewer): DocRow {
  const d = docs.get(id);
  if (!d || !docVisible(d, viewer)) throw new ApiError(404, 'NOT_FOUND', `no document ${id} in the memory`);
  return d;
}

function docsOf(m: MemoryBackend): DocStore {
  const d = m.documents();
  if (!d) throw new ApiError(503, 'UNAVAILABLE', 'the memory is not running');
  return d;
}

function knowledgeOf(m: MemoryBackend): KnowledgeBase {
  const k = m.knowledge();
  if (!k) throw new ApiError(503, 'UNAVAILABLE', 'the knowledge base is not available (is the memory running?)');
  return k;
}

/** The documents and knowledge routes (see module comment). */
export function memoryListRoutes(m: MemoryBackend): Route[] {
  return [
    {
      method: 'GET',
      path: '/memory/documents',
      auth: true,
      handle: ({ query, session }) => {
        const limitText = query.get('limit');
        const limit = limitText === null ? DOCUMENTS_DEFAULT : Number(limitText);
        if (!Number.isInteger(limit) || limit < 1 || limit > DOCUMENTS_MAX) throw new ApiError(400, 'BAD_ARGUMENT', `"limit" must be a whole number from 1 to ${DOCUMENTS_MAX}, got ${JSON.stringify(limitText)}`);
        const beforeText = query.get('before');
        return documentPage(docsOf(m), { limit, ...(beforeText !== null ? { before: parseCursor(beforeText) } : {}), viewer: session!.person });
      },
    },
    { method: 'GET', path: '/knowledge', auth: true, handle: (): KnowledgeEntry[] => knowledgeOf(m).entries() },
    {
      method: 'GET',
      path: '/knowledge/{name}',
      auth: true,
      handle: ({ params }) => {
        const kb = knowledgeOf(m);
        const name = params.name!;
        const entry = kb.entries().find((e) => e.name === name);
        const content = entry ? kb.read(name) : undefined;
        if (!entry || content === undefined) throw new ApiError(404, 'NOT_FOUND', `no knowledge document ${JSON.stringify(name)} (GET /knowledge lists them)`);
        return { ...entry, content };
      },
    },
  ];
}
