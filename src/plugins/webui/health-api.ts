/**
 * The Health page's API routes (issue 16, page 6): plugins with their state
 * and a restart, the log tail, and updates through the update spool.
 *
 * - `GET /plugins`, `POST /plugins/{name}/restart`: the same commands as
 *   `homeagent plugins` and `homeagent plugins restart NAME` (src/service/app.ts;
 *   a restart happens between turns).
 * - `GET /logs`: the last warnings and errors (src/kernel/log.ts recentProblems,
 *   what `homeagent status` shows); the page polls it.
 * - Updates: the service cannot install a release (/opt is read-only to it).
 *   `PUT /update/bundle` streams the upload into `<data dir>/update-spool/`
 *   (refused with 413 before a byte is read when its Content-Length is over
 *   `plugin.webui.update_max_mb`), `POST /update/install` and
 *   `POST /update/rollback` write request.json there, and the root helper
 *   (systemd/homeagent-update.path → homeagent-update.service →
 *   src/service/update-spool.ts) verifies and installs it, writing
 *   status.json, which `GET /update` reads back.
 */
import { createHash, randomUUID } from 'node:crypto';
import { createWriteStream, existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import path from 'node:path';
import { recentProblems } from '../../kernel/log.js';
import { HomeAgentError } from '../../kernel/errors.js';
import { SPOOL_FORMAT, readSpoolJson, spoolPaths, writeJsonAtomic, type SpoolBundle, type SpoolRequest, type SpoolStatus } from '../../service/update-spool.js';
import { ApiError } from './http.js';
import type { ApiBackend, Route } from './api.js';

/** What the Health routes need beyond the rest of the API. */
export interface HealthBackend {
  /** The update spool folder (`<data dir>/update-spool`; the .path unit watches /var/lib/homeagent/update-spool). */
  spoolDir: string;
  /** Largest bundle accepted, bytes (plugin.webui.update_max_mb). */
  updateMaxBytes(): number;
}

/** What `GET /update` answers. */
export interface UpdateView {
  /** The bundle waiting in the spool, if any. */
  bundle: SpoolBundle | null;
  /** A request the helper has not picked up yet. */
  request: SpoolRequest | null;
  /** The helper's last report. */
  status: SpoolStatus | null;
  max_bytes: number;
}

const GZIP_MAGIC = [0x1f, 0x8b];
/** A running status not updated for this long is from a helper that was killed (ms; > TimeoutStartSec= of homeagent-update.service). */
const HELPER_SILENT_MS = 31 * 60 * 1000;

function busy(dir: string): string | undefined {
  const p = spoolPaths(dir);
  if (existsSync(p.request)) return 'an install or roll-back is already requested and waits for the update helper';
  const st = readSpoolJson<SpoolStatus>(p.status);
  // A helper that stopped reporting for longer than its unit's TimeoutStartSec= (30 min) was killed: not busy any more.
  if (st?.state === 'running' && Date.now() - st.updated_at < HELPER_SILENT_MS) return `the update helper is still at work (${st.action}: ${st.step})`;
  return undefined;
}

function request(dir: string, action: SpoolRequest['action'], sha256?: string): SpoolRequest {
  const why = busy(dir);
  if (why) throw new ApiError(409, 'UPDATE_BUSY', why);
  const req: SpoolRequest = { version: SPOOL_FORMAT, id: randomUUID(), action, ...(sha256 ? { sha256 } : {}), requested_at: Date.now() };
  mkdirSync(dir, { recursive: true, mode: 0o750 });
  writeJsonAtomic(spoolPaths(dir).request, req, 0o640);
  return req;
}

/** The Health routes (see module comment); `b` for the commands, `h` for the spool. */
export function healthRoutes(b: Pick<ApiBackend, 'command'>, h: HealthBackend): Route[] {
  const run = async (name: string, args: Record<string, unknown> = {}) => {
    const c = b.command(name);
    if (!c) throw new ApiError(503, 'UNAVAILABLE', `${name} is not available on this box`);
    try {
      return await c(args, { send: () => undefined, signal: new AbortController().signal });
    } catch (err) {
      if (err instanceof HomeAgentError && err.code === 'PLUGIN_UNKNOWN') throw new ApiError(404, err.code, err.message);
      throw err;
    }
  };
  return [
    { method: 'GET', path: '/plugins', auth: true, handle: () => run('plugins') },
    { method: 'GET', path: '/timers', auth: true, handle: () => run('timers') },
    { method: 'GET', path: '/lists', auth: true, handle: () => run('lists') },
    {
      method: 'POST',
      path: '/plugins/{name}/restart',
      auth: true,
      handle: ({ params }) => {
        if (params.name === 'webui') throw new ApiError(409, 'CANNOT_RESTART_SELF', 'the WebUI cannot restart itself from its own page (this page would lose its connection); on the box: homeagent plugins restart webui');
        return run('plugins.restart', { name: params.name });
      },
    },
    {
      method: 'GET',
      path: '/logs',
      auth: true,
      handle: ({ query }) => {
        const since = query.get('since') ?? '';
        return { problems: recentProblems().filter((p) => !since || p.time > since) };
      },
    },
    {
      method: 'GET',
      path: '/update',
      auth: true,
      handle: (): UpdateView => {
        const p = spoolPaths(h.spoolDir);
        return { bundle: readSpoolJson<SpoolBundle>(p.bundleInfo) ?? null, request: readSpoolJson<SpoolRequest>(p.request) ?? null, status: readSpoolJson<SpoolStatus>(p.status) ?? null, max_bytes: h.updateMaxBytes() };
      },
    },
    {
      method: 'PUT',
      path: '/update/bundle',
      auth: true,
      handle: async ({ req, query }) => {
        const max = h.updateMaxBytes();
        const close = { connection: 'close' };
        const lengthHeader = req.headers['content-length'];
        if (lengthHeader === undefined) throw new ApiError(411, 'LENGTH_REQUIRED', 'send the bundle with a Content-Length', close);
        const declared = Number(lengthHeader);
        if (declared > max) throw new ApiError(413, 'BODY_TOO_LARGE', `the bundle is ${declared} bytes, over the limit of ${max} (plugin.webui.update_max_mb)`, close);
        if (!(declared > 0)) throw new ApiError(400, 'NOT_A_BUNDLE', 'the upload is empty; send a release bundle (homeagent-<version>.tar.gz)', close);
        const why = busy(h.spoolDir);
        if (why) throw new ApiError(409, 'UPDATE_BUSY', why, close);
        const name = (query.get('name') ?? 'bundle.tar.gz').replace(/[^\w.+-]/g, '_').slice(0, 120);
        const p = spoolPaths(h.spoolDir);
        mkdirSync(p.dir, { recursive: true, mode: 0o750 });
        const part = path.join(p.dir, `upload-${randomUUID()}.part`);
        const out = createWriteStream(part, { flags: 'wx', mode: 0o640 });
        const hash = createHash('sha256');
        let size = 0;
        try {
          for await (const c of req as AsyncIterable<Buffer>) {
            if (size === 0 && (c[0] !== GZIP_MAGIC[0] || (c.length > 1 && c[1] !== GZIP_MAGIC[1]))) throw new ApiError(400, 'NOT_A_BUNDLE', 'this is not a release bundle (a .tar.gz made by npm run bundle): it does not start as gzip data', close);
            size += c.length;
            if (size > max) throw new ApiError(413, 'BODY_TOO_LARGE', `the bundle is over the limit of ${max} bytes (plugin.webui.update_max_mb)`, close);
            hash.update(c);
            if (!out.write(c)) await new Promise<void>((r) => out.once('drain', () => r()));
          }
          await new Promise<void>((resolve, reject) => out.end((err?: Error | null) => (err ? reject(err) : resolve())));
          if (size !== declared) throw new ApiError(400, 'UPLOAD_INCOMPLETE', `the upload ended after ${size} of ${declared} bytes`, close);
        } catch (err) {
          // The file may still be opening (the stream opens it in the background): removed once the stream has closed,
          // or a refusal at the first bytes would leave an empty .part behind.
          await new Promise<void>((resolve) => {
            if (out.closed) return resolve();
            out.once('close', () => resolve());
            out.destroy();
          });
          rmSync(part, { force: true });
          throw err;
        }
        rmSync(p.bundleInfo, { force: true });
        renameSync(part, p.bundle);
        const info: SpoolBundle = { version: SPOOL_FORMAT, name, size, sha256: hash.digest('hex'), uploaded_at: Date.now() };
        writeJsonAtomic(p.bundleInfo, info, 0o640);
        return info;
      },
    },
    {
      method: 'DELETE',
      path: '/update/bundle',
      auth: true,
      handle: () => {
        const why = busy(h.spoolDir);
        if (why) throw new ApiError(409, 'UPDATE_BUSY', why);
        const p = spoolPaths(h.spoolDir);
        const had = existsSync(p.bundle);
        for (const f of [p.bundle, p.bundleInfo]) rmSync(f, { force: true });
        return { removed: had };
      },
    },
    {
      method: 'POST',
      path: '/update/install',
      auth: true,
      handle: () => {
        const p = spoolPaths(h.spoolDir);
        const info = readSpoolJson<SpoolBundle>(p.bundleInfo);
        if (!info || !existsSync(p.bundle)) throw new ApiError(409, 'NO_BUNDLE', 'no bundle uploaded: upload a release bundle first (PUT /api/v1/update/bundle)');
        return request(h.spoolDir, 'install', info.sha256);
      },
    },
    { method: 'POST', path: '/update/rollback', auth: true, handle: () => request(h.spoolDir, 'rollback') },
  ];
}
