/**
 * Provider manager: the Provider the kernel uses. Builds one
 * LuaAdaptedProvider per configured source and calls them in order (seed 001
 * "Provider invocation follows an ordered fallback strategy"):
 *
 * - sources: `core.llm.sources_order` (names) and per source
 *   `core.llm.sources.<name>.{adapter, base_url, model, api_key, context_window}`;
 * - fallback in order; a source that fails is tried again only after a
 *   back-off (2 s doubling to 60 s), except that when every source is backing
 *   off they are still tried, in order, rather than failing outright;
 * - HTTP 401/403 marks a source unusable until one of its settings changes;
 * - ToolsUnsupportedError: the same source is retried once without tools, and
 *   the log says so;
 * - an aborted call is never retried or failed over: ProviderAbortError at once;
 * - a stream that fails after it yielded text is not failed over (the text
 *   was already delivered), its error is thrown;
 * - `status()` tells which source answered last and each source's state.
 */
import path from 'node:path';
import type { CompletionRequest, CompletionResponse, Provider, StreamEvent } from '../kernel/llm-types.js';
import type { Logger } from '../kernel/log-types.js';
import type { SettingsAPI } from '../kernel/settings-types.js';
import { errorMessage } from '../kernel/errors.js';
import { MAX_CONTEXT_WINDOW, contextWindowCheck } from '../kernel/core-settings.js';
import { createLogger } from '../kernel/log.js';
import { AdapterRegistry } from './adapter.js';
import { LuaAdaptedProvider } from './lua-provider.js';
import {
  AllSourcesFailedError,
  AuthError,
  ProviderAbortError,
  ProviderError,
  ToolsUnsupportedError,
  isAbort,
} from './errors.js';

const SOURCE_KEYS = ['adapter', 'base_url', 'model', 'api_key', 'context_window'] as const;


/** Defaults of one source's settings. */
export interface SourceDefaults {
  adapter: string;
  base_url: string;
  model: string;
  api_key?: string;
  context_window?: number;
}

/**
 * Registers the five settings of source `name` (core.llm.sources.<name>.*).
 * Used for the default source and by deploy tooling adding sources.
 */
export function registerSourceSettings(settings: SettingsAPI, name: string, d: SourceDefaults): void {
  const p = `core.llm.sources.${name}`;
  settings.register({ key: `${p}.adapter`, type: 'string', default: d.adapter, description: `LLM source ${name}: Lua adapter in adapters/ (ollama, openai, deepseek)` });
  settings.register({ key: `${p}.base_url`, type: 'string', default: d.base_url, url: { schemes: ['http', 'https'] }, description: `LLM source ${name}: host root URL; the adapter appends its endpoint` });
  settings.register({ key: `${p}.model`, type: 'string', default: d.model, description: `LLM source ${name}: model name` });
  settings.register({ key: `${p}.api_key`, type: 'secret', default: d.api_key ?? '', description: `LLM source ${name}: API key sent as Bearer token ('' = none)` });
  settings.register({
    key: `${p}.context_window`,
    type: 'integer',
    default: d.context_window ?? 0,
    min: 0,
    max: MAX_CONTEXT_WINDOW,
    check: contextWindowCheck,
    description: `LLM source ${name}: context window in tokens, sent to Ollama as options.num_ctx; 0 = core.llm.num_ctx, within the model's own (Ollama /api/show)`,
  });
}

/**
 * Whether source `name` is a hosted API that needs a key it does not have:
 * its adapter is not `ollama`, its base_url names a host that is not this
 * machine or a private network (RFC 1918, link-local, `.local`), and
 * core.llm.sources.<name>.api_key is empty (stored, default or environment).
 */
export function sourceNeedsApiKey(settings: SettingsAPI, name: string): boolean {
  const read = (k: string): string => {
    try {
      return String(settings.get(`core.llm.sources.${name}.${k}`) ?? '');
    } catch {
      return '';
    }
  };
  if (read('adapter') === 'ollama' || read('api_key') !== '') return false;
  let host: string;
  try {
    host = new URL(read('base_url')).hostname.replace(/^\[|\]$/g, '');
  } catch {
    return false;
  }
  const local = host === 'localhost' || host.endsWith('.local') || host === '::1' || /^(127\.|10\.|192\.168\.|169\.254\.|172\.(1[6-9]|2\d|3[01])\.)/.test(host) || /^f[cd]/i.test(host);
  return !local;
}

/**
 * Registers the core.llm.* defaults (seed 000 section 10, issue 3): the
 * default source `ollama` (adapter ollama, http://127.0.0.1:11434,
 * qwen2.5:3b), a `deepseek` source template (not in the order until the
 * operator adds it and sets its key), the source order, timeouts, back-off,
 * keep_alive and extra hosts the adapters' http_get/http_post may reach.
 */
export function registerProviderSettings(settings: SettingsAPI): void {
  registerSourceSettings(settings, 'ollama', { adapter: 'ollama', base_url: 'http://127.0.0.1:11434', model: 'qwen2.5:3b', api_key: '', context_window: 0 });
  registerSourceSettings(settings, 'deepseek', { adapter: 'deepseek', base_url: 'https://api.deepseek.com', model: 'deepseek-chat', api_key: '', context_window: 65536 });
  settings.register({
    key: 'core.llm.sources_order',
    type: 'json',
    default: ['ollama'],
    description: 'LLM sources tried in this order (names under core.llm.sources.<name>)',
    check: (v) => {
      if (!Array.isArray(v) || !v.every((x) => typeof x === 'string' && /^[A-Za-z0-9_-]+$/.test(x))) return 'must be a list of source names, e.g. ["ollama", "deepseek"]';
      const known = v.filter((n) => settings.list(`core.llm.sources.${n}.`).length > 0 || (settings as { definition?: (k: string) => unknown }).definition?.(`core.llm.sources.${n}.adapter`) !== undefined);
      const unknown = v.filter((n) => !known.includes(n));
      if (unknown.length) return `names sources that are not configured: ${unknown.join(', ')} (set core.llm.sources.<name>.adapter, base_url and model first)`;
      // Cross-key requirement: a hosted API (not Ollama, not on this machine or the local network) refuses every request without its key.
      const keyless = v.filter((n) => sourceNeedsApiKey(settings, n));
      return keyless.length ? `names ${keyless.map((n) => `${n}, whose API key is not set (homeagent config set core.llm.sources.${n}.api_key KEY first)`).join('; ')}` : undefined;
    },
  });
  settings.register({ key: 'core.llm.connect_timeout_ms', type: 'integer', default: 5000, min: 100, description: 'LLM: TCP/TLS connect timeout, ms' });
  settings.register({ key: 'core.llm.response_timeout_ms', type: 'integer', default: 120000, min: 100, description: 'LLM: time from request to response headers (model load, prompt evaluation), ms' });
  settings.register({ key: 'core.llm.idle_timeout_ms', type: 'integer', default: 30000, min: 100, description: 'LLM: longest silence between streamed chunks, ms' });
  settings.register({ key: 'core.llm.backoff_base_ms', type: 'integer', default: 2000, min: 0, description: 'LLM: first back-off after a source fails, ms (doubles per failure)' });
  settings.register({ key: 'core.llm.backoff_max_ms', type: 'integer', default: 60000, min: 0, description: 'LLM: longest back-off of a failing source, ms' });
  settings.register({
    key: 'core.llm.num_ctx',
    type: 'integer',
    default: 8192,
    min: 0,
    max: MAX_CONTEXT_WINDOW,
    check: contextWindowCheck,
    description:
      "LLM: the context window asked of Ollama on every request (options.num_ctx), in tokens; fixed, so the model is never reloaded at another size and its prompt cache stays. The prompt budget is this or the model's own window, whichever is smaller; a source's context_window, when set, wins. 0 = the model's own window (from /api/show)",
  });
  settings.register({ key: 'core.llm.keep_alive', type: 'string', default: '30m', description: "LLM: Ollama keep_alive, sent on every request (how long the model stays loaded after a request, e.g. 30m or 24h; '' = the server's default, 5m)" });
  settings.register({ key: 'core.llm.embedding.source', type: 'string', default: '', description: "Embeddings (issue 19): the LLM source (core.llm.sources.<name>) whose embeddings API gives memory's dense vectors (Ollama /api/embed, OpenAI /v1/embeddings); '' = none, memory recall is lexical only" });
  settings.register({ key: 'core.llm.embedding.model', type: 'string', default: '', description: "Embeddings: the embedding model on that source (e.g. nomic-embed-text, bge-m3); '' = none. Changing it recomputes the vectors in the background" });
  settings.register({ key: 'core.llm.http_allow_hosts', type: 'json', default: [], description: 'LLM: extra hosts adapters may reach with http_get/http_post (source hosts are always allowed)' });
}

/** State of one source as `status()` reports it. */
export interface SourceStatus {
  name: string;
  adapter: string;
  model: string;
  base_url: string;
  /** untried: no request yet since the start or since its settings changed (`homeagent doctor` checks for real); ok: its last request answered; backoff: failed, retried after `retry_at`; unusable: 401/403 until its settings change. */
  state: 'untried' | 'ok' | 'backoff' | 'unusable';
  failures: number;
  /** ms since epoch when a backing-off source is tried again. */
  retry_at?: number;
  last_error?: string;
  last_error_code?: string;
}

/** What `status()` returns (`homeagent status` shows it). */
export interface ProviderStatus {
  /** The source that answered last, and when (ms since epoch). */
  last_source?: string;
  last_model?: string;
  last_at?: number;
  sources: SourceStatus[];
}

/** An embeddings source as memory sees it (ProviderManager.embedder): its fingerprint's source and model, and the call. */
export interface Embedder {
  source: string;
  model: string;
  /** One vector per text, in order, of one dimension. @throws ProviderError */
  embed(texts: string[], signal?: AbortSignal): Promise<number[][]>;
}

/** Options of the manager. */
export interface ProviderManagerOptions {
  settings: SettingsAPI;
  /** Directory holding <adapter>.lua files (e.g. <repo>/adapters). */
  adaptersDir: string;
  log?: Logger;
  /** Clock, ms since epoch (tests). */
  now?: () => number;
}

interface Source {
  name: string;
  adapter: string;
  base_url: string;
  model: string;
  api_key: string;
  context_window: number;
  provider?: LuaAdaptedProvider;
  state: 'untried' | 'ok' | 'backoff' | 'unusable';
  failures: number;
  retryAt: number;
  lastError?: ProviderError;
}

function withoutTools(req: CompletionRequest): CompletionRequest {
  const { tools: _tools, ...rest } = req;
  return rest;
}

/** The Provider the kernel uses: ordered sources with fallback. */
export class ProviderManager implements Provider {
  readonly name = 'llm';
  private readonly settings: SettingsAPI;
  private readonly log: Logger;
  private readonly now: () => number;
  private readonly registry: AdapterRegistry;
  private readonly sources = new Map<string, Source>();
  private readonly unsubscribe: () => void;
  private last?: { source: string; model: string; at: number };

  constructor(opts: ProviderManagerOptions) {
    this.settings = opts.settings;
    this.log = opts.log ?? createLogger('providers');
    this.now = opts.now ?? Date.now;
    this.registry = new AdapterRegistry(path.resolve(opts.adaptersDir), { log: this.log, allowHost: (host) => this.allowedHosts().has(host) });
    this.unsubscribe = this.settings.onChange('core.llm.', (key) => this.onSettingChanged(key));
  }

  /** Releases watchers and VMs; unsubscribes from settings. */
  close(): void {
    this.unsubscribe();
    this.registry.close();
  }

  /** Which source answered last and every configured source's state. */
  status(): ProviderStatus {
    const list = this.ordered().map((s): SourceStatus => {
      const st: SourceStatus = { name: s.name, adapter: s.adapter, model: s.model, base_url: s.base_url, state: s.state, failures: s.failures };
      if (s.state === 'backoff') st.retry_at = s.retryAt;
      if (s.lastError) {
        st.last_error = s.lastError.message;
        st.last_error_code = s.lastError.code;
      }
      return st;
    });
    const out: ProviderStatus = { sources: list };
    if (this.last) {
      out.last_source = this.last.source;
      out.last_model = this.last.model;
      out.last_at = this.last.at;
    }
    return out;
  }

  /**
   * The configured embedding source and model (core.llm.embedding.*), or
   * undefined when either is empty. `embed` calls that source's embeddings
   * API (LuaAdaptedProvider.embed) and throws its ProviderError.
   */
  embedder(): Embedder | undefined {
    const source = String(this.read('core.llm.embedding.source') ?? '');
    const model = String(this.read('core.llm.embedding.model') ?? '');
    if (!source || !model) return undefined;
    return {
      source,
      model,
      embed: async (texts, signal) => {
        const s = this.sourceOf(source);
        if (!s.adapter || !s.base_url) throw new ProviderError('ADAPTER_FAILED', `embedding source ${source} is not configured (core.llm.sources.${source}.adapter/base_url)`, { source });
        return (await this.providerOf(s).embed(texts, model, signal)).vectors;
      },
    };
  }

  /** The context window of the source that would answer next (declared, else read from the server). */
  async maxContextTokens(): Promise<number | undefined> {
    for (const s of this.candidates()) {
      try {
        return await this.providerOf(s).maxContextTokens();
      } catch (err) {
        this.log.warn({ source: s.name, error: errorMessage(err) }, 'context window lookup failed');
      }
    }
    return undefined;
  }

  /** One whole answer from the first source that gives one. @throws ProviderAbortError, AllSourcesFailedError. */
  async chat(req: CompletionRequest, signal?: AbortSignal): Promise<CompletionResponse> {
    const errors: ProviderError[] = [];
    for (const s of this.candidates()) {
      if (signal?.aborted) throw new ProviderAbortError();
      try {
        const p = this.providerOf(s);
        let r: CompletionResponse;
        try {
          r = await p.chat(req, signal);
        } catch (err) {
          if (!(err instanceof ToolsUnsupportedError) || !req.tools?.length || signal?.aborted) throw err;
          this.logToolsRetry(s, err);
          r = await p.chat(withoutTools(req), signal);
        }
        return this.succeeded(s, r);
      } catch (err) {
        if (signal?.aborted || isAbort(err)) throw err instanceof ProviderAbortError ? err : new ProviderAbortError({ cause: err, source: s.name });
        errors.push(this.failed(s, err));
      }
    }
    throw new AllSourcesFailedError(errors.length ? errors : this.refusedErrors());
  }

  /**
   * Streams from the first source that starts answering. Fails over only
   * before the first event; afterwards the source's error is thrown.
   * @throws ProviderAbortError, AllSourcesFailedError, or a mid-stream ProviderError.
   */
  async *chatStream(req: CompletionRequest, signal?: AbortSignal): AsyncGenerator<StreamEvent, void, void> {
    const errors: ProviderError[] = [];
    for (const s of this.candidates()) {
      if (signal?.aborted) throw new ProviderAbortError();
      let yielded = false;
      try {
        const p = this.providerOf(s);
        let rq = req;
        for (let attempt = 0; ; attempt++) {
          try {
            for await (const ev of p.chatStream(rq, signal)) {
              if (ev.type === 'done') this.succeeded(s, ev.response);
              yielded = true;
              yield ev;
            }
            return;
          } catch (err) {
            if (yielded || attempt > 0 || !(err instanceof ToolsUnsupportedError) || !rq.tools?.length || signal?.aborted) throw err;
            this.logToolsRetry(s, err);
            rq = withoutTools(rq);
          }
        }
      } catch (err) {
        if (signal?.aborted || isAbort(err)) throw err instanceof ProviderAbortError ? err : new ProviderAbortError({ cause: err, source: s.name });
        const e = this.failed(s, err);
        if (yielded) throw e;
        errors.push(e);
      }
    }
    throw new AllSourcesFailedError(errors.length ? errors : this.refusedErrors());
  }

  // ---- internals -------------------------------------------------------

  private logToolsRetry(s: Source, err: ToolsUnsupportedError): void {
    this.log.warn({ source: s.name, model: err.model }, `model ${err.model} of source ${s.name} does not support tools; retrying once without tools`);
  }

  private succeeded(s: Source, r: CompletionResponse): CompletionResponse {
    r.source = s.name;
    r.model = r.model || s.model;
    if ((s.state !== 'ok' && s.state !== 'untried') || s.failures) this.log.info({ source: s.name }, `LLM source ${s.name} answers again`);
    s.state = 'ok';
    s.failures = 0;
    s.retryAt = 0;
    this.last = { source: s.name, model: r.model, at: this.now() };
    return r;
  }

  private failed(s: Source, err: unknown): ProviderError {
    const e = err instanceof ProviderError ? err : new ProviderError('PROVIDER_FAILED', errorMessage(err), { cause: err });
    e.source ??= s.name;
    s.lastError = e;
    s.failures++;
    if (e instanceof AuthError) {
      s.state = 'unusable';
      this.log.error({ source: s.name, status: e.status }, `LLM source ${s.name} rejected the credentials (HTTP ${e.status}); unusable until its settings change`);
      return e;
    }
    const base = this.num('core.llm.backoff_base_ms', 2000);
    const max = this.num('core.llm.backoff_max_ms', 60000);
    const delay = Math.min(max, base * 2 ** Math.min(s.failures - 1, 20));
    s.state = 'backoff';
    s.retryAt = this.now() + delay;
    this.log.warn({ source: s.name, code: e.code, retry_in_ms: delay }, `LLM source ${s.name} failed: ${e.message}`);
    return e;
  }

  /**
   * Why no source was tried: each source left out because it refused its
   * credentials (state unusable, until its settings change), with that
   * error. Empty when none was: then nothing is configured. A tester's asks
   * after an HTTP 401 were answered "no usable LLM source is configured".
   */
  private refusedErrors(): ProviderError[] {
    return this.ordered()
      .filter((s) => s.state === 'unusable' && s.lastError)
      .map((s) => new ProviderError(s.lastError!.code, `not asked since it refused its credentials (${s.lastError!.message}); set core.llm.sources.${s.name}.api_key (or its other settings) to try it again`, { source: s.name, cause: s.lastError }));
  }

  /** Sources to try, in order: usable now first, then those backing off; never unusable ones. */
  private candidates(): Source[] {
    const all = this.ordered().filter((s) => s.state !== 'unusable' && s.base_url && s.adapter);
    const t = this.now();
    const ready = all.filter((s) => s.state === 'ok' || s.state === 'untried' || s.retryAt <= t);
    const waiting = all.filter((s) => !ready.includes(s));
    return [...ready, ...waiting];
  }

  private ordered(): Source[] {
    const order = this.read('core.llm.sources_order');
    const names = Array.isArray(order) ? order.filter((n): n is string => typeof n === 'string' && n !== '') : ['ollama'];
    const out: Source[] = [];
    for (const name of [...new Set(names)]) out.push(this.sourceOf(name));
    return out;
  }

  private sourceOf(name: string): Source {
    let s = this.sources.get(name);
    if (!s) {
      const p = `core.llm.sources.${name}`;
      s = {
        name,
        adapter: String(this.read(`${p}.adapter`) ?? ''),
        base_url: String(this.read(`${p}.base_url`) ?? ''),
        model: String(this.read(`${p}.model`) ?? ''),
        api_key: String(this.read(`${p}.api_key`) ?? ''),
        context_window: Number(this.read(`${p}.context_window`) ?? 0) || 0,
        state: 'untried',
        failures: 0,
        retryAt: 0,
      };
      this.sources.set(name, s);
    }
    return s;
  }

  private providerOf(s: Source): LuaAdaptedProvider {
    if (!s.provider) {
      let adapter;
      try {
        adapter = this.registry.get(s.adapter);
      } catch (err) {
        throw new ProviderError('ADAPTER_FAILED', `adapter ${s.adapter} of source ${s.name} does not load: ${errorMessage(err)}`, { cause: err, source: s.name });
      }
      const keepAlive = this.read('core.llm.keep_alive');
      s.provider = new LuaAdaptedProvider({
        name: s.name,
        adapter,
        baseUrl: s.base_url,
        model: s.model,
        apiKey: s.api_key,
        contextWindow: s.context_window,
        numCtx: this.num('core.llm.num_ctx', 8192),
        timeouts: {
          connectMs: this.num('core.llm.connect_timeout_ms', 5000),
          responseMs: this.num('core.llm.response_timeout_ms', 120000),
          idleMs: this.num('core.llm.idle_timeout_ms', 30000),
        },
        requestOptions: typeof keepAlive === 'string' && keepAlive ? { keep_alive: keepAlive } : {},
        log: this.log,
      });
    }
    return s.provider;
  }

  private allowedHosts(): Set<string> {
    const hosts = new Set<string>();
    for (const s of this.ordered()) {
      try {
        const u = new URL(s.base_url);
        hosts.add(u.hostname);
        hosts.add(u.host);
      } catch {
        // an invalid base_url allows nothing
      }
    }
    const extra = this.read('core.llm.http_allow_hosts');
    if (Array.isArray(extra)) for (const h of extra) if (typeof h === 'string') hosts.add(h);
    return hosts;
  }

  private onSettingChanged(key: string): void {
    const m = /^core\.llm\.sources\.([^.]+)\.(.+)$/.exec(key);
    if (m && (SOURCE_KEYS as readonly string[]).includes(m[2]!)) {
      if (this.sources.delete(m[1]!)) this.log.info({ source: m[1] }, `settings of LLM source ${m[1]} changed; it is usable again`);
      return;
    }
    // timeouts, keep_alive, order: rebuild providers, keep states
    for (const s of this.sources.values()) s.provider = undefined;
  }

  private read(key: string): unknown {
    try {
      return this.settings.get(key);
    } catch {
      const hit = this.settings.list(key).find((e) => e.key === key);
      return hit?.value;
    }
  }

  private num(key: string, dflt: number): number {
    const v = Number(this.read(key));
    return Number.isFinite(v) && this.read(key) !== undefined && this.read(key) !== null ? v : dflt;
  }
}
