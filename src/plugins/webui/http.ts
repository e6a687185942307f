/**
 * HTTP plumbing of the WebUI: typed API errors, JSON bodies with an early size
 * limit, cookies, the origin check of state-changing requests. No routes here
 * (api.ts) and no server (index.ts).
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { HomeAgentError } from '../../kernel/errors.js';
import { parseJson } from '../../kernel/json.js';

/** Largest request body the API reads (bytes); a larger one is refused with 413 before it is read. */
export const MAX_BODY_BYTES = 64 * 1024;

/** An API error: the HTTP status, a stable code and a message naming what was wrong. Sent as `{"error": message, "code": code}`. */
export class ApiError extends HomeAgentError {
  constructor(
    readonly status: number,
    code: string,
    message: string,
    /** Extra response headers (Retry-After, Allow). */
    readonly headers: Record<string, string> = {},
  ) {
    super(code, message);
  }
}

/** Send `body` as JSON with `status` (no caching). */
export function sendJson(res: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { 'content-type': 'application/json; charset=utf-8', 'cache-control': 'no-store', 'content-length': Buffer.byteLength(text), ...headers });
  res.end(text);
}

/** Send an error as `{"error","code"}`: an ApiError with its status, a HomeAgentError as 400, anything else as 500. */
export function sendError(res: ServerResponse, err: unknown): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (err instanceof ApiError) return sendJson(res, err.status, { error: err.message, code: err.code }, err.headers);
  if (err instanceof HomeAgentError) return sendJson(res, 400, { error: err.message, code: err.code });
  sendJson(res, 500, { error: err instanceof Error ? err.message : String(err), code: 'INTERNAL' });
}

/**
 * Read a JSON object body: 413 BODY_TOO_LARGE past MAX_BODY_BYTES (from
 * Content-Length before reading, or while reading), 415 NOT_JSON unless the
 * Content-Type is application/json, 400 BAD_JSON when it does not parse or is
 * not an object. An empty body is `{}`.
 */
export async function readJsonBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const declared = Number(req.headers['content-length'] ?? '0');
  if (declared > MAX_BODY_BYTES) throw new ApiError(413, 'BODY_TOO_LARGE', `request body of ${declared} bytes is over the limit of ${MAX_BODY_BYTES}`);
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const c of req as AsyncIterable<Buffer>) {
    size += c.length;
    if (size > MAX_BODY_BYTES) throw new ApiError(413, 'BODY_TOO_LARGE', `request body is over the limit of ${MAX_BODY_BYTES} bytes`);
    chunks.push(c);
  }
  if (size === 0) return {};
  const type = String(req.headers['content-type'] ?? '');
  if (!/^application\/json\b/i.test(type)) throw new ApiError(415, 'NOT_JSON', `request body must be JSON (Content-Type: application/json), got ${JSON.stringify(type || 'none')}`);
  let v: unknown;
  try {
    v = parseJson(Buffer.concat(chunks).toString('utf8'));
  } catch (err) {
    throw new ApiError(400, 'BAD_JSON', `request body is not valid JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!v || typeof v !== 'object' || Array.isArray(v)) throw new ApiError(400, 'BAD_JSON', 'request body must be a JSON object');
  return v as Record<string, unknown>;
}

/** Cookies of a request, by name (RFC 6265 `name=value; ...`). */
export function parseCookies(header: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of (header ?? '').split(';')) {
    const i = part.indexOf('=');
    if (i <= 0) continue;
    const name = part.slice(0, i).trim();
    const value = part.slice(i + 1).trim();
    if (name && !(name in out)) out[name] = value;
  }
  return out;
}

/**
 * The session cookie's name: `__Host-homeagent` over HTTPS (the prefix makes
 * browsers insist on Secure, Path=/ and no Domain), `homeagent_session` over
 * plain HTTP.
 */
export function cookieName(https: boolean): string {
  return https ? '__Host-homeagent' : 'homeagent_session';
}

/** Set-Cookie for a session token (HttpOnly, SameSite=Strict, Path=/, Secure over HTTPS); `maxAgeS` 0 clears it. */
export function sessionCookie(https: boolean, token: string, maxAgeS: number): string {
  return `${cookieName(https)}=${token}; Path=/; HttpOnly; SameSite=Strict; Max-Age=${maxAgeS}${https ? '; Secure' : ''}`;
}

/** Methods that change state: their requests must come from the WebUI's own origin. */
export function isStateChanging(method: string | undefined): boolean {
  return method !== 'GET' && method !== 'HEAD' && method !== 'OPTIONS';
}

/**
 * The origin check (issue 16: "every state-changing request checks the
 * origin"): a request carrying an `Origin` must name this server
 * (`<scheme>://<Host header>`), else 403 ORIGIN_REFUSED. A request with no
 * Origin is a script's (browsers always send it on POST, PUT, DELETE from
 * fetch and forms); `requireOrigin` refuses it too (requests authenticated by
 * the cookie, which only a browser sends on its own).
 */
export function checkOrigin(req: IncomingMessage, https: boolean, requireOrigin: boolean): void {
  const origin = req.headers.origin;
  const expected = `${https ? 'https' : 'http'}://${req.headers.host ?? ''}`;
  if (origin === undefined) {
    if (requireOrigin) throw new ApiError(403, 'ORIGIN_REFUSED', 'a state-changing request with the session cookie must carry an Origin header (scripts use Authorization: Bearer)');
    return;
  }
  if (origin.toLowerCase() !== expected.toLowerCase()) throw new ApiError(403, 'ORIGIN_REFUSED', `request from origin ${JSON.stringify(origin)} refused: only the WebUI's own pages (${expected}) may change anything`);
}

/** The bearer token of `Authorization: Bearer X`, if any. */
export function bearerToken(req: IncomingMessage): string | undefined {
  const m = /^Bearer\s+(\S+)\s*$/i.exec(String(req.headers.authorization ?? ''));
  return m?.[1];
}
