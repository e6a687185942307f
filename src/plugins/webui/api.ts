/**
 * The HTTP API under /api/v1 (issue 16 "A documented HTTP API"), described in
 * openapi.json beside this file; test/webui/api.test.ts checks both ways that
 * every route here is documented there and every documented route is served.
 * The page itself uses only this API. Routes are data (`apiRoutes`), matched
 * by `matchRoute`; the server (index.ts) authenticates and checks origins
 * before a handler runs.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { pluginApplying } from '../../config/plugin-restart.js';
import type { CommandHandler } from '../../kernel/commands.js';
import type { SettingDef, SettingsAPI } from '../../kernel/settings-types.js';
import { ConfigError, HomeAgentError } from '../../kernel/errors.js';
import type { TurnResult } from '../../kernel/turn-types.js';
import { ApiError, readJsonBody } from './http.js';
import type { AccessEntry, AuthStore, LoginLimiter, SessionRecord } from './auth.js';
import { deriveContext, type RunLog } from '../../kernel/run-log.js';
import { healthRoutes, type HealthBackend } from './health-api.js';
import { memoryRoutes, type MemoryBackend } from './memory-api.js';
import { memoryListRoutes } from './memory-lists-api.js';
import { maskTurn } from './turn-privacy.js';
import { charCount, visibleText } from '../../kernel/visible-text.js';

/** The path prefix of the API. */
export const API_PREFIX = '/api/v1';

/** Longest text one ask may carry (characters). */
export const MAX_ASK_CHARS = 4000;

/** A settings registry with its definitions (the ConfigRegistry). */
export type SettingsWithDefinitions = SettingsAPI & { definition(key: string): SettingDef | undefined };

/** One line of an ask's streamed reply (application/x-ndjson). */
export type AskLine =
  | { type: 'accepted'; input_id: string }
  | { type: 'delta'; round: number; text: string }
  | { type: 'tool'; name: string; arguments: Record<string, unknown>; result: string; is_error: boolean }
  | { type: 'output'; kind: string; content: string }
  | { type: 'done'; result: TurnResult };

/** What the routes need from the running WebUI. */
export interface ApiBackend {
  auth: AuthStore;
  limiter: LoginLimiter;
  settings: SettingsWithDefinitions;
  /** A maintenance command by name (status, devices, doctor: the same answers as the CLI), if one is served. */
  command(name: string): CommandHandler | undefined;
  https: boolean;
  version: string;
  /** Session lifetime (ms) for the cookie's Max-Age. */
  sessionTtlMs(): number;
  /** Revoke a session or link (AuthStore.revoke) and end what that session has open (its event streams). */
  revoke(id: string): AccessEntry;
  /** Ask as `session`'s person on the `webui` channel; `emit` gets each line; resolves with the turn's result. */
  ask(session: SessionRecord, text: string, emit: (line: AskLine) => void, signal: AbortSignal): Promise<TurnResult>;
  /** The stop button. */
  stop(): void;
  /**
   * Serve an event stream (server-sent events) on `res` until the client goes: `activity` (the turns, with a
   * backlog) or `devices` (device state and device list changes from MQTT, live only).
   */
  events(req: IncomingMessage, res: ServerResponse, session: SessionRecord, opts: { backlog: boolean; deltas: boolean; stream: EventStreamName }): void;
  /** The box's language (plugin.voice.language: `en` or `zh`), the page's when the browser's is neither. */
  language(): string;
  /** The run log (a past turn's events; what the model saw). */
  runLog(): RunLog | undefined;
  /** The OpenAPI document. */
  openapi(): unknown;
  /** Set or clear the session cookie on `res`. */
  setCookie(res: ServerResponse, token: string | null): void;
  /** The Health page's update spool (health-api.ts). */
  health: HealthBackend;
  /**
   * Make a pairing code (AuthStore.createPairingCode) and say it on the box's
   * speaker; `ok: false` with why when the box cannot speak (no speaker
   * channel), and then no code exists.
   */
  sayPairingCode(): Promise<{ ok: true; expires_in_s: number } | { ok: false; why: string }>;
  /** The Memory page's graph, last recall, edits and forgetting (memory-api.ts), documents and knowledge (memory-lists-api.ts). */
  memory: MemoryBackend;
}

/** The event streams GET /events serves. */
export const EVENT_STREAMS = ['activity', 'devices'] as const;
/** One of EVENT_STREAMS. */
export type EventStreamName = (typeof EVENT_STREAMS)[number];

/** What a handler gets. */
export interface ApiCall {
  req: IncomingMessage;
  res: ServerResponse;
  params: Record<string, string>;
  query: URLSearchParams;
  /** The caller's session (undefined only on routes with `auth: false`). */
  session?: SessionRecord;
  /** The client's address (rate limits). */
  address: string;
}

/** Marks a handler that wrote the response itself (a stream). */
export const STREAMED = Symbol('streamed');

/** One API route: `path` is the OpenAPI template under API_PREFIX (`/settings/{key}`). */
export interface Route {
  method: 'GET' | 'POST' | 'PUT' | 'DELETE';
  path: string;
  /** false: served without a session (health, sign-in, the API description). */
  auth: boolean;
  handle(call: ApiCall): Promise<unknown> | unknown;
}

/** The route matching `method` and `pathname` (under API_PREFIX), with its path parameters; `allowed` lists the methods of a path served with another method. */
export function matchRoute(routes: readonly Route[], method: string, pathname: string): { route: Route; params: Record<string, string> } | { allowed: string[] } | undefined {
  if (!pathname.startsWith(API_PREFIX + '/')) return undefined;
  const rest = pathname.slice(API_PREFIX.length);
  const allowed: string[] = [];
  for (const route of routes) {
    const params = matchPath(route.path, rest);
    if (!params) continue;
    if (route.method === method || (method === 'HEAD' && route.method === 'GET')) return { route, params };
    allowed.push(route.method);
  }
  return allowed.length ? { allowed } : undefined;
}

function matchPath(template: string, path: string): Record<string, string> | undefined {
  const t = template.split('/');
  const p = path.split('/');
  if (t.length !== p.length) return undefined;
  const params: Record<string, string> = {};
  for (let i = 0; i < t.length; i++) {
    const m = /^\{(\w+)\}$/.exec(t[i]!);
    if (m) {
      if (!p[i]) return undefined;
      try {
        params[m[1]!] = decodeURIComponent(p[i]!);
      } catch {
        return undefined;
      }
    } else if (t[i] !== p[i]) return undefined;
  }
  return params;
}

/** A setting as the API shows it: value and default masked for secrets, with its type, range, choices and whether it needs a restart. */
export interface SettingView {
  key: string;
  value: unknown;
  default: unknown;
  type: string;
  description: string;
  source: 'default' | 'stored' | 'env';
  restart: boolean;
  secret: boolean;
  enum?: readonly string[];
  min?: number;
  max?: number;
}

function settingView(s: SettingsWithDefinitions, row: ReturnType<SettingsAPI['list']>[number]): SettingView {
  const def = s.definition(row.key);
  const secret = row.type === 'secret';
  const mask = (v: unknown) => (secret ? (v ? '********' : '') : v);
  return {
    key: row.key,
    value: mask(row.value),
    default: mask(def?.default),
    type: row.type,
    description: row.description,
    source: row.source,
    restart: !!row.restart,
    secret,
    ...(def?.enum ? { enum: def.enum } : {}),
    ...(def?.min !== undefined ? { min: def.min } : {}),
    ...(def?.max !== undefined ? { max: def.max } : {}),
  };
}

function oneSetting(s: SettingsWithDefinitions, key: string): SettingView {
  const row = s.list(key).find((r) => r.key === key);
  if (!row) throw new ApiError(404, 'UNKNOWN_SETTING', `unknown setting ${JSON.stringify(key)} (not registered by the core or any plugin)`);
  return settingView(s, row);
}

/** A ConfigError (a value refused) as 400 CONFIG_INVALID; an unknown key as 404. */
function settingError(err: unknown): never {
  if (err instanceof ConfigError) {
    if (/unknown setting/.test(err.message)) throw new ApiError(404, 'UNKNOWN_SETTING', err.message);
    throw new ApiError(400, 'CONFIG_INVALID', err.message);
  }
  throw err;
}

function publicSession(s: SessionRecord): { id: string; kind: string; person?: string } {
  return { id: s.id, kind: s.kind, ...(s.person ? { person: s.person } : {}) };
}

async function runCommand(b: ApiBackend, name: string, signal?: AbortSignal, args: Record<string, unknown> = {}): Promise<unknown> {
  const h = b.command(name);
  if (!h) throw new ApiError(503, 'UNAVAILABLE', `${name} is not available on this box`);
  return h(args, { send: () => undefined, signal: signal ?? new AbortController().signal });
}

/** The API's routes (see module comment). */
export function apiRoutes(b: ApiBackend): Route[] {
  return [
    { method: 'GET', path: '/health', auth: false, handle: () => ({ ok: true, version: b.version, https: b.https, language: b.language(), push_to_talk: b.https ? 'available' : 'unavailable: the WebUI is served over plain HTTP (plugin.webui.https is false), and browsers give the microphone only to secure pages' }) },
    { method: 'GET', path: '/openapi.json', auth: false, handle: () => b.openapi() },
    {
      method: 'POST',
      path: '/auth/login',
      auth: false,
      handle: async ({ req, res, address }) => {
        const lim = b.limiter.attempt(address);
        if (!lim.ok) throw new ApiError(429, 'TOO_MANY_ATTEMPTS', `too many sign-in attempts from ${address}; try again in ${lim.retry_after_s} s`, { 'retry-after': String(lim.retry_after_s) });
        const body = await readJsonBody(req);
        const code = typeof body.code === 'string' ? body.code : undefined;
        if (code === undefined && (typeof body.token !== 'string' || !body.token)) throw new ApiError(400, 'BAD_ARGUMENT', 'missing "token" (the part of the link after #) or "code" (the pairing code the box said)');
        if (code !== undefined && !/^[\d\s-]{6,12}$/.test(code)) throw new ApiError(400, 'BAD_ARGUMENT', '"code" must be the six digits the box said');
        // A browser (it sends Origin) gets the cookie only; a script (no Origin) gets the token to send as a bearer.
        const browser = req.headers.origin !== undefined;
        const label = String(req.headers['user-agent'] ?? '');
        const opened = code !== undefined ? b.auth.redeemPairingCode(code, browser ? 'browser' : 'token', label) : b.auth.redeemLink(String(body.token), browser ? 'browser' : 'token', label);
        if (!opened && code !== undefined) throw new ApiError(401, 'CODE_INVALID', 'this pairing code is wrong, already used or expired; ask the box for a new one');
        if (!opened) throw new ApiError(401, 'LINK_INVALID', 'this link is unknown, already used or expired; make a new one on the box with `homeagent webui link`');
        if (browser) b.setCookie(res, opened.token);
        return { session: publicSession(opened.session), ...(browser ? {} : { token: opened.token }) };
      },
    },
    {
      method: 'POST',
      path: '/auth/pair',
      auth: false,
      handle: async ({ address }) => {
        // Asking counts as a sign-in attempt (the same per-address limit): nobody can keep the box talking.
        const lim = b.limiter.attempt(address);
        if (!lim.ok) throw new ApiError(429, 'TOO_MANY_ATTEMPTS', `too many sign-in attempts from ${address}; try again in ${lim.retry_after_s} s`, { 'retry-after': String(lim.retry_after_s) });
        const said = await b.sayPairingCode();
        if (!said.ok) throw new ApiError(409, 'NO_SPEAKER', said.why);
        return { said: true, expires_in_s: said.expires_in_s, digits: 6 };
      },
    },
    {
      method: 'POST',
      path: '/auth/logout',
      auth: true,
      handle: ({ res, session }) => {
        b.revoke(session!.id);
        b.setCookie(res, null);
        return { signed_out: session!.id };
      },
    },
    { method: 'GET', path: '/session', auth: true, handle: ({ session }) => ({ ...publicSession(session!), https: b.https, push_to_talk: b.https }) },
    { method: 'GET', path: '/sessions', auth: true, handle: ({ session }) => b.auth.list().map((e: AccessEntry) => ({ ...e, current: e.id === session!.id })) },
    {
      method: 'DELETE',
      path: '/sessions/{id}',
      auth: true,
      handle: ({ res, params, session }) => {
        let gone: AccessEntry;
        try {
          gone = b.revoke(params.id!);
        } catch (err) {
          if (err instanceof HomeAgentError && err.code === 'NOT_FOUND') throw new ApiError(404, 'NOT_FOUND', err.message);
          throw err;
        }
        if (gone.id === session!.id) b.setCookie(res, null);
        return { revoked: gone };
      },
    },
    { method: 'GET', path: '/status', auth: true, handle: ({ res }) => runCommand(b, 'status', abortOnClose(res)) },
    { method: 'GET', path: '/devices', auth: true, handle: ({ res }) => runCommand(b, 'devices', abortOnClose(res)) },
    { method: 'GET', path: '/doctor', auth: true, handle: ({ res }) => runCommand(b, 'doctor', abortOnClose(res)) },
    { method: 'GET', path: '/memory/stats', auth: true, handle: ({ res }) => runCommand(b, 'memory.stats', abortOnClose(res)) },
    {
      method: 'GET',
      path: '/memory/recall',
      auth: true,
      handle: ({ res, query }) => {
        const q = (query.get('q') ?? '').trim();
        if (!q) throw new ApiError(400, 'BAD_ARGUMENT', 'missing "q" (what to look for in the memory)');
        if (q.length > 500) throw new ApiError(400, 'BAD_ARGUMENT', `"q" is ${q.length} characters; at most 500`);
        return runCommand(b, 'memory.recall', abortOnClose(res), { query: q });
      },
    },
    { method: 'GET', path: '/settings', auth: true, handle: ({ query }) => b.settings.list(query.get('prefix') ?? '').map((r) => settingView(b.settings, r)) },
    { method: 'GET', path: '/settings/{key}', auth: true, handle: ({ params }) => oneSetting(b.settings, params.key!) },
    {
      method: 'PUT',
      path: '/settings/{key}',
      auth: true,
      handle: async ({ req, params }) => {
        const key = params.key!;
        oneSetting(b.settings, key);
        const body = await readJsonBody(req);
        const hasValue = 'value' in body;
        if (hasValue === (typeof body.raw === 'string')) throw new ApiError(400, 'BAD_ARGUMENT', 'send {"value": <JSON value>} or {"raw": "<text, parsed by the setting\'s type as the CLI does>"}');
        try {
          if (hasValue) b.settings.set(key, body.value);
          else if (b.settings.setFromString) b.settings.setFromString(key, body.raw as string);
          else throw new ApiError(400, 'BAD_ARGUMENT', 'this service takes {"value": ...} only');
        } catch (err) {
          settingError(err);
        }
        const view = oneSetting(b.settings, key);
        const plugin = pluginApplying(key);
        const notes = [view.restart ? `${key} is read when the service starts: it applies after a restart (sudo systemctl restart homeagent${plugin ? `, or the ${plugin} plugin's Restart button` : ''})` : '', view.source === 'env' ? 'overridden by an environment variable; the stored value applies only without it' : ''].filter(Boolean);
        return { ...view, ...(notes.length ? { note: notes.join('; ') } : {}) };
      },
    },
    {
      method: 'DELETE',
      path: '/settings/{key}',
      auth: true,
      handle: ({ params }) => {
        const key = params.key!;
        oneSetting(b.settings, key);
        try {
          b.settings.delete(key);
        } catch (err) {
          settingError(err);
        }
        return oneSetting(b.settings, key);
      },
    },
    {
      method: 'POST',
      path: '/conversation/ask',
      auth: true,
      handle: async ({ req, res, session }) => {
        const body = await readJsonBody(req);
        if (typeof body.text !== 'string' || !body.text.trim()) throw new ApiError(400, 'BAD_ARGUMENT', 'missing "text" (a non-empty string)');
        // Only what can be seen (visibleText), counted as a person counts (charCount).
        const text = visibleText(body.text);
        if (!text) throw new ApiError(400, 'BAD_ARGUMENT', '"text" has nothing visible in it (only control or zero-width characters)');
        if (charCount(text) > MAX_ASK_CHARS) throw new ApiError(400, 'BAD_ARGUMENT', `"text" is ${charCount(text)} characters; at most ${MAX_ASK_CHARS}`);
        res.writeHead(200, { 'content-type': 'application/x-ndjson; charset=utf-8', 'cache-control': 'no-store', 'x-accel-buffering': 'no' });
        res.flushHeaders();
        const controller = new AbortController();
        res.on('close', () => controller.abort());
        const emit = (line: AskLine) => {
          if (!res.destroyed && !res.writableEnded) res.write(JSON.stringify(line) + '\n');
        };
        try {
          const result = await b.ask(session!, text, emit, controller.signal);
          emit({ type: 'done', result });
        } catch (err) {
          emit({ type: 'done', result: { input_id: '', reply: '', status: 'error', tools: [], error: err instanceof Error ? err.message : String(err) } });
        }
        res.end();
        return STREAMED;
      },
    },
    {
      method: 'POST',
      path: '/conversation/stop',
      auth: true,
      handle: () => {
        b.stop();
        return { stopped: true };
      },
    },
    {
      method: 'GET',
      path: '/turns/{id}',
      auth: true,
      handle: ({ params, session }) => {
        const events = turnEvents(b, params.id!, session!);
        return { turn: params.id, events };
      },
    },
    {
      method: 'GET',
      path: '/turns/{id}/context',
      auth: true,
      handle: ({ params, query, session }) => {
        const round = Number(query.get('round') ?? '');
        if (!Number.isInteger(round) || round < 1) throw new ApiError(400, 'BAD_ARGUMENT', `"round" must be a whole number from 1 (the LLM round of the turn), got ${JSON.stringify(query.get('round'))}`);
        const messages = deriveContext(turnEvents(b, params.id!, session!), round);
        if (!messages) throw new ApiError(404, 'NOT_FOUND', `turn ${params.id} has no LLM round ${round} in the run log`);
        return { turn: params.id, round, messages };
      },
    },
    {
      method: 'GET',
      path: '/voice',
      auth: true,
      handle: () => {
        throw new ApiError(426, 'UPGRADE_REQUIRED', 'push-to-talk: open a WebSocket on this path (binary frames of 16 kHz mono signed 16-bit little-endian audio, then {"type":"end"})', { upgrade: 'websocket' });
      },
    },
    {
      method: 'GET',
      path: '/events',
      auth: true,
      handle: ({ req, res, query, session }) => {
        const stream = query.get('stream') ?? 'activity';
        if (!(EVENT_STREAMS as readonly string[]).includes(stream)) throw new ApiError(400, 'BAD_ARGUMENT', `"stream" must be one of ${EVENT_STREAMS.join(', ')}, got ${JSON.stringify(stream)}`);
        b.events(req, res, session!, { backlog: query.get('backlog') !== '0', deltas: query.get('deltas') === '1', stream: stream as EventStreamName });
        return STREAMED;
      },
    },
    // The Health page: plugins and their restart, the log tail, updates through the spool.
    ...healthRoutes(b, b.health),
    // The Memory page: the graph, the last turn's recall, edits and forgetting through the memory tools.
    ...memoryRoutes(b.memory),
    // The Memory page's lists: the documents (as recall shows them to the session's person) and the knowledge base.
    ...memoryListRoutes(b.memory),
  ];
}

/**
 * A turn's stored events as `session`'s person may read them (another
 * person's private turn masked as the prompt history masks it:
 * turn-privacy.ts); 404 NOT_FOUND when the run log has none.
 */
function turnEvents(b: ApiBackend, id: string, session: SessionRecord) {
  const log = b.runLog();
  if (!log) throw new ApiError(503, 'UNAVAILABLE', 'the run log is not available');
  const events = log.turn(id);
  if (events.length === 0) throw new ApiError(404, 'NOT_FOUND', `no turn ${JSON.stringify(id)} in the run log`);
  return maskTurn(events, session.person);
}

/** Aborted when the response closes (sent, or the client went away). */
function abortOnClose(res: ServerResponse): AbortSignal {
  const c = new AbortController();
  res.on('close', () => c.abort());
  return c.signal;
}
