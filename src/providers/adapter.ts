/**
 * Lua protocol adapters loaded from files (adapters/<name>.lua), one VM per
 * adapter kept for its lifetime (no state re-created per call), reloaded when
 * the file changes (issue 3: "a broken new version keeps the last good one
 * and logs why").
 *
 * The adapter script returns a table with:
 *   name, version, endpoint ("/api/chat"), stream_format ("ndjson" | "sse"),
 *   headers (static, Authorization is added by the host),
 *   transform_request(raw_json) -> body table or JSON string,
 *   transform_response(raw_body) -> unified response,
 *   transform_stream_chunk(payload) -> unified chunk (nil/empty table to skip),
 *   transform_error(status, body) -> {message, kind?, model?}   (optional),
 *   context_window(base_url, model, headers) -> integer|nil     (optional),
 *   embed_endpoint ("/api/embed"), transform_embed_request(raw_json) -> JSON body,
 *   transform_embed_response(raw_body) -> {vectors, model} | {error} (optional, issue 19).
 */
import { watch, readFileSync, type FSWatcher } from 'node:fs';
import path from 'node:path';
import { LuaVM, type LuaVMOptions } from '../lua/vm.js';
import { AdapterError } from '../lua/errors.js';
import type { CompletionRequest } from '../kernel/llm-types.js';
import type { Logger } from '../kernel/log-types.js';
import { normalizeChunk, normalizeResponse, type UnifiedChunk, type UnifiedResponse } from './accumulator.js';
import { errorMessage } from '../kernel/errors.js';
import { parseJson } from '../kernel/json.js';

const MESSAGE_CACHE_MAX = 4096;
const REST_CACHE_MAX = 32;

/** Inserts into a bounded cache, dropping the oldest entry when full. */
function remember(cache: Map<string, string>, key: string, value: string, max: number): void {
  if (cache.size >= max) cache.delete(cache.keys().next().value as string);
  cache.set(key, value);
}
const MESSAGES_SLOT = '\u0000homeagent:messages\u0000';
const MESSAGES_SLOT_JSON = JSON.stringify(MESSAGES_SLOT);

/** What `transform_error` reports. `kind`: 'tools_unsupported' | 'model_not_found' | other adapter-defined strings. */
export interface AdapterErrorInfo {
  message: string;
  kind?: string;
  model?: string;
}

/** Static description of a loaded adapter. */
export interface AdapterInfo {
  name: string;
  version: string;
  endpoint: string;
  streamFormat: 'ndjson' | 'sse';
  headers: Record<string, string>;
}

/** Options shared by every adapter VM. */
export interface AdapterOptions {
  log?: Logger;
  /** Host filter for the script's http_get/http_post. */
  allowHost?: LuaVMOptions['allowHost'];
  instructionBudget?: number;
  timeBudgetMs?: number;
}

function readInfo(vm: LuaVM, fallbackName: string): AdapterInfo {
  const endpoint = vm.field('endpoint');
  if (typeof endpoint !== 'string' || !endpoint) {
    throw new AdapterError('ADAPTER_MISSING', { script: vm.name, detail: 'adapter.endpoint must be a non-empty string' });
  }
  for (const fn of ['transform_request', 'transform_response', 'transform_stream_chunk']) {
    if (!vm.hasFunction(fn)) throw new AdapterError('ADAPTER_MISSING', { script: vm.name, detail: `adapter.${fn} is not defined` });
  }
  const hdr = vm.field('headers');
  const headers: Record<string, string> = {};
  if (hdr && typeof hdr === 'object' && !Array.isArray(hdr)) {
    for (const [k, v] of Object.entries(hdr as Record<string, unknown>)) headers[k] = String(v);
  }
  const name = vm.field('name');
  const version = vm.field('version');
  const fmt = vm.field('stream_format');
  return {
    name: typeof name === 'string' && name ? name : fallbackName,
    version: typeof version === 'string' ? version : '0',
    endpoint,
    streamFormat: fmt === 'sse' ? 'sse' : 'ndjson',
    headers,
  };
}

/**
 * One adapter file. `current` always points at the last version that loaded
 * and passed validation; calls in flight on an older VM finish on it.
 */
export class LuaAdapter {
  readonly file: string;
  private vm!: LuaVM;
  private info!: AdapterInfo;
  private readonly opts: AdapterOptions;
  /** Why the last reload was refused (undefined when the file on disk is the one running). */
  lastReloadError?: string;
  /** Increments on every successful (re)load. */
  generation = 0;
  /** Wire JSON of history messages by their unified JSON (LRU); belongs to `cacheVm`. */
  private readonly messageCache = new Map<string, string>();
  /** Body JSON (with a messages slot) by the JSON of the request without messages. */
  private readonly restCache = new Map<string, string>();
  private cacheVm?: LuaVM;

  /** Loads `file` now. @throws AdapterError when the first version does not load. */
  constructor(file: string, opts: AdapterOptions = {}) {
    this.file = file;
    this.opts = opts;
    const { vm, info } = this.build(readFileSync(file));
    this.vm = vm;
    this.info = info;
    this.generation = 1;
  }

  /** Adapters this one builds on with adapter_base() (reloaded with them). */
  bases = new Set<string>();

  private build(source: Uint8Array): { vm: LuaVM; info: AdapterInfo } {
    const rel = path.join(path.basename(path.dirname(this.file)), path.basename(this.file));
    const dir = path.dirname(this.file);
    const bases = new Set<string>();
    const vm = new LuaVM({
      name: rel,
      resolveModule: (name) => {
        if (!/^[A-Za-z0-9_.-]+$/.test(name)) return undefined;
        const file = path.join(dir, `${name}.lua`);
        try {
          const source = readFileSync(file);
          bases.add(name);
          return { chunkName: path.join(path.basename(dir), `${name}.lua`), source };
        } catch {
          return undefined;
        }
      },
      log: this.opts.log,
      allowHost: this.opts.allowHost,
      instructionBudget: this.opts.instructionBudget,
      timeBudgetMs: this.opts.timeBudgetMs,
    });
    vm.load(source);
    this.bases = bases;
    return { vm, info: readInfo(vm, path.basename(this.file, '.lua')) };
  }

  /**
   * Re-reads the file. On success the new version serves the next calls and
   * true is returned; on failure the last good version stays, the reason is
   * logged (warn) and kept in `lastReloadError`, and false is returned.
   */
  reload(): boolean {
    let source: Buffer;
    try {
      source = readFileSync(this.file);
    } catch (err) {
      return this.refuse(`cannot read file: ${errorMessage(err)}`);
    }
    try {
      const { vm, info } = this.build(source);
      // The old VM is dropped, not closed: calls in flight on it finish there.
      this.vm = vm;
      this.info = info;
      this.generation++;
      this.lastReloadError = undefined;
      this.opts.log?.info({ adapter: info.name, version: info.version, file: this.file }, 'adapter reloaded');
      return true;
    } catch (err) {
      return this.refuse(errorMessage(err));
    }
  }

  private refuse(why: string): boolean {
    this.lastReloadError = why;
    this.opts.log?.warn({ adapter: this.info.name, file: this.file, error: why }, `adapter reload refused, keeping the last good version: ${why}`);
    return false;
  }

  get name(): string {
    return this.info.name;
  }
  get endpoint(): string {
    return this.info.endpoint;
  }
  get streamFormat(): 'ndjson' | 'sse' {
    return this.info.streamFormat;
  }
  get headers(): Record<string, string> {
    return this.info.headers;
  }
  get version(): string {
    return this.info.version;
  }

  /**
   * Unified request -> protocol body text.
   *
   * When the adapter defines `transform_message(msg)` (a pure per-message
   * conversion), each history message is converted once and its wire JSON
   * cached by the message's own JSON: the agent loop sends the same history
   * every round, so only new messages cost a Lua call. `transform_request`
   * then gets the request without messages and the host splices the cached
   * texts into its `messages` array.
   */
  async transformRequest(req: CompletionRequest, signal?: AbortSignal): Promise<string> {
    const vm = this.vm;
    if (!vm.hasFunction('transform_message') || !req.messages?.length) {
      const out = await vm.call('transform_request', [JSON.stringify(req)], { result: 'json', signal });
      if (typeof out !== 'string') throw new AdapterError('ADAPTER_RESULT', { script: vm.name, fn: 'transform_request', detail: 'returned nothing' });
      return out;
    }
    if (this.cacheVm !== vm) {
      this.messageCache.clear();
      this.restCache.clear();
      this.cacheVm = vm;
    }
    const parts: string[] = new Array(req.messages.length);
    for (let i = 0; i < req.messages.length; i++) {
      const key = JSON.stringify(req.messages[i]);
      let text = this.messageCache.get(key);
      if (text === undefined) {
        const out = vm.callSync('transform_message', [JSON.parse(key) as unknown], { result: 'json' });
        if (typeof out !== 'string') throw new AdapterError('ADAPTER_RESULT', { script: vm.name, fn: 'transform_message', detail: 'returned nothing' });
        text = out;
        remember(this.messageCache, key, text, MESSAGE_CACHE_MAX);
      }
      parts[i] = text;
    }
    // The rest of the request (model, tools, options) is the same every round too.
    const restKey = JSON.stringify({ ...req, messages: [] });
    let rest = this.restCache.get(restKey);
    if (rest === undefined) {
      const body = await vm.call('transform_request', [restKey], { signal });
      if (!body || typeof body !== 'object' || Array.isArray(body)) {
        throw new AdapterError('ADAPTER_RESULT', { script: vm.name, fn: 'transform_request', detail: 'must return a table when transform_message is defined' });
      }
      const b = body as Record<string, unknown>;
      b.messages = MESSAGES_SLOT;
      rest = JSON.stringify(b);
      if (!rest.includes(MESSAGES_SLOT_JSON)) {
        throw new AdapterError('ADAPTER_RESULT', { script: vm.name, fn: 'transform_request', detail: 'the body has no messages field' });
      }
      remember(this.restCache, restKey, rest, REST_CACHE_MAX);
    }
    return rest.replace(MESSAGES_SLOT_JSON, () => `[${parts.join(',')}]`);
  }

  /** Whether the adapter speaks the protocol's embeddings API (adapter.embed_endpoint and its two transforms). */
  hasEmbeddings(): boolean {
    const e = this.vm.field('embed_endpoint');
    return typeof e === 'string' && e !== '' && this.vm.hasFunction('transform_embed_request') && this.vm.hasFunction('transform_embed_response');
  }

  /** The embeddings endpoint (appended to the source's base URL); '' when the adapter has none. */
  get embedEndpoint(): string {
    const e = this.vm.field('embed_endpoint');
    return typeof e === 'string' ? e : '';
  }

  /**
   * `{model, input: texts, options}` -> the protocol's embeddings request body (JSON text).
   * @throws AdapterError when the script fails or returns nothing.
   */
  async transformEmbedRequest(req: { model: string; input: string[]; options?: Record<string, unknown> }, signal?: AbortSignal): Promise<string> {
    const out = await this.vm.call('transform_embed_request', [JSON.stringify(req)], { result: 'json', signal });
    if (typeof out !== 'string' || !out) throw new AdapterError('ADAPTER_RESULT', { script: this.vm.name, fn: 'transform_embed_request', detail: 'returned nothing' });
    return out;
  }

  /**
   * The protocol's embeddings answer -> `{vectors, model}` or `{error}`
   * (vectors: one list of finite numbers per text, in the order sent).
   * @throws AdapterError when the script fails or returns something else.
   */
  async transformEmbedResponse(body: Uint8Array, signal?: AbortSignal): Promise<{ vectors?: number[][]; model?: string; error?: string }> {
    const out = await this.vm.call('transform_embed_response', [body], { result: 'json', signal });
    let v: unknown;
    try {
      v = typeof out === 'string' ? parseJson(out) : undefined;
    } catch {
      v = undefined;
    }
    if (!v || typeof v !== 'object' || Array.isArray(v)) throw new AdapterError('ADAPTER_RESULT', { script: this.vm.name, fn: 'transform_embed_response', detail: 'must return a table' });
    const r = v as Record<string, unknown>;
    if (typeof r.error === 'string') return { error: r.error };
    const vectors = r.vectors;
    if (!Array.isArray(vectors) || !vectors.every((x) => Array.isArray(x) && x.every((n) => typeof n === 'number' && Number.isFinite(n)))) {
      throw new AdapterError('ADAPTER_RESULT', { script: this.vm.name, fn: 'transform_embed_response', detail: 'vectors must be lists of numbers' });
    }
    return { vectors: vectors as number[][], ...(typeof r.model === 'string' ? { model: r.model } : {}) };
  }

  /** Whole protocol body -> unified response. */
  async transformResponse(body: Uint8Array, signal?: AbortSignal): Promise<UnifiedResponse> {
    const out = await this.vm.call('transform_response', [body], { signal });
    if (!out || typeof out !== 'object' || Array.isArray(out)) {
      throw new AdapterError('ADAPTER_RESULT', { script: this.vm.name, fn: 'transform_response', detail: 'must return a table' });
    }
    return normalizeResponse(out as Record<string, unknown>);
  }

  /**
   * One framed payload -> unified chunk (synchronous: called for every
   * chunk), its fields type-checked (normalizeChunk). Null when the adapter
   * skips it.
   * @throws AdapterError when the script fails or returns something other than a table or nil.
   */
  transformStreamChunk(payload: Uint8Array): UnifiedChunk | null {
    const out = this.vm.callSync('transform_stream_chunk', [payload]);
    if (out === undefined || out === null) return null;
    if (typeof out !== 'object' || Array.isArray(out)) {
      throw new AdapterError('ADAPTER_RESULT', { script: this.vm.name, fn: 'transform_stream_chunk', detail: 'must return a table or nil' });
    }
    return normalizeChunk(out);
  }

  /** Error body -> message and kind; a generic reading when the adapter has no transform_error. */
  async transformError(status: number, body: Uint8Array): Promise<AdapterErrorInfo> {
    const text = Buffer.from(body).toString('utf8');
    if (!this.vm.hasFunction('transform_error')) return { message: text.slice(0, 500) || `HTTP ${status}` };
    try {
      const out = await this.vm.call('transform_error', [status, body]);
      if (out && typeof out === 'object' && typeof (out as AdapterErrorInfo).message === 'string') return out as AdapterErrorInfo;
    } catch (err) {
      this.opts.log?.warn({ adapter: this.name, error: errorMessage(err) }, 'transform_error failed');
    }
    return { message: text.slice(0, 500) || `HTTP ${status}` };
  }

  /** Forgets the converted history messages (the next request converts every message again). */
  clearMessageCache(): void {
    this.messageCache.clear();
    this.restCache.clear();
  }

  /** Whether the adapter can look up a model's context window. */
  hasContextWindow(): boolean {
    return this.vm.hasFunction('context_window');
  }

  /** The model's context window in tokens, asked from the server by the adapter; undefined when unknown. */
  async contextWindow(baseUrl: string, model: string, headers: Record<string, string>, signal?: AbortSignal): Promise<number | undefined> {
    if (!this.hasContextWindow()) return undefined;
    const out = await this.vm.call('context_window', [baseUrl, model, headers], { signal });
    return typeof out === 'number' && out > 0 ? Math.floor(out) : undefined;
  }

  /** Releases the VM. */
  close(): void {
    this.vm.close();
  }
}

/**
 * The adapters of one directory, loaded on first use and reloaded when their
 * file changes (fs.watch on the directory, so editors that replace the file
 * are seen too; 100 ms debounce).
 */
export class AdapterRegistry {
  readonly dir: string;
  private readonly opts: AdapterOptions;
  private readonly adapters = new Map<string, LuaAdapter>();
  private watcher?: FSWatcher;
  private readonly timers = new Map<string, NodeJS.Timeout>();

  constructor(dir: string, opts: AdapterOptions = {}) {
    this.dir = dir;
    this.opts = opts;
  }

  /** The adapter `name` (file `<dir>/<name>.lua`). @throws AdapterError when it does not load. */
  get(name: string): LuaAdapter {
    if (!/^[A-Za-z0-9_.-]+$/.test(name)) {
      throw new AdapterError('ADAPTER_MISSING', { script: `${name}.lua`, detail: 'invalid adapter name' });
    }
    let a = this.adapters.get(name);
    if (!a) {
      const file = path.join(this.dir, `${name}.lua`);
      try {
        a = new LuaAdapter(file, this.opts);
      } catch (err) {
        if (err instanceof AdapterError) throw err;
        throw new AdapterError('ADAPTER_MISSING', { script: file, detail: errorMessage(err) });
      }
      this.adapters.set(name, a);
      this.startWatching();
    }
    return a;
  }

  /** Loaded adapters by name. */
  loaded(): ReadonlyMap<string, LuaAdapter> {
    return this.adapters;
  }

  private startWatching(): void {
    if (this.watcher) return;
    try {
      this.watcher = watch(this.dir, { persistent: false }, (_event, filename) => {
        if (!filename) {
          for (const n of this.adapters.keys()) this.schedule(n);
          return;
        }
        const base = path.basename(filename.toString());
        if (!base.endsWith('.lua')) return;
        const n = base.slice(0, -4);
        if (this.adapters.has(n)) this.schedule(n);
        // Adapters built on the changed one (adapter_base) reload with it.
        for (const [name, a] of this.adapters) if (a.bases.has(n)) this.schedule(name);
      });
      this.watcher.on('error', (err) => this.opts.log?.warn({ dir: this.dir, error: errorMessage(err) }, 'adapter watcher failed'));
    } catch (err) {
      this.opts.log?.warn({ dir: this.dir, error: errorMessage(err) }, 'cannot watch adapters directory; changes need a restart');
    }
  }

  private schedule(name: string): void {
    clearTimeout(this.timers.get(name));
    const t = setTimeout(() => {
      this.timers.delete(name);
      this.adapters.get(name)?.reload();
    }, 100);
    t.unref();
    this.timers.set(name, t);
  }

  /** Stops watching and releases every VM. */
  close(): void {
    this.watcher?.close();
    this.watcher = undefined;
    for (const t of this.timers.values()) clearTimeout(t);
    this.timers.clear();
    for (const a of this.adapters.values()) a.close();
    this.adapters.clear();
  }
}
