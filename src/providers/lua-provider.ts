/**
 * LuaAdaptedProvider: the only Provider implementation (seed 000 section 9,
 * seed 001 "Provider & Lua Adapter Layer").
 *
 *   unified request -> JSON -> adapter.transform_request -> HTTP POST
 *   base_url + adapter.endpoint (adapter.headers + Authorization) ->
 *   adapter.transform_response (whole body) or, streaming, byte framing
 *   (NDJSON / SSE, in TypeScript) -> adapter.transform_stream_chunk per
 *   payload -> delta merging by index (TypeScript) -> StreamEvents, the last
 *   one `done` with the merged CompletionResponse.
 *
 * Failures are typed (errors.ts): non-2xx bodies are read by the adapter's
 * transform_error, so "does not support tools" in either body shape becomes
 * ToolsUnsupportedError naming the model; an abort closes the socket at once
 * and throws ProviderAbortError.
 */
import type { CompletionRequest, CompletionResponse, Provider, StreamEvent } from '../kernel/llm-types.js';
import type { Logger } from '../kernel/log-types.js';
import { errorMessage } from '../kernel/errors.js';
import { AdapterError } from '../lua/errors.js';
import type { LuaAdapter } from './adapter.js';
import { StreamAccumulator, responseFromUnified, type UnifiedChunk } from './accumulator.js';
import { createFramer, type Frame } from './framing.js';
import { openHttp, type HttpResponse, type HttpTimeouts } from './http.js';
import {
  AuthError,
  ConnectionError,
  HttpStatusError,
  MalformedResponseError,
  ProviderAbortError,
  ProviderError,
  StreamErrorReported,
  ToolsUnsupportedError,
  TruncatedStreamError,
} from './errors.js';

/** Defaults of the three HTTP timeouts, ms. */
export const DEFAULT_TIMEOUTS: HttpTimeouts = { connectMs: 5_000, responseMs: 120_000, idleMs: 30_000 };

const MAX_BODY = 16 * 1024 * 1024;
const MAX_ERROR_BODY = 64 * 1024;

/** Options of one Lua-adapted source. */
export interface LuaProviderOptions {
  /** Source name (core.llm.sources.<name>); the provider's `name`. */
  name: string;
  adapter: LuaAdapter;
  /** Host root, e.g. http://127.0.0.1:11434 (the adapter's endpoint is appended). */
  baseUrl: string;
  model: string;
  /** Sent as `Authorization: Bearer <key>` when non-empty. */
  apiKey?: string;
  /** Declared context window in tokens; 0/undefined = ask the server (adapter context_window). */
  contextWindow?: number;
  /**
   * The context window asked of a server whose adapter reads the model's
   * (Ollama: `options.num_ctx`) when none is declared, in tokens: the same on
   * every request from the first, so the server never reloads the model at
   * another size and its prompt cache stays (issue 19); the prompt budget is
   * this or the model's own window, whichever is smaller. 0/undefined = the
   * model's own window, once the server said it.
   */
  numCtx?: number;
  timeouts?: Partial<HttpTimeouts>;
  /** Merged under each request's `options` (e.g. keep_alive). */
  requestOptions?: Record<string, unknown>;
  log?: Logger;
}

function toolNames(req: CompletionRequest): Set<string> {
  return new Set((req.tools ?? []).map((t) => t.function.name));
}

function preview(b: Uint8Array): string {
  const s = Buffer.from(b.subarray(0, 120)).toString('utf8');
  return b.length > 120 ? `${s}...` : s;
}

/** How many unreadable payloads a stream may skip before it counts as broken. */
export const MAX_SKIPPED_PAYLOADS = 64;

/**
 * The protocol-neutral stream pipeline: network reads -> framing (the
 * adapter's stream_format) -> adapter.transform_stream_chunk per payload ->
 * merging in `acc`. Yields content / reasoning / tool_call_delta events; the
 * caller ends with `acc.finish()`. Returns normally only when the stream was
 * complete (final chunk, `[DONE]`, or an SSE stream that reported a
 * finish_reason before it closed).
 *
 * A payload the adapter cannot read (invalid JSON, a script error) or one
 * over the frame size limit is skipped and reported through `warn` once per
 * stream with the count (issue 14: a malformed chunk never fails a stream
 * whose rest is good); past MAX_SKIPPED_PAYLOADS the stream is given up.
 * @throws MalformedResponseError (too many unreadable payloads),
 *   StreamErrorReported (`{"error": ...}` in the stream), TruncatedStreamError.
 */
export async function* decodeStream(
  adapter: LuaAdapter,
  reads: AsyncIterable<Uint8Array>,
  acc: StreamAccumulator,
  source?: string,
  warn?: (msg: string) => void,
): AsyncGenerator<StreamEvent, void, void> {
  const framer = createFramer(adapter.streamFormat);
  let skipped = 0;
  let firstSkip = '';
  const skip = (why: string): void => {
    skipped++;
    if (!firstSkip) firstSkip = why;
    if (skipped > MAX_SKIPPED_PAYLOADS) throw new MalformedResponseError(`${skipped} payloads could not be read, the first: ${firstSkip}`, { source });
  };
  const frame = (f: Frame): { events: StreamEvent[]; done: boolean } => {
    if (f.kind === 'done') return { events: [], done: true };
    if (f.kind === 'skipped') {
      skip('a payload over the frame size limit');
      return { events: [], done: false };
    }
    let c: UnifiedChunk | null;
    try {
      c = adapter.transformStreamChunk(f.bytes);
    } catch (err) {
      skip(`${errorMessage(err)} (payload: ${preview(f.bytes)})`);
      return { events: [], done: false };
    }
    if (!c) return { events: [], done: false };
    if (c.error) throw new StreamErrorReported(String(c.error), { source });
    return { events: acc.apply(c), done: acc.done };
  };
  const report = (): void => {
    if (skipped) warn?.(`skipped ${skipped} unreadable stream payload${skipped === 1 ? '' : 's'}; the first: ${firstSkip}`);
  };
  for await (const chunk of reads) {
    for (const f of framer.push(chunk)) {
      const r = frame(f);
      for (const e of r.events) yield e;
      if (r.done) return report();
    }
  }
  for (const f of framer.end()) {
    const r = frame(f);
    for (const e of r.events) yield e;
    if (r.done) return report();
  }
  if (adapter.streamFormat === 'sse' && acc.finishReason) return report();
  const why = skipped ? `the connection ended without the final chunk (${skipped} unreadable payload${skipped === 1 ? '' : 's'} skipped, the first: ${firstSkip})` : 'the connection ended without the final chunk';
  throw new TruncatedStreamError(acc.content, why, { source });
}

/** A Provider speaking one protocol through one Lua adapter to one host. */
export class LuaAdaptedProvider implements Provider {
  readonly name: string;
  readonly model: string;
  readonly baseUrl: string;
  private readonly adapter: LuaAdapter;
  private readonly apiKey: string;
  private readonly declaredWindow: number;
  /** The window sent on every request from the first: the declared one, else numCtx for an adapter that reads the model's; 0 = none fixed. */
  private readonly fixedWindow: number;
  private readonly timeouts: HttpTimeouts;
  private readonly requestOptions: Record<string, unknown>;
  private readonly log?: Logger;
  private discoveredWindow?: Promise<number | undefined>;
  private knownWindow?: number;

  constructor(opts: LuaProviderOptions) {
    this.name = opts.name;
    this.adapter = opts.adapter;
    this.baseUrl = opts.baseUrl.replace(/\/+$/, '');
    this.model = opts.model;
    this.apiKey = opts.apiKey ?? '';
    this.declaredWindow = opts.contextWindow && opts.contextWindow > 0 ? Math.floor(opts.contextWindow) : 0;
    this.fixedWindow = this.declaredWindow || (opts.numCtx && opts.numCtx > 0 && this.adapter.hasContextWindow() ? Math.floor(opts.numCtx) : 0);
    this.timeouts = { ...DEFAULT_TIMEOUTS, ...opts.timeouts };
    this.requestOptions = opts.requestOptions ?? {};
    this.log = opts.log;
  }

  /** The whole answer in one response (protocol non-stream mode). Errors: ProviderError subclasses. */
  async chat(req: CompletionRequest, signal?: AbortSignal): Promise<CompletionResponse> {
    const declared = toolNames(req);
    let res: HttpResponse | undefined;
    try {
      const body = await this.prepare(req, false, signal);
      res = await this.send(body, signal);
      if (res.status < 200 || res.status >= 300) throw await this.statusError(res, req);
      const bytes = await res.readAll(MAX_BODY);
      const u = await this.adapter.transformResponse(bytes, signal);
      if (u.error) throw new StreamErrorReported(String(u.error), { source: this.name });
      return this.stamp(responseFromUnified(u, declared, (m) => this.warn(m)));
    } catch (err) {
      throw this.mapError(err, signal, false);
    } finally {
      res?.destroy();
    }
  }

  /**
   * Streams the answer: content / reasoning / tool_call_delta events as they
   * arrive, then one `done` event with the merged response. Stopping the
   * iteration or aborting `signal` closes the connection at once.
   */
  async *chatStream(req: CompletionRequest, signal?: AbortSignal): AsyncGenerator<StreamEvent, void, void> {
    const declared = toolNames(req);
    let res: HttpResponse | undefined;
    const acc = new StreamAccumulator(declared, (m) => this.warn(m));
    let started = false;
    try {
      const body = await this.prepare(req, true, signal);
      res = await this.send(body, signal);
      if (res.status < 200 || res.status >= 300) throw await this.statusError(res, req);
      started = true;
      if (this.adapter.streamFormat === 'sse' && /application\/json/i.test(res.contentType)) {
        // The host ignored stream:true and sent one JSON body.
        const u = await this.adapter.transformResponse(await res.readAll(MAX_BODY), signal);
        if (u.error) throw new StreamErrorReported(String(u.error), { source: this.name });
        const r = this.stamp(responseFromUnified(u, declared, (m) => this.warn(m)));
        if (r.reasoning_content) yield { type: 'reasoning', text: r.reasoning_content };
        if (r.content) yield { type: 'content', text: r.content };
        yield { type: 'done', response: r };
        return;
      }
      yield* decodeStream(this.adapter, res.chunks(), acc, this.name, (m) => this.warn(m));
      const { events, response } = acc.finish();
      this.stamp(response);
      for (const e of events) yield e;
    } catch (err) {
      throw this.mapError(err, signal, started, acc.content);
    } finally {
      res?.destroy();
    }
  }

  /**
   * Embeddings of `texts` with `model` (default: the source's model) through
   * the adapter's embeddings API (Ollama /api/embed, OpenAI /v1/embeddings):
   * one vector per text, in order, all of one dimension.
   * @throws ProviderError subclasses (ADAPTER_FAILED when the adapter has no
   *   embeddings API; MalformedResponseError when the answer has the wrong
   *   count or mixed dimensions).
   */
  async embed(texts: string[], model?: string, signal?: AbortSignal): Promise<{ vectors: number[][]; model: string }> {
    if (!this.adapter.hasEmbeddings()) throw new ProviderError('ADAPTER_FAILED', `adapter ${this.adapter.name} of source ${this.name} has no embeddings API`, { source: this.name });
    const use = model || this.model;
    let res: HttpResponse | undefined;
    try {
      const body = await this.adapter.transformEmbedRequest({ model: use, input: texts, options: { ...this.requestOptions } }, signal);
      res = await openHttp({ url: this.baseUrl + this.adapter.embedEndpoint, method: 'POST', headers: { 'Content-Type': 'application/json', ...this.adapter.headers, Accept: 'application/json', ...this.authHeaders() }, body, signal, timeouts: this.timeouts, source: this.name });
      if (res.status < 200 || res.status >= 300) throw await this.statusError(res, { messages: [], model: use });
      const u = await this.adapter.transformEmbedResponse(await res.readAll(MAX_BODY), signal);
      if (u.error !== undefined) throw new StreamErrorReported(u.error, { source: this.name });
      const vectors = u.vectors ?? [];
      const dim = vectors[0]?.length ?? 0;
      if (vectors.length !== texts.length || dim === 0 || vectors.some((v) => v.length !== dim)) {
        throw new MalformedResponseError(`embeddings: ${vectors.length} vectors for ${texts.length} texts, dimensions ${[...new Set(vectors.map((v) => v.length))].join('/') || 'none'}`, { source: this.name });
      }
      return { vectors, model: use };
    } catch (err) {
      throw this.mapError(err, signal, false);
    } finally {
      res?.destroy();
    }
  }

  /**
   * The context window in tokens: the declared one; else the model's own as
   * the adapter reads it from the server (Ollama /api/show, cached), at most
   * the fixed num_ctx (the fixed one alone while the server does not say);
   * undefined when unknown.
   */
  async maxContextTokens(): Promise<number | undefined> {
    if (this.declaredWindow) return this.declaredWindow;
    if (!this.adapter.hasContextWindow()) return undefined;
    const own = await this.modelWindow();
    if (!this.fixedWindow) return own;
    return own ? Math.min(own, this.fixedWindow) : this.fixedWindow;
  }

  /** The model's own context window from the server (adapter context_window), cached once known; undefined when unknown. */
  private modelWindow(): Promise<number | undefined> {
    if (!this.discoveredWindow) {
      this.discoveredWindow = this.adapter.contextWindow(this.baseUrl, this.model, this.authHeaders()).then(
        (n) => {
          if (n) this.knownWindow = n;
          else this.discoveredWindow = undefined;
          return n;
        },
        (err: unknown) => {
          this.warn(`context window lookup failed: ${errorMessage(err)}`);
          this.discoveredWindow = undefined;
          return undefined;
        },
      );
    }
    return this.discoveredWindow;
  }

  private authHeaders(): Record<string, string> {
    return this.apiKey ? { Authorization: `Bearer ${this.apiKey}` } : {};
  }

  private async prepare(req: CompletionRequest, stream: boolean, signal?: AbortSignal): Promise<string> {
    const window = this.fixedWindow || this.knownWindow;
    const options: Record<string, unknown> = { ...this.requestOptions, ...(window ? { num_ctx: window } : {}), ...req.options };
    const unified: CompletionRequest = { ...req, model: this.model || req.model, stream, options };
    try {
      return await this.adapter.transformRequest(unified, signal);
    } catch (err) {
      if (err instanceof AdapterError) throw new ProviderError('ADAPTER_FAILED', `adapter ${this.adapter.name} could not build the request: ${err.message}`, { cause: err, source: this.name });
      throw err;
    }
  }

  private send(body: string, signal?: AbortSignal): Promise<HttpResponse> {
    return openHttp({
      url: this.baseUrl + this.adapter.endpoint,
      method: 'POST',
      headers: { ...this.adapter.headers, ...this.authHeaders() },
      body,
      signal,
      timeouts: this.timeouts,
      source: this.name,
    });
  }

  private async statusError(res: HttpResponse, req: CompletionRequest): Promise<ProviderError> {
    let body: Uint8Array = new Uint8Array(0);
    try {
      body = await res.readAll(MAX_ERROR_BODY);
    } catch {
      // the status alone is enough
    }
    const text = Buffer.from(body).toString('utf8').slice(0, 2048);
    const info = await this.adapter.transformError(res.status, body);
    if (info.kind === 'tools_unsupported') {
      return new ToolsUnsupportedError(this.model || req.model || info.model || '(unknown model)', info.message, { source: this.name });
    }
    if (res.status === 401 || res.status === 403) return new AuthError(res.status, info.message, text, { source: this.name });
    return new HttpStatusError(res.status, info.message, text, { source: this.name });
  }

  private mapError(err: unknown, signal: AbortSignal | undefined, started: boolean, partial = ''): ProviderError {
    if (signal?.aborted) return err instanceof ProviderAbortError ? err : new ProviderAbortError({ cause: err, source: this.name });
    if (err instanceof ConnectionError && started) {
      return new TruncatedStreamError(partial, err.message, { source: this.name });
    }
    if (err instanceof ProviderError) {
      err.source ??= this.name;
      return err;
    }
    if (err instanceof AdapterError) return new MalformedResponseError(err.message, { cause: err, source: this.name });
    return new ProviderError('PROVIDER_FAILED', errorMessage(err), { cause: err, source: this.name });
  }

  private stamp(r: CompletionResponse): CompletionResponse {
    r.source = this.name;
    r.model = r.model || this.model;
    return r;
  }

  private warn(msg: string): void {
    this.log?.warn({ source: this.name }, msg);
  }
}
