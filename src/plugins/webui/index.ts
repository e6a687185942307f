/**
 * The WebUI plugin (issue 16): the service serves the household's browsers
 * on the LAN (`plugin.webui.port`, default 8080; `plugin.webui.bind`), over
 * HTTPS by default (tls.ts), from files in the package (assets.ts): the Talk
 * page (type, see the reply as the model writes it, stop), the Activity page
 * (every turn live from the turn event stream), the Devices page (device
 * states live from the home plugin's `plugin.home.state` events), the Memory
 * page (the graph, the last turn's recall, edits and forgetting through the
 * memory tools: memory-api.ts), Health, Settings and Access, and the HTTP API
 * under /api/v1 (api.ts, described in openapi.json) the pages use.
 *
 * Access (auth.ts): nobody gets in without a one-time link made on the box
 * (`homeagent webui link [--person NAME]`, the control-socket command
 * `webui.link`, which also prints the certificate's SHA-256 fingerprint);
 * sessions are listed and revoked with `webui.sessions` / `webui.revoke`
 * and on the page. Every state-changing request checks its Origin; sign-in
 * attempts are rate-limited per address.
 *
 * Everything shown comes from the typed bus: the turn events (src/kernel/
 * turn-events.ts) published under their names, `raw_input`, `stop` and the
 * plugins' events, streamed to the pages by activity-stream.ts (each page as
 * its session's person may read them; bounded memory: the Activity backlog
 * keeps the last ACTIVITY_BACKLOG events, never the per-token `llm.delta`,
 * and a page that stops reading is dropped once SLOW_CLIENT_BYTES wait).
 * Kernel-level: the page's Stop is the stop button.
 */
import http from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { readFileSync } from 'node:fs';
import type { Plugin, PluginSDK } from '../../kernel/sdk.js';
import type { CommandHandler } from '../../kernel/commands.js';
import type { EventMap, EventType } from '../../kernel/events.js';
import { TURN_EVENT_TYPES } from '../../kernel/turn-events.js';
import { Cap } from '../../kernel/output-types.js';
import type { RunLog } from '../../kernel/run-log.js';
import { systemClock, type Clock, type TimerHandle } from '../../kernel/clock.js';
import { HomeAgentError, errorMessage } from '../../kernel/errors.js';
import { WEBUI_SETTINGS } from './settings.js';
import { loadOrMakeCertificate, type WebCertificate } from './tls.js';
import { AuthStore, LoginLimiter, checkPersonName, type AccessEntry, type SessionRecord } from './auth.js';
import { API_PREFIX, STREAMED, apiRoutes, matchRoute, type ApiBackend, type AskLine, type Route, type SettingsWithDefinitions } from './api.js';
import type { GraphStore } from '../../memory/graph.js';
import type { DocStore } from '../../memory/documents.js';
import type { KnowledgeBase } from '../../knowledge/store.js';
import type { ToolRegistry } from '../../kernel/tool-registry.js';
import { ApiError, bearerToken, checkOrigin, cookieName, isStateChanging, parseCookies, sendError, sendJson, sessionCookie } from './http.js';
import { besideModule, inlineScriptHashes, loadAssets, type Asset } from './assets.js';
import { PushToTalk } from './voice.js';
import { EventStreams } from './activity-stream.js';
import { SPOOL_DIRNAME } from '../../service/update-spool.js';
import type { Duplex } from 'node:stream';

export { WEBUI_SETTINGS } from './settings.js';
export { ACTIVITY_BACKLOG, SLOW_CLIENT_BYTES } from './activity-stream.js';

/** Events the Activity page shows (live, and the last ACTIVITY_BACKLOG of them on connect); `llm.delta` only to pages that ask for it, never kept. */
export const ACTIVITY_EVENTS: readonly EventType[] = [
  'raw_input',
  ...TURN_EVENT_TYPES.filter((t) => t !== 'context.projected' && t !== 'llm.requested'),
  'stop',
  'assistant_state',
  'plugin.home.command',
  'plugin.timers.changed',
];

/** Events the Devices page gets live (GET /events?stream=devices): device state and device list changes from MQTT; never kept. */
export const DEVICE_EVENTS: readonly EventType[] = ['plugin.home.state', 'plugin.home.devices'];

/** Seconds between keep-alive comments on an idle event stream. */
const HEARTBEAT_MS = 25_000;
/** How long a pairing code said aloud signs a browser in (ms): long enough to type six digits, short enough that an overheard one is stale. */
export const PAIRING_CODE_TTL_MS = 120_000;

/** Options of the WebUI plugin. */
export interface WebUIOptions {
  /** The settings registry (its definitions give the settings API types, ranges and choices). */
  settings: SettingsWithDefinitions;
  /**
   * A maintenance command by name (`status`, `devices`, `doctor`, and the voice plugin's `listen` for
   * push-to-talk): the API answers what the CLI answers.
   */
  command(name: string): CommandHandler | undefined;
  /** The release (health). */
  version: string;
  /** The kernel's run log: a past turn's events and what the model saw in each round. */
  runLog?: () => RunLog;
  /** Clock of sessions, links and rate limits (tests: FakeClock). */
  clock?: Clock;
  /** The memory's graph store (the Memory page's graph), when the memory runs. */
  memoryGraph?: () => GraphStore | undefined;
  /** The kernel's tool registry: the Memory page's edits and forgetting run the model's memory tools. */
  tools?: () => ToolRegistry | undefined;
  /** The memory's documents (the Memory page's list), when the memory runs. */
  memoryDocuments?: () => DocStore | undefined;
  /** The knowledge base (the Memory page's list), when the memory runs. */
  knowledge?: () => KnowledgeBase | undefined;
}

/** A `webui link` answer. */
export interface LinkAnswer {
  /** The link to open (on the box's LAN address). */
  url: string;
  /** The same link on the box's other names and addresses. */
  other_urls: string[];
  /** SHA-256 fingerprint of the certificate the page is served with (absent over plain HTTP). */
  fingerprint_sha256?: string;
  expires_at: number;
  person?: string;
  https: boolean;
  note?: string;
}

/**
 * A handler another built-in plugin mounts on the WebUI's server (`mount`,
 * e.g. the MCP server at /mcp): it gets each request under its path that
 * carries a valid bearer token, with the session the token belongs to.
 */
export type MountedHandler = (req: http.IncomingMessage, res: http.ServerResponse, session: SessionRecord) => Promise<void>;

/** See module comment. */
export class WebUIPlugin implements Plugin {
  readonly name = 'webui';
  readonly kernelLevel = true;
  private server?: http.Server;
  private cert?: WebCertificate;
  private auth?: AuthStore;
  private sdk?: PluginSDK;
  private useHttps = true;
  private routes: Route[] = [];
  private assets = new Map<string, Asset>();
  private csp = '';
  private openapiDoc: unknown;
  private readonly clock: Clock;
  private readonly streams: EventStreams;
  private heartbeat?: TimerHandle;
  private ptt?: PushToTalk;
  /** Open asks by input id: where their streamed lines go. */
  private readonly asks = new Map<string, (line: AskLine) => void>();
  /** Paths other plugins serve on this server (mount), kept across restarts of the WebUI. */
  private readonly mounts = new Map<string, MountedHandler>();

  constructor(private readonly opts: WebUIOptions) {
    this.clock = opts.clock ?? systemClock;
    this.streams = new EventStreams(() => this.clock.now());
  }

  /** The port the WebUI listens on (after start), or undefined when it is off. */
  get port(): number | undefined {
    return (this.server?.address() as AddressInfo | null)?.port;
  }

  /** Where the WebUI is, for `homeagent status`: its port and scheme; `{ running: false }` while it is off. */
  describe(): { running: true; port: number; https: boolean } | { running: false } {
    const port = this.port;
    return port === undefined ? { running: false } : { running: true, port, https: this.useHttps };
  }

  /** The certificate served (HTTPS), for the tests and `webui link`. */
  get certificate(): WebCertificate | undefined {
    return this.cert;
  }

  async start(sdk: PluginSDK): Promise<void> {
    this.sdk = sdk;
    const s = sdk.settings();
    for (const d of WEBUI_SETTINGS) s.register(d);
    const off = () => {
      throw new HomeAgentError('WEBUI_OFF', 'the WebUI is off (plugin.webui.enabled is false; homeagent config set plugin.webui.enabled true, then restart)');
    };
    if (!s.get<boolean>('plugin.webui.enabled')) {
      for (const c of ['webui.link', 'webui.sessions', 'webui.revoke']) sdk.registerCommand(c, off);
      sdk.log.info('WebUI off (plugin.webui.enabled)');
      return;
    }
    this.useHttps = s.get<boolean>('plugin.webui.https');
    const dir = path.join(sdk.dataDir, 'webui');
    if (this.useHttps) {
      this.cert = await loadOrMakeCertificate(dir, { certFile: s.get<string>('plugin.webui.cert_file'), keyFile: s.get<string>('plugin.webui.key_file') });
      if (this.cert.renewed) sdk.log.warn({ reason: this.cert.renewed, fingerprint_sha256: this.cert.fingerprint256 }, 'WebUI certificate made again: browsers warn once more; compare the new fingerprint (homeagent webui link prints it)');
    }
    const ttl = () => s.get<number>('plugin.webui.session_days') * 24 * 3600 * 1000;
    const auth = (this.auth = new AuthStore(dir, this.clock, ttl, sdk.dataDir));
    const limiter = new LoginLimiter(this.clock, () => s.get<number>('plugin.webui.login_attempts_per_minute'));
    this.assets = loadAssets();
    this.openapiDoc = JSON.parse(readFileSync(path.join(besideModule('openapi.json')), 'utf8')) as unknown;
    const hashes = inlineScriptHashes(this.assets.get('/')!.body.toString('utf8'));
    this.csp = `default-src 'self'; script-src 'self' ${hashes.join(' ')}; style-src 'self'; img-src 'self' data:; connect-src 'self'; media-src 'self' blob:; frame-ancestors 'none'; base-uri 'none'; form-action 'self'`;

    const backend: ApiBackend = {
      auth,
      limiter,
      settings: this.opts.settings,
      command: (name) => this.opts.command(name),
      https: this.useHttps,
      version: this.opts.version,
      sessionTtlMs: ttl,
      ask: (session, text, emit, signal) => {
        let id: string | undefined;
        return sdk
          .injectInput('webui', text, {
            ...(session.person ? { user: session.person } : {}),
            meta: { webui_session: session.id, ...(session.person ? { person: session.person } : {}) },
            signal,
            onAccepted: (inputId) => {
              id = inputId;
              this.asks.set(inputId, emit);
              emit({ type: 'accepted', input_id: inputId });
            },
          })
          .finally(() => {
            if (id !== undefined) this.asks.delete(id);
          });
      },
      stop: () => sdk.stop('webui'),
      revoke: (id) => this.revoke(id),
      events: (req, res, session, o) => this.streams.open(req, res, { ...o, session: session.id, person: session.person }),
      openapi: () => this.openapiDoc,
      runLog: () => this.opts.runLog?.(),
      language: () => {
        try {
          return s.get<string>('plugin.voice.language') === 'zh' ? 'zh' : 'en';
        } catch {
          return 'en'; // the voice settings are not registered (the voice plugin did not start)
        }
      },
      setCookie: (res, token) => res.setHeader('set-cookie', sessionCookie(this.useHttps, token ?? '', token ? Math.floor(ttl() / 1000) : 0)),
      health: { spoolDir: path.join(sdk.dataDir, SPOOL_DIRNAME), updateMaxBytes: () => s.get<number>('plugin.webui.update_max_mb') * 1024 * 1024 },
      sayPairingCode: async () => {
        if (!sdk.outputChannel('speaker')) return { ok: false, why: 'the box has no speaker to say a pairing code (the voice plugin is not running); make a link on the box with `homeagent webui link`' };
        const ttlMs = PAIRING_CODE_TTL_MS;
        const { code, link_id } = auth.createPairingCode(ttlMs);
        const digits = code.split('').join(' ');
        const zh = backend.language() === 'zh';
        try {
          await sdk.sendOutput('speaker', zh ? `网页配对码：${digits}。再说一遍：${digits}。` : `The WebUI pairing code is ${digits}. Again: ${digits}.`, { pairing: true });
        } catch (err) {
          auth.revoke(link_id);
          return { ok: false, why: `the box could not say the pairing code: ${err instanceof Error ? err.message : String(err)}` };
        }
        sdk.log.info({ link: link_id }, 'WebUI pairing code said aloud');
        return { ok: true, expires_in_s: Math.round(ttlMs / 1000) };
      },
      memory: {
        graph: () => this.opts.memoryGraph?.(),
        tools: () => this.opts.tools?.(),
        runLog: () => this.opts.runLog?.(),
        documents: () => this.opts.memoryDocuments?.(),
        knowledge: () => this.opts.knowledge?.(),
        now: () => this.clock.now(),
      },
    };
    this.routes = apiRoutes(backend);

    // The Talk page's channel: each reply to the caller whose input it answers.
    sdk.registerOutputChannel(
      'webui',
      Cap.Text | Cap.Stream,
      'the WebUI Talk page (a browser on the LAN)',
      (m) => {
        const line: AskLine = { type: 'output', kind: m.kind, content: m.content };
        const own = m.input_id !== undefined ? this.asks.get(m.input_id) : undefined;
        if (own) own(line);
        else for (const emit of this.asks.values()) emit(line);
      },
      { perRequest: true },
    );
    for (const type of ACTIVITY_EVENTS) sdk.subscribe(type, (payload) => this.onEvent(type, payload));
    for (const type of DEVICE_EVENTS) sdk.subscribe(type, (payload) => this.streams.device(type, payload));

    sdk.registerCommand('webui.link', (args) => this.link(typeof args.person === 'string' ? args.person : undefined));
    sdk.registerCommand('webui.sessions', () => auth.list());
    sdk.registerCommand('webui.revoke', (args) => {
      if (typeof args.id !== 'string' || !args.id) throw new HomeAgentError('BAD_ARGUMENT', 'missing "id" (homeagent webui sessions lists them)');
      return { revoked: this.revoke(args.id) };
    });

    const handler = (req: http.IncomingMessage, res: http.ServerResponse) => void this.onRequest(req, res);
    this.server = this.useHttps ? https.createServer({ cert: this.cert!.cert, key: this.cert!.key }, handler) : http.createServer(handler);
    this.ptt = new PushToTalk(() => this.opts.command('listen'), sdk.log);
    this.server.on('upgrade', (req: http.IncomingMessage, socket: Duplex, head: Buffer) => this.onUpgrade(req, socket, head));
    const port = s.get<number>('plugin.webui.port');
    const bind = s.get<string>('plugin.webui.bind');
    await new Promise<void>((resolve, reject) => {
      this.server!.once('error', (err: NodeJS.ErrnoException) =>
        reject(err.code === 'EADDRINUSE' ? new HomeAgentError('WEBUI_PORT_IN_USE', `the WebUI's port ${port} is in use by another program; choose another with homeagent config set plugin.webui.port N`) : err.code === 'EADDRNOTAVAIL' ? new HomeAgentError('WEBUI_BIND', `plugin.webui.bind ${JSON.stringify(bind)} is not an address of this box`) : err),
      );
      this.server!.listen({ port, ...(bind ? { host: bind } : {}) }, () => resolve());
    });
    this.server.on('error', (err) => sdk.log.error({ err: errorMessage(err) }, 'WebUI server error'));
    this.armHeartbeat();
    sdk.log.info(
      { port: this.port, https: this.useHttps, ...(this.cert ? { fingerprint_sha256: this.cert.fingerprint256, self_signed: this.cert.selfSigned } : {}) },
      this.useHttps ? `WebUI on https://${os.hostname()}.local:${this.port}/ — open it with a link from \`homeagent webui link\`` : `WebUI on plain http://${os.hostname()}.local:${this.port}/ (plugin.webui.https is false: push-to-talk is unavailable) — open it with a link from \`homeagent webui link\``,
    );
  }

  async stop(): Promise<void> {
    this.clock.clearTimeout(this.heartbeat);
    this.heartbeat = undefined;
    this.streams.close();
    this.asks.clear();
    this.ptt?.close();
    this.ptt = undefined;
    const server = this.server;
    this.server = undefined;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  /** Make a one-time link (see LinkAnswer). Throws HomeAgentError BAD_ARGUMENT for a bad person name. */
  link(person?: string): LinkAnswer {
    const s = this.sdk!.settings();
    if (person !== undefined) person = checkPersonName(person);
    const l = this.auth!.createLink(s.get<number>('plugin.webui.link_ttl_s') * 1000, person);
    const scheme = this.useHttps ? 'https' : 'http';
    const hosts = linkHosts(s.get<string>('plugin.webui.bind'));
    const urls = hosts.map((h) => `${scheme}://${h}:${this.port}/login#${l.token}`);
    return {
      url: urls[0]!,
      other_urls: urls.slice(1),
      ...(this.cert ? { fingerprint_sha256: this.cert.fingerprint256 } : {}),
      expires_at: l.expires_at,
      ...(l.person ? { person: l.person } : {}),
      https: this.useHttps,
      ...(this.useHttps ? {} : { note: 'served over plain HTTP (plugin.webui.https is false): push-to-talk is unavailable, and the link and the session travel unencrypted on the LAN' }),
    };
  }

  /** Whether the WebUI's server is listening (a plugin that mounts a path needs it). */
  get running(): boolean {
    return this.server !== undefined;
  }

  /**
   * Serve `path` (e.g. "/mcp": that path and below it) on the WebUI's server
   * for another built-in plugin. Only a request with `Authorization: Bearer
   * <token>` of an open session (a script's token from a `homeagent webui
   * link`, see auth.ts) reaches `handler`; any other gets 401 UNAUTHENTICATED
   * with `WWW-Authenticate: Bearer`. A browser's cookie alone is not enough
   * (another site's page could make the browser send it). Returns the
   * function that takes the path back. Throws HomeAgentError BAD_ARGUMENT
   * for a path under /api or one already mounted.
   */
  mount(mountPath: string, handler: MountedHandler): () => void {
    if (!/^\/[a-z0-9][a-z0-9_-]*$/.test(mountPath) || mountPath === '/api') throw new HomeAgentError('BAD_ARGUMENT', `cannot mount ${JSON.stringify(mountPath)}: one path segment of lowercase letters, digits, _ or -, not /api`);
    if (this.mounts.has(mountPath)) throw new HomeAgentError('BAD_ARGUMENT', `${mountPath} is already mounted on the WebUI`);
    this.mounts.set(mountPath, handler);
    return () => {
      if (this.mounts.get(mountPath) === handler) this.mounts.delete(mountPath);
    };
  }

  /** A mounted path's request: the bearer token's session, then its handler. */
  private async serveMounted(req: http.IncomingMessage, res: http.ServerResponse, mountPath: string, handler: MountedHandler): Promise<void> {
    const bearer = bearerToken(req);
    const session = this.auth!.authenticate(bearer);
    if (!session) {
      throw new ApiError(401, 'UNAUTHENTICATED', bearer ? 'this bearer token is unknown, revoked or expired' : `${mountPath} needs "Authorization: Bearer <token>": make a link with \`homeagent webui link\` and send its token (after #) in POST ${API_PREFIX}/auth/login {"token": ...} from a script to get a bearer token`, {
        'www-authenticate': 'Bearer realm="homeagent"',
      });
    }
    await handler(req, res, session);
  }

  /** The API routes served (the OpenAPI test compares them with openapi.json). */
  apiRoutes(): ReadonlyArray<Pick<Route, 'method' | 'path' | 'auth'>> {
    return this.routes.map((r) => ({ method: r.method, path: r.path, auth: r.auth }));
  }

  private async onRequest(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    res.setHeader('x-content-type-options', 'nosniff');
    res.setHeader('referrer-policy', 'no-referrer');
    res.setHeader('x-frame-options', 'DENY');
    try {
      const url = new URL(req.url ?? '/', 'http://localhost');
      if (url.pathname === '/api' || url.pathname.startsWith('/api/')) return await this.api(req, res, url);
      const mountPath = `/${url.pathname.split('/')[1] ?? ''}`;
      const mounted = this.mounts.get(mountPath);
      if (mounted) return await this.serveMounted(req, res, mountPath, mounted);
      this.serveAsset(req, res, url.pathname);
    } catch (err) {
      sendError(res, err);
    }
  }

  private async api(req: http.IncomingMessage, res: http.ServerResponse, url: URL): Promise<void> {
    const m = matchRoute(this.routes, req.method ?? 'GET', url.pathname);
    if (!m) throw new ApiError(404, 'NO_ROUTE', `no API route ${url.pathname} (the routes are described in ${API_PREFIX}/openapi.json)`);
    if ('allowed' in m) throw new ApiError(405, 'METHOD_NOT_ALLOWED', `${req.method} is not served on ${url.pathname}; use ${m.allowed.join(' or ')}`, { allow: m.allowed.join(', ') });
    const bearer = bearerToken(req);
    const cookie = parseCookies(req.headers.cookie)[cookieName(this.useHttps)];
    const session = this.auth!.authenticate(bearer ?? cookie);
    if (m.route.auth && !session) {
      throw new ApiError(401, 'UNAUTHENTICATED', bearer ? 'this bearer token is unknown, revoked or expired' : 'not signed in: open a link made on the box with `homeagent webui link`');
    }
    if (isStateChanging(req.method)) checkOrigin(req, this.useHttps, m.route.auth && !bearer);
    const result = await m.route.handle({ req, res, params: m.params, query: url.searchParams, ...(session ? { session } : {}), address: req.socket.remoteAddress ?? 'unknown' });
    if (result !== STREAMED) sendJson(res, 200, result ?? null);
  }

  /**
   * A WebSocket upgrade: only push-to-talk (`/api/v1/voice`), only with a
   * session (cookie or bearer) and from the WebUI's own origin (browsers
   * always send Origin on a WebSocket; a cookie without it is refused).
   */
  private onUpgrade(req: http.IncomingMessage, socket: Duplex, head: Buffer): void {
    const refuse = (status: number, reason: string, message: string) => {
      socket.end(`HTTP/1.1 ${status} ${reason}\r\nConnection: close\r\nContent-Type: application/json\r\n\r\n${JSON.stringify({ error: message })}`);
    };
    socket.on('error', () => undefined);
    const url = new URL(req.url ?? '/', 'http://localhost');
    if (url.pathname !== `${API_PREFIX}/voice` || !this.ptt) return refuse(404, 'Not Found', `no WebSocket on ${url.pathname}; push-to-talk is ${API_PREFIX}/voice`);
    const bearer = bearerToken(req);
    const session = this.auth!.authenticate(bearer ?? parseCookies(req.headers.cookie)[cookieName(this.useHttps)]);
    if (!session) return refuse(401, 'Unauthorized', 'not signed in: open a link made on the box with `homeagent webui link`');
    try {
      checkOrigin(req, this.useHttps, !bearer);
    } catch (err) {
      return refuse(403, 'Forbidden', errorMessage(err));
    }
    this.ptt.accept(req, socket, head, session);
  }

  private serveAsset(req: http.IncomingMessage, res: http.ServerResponse, pathname: string): void {
    if (req.method !== 'GET' && req.method !== 'HEAD') throw new ApiError(405, 'METHOD_NOT_ALLOWED', `${req.method} is not served on ${pathname}`, { allow: 'GET, HEAD' });
    const a = this.assets.get(pathname);
    if (!a) {
      res.writeHead(404, { 'content-type': 'text/plain; charset=utf-8' });
      res.end(`Not found: ${pathname}\n`);
      return;
    }
    const headers: Record<string, string> = { 'content-type': a.type, etag: a.etag, 'cache-control': 'no-cache', vary: 'accept-encoding' };
    if (a.type.startsWith('text/html')) headers['content-security-policy'] = this.csp;
    if (req.headers['if-none-match'] === a.etag) {
      res.writeHead(304, headers);
      res.end();
      return;
    }
    const gz = /\bgzip\b/.test(String(req.headers['accept-encoding'] ?? ''));
    const body = gz ? a.gzip : a.body;
    res.writeHead(200, { ...headers, 'content-length': String(body.length), ...(gz ? { 'content-encoding': 'gzip' } : {}) });
    res.end(req.method === 'HEAD' ? undefined : body);
  }

  /** A bus event: to the ask it belongs to (the Talk page), and to the Activity streams. */
  private onEvent<K extends EventType>(type: K, payload: EventMap[K]): void {
    const p = payload as Record<string, unknown>;
    if (type === 'llm.delta' || type === 'tool.executed') {
      const emit = typeof p.turn === 'string' ? this.asks.get(p.turn) : undefined;
      if (emit && type === 'llm.delta' && p.kind === 'content') emit({ type: 'delta', round: p.round as number, text: p.text as string });
      if (emit && type === 'tool.executed') emit({ type: 'tool', name: p.name as string, arguments: p.arguments as Record<string, unknown>, result: p.result as string, is_error: p.is_error as boolean });
    }
    this.streams.activity(type, payload);
  }

  /** Revoke session or link `id` (HomeAgentError NOT_FOUND when there is none) and end the event streams it opened. */
  private revoke(id: string): AccessEntry {
    const gone = this.auth!.revoke(id);
    this.streams.endSession(id);
    return gone;
  }

  /** Open activity streams (tests: a page that stopped reading is dropped). */
  get eventClients(): number {
    return this.streams.size;
  }

  /** Activity events kept for a page that opens later (at most ACTIVITY_BACKLOG; the WebUI bench prints it). */
  get activityBacklog(): number {
    return this.streams.backlogSize;
  }

  private armHeartbeat(): void {
    this.heartbeat = this.clock.setTimeout(() => {
      this.streams.keepAlive();
      this.armHeartbeat();
    }, HEARTBEAT_MS);
  }
}

/**
 * Host names for a link, best first: the bind address when it is one; else
 * the box's LAN IPv4 addresses, then `<hostname>.local` (mDNS, which some
 * phones do not resolve), then its IPv6 addresses.
 */
export function linkHosts(bind: string): string[] {
  const fmt = (a: string) => (a.includes(':') ? `[${a}]` : a);
  if (bind && bind !== '0.0.0.0' && bind !== '::') return [fmt(bind)];
  const v4: string[] = [];
  const v6: string[] = [];
  for (const list of Object.values(os.networkInterfaces())) {
    for (const a of list ?? []) {
      if (a.internal) continue;
      if (a.family === 'IPv4') v4.push(a.address);
      else if (!a.address.toLowerCase().startsWith('fe80')) v6.push(fmt(a.address));
    }
  }
  const host = os.hostname().toLowerCase();
  const hosts = [...v4, host.includes('.') ? host : `${host}.local`, ...v6];
  return hosts.length ? hosts : ['localhost'];
}

export type { AccessEntry };
