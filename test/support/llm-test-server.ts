/**
 * THE shared LLM test server: an HTTP server on 127.0.0.1 that answers like
 * Ollama (/api/chat NDJSON stream and JSON, /api/show, /api/tags) and like an
 * OpenAI-compatible host (/v1/chat/completions and /chat/completions, SSE with
 * `data: [DONE]`, and JSON), byte for byte in the shapes real servers use
 * (field order, done_reason, usage placement, content types), with fault
 * injection for every failure a provider must survive.
 *
 * Usage:
 *   const srv = await startLlmTestServer();
 *   srv.enqueue({ content: 'Hello there.' }, { status: 500, error: 'boom' });
 *   // or srv.script((req) => ({ content: `you said ${req.body.messages.at(-1).content}` }));
 *   ... point a source at srv.url (Ollama adapter) or srv.url (OpenAI adapter, endpoint /v1/...) ...
 *   srv.requests          // every request received: {method, path, headers, body (parsed JSON), raw}
 *   srv.on('socket-closed', ({ at, path, bytesSent }) => ...) // the connection closed before the answer was complete
 *                          // (client abort, or an injected drop); `at` = process.hrtime.bigint() when the server saw it
 *   await srv.close();
 *
 * Reply resolution for a chat request: the script function when set, else
 * the next queued reply, else `opts.defaultReply` ({content: 'Hello from the
 * test server.'}). Content is streamed in token-sized pieces (words with their
 * leading space, each CJK character alone, punctuation alone).
 */
import http from 'node:http';
import type { AddressInfo, Socket } from 'node:net';
import { EventEmitter } from 'node:events';

/** A tool call the fake model makes. `arguments` is an object (the server encodes it per protocol). */
export interface ReplyToolCall {
  name: string;
  arguments: Record<string, unknown>;
  id?: string;
}

/** What the fake model answers, and how the bytes reach the client. */
export interface Reply {
  /** The answer text (streamed in token-sized pieces). */
  content?: string;
  tool_calls?: ReplyToolCall[];
  /** Reasoning: Ollama `message.thinking`; /v1 `reasoning_content` (DeepSeek style). */
  thinking?: string;
  /** Pace of streamed chunks: one chunk every 1000/tokensPerSecond ms. */
  tokensPerSecond?: number;
  /** Fixed delay before each streamed chunk, ms (added to the pace). */
  delayMs?: number;
  /** Delay before the response headers, ms (model load). */
  headerDelayMs?: number;
  /** Write the body in socket writes of at most this many bytes. */
  chunkBytes?: number;
  /** Also cut socket writes at these absolute body byte offsets (e.g. inside a UTF-8 character). */
  splitAt?: number[];
  /** Pause between split writes, ms (default 2 when splitting, so reads stay separate). */
  splitDelayMs?: number;
  /**
   * A huge streamed answer, generated as it is written (never held whole):
   * `count` content chunks each carrying `piece`, then the final chunk. The
   * server waits for the client to read (backpressure), so a client that
   * stops reading stops it; `socket-closed` reports how far it got.
   */
  repeatContent?: { piece: string; count: number };
  /** Stop writing after this many body bytes and keep the connection open. */
  stallAfterBytes?: number;
  /** Destroy the connection after this many body bytes. */
  dropAfterBytes?: number;
  /** Streamed answers: destroy the connection (a reset) once this many chunks (lines / SSE events, garbage included) were written. */
  dropAfterChunks?: number;
  /** Streamed answers: end the response cleanly (a truncated stream) once this many chunks were written. */
  endAfterChunks?: number;
  /** Streamed answers: stop writing once this many chunks were written and keep the connection open (a stall; emits `stalled`). */
  stallAfterChunks?: number;
  /** Garbage lines inserted into a stream: true = one line after the first chunk; a string = that line; an object = line + position (chunk index). */
  garbage?: boolean | string | { line: string; after?: number };
  /** HTTP status; >= 400 sends an error body. */
  status?: number;
  /** Error message, formatted per path: Ollama `{"error":"..."}`, /v1 `{"error":{"message":...}}`. */
  error?: string;
  /** Raw error body (overrides `error`). */
  errorBody?: string | Record<string, unknown>;
  /** Error line sent mid-stream after the content (Ollama `{"error":...}`, /v1 `data: {"error":{...}}`). */
  streamError?: string;
  /** Ollama done_reason / OpenAI finish_reason (default stop, or tool_calls on /v1 when calling tools). */
  done_reason?: string;
  usage?: { prompt_tokens: number; completion_tokens: number };
  /** Model name echoed (default: the request's). */
  model?: string;
  /** Override the request's stream flag. */
  stream?: boolean;
  /** Send these bytes as the whole body instead of generating one (recorded streams). */
  raw?: string | Uint8Array;
  /** Content-Type for `raw`. */
  contentType?: string;
  /** Leave out the final done line (NDJSON) or `data: [DONE]` (SSE). */
  omitDone?: boolean;
  /** Ollama tool call style: 'current' (id + function.index, Ollama >= 0.12) or 'legacy' (function only). Default current. */
  ollamaToolStyle?: 'current' | 'legacy';
  /** /v1: split each call's arguments string into fragments of this many characters (default 8). */
  argumentFragment?: number;
  /**
   * Damage fields of streamed chunks: in JSON chunk `chunk` (0-based, in
   * sending order, `[DONE]` not counted), the field at `path` (keys and
   * array indexes, e.g. ['choices', 0, 'delta', 'content']) is set to `value`,
   * or removed when `value` is undefined (an array item is spliced out).
   */
  mutate?: Array<{ chunk: number; path: Array<string | number>; value?: unknown }>;
}

/** A message as received in a chat body (either protocol). */
export interface ReceivedMessage {
  role?: string;
  content?: unknown;
  tool_calls?: Array<{ id?: string; type?: string; function?: { name?: string; arguments?: unknown } }>;
  tool_call_id?: string;
  tool_name?: string;
  name?: string;
  images?: string[];
  [k: string]: unknown;
}

/** A parsed request body (chat bodies of both protocols, /api/show). */
export interface ReceivedBody {
  model?: string;
  name?: string;
  messages?: ReceivedMessage[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  tools?: Array<{ type?: string; function?: { name?: string } }>;
  options?: Record<string, unknown>;
  keep_alive?: unknown;
  thinking?: { type?: string };
  [k: string]: unknown;
}

/** One request received. */
export interface ReceivedRequest {
  method: string;
  path: string;
  headers: http.IncomingHttpHeaders;
  /** Parsed JSON body (undefined when empty or not a JSON object). */
  body: ReceivedBody | undefined;
  raw: string;
  /** Separate writes of the answer body so far (chunkBytes / splitAt faults make several). */
  writes?: number;
}

/** A stallAfterBytes fault took effect: the server wrote `bytesSent` bytes and will write nothing more. */
export interface StalledInfo {
  path: string;
  bytesSent: number;
}

/** Model metadata served by /api/show and /api/tags. */
export interface TestModel {
  name: string;
  /** `<arch>.context_length` in model_info. */
  context_length?: number;
  /** A `num_ctx` line in `parameters`. */
  num_ctx?: number;
  family?: string;
  capabilities?: string[];
}

/** Options of startLlmTestServer. */
export interface LlmTestServerOptions {
  port?: number;
  defaultReply?: Reply;
  models?: TestModel[];
  /**
   * Refuse a reply that calls a tool the request did not offer in its
   * `tools` (issue 19: a turn may only use what it was offered): the request
   * is answered HTTP 400 with an error naming the tool, and recorded in
   * `refusals`. Off by default (fault tests script calls freely).
   */
  refuseUnofferedTools?: boolean;
  /** Models /api/embed and /v1/embeddings know (default ['nomic-embed-text']); any other is answered 404 as the real servers do. */
  embeddingModels?: string[];
  /** Dimension of the test vectors (default 32). */
  embeddingDim?: number;
}

/** A scripted tool call refused because the request did not offer the tool (LlmTestServerOptions.refuseUnofferedTools). */
export interface ToolRefusal {
  tool: string;
  /** The tool names the request offered. */
  offered: string[];
  request: ReceivedRequest;
}

/** Info of a `socket-closed` event. */
export interface SocketClosedInfo {
  /** process.hrtime.bigint() when the server saw the close. */
  at: bigint;
  path: string;
  /** Body bytes written before the close. */
  bytesSent: number;
}

/** A running test server. */
export interface LlmTestServer {
  /** Base URL, e.g. http://127.0.0.1:41234 (no trailing slash). */
  url: string;
  port: number;
  requests: ReceivedRequest[];
  /** Chat requests only (/api/chat, /v1/chat/completions, /chat/completions). */
  chatRequests(): ReceivedRequest[];
  /** Tool calls refused because their request did not offer the tool (with refuseUnofferedTools). */
  refusals: ToolRefusal[];
  /** Answer every chat request with fn(req) (takes precedence over the queue); null to clear. */
  script(fn: ((req: ReceivedRequest) => Reply | Promise<Reply>) | null): void;
  /** Queue replies for the next chat requests, in order. */
  enqueue(...replies: Reply[]): void;
  /** Replies still queued. */
  readonly queued: number;
  /** Forget requests and queued replies. */
  reset(): void;
  on(event: 'socket-closed', cb: (info: SocketClosedInfo) => void): void;
  off(event: 'socket-closed', cb: (info: SocketClosedInfo) => void): void;
  /** Resolves with the next socket-closed event. */
  nextSocketClosed(): Promise<SocketClosedInfo>;
  /**
   * Resolves with the next chat request as it arrives (before its answer is
   * chosen or sent), so a test acts on a request in flight without sleeping.
   */
  nextChatRequest(): Promise<ReceivedRequest>;
  /** Resolves when the next stallAfterBytes fault takes effect. */
  nextStalled(): Promise<StalledInfo>;
  close(): Promise<void>;
}

const enc = new TextEncoder();
const CJK = '\\p{Script=Han}\\p{Script=Hiragana}\\p{Script=Katakana}\\p{Script=Hangul}';
const TOKEN_RE = new RegExp(`\\s*[${CJK}]|\\s*(?:(?![${CJK}])[\\p{L}\\p{N}_'])+|\\s*[^\\s\\p{L}\\p{N}_']|\\s+`, 'gu');

/** Splits text into token-sized pieces whose concatenation is exactly `text`. */
export function tokenize(text: string): string[] {
  return text.match(TOKEN_RE) ?? [];
}

/** A pause that never keeps the process alive (a stalled or closed connection must not hold the test run). */
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms).unref());

/**
 * The test server's embedding of `text` (issue 19): deterministic from the
 * text alone. Each lower-cased word (tokenize) adds +1 or -1 (by its hash)
 * to `dim` buckets picked by its hash, and the sum is L2-normalised, so
 * texts sharing words point the same way; rounded to 6 decimals so the JSON
 * is the same bytes on every run.
 */
export function testEmbedding(text: string, dim = 32): number[] {
  const v = new Array<number>(dim).fill(0);
  for (const raw of tokenize(text.toLowerCase())) {
    const w = raw.trim();
    if (!w || !/[\p{L}\p{N}]/u.test(w)) continue;
    let h = 2166136261;
    for (let i = 0; i < w.length; i++) h = Math.imul(h ^ w.charCodeAt(i), 16777619) >>> 0;
    for (let k = 0; k < 3; k++) {
      const b = (h >>> (k * 8)) % dim;
      v[b]! += (h >>> (24 + k)) & 1 ? 1 : -1;
    }
  }
  const n = Math.hypot(...v) || 1;
  return v.map((x) => Math.round((x / n) * 1e6) / 1e6);
}

function isChatPath(p: string): boolean {
  return p === '/api/chat' || p === '/v1/chat/completions' || p === '/chat/completions';
}

let idCounter = 0;

/** Starts a server on 127.0.0.1 (a free port unless opts.port). */
export async function startLlmTestServer(opts: LlmTestServerOptions = {}): Promise<LlmTestServer> {
  const requests: ReceivedRequest[] = [];
  const refusals: ToolRefusal[] = [];
  const queue: Reply[] = [];
  let scriptFn: ((req: ReceivedRequest) => Reply | Promise<Reply>) | null = null;
  const events = new EventEmitter();
  const sockets = new Set<Socket>();
  const models: TestModel[] = opts.models ?? [{ name: 'qwen2.5:3b', context_length: 32768, family: 'qwen2' }];
  const defaultReply: Reply = opts.defaultReply ?? { content: 'Hello from the test server.' };

  const server = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const raw = Buffer.concat(chunks).toString('utf8');
      let body: ReceivedBody | undefined;
      try {
        const v: unknown = raw ? JSON.parse(raw) : undefined;
        body = v && typeof v === 'object' && !Array.isArray(v) ? (v as ReceivedBody) : undefined;
      } catch {
        body = undefined;
      }
      const path = (req.url ?? '/').split('?')[0]!;
      const rec: ReceivedRequest = { method: req.method ?? 'GET', path, headers: req.headers, body, raw };
      requests.push(rec);
      handle(rec, res).catch((err: unknown) => {
        if (!res.headersSent) {
          res.writeHead(500, { 'Content-Type': 'text/plain' });
          res.end(String(err));
        } else res.destroy();
      });
    });
  });
  // Idle keep-alive sockets stay open far longer than any client pools them (undici's idle timeout is about 4 s,
  // Node's server default 5 s): a test that kept the event loop busy past 5 s between two POSTs had its next
  // fetch sent on a socket the server was closing, and it failed ("fetch failed", test/providers/fuzz.test.ts).
  server.keepAliveTimeout = 60_000;
  server.headersTimeout = 61_000;
  server.on('connection', (s) => {
    s.setNoDelay(true);
    sockets.add(s);
    s.on('close', () => sockets.delete(s));
  });

  async function handle(rec: ReceivedRequest, res: http.ServerResponse): Promise<void> {
    if (rec.path === '/api/tags' && rec.method === 'GET') return sendJson(res, 200, tags(models));
    if (rec.path === '/api/show' && rec.method === 'POST') {
      const name = rec.body?.model ?? rec.body?.name;
      const m = models.find((x) => x.name === name || x.name === `${name}:latest`);
      if (!m) return sendJson(res, 404, { error: `model '${name}' not found` });
      return sendJson(res, 200, show(m));
    }
    if (rec.path === '/api/version') return sendJson(res, 200, { version: '0.12.6' });
    if (rec.path === '/' && rec.method === 'GET') {
      res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end('Ollama is running');
      return;
    }
    if ((rec.path === '/api/embed' || rec.path === '/v1/embeddings') && rec.method === 'POST') {
      // Ollama /api/embed and OpenAI /v1/embeddings, in their own shapes.
      const v1 = rec.path === '/v1/embeddings';
      const model = String(rec.body?.model ?? '');
      const known = opts.embeddingModels ?? ['nomic-embed-text'];
      if (!known.some((m) => m === model || m === `${model}:latest` || `${m}:latest` === model)) {
        return sendJson(res, 404, v1 ? errorShape(true, 404, `The model '${model}' does not exist`) : { error: `model "${model}" not found, try pulling it first` });
      }
      const raw = (rec.body as { input?: unknown } | undefined)?.input;
      const input = typeof raw === 'string' ? [raw] : Array.isArray(raw) && raw.every((x) => typeof x === 'string') ? (raw as string[]) : undefined;
      if (!input) return sendJson(res, 400, v1 ? errorShape(true, 400, "'input' must be a string or a list of strings") : { error: 'invalid input type' });
      const vectors = input.map((t) => testEmbedding(t, opts.embeddingDim ?? 32));
      const tokens = input.reduce((n, t) => n + tokenize(t).length, 0);
      if (v1) return sendJson(res, 200, { object: 'list', data: vectors.map((embedding, index) => ({ object: 'embedding', embedding, index })), model, usage: { prompt_tokens: tokens, total_tokens: tokens } });
      return sendJson(res, 200, { model, embeddings: vectors, total_duration: 1000000, load_duration: 100000, prompt_eval_count: tokens });
    }
    if (!isChatPath(rec.path) || rec.method !== 'POST') {
      res.writeHead(404, { 'Content-Type': 'text/plain' });
      res.end('404 page not found');
      return;
    }
    events.emit('chat-request', rec);
    const reply = scriptFn ? await scriptFn(rec) : (queue.shift() ?? defaultReply);
    if (opts.refuseUnofferedTools && reply.tool_calls?.length) {
      const offered = (rec.body?.tools ?? []).map((t) => t.function?.name ?? '');
      const refused = reply.tool_calls.filter((c) => !offered.includes(c.name));
      if (refused.length) {
        for (const c of refused) refusals.push({ tool: c.name, offered, request: rec });
        return answer(rec, { status: 400, error: `tool ${refused.map((c) => `"${c.name}"`).join(', ')} was not offered in this request (offered: ${offered.join(', ')})` }, res);
      }
    }
    await answer(rec, reply, res);
  }

  async function answer(rec: ReceivedRequest, r: Reply, res: http.ServerResponse): Promise<void> {
    const v1 = rec.path !== '/api/chat';
    const model = r.model ?? (typeof rec.body?.model === 'string' ? rec.body.model : 'qwen2.5:3b');
    const stream = r.stream ?? (v1 ? rec.body?.stream === true : rec.body?.stream !== false);
    let bytesSent = 0;
    let finished = false;
    res.on('close', () => {
      if (!finished) events.emit('socket-closed', { at: process.hrtime.bigint(), path: rec.path, bytesSent } satisfies SocketClosedInfo);
    });
    if (r.headerDelayMs) await sleep(r.headerDelayMs);
    if (res.destroyed) return;

    if (r.status && r.status >= 400) {
      const body = r.errorBody !== undefined ? r.errorBody : errorShape(v1, r.status, r.error ?? http.STATUS_CODES[r.status] ?? 'error');
      const text = typeof body === 'string' ? body : JSON.stringify(body);
      res.writeHead(r.status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
      res.end(text);
      finished = true;
      return;
    }

    if (r.repeatContent && stream && r.raw === undefined) {
      const { piece, count } = r.repeatContent;
      res.writeHead(200, { 'Content-Type': v1 ? 'text/event-stream' : 'application/x-ndjson' });
      const head = chunkHead(`chatcmpl-${++idCounter}`, Math.floor(Date.now() / 1000), model);
      const line = (i: number): string =>
        i < count
          ? v1
            ? sse({ ...head, choices: [{ index: 0, delta: { content: piece }, finish_reason: null }] })
            : ollamaLine(model, { content: piece })
          : v1
            ? `${sse({ ...head, choices: [{ index: 0, delta: {}, finish_reason: 'stop' }] })}data: [DONE]\n\n`
            : `${JSON.stringify({ model, created_at: createdAt(), message: { role: 'assistant', content: '' }, done_reason: 'stop', done: true, ...metrics(r, count) })}\n`;
      for (let i = 0; i <= count; i++) {
        if (res.destroyed) return;
        const b = Buffer.from(line(i));
        bytesSent += b.length;
        if (!res.write(b)) {
          const go = await new Promise<boolean>((resolve) => {
            const onDrain = (): void => (res.off('close', onClose), resolve(true));
            const onClose = (): void => (res.off('drain', onDrain), resolve(false));
            res.once('drain', onDrain);
            res.once('close', onClose);
          });
          if (!go) return;
        }
      }
      finished = true;
      res.end();
      return;
    }

    let pieces: string[];
    let contentType: string;
    if (r.raw !== undefined) {
      pieces = [typeof r.raw === 'string' ? r.raw : Buffer.from(r.raw).toString('latin1')];
      contentType = r.contentType ?? (v1 ? 'text/event-stream' : 'application/x-ndjson');
    } else if (!stream) {
      pieces = [v1 ? JSON.stringify(openaiWhole(model, r)) : JSON.stringify(ollamaWhole(model, r))];
      contentType = 'application/json; charset=utf-8';
    } else {
      const includeUsage = rec.body?.stream_options?.include_usage === true;
      pieces = v1 ? openaiStream(model, r, includeUsage) : ollamaStream(model, r);
      contentType = v1 ? 'text/event-stream' : 'application/x-ndjson';
    }
    if (r.mutate?.length && stream && r.raw === undefined) pieces = mutateChunks(pieces, r.mutate, v1);
    if (r.garbage && r.raw === undefined) {
      const g = typeof r.garbage === 'object' ? r.garbage : { line: typeof r.garbage === 'string' ? r.garbage : 'garbage%%{not json', after: 1 };
      pieces.splice(Math.min(g.after ?? 1, pieces.length), 0, v1 ? `${g.line}\n\n` : `${g.line}\n`);
    }
    const rawBinary = r.raw instanceof Uint8Array;
    const bodies = pieces.map((p) => (rawBinary ? Buffer.from(p, 'latin1') : Buffer.from(enc.encode(p))));
    const headers: Record<string, string | number> = { 'Content-Type': contentType };
    if (!stream && r.raw === undefined) headers['Content-Length'] = bodies.reduce((n, b) => n + b.length, 0);
    if (v1 && stream) headers['Cache-Control'] = 'no-cache';
    res.writeHead(200, headers);
    res.flushHeaders();

    let lastWrite: Promise<void> = Promise.resolve();
    const splits = new Set(r.splitAt ?? []);
    const splitting = splits.size > 0 || !!r.chunkBytes;
    const splitDelay = r.splitDelayMs ?? (splitting ? 2 : 0);
    const pace = (r.tokensPerSecond ? 1000 / r.tokensPerSecond : 0) + (r.delayMs ?? 0);
    for (let i = 0; i < bodies.length; i++) {
      if (i === r.dropAfterChunks) {
        await lastWrite; // what was written reaches the client before the reset
        res.socket?.destroy();
        return;
      }
      if (i === r.endAfterChunks) break;
      if (i === r.stallAfterChunks) {
        events.emit('stalled', { path: rec.path, bytesSent } satisfies StalledInfo);
        return;
      }
      if (i > 0 && pace > 0) await sleep(pace);
      if (res.destroyed) return;
      let b = bodies[i]!;
      while (b.length) {
        // next cut: chunkBytes boundary, a splitAt offset, a stall or drop point
        let n = b.length;
        if (r.chunkBytes) n = Math.min(n, r.chunkBytes - (bytesSent % r.chunkBytes));
        for (const s of splits) if (s > bytesSent && s < bytesSent + n) n = s - bytesSent;
        for (const lim of [r.stallAfterBytes, r.dropAfterBytes]) if (lim !== undefined && lim >= bytesSent && lim < bytesSent + n) n = lim - bytesSent;
        if (n > 0) {
          lastWrite = new Promise<void>((resolve) => res.write(b.subarray(0, n), () => resolve()));
          rec.writes = (rec.writes ?? 0) + 1;
          bytesSent += n;
          b = b.subarray(n);
        }
        if (r.dropAfterBytes !== undefined && bytesSent >= r.dropAfterBytes) {
          await sleep(5);
          res.socket?.destroy();
          return;
        }
        if (r.stallAfterBytes !== undefined && bytesSent >= r.stallAfterBytes) {
          events.emit('stalled', { path: rec.path, bytesSent } satisfies StalledInfo);
          return; // keep the connection open; the client times out or aborts, close() ends it
        }
        if (b.length && splitDelay > 0) await sleep(splitDelay);
        if (res.destroyed) return;
      }
    }
    finished = true;
    res.end();
  }

  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => resolve());
  });
  const port = (server.address() as AddressInfo).port;

  const api: LlmTestServer = {
    url: `http://127.0.0.1:${port}`,
    port,
    requests,
    chatRequests: () => requests.filter((r) => isChatPath(r.path)),
    refusals,
    script(fn) {
      scriptFn = fn;
    },
    enqueue(...replies) {
      queue.push(...replies);
    },
    get queued() {
      return queue.length;
    },
    reset() {
      requests.length = 0;
      refusals.length = 0;
      queue.length = 0;
      scriptFn = null;
    },
    on(event, cb) {
      events.on(event, cb);
    },
    off(event, cb) {
      events.off(event, cb);
    },
    nextSocketClosed() {
      return new Promise((resolve) => events.once('socket-closed', resolve));
    },
    nextChatRequest() {
      return new Promise((resolve) => events.once('chat-request', resolve));
    },
    nextStalled() {
      return new Promise((resolve) => events.once('stalled', resolve));
    },
    async close() {
      for (const s of sockets) s.destroy();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
  return api;
}

// ---- wire shapes ---------------------------------------------------------

/** Applies Reply.mutate to the streamed pieces (NDJSON lines or SSE `data:` events). */
function mutateChunks(pieces: string[], mutations: NonNullable<Reply['mutate']>, v1: boolean): string[] {
  const out = [...pieces];
  const json = out.map((p, i) => ({ i, p })).filter(({ p }) => !p.startsWith('data: [DONE]'));
  for (const m of mutations) {
    const at = json[m.chunk];
    if (!at) throw new Error(`mutate: there is no chunk ${m.chunk} (the stream has ${json.length})`);
    const text = out[at.i]!;
    const obj = JSON.parse(v1 ? text.replace(/^data: /, '') : text) as Record<string | number, unknown>;
    let parent = obj;
    for (const k of m.path.slice(0, -1)) parent = parent[k] as Record<string | number, unknown>;
    const last = m.path.at(-1);
    if (last === undefined || !parent || typeof parent !== 'object') throw new Error(`mutate: no field ${m.path.join('.')} in chunk ${m.chunk}`);
    if (m.value !== undefined) parent[last] = m.value;
    else if (Array.isArray(parent)) parent.splice(last as number, 1);
    else delete parent[last];
    out[at.i] = v1 ? sse(obj) : `${JSON.stringify(obj)}\n`;
  }
  return out;
}

function sendJson(res: http.ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'Content-Type': 'application/json; charset=utf-8', 'Content-Length': Buffer.byteLength(text) });
  res.end(text);
}

function errorShape(v1: boolean, status: number, message: string): Record<string, unknown> {
  if (!v1) return { error: message };
  const type = status === 400 ? 'invalid_request_error' : status === 404 ? 'not_found_error' : 'api_error';
  return { error: { message, type, param: null, code: null } };
}

function createdAt(): string {
  // Ollama writes nanosecond timestamps: 2024-07-22T20:33:28.123648Z
  return new Date().toISOString().replace('Z', '123Z');
}

function metrics(r: Reply, evalCount: number): Record<string, number> {
  const p = r.usage?.prompt_tokens ?? 26;
  const e = r.usage?.completion_tokens ?? evalCount;
  return {
    total_duration: 5191566416,
    load_duration: 2154458,
    prompt_eval_count: p,
    prompt_eval_duration: 383809000,
    eval_count: e,
    eval_duration: 4799921000,
  };
}

function ollamaCalls(r: Reply): Array<Record<string, unknown>> {
  return (r.tool_calls ?? []).map((c, i) => {
    const fn = r.ollamaToolStyle === 'legacy' ? { name: c.name, arguments: c.arguments } : { index: i, name: c.name, arguments: c.arguments };
    return r.ollamaToolStyle === 'legacy' ? { function: fn } : { id: c.id ?? `call_${(++idCounter).toString(36)}${i}`, function: fn };
  });
}

function ollamaLine(model: string, message: Record<string, unknown>): string {
  return `${JSON.stringify({ model, created_at: createdAt(), message: { role: 'assistant', content: '', ...message }, done: false })}\n`;
}

function ollamaStream(model: string, r: Reply): string[] {
  const out: string[] = [];
  for (const t of tokenize(r.thinking ?? '')) out.push(ollamaLine(model, { thinking: t }));
  const tokens = tokenize(r.content ?? '');
  for (const t of tokens) out.push(ollamaLine(model, { content: t }));
  // Ollama sends each tool call whole, in its own chunk with done:false.
  for (const call of ollamaCalls(r)) out.push(ollamaLine(model, { tool_calls: [call] }));
  if (r.streamError) out.push(`${JSON.stringify({ error: r.streamError })}\n`);
  if (!r.omitDone) {
    out.push(
      `${JSON.stringify({
        model,
        created_at: createdAt(),
        message: { role: 'assistant', content: '' },
        done_reason: r.done_reason ?? 'stop',
        done: true,
        ...metrics(r, tokens.length),
      })}\n`,
    );
  }
  return out;
}

function ollamaWhole(model: string, r: Reply): Record<string, unknown> {
  const message: Record<string, unknown> = { role: 'assistant', content: r.content ?? '' };
  if (r.thinking) message.thinking = r.thinking;
  if (r.tool_calls?.length) message.tool_calls = ollamaCalls(r);
  return { model, created_at: createdAt(), message, done_reason: r.done_reason ?? 'stop', done: true, ...metrics(r, tokenize(r.content ?? '').length) };
}

function chunkHead(id: string, created: number, model: string): Record<string, unknown> {
  return { id, object: 'chat.completion.chunk', created, model, system_fingerprint: 'fp_ollama' };
}

function sse(obj: unknown): string {
  return `data: ${JSON.stringify(obj)}\n\n`;
}

function openaiStream(model: string, r: Reply, includeUsage: boolean): string[] {
  const id = `chatcmpl-${++idCounter}`;
  const created = Math.floor(Date.now() / 1000);
  const head = chunkHead(id, created, model);
  const out: string[] = [];
  const delta = (d: Record<string, unknown>, finish: string | null = null): string =>
    sse({ ...head, choices: [{ index: 0, delta: { role: 'assistant', ...d }, finish_reason: finish }] });
  for (const t of tokenize(r.thinking ?? '')) out.push(delta({ content: '', reasoning_content: t }));
  const tokens = tokenize(r.content ?? '');
  for (const t of tokens) out.push(delta({ content: t }));
  const frag = r.argumentFragment ?? 8;
  (r.tool_calls ?? []).forEach((c, i) => {
    const callId = c.id ?? `call_${(++idCounter).toString(36)}`;
    out.push(delta({ content: null, tool_calls: [{ index: i, id: callId, type: 'function', function: { name: c.name, arguments: '' } }] }));
    const args = JSON.stringify(c.arguments);
    for (let o = 0; o < args.length; o += frag) {
      out.push(delta({ tool_calls: [{ index: i, id: '', type: 'function', function: { arguments: args.slice(o, o + frag) } }] }));
    }
  });
  if (r.streamError) out.push(sse({ error: { message: r.streamError, type: 'api_error', param: null, code: null } }));
  const finish = r.done_reason ?? (r.tool_calls?.length ? 'tool_calls' : 'stop');
  out.push(delta({ content: '' }, finish));
  if (includeUsage) {
    const p = r.usage?.prompt_tokens ?? 26;
    const e = r.usage?.completion_tokens ?? tokens.length;
    out.push(sse({ ...head, choices: [], usage: { prompt_tokens: p, completion_tokens: e, total_tokens: p + e } }));
  }
  if (!r.omitDone) out.push('data: [DONE]\n\n');
  return out;
}

function openaiWhole(model: string, r: Reply): Record<string, unknown> {
  const message: Record<string, unknown> = { role: 'assistant', content: r.content ?? '' };
  if (r.thinking) message.reasoning_content = r.thinking;
  if (r.tool_calls?.length) {
    message.tool_calls = r.tool_calls.map((c, i) => ({
      id: c.id ?? `call_${(++idCounter).toString(36)}`,
      index: i,
      type: 'function',
      function: { name: c.name, arguments: JSON.stringify(c.arguments) },
    }));
  }
  const p = r.usage?.prompt_tokens ?? 26;
  const e = r.usage?.completion_tokens ?? tokenize(r.content ?? '').length;
  return {
    id: `chatcmpl-${++idCounter}`,
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model,
    system_fingerprint: 'fp_ollama',
    choices: [{ index: 0, message, finish_reason: r.done_reason ?? (r.tool_calls?.length ? 'tool_calls' : 'stop') }],
    usage: { prompt_tokens: p, completion_tokens: e, total_tokens: p + e },
  };
}

function tags(models: TestModel[]): Record<string, unknown> {
  return {
    models: models.map((m) => ({
      name: m.name,
      model: m.name,
      modified_at: '2025-01-01T00:00:00.000000000Z',
      size: 1929912432,
      digest: '357c53fb659c5076de1d65ccb0b397446227b71a42be9d1603d46168015c9e4b',
      details: { parent_model: '', format: 'gguf', family: m.family ?? 'qwen2', families: [m.family ?? 'qwen2'], parameter_size: '3.1B', quantization_level: 'Q4_K_M' },
    })),
  };
}

function show(m: TestModel): Record<string, unknown> {
  const arch = m.family ?? 'qwen2';
  const info: Record<string, unknown> = { 'general.architecture': arch, 'general.parameter_count': 3085938688 };
  if (m.context_length) info[`${arch}.context_length`] = m.context_length;
  info[`${arch}.embedding_length`] = 2048;
  return {
    license: 'Apache License 2.0',
    modelfile: `FROM ${m.name}`,
    parameters: m.num_ctx ? `num_ctx                        ${m.num_ctx}\nstop                           "<|im_end|>"` : 'stop                           "<|im_end|>"',
    template: '{{- if .Messages }}...',
    details: { parent_model: '', format: 'gguf', family: arch, families: [arch], parameter_size: '3.1B', quantization_level: 'Q4_K_M' },
    model_info: info,
    capabilities: m.capabilities ?? ['completion', 'tools'],
    modified_at: '2025-01-01T00:00:00.000000000Z',
  };
}
