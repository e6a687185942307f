/**
 * The update spool (issue 16, Health page "updates"): how the unprivileged
 * service hands a release bundle, or a roll-back, to the root helper that can
 * install it, and how the helper reports back.
 *
 * The service cannot install a release (/opt is read-only to it by design,
 * systemd/homeagent.service). The WebUI writes into `<data dir>/update-spool/`:
 *   bundle.tar.gz   the uploaded bundle (written as upload-*.part, renamed when whole)
 *   bundle.json     {version:1, name, size, sha256, uploaded_at}
 *   request.json    {version:1, id, action:"install"|"rollback", sha256?, requested_at} (written last, by rename)
 * systemd/homeagent-update.path sees request.json and starts
 * systemd/homeagent-update.service (root, oneshot), which runs
 * `homeagent update-spool` = {@link processSpool}: it claims the request
 * (deletes request.json), copies the bundle out of the service's reach,
 * runs image/install.sh (or rollback.sh) of the installed release through
 * update.ts, and writes
 *   status.json     {@link SpoolStatus}, rewritten (tmp file + rename) at each step and progress line.
 *
 * Files written by the root helper in a directory the service owns are never
 * opened through a link: the bundle is opened with O_NOFOLLOW and must be a
 * regular file, status.json is created with O_EXCL under a fresh name and
 * renamed into place (rename replaces a link, never follows it).
 */
import { closeSync, constants, createReadStream, createWriteStream, fstatSync, lstatSync, mkdtempSync, openSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createHash, randomBytes } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { pipeline } from 'node:stream/promises';
import { HomeAgentError, errorMessage } from '../kernel/errors.js';
import { runRollback, runUpdate, type ReleaseScriptOptions, type ReleaseScriptResult } from './update.js';

/** Version of the spool's JSON files. */
export const SPOOL_FORMAT = 1;
/** Folder name under the data directory. */
export const SPOOL_DIRNAME = 'update-spool';
/** The device's spool (the .path unit watches its request.json). */
export const DEVICE_SPOOL = '/var/lib/homeagent/update-spool';
/** Largest bundle the helper accepts whatever the service allowed (bytes). */
export const HELPER_MAX_BYTES = 1024 * 1024 * 1024;
/** Progress lines kept in status.json. */
export const STATUS_LOG_LINES = 40;

/** Paths of the spool's files. */
export function spoolPaths(dir: string) {
  return {
    dir,
    bundle: path.join(dir, 'bundle.tar.gz'),
    bundleInfo: path.join(dir, 'bundle.json'),
    request: path.join(dir, 'request.json'),
    status: path.join(dir, 'status.json'),
  };
}

/** bundle.json: the bundle waiting in the spool. */
export interface SpoolBundle {
  version: number;
  /** The file name the browser sent (shown only). */
  name: string;
  /** Bytes. */
  size: number;
  /** SHA-256 of the bytes, hex. */
  sha256: string;
  /** Epoch ms. */
  uploaded_at: number;
}

/** request.json: what the helper is asked to do. */
export interface SpoolRequest {
  version: number;
  id: string;
  action: 'install' | 'rollback';
  /** install: SHA-256 of the bundle the request is for (the helper checks its copy against it). */
  sha256?: string;
  /** Epoch ms. */
  requested_at: number;
}

/**
 * status.json, written by the helper: `state` running while the script
 * works, then done (it ran; `ok`, `outcome` and `message` from update.ts say
 * how it went: installed, refused with why, rolled back) or failed (the
 * request itself could not be carried out).
 */
export interface SpoolStatus {
  version: number;
  id: string;
  action: 'install' | 'rollback';
  state: 'running' | 'done' | 'failed';
  /** What happens now, for a person. */
  step: string;
  ok?: boolean;
  outcome?: ReleaseScriptResult['outcome'];
  code?: string;
  message?: string;
  /** The release running after it, when known. */
  release?: string;
  /** install refused: the signature check's reason (update.ts SignatureRefusal). */
  signature_refusal?: string;
  /** The script's last progress lines. */
  log: string[];
  /** Epoch ms. */
  started_at: number;
  updated_at: number;
}

/** Write `value` as JSON at `file` without following a link there: a new O_EXCL file, then rename. */
export function writeJsonAtomic(file: string, value: unknown, mode = 0o644): void {
  const tmp = `${file}.${process.pid}.${randomBytes(4).toString('hex')}.tmp`;
  writeFileSync(tmp, JSON.stringify(value, null, 1) + '\n', { flag: 'wx', mode });
  renameSync(tmp, file);
}

/** Read a small JSON file that must be a regular file (not a link); undefined when absent. Throws HomeAgentError SPOOL_BAD_FILE. */
export function readSpoolJson<T>(file: string): T | undefined {
  let st;
  try {
    st = lstatSync(file);
  } catch {
    return undefined;
  }
  if (!st.isFile() || st.size > 64 * 1024) throw new HomeAgentError('SPOOL_BAD_FILE', `${file} is not a small regular file`);
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as T;
  } catch (err) {
    throw new HomeAgentError('SPOOL_BAD_FILE', `${file} is not valid JSON: ${errorMessage(err)}`);
  }
}

/** Options of {@link processSpool}: the release scripts' options (update.ts) and the helper's own limits. */
export interface ProcessSpoolOptions extends ReleaseScriptOptions {
  /** Largest bundle accepted, bytes (default HELPER_MAX_BYTES). */
  maxBytes?: number;
  /** Wall clock, ms (tests). */
  now?: () => number;
}

/**
 * The root helper's one run (`homeagent update-spool`): claim request.json,
 * carry it out, report in status.json. Resolves with the final status, or
 * undefined when there was no request. Never throws for a bad request or
 * bundle: that is a `failed` status with the reason.
 */
export async function processSpool(dir: string, opts: ProcessSpoolOptions = {}): Promise<SpoolStatus | undefined> {
  const p = spoolPaths(dir);
  const now = opts.now ?? Date.now;
  let req: SpoolRequest | undefined;
  let bad = '';
  try {
    req = readSpoolJson<SpoolRequest>(p.request);
  } catch (err) {
    bad = errorMessage(err);
  }
  if (!req && !bad) return undefined;
  rmSync(p.request, { force: true }); // claimed: the .path unit does not fire again for it
  const started = now();
  const status: SpoolStatus = { version: SPOOL_FORMAT, id: typeof req?.id === 'string' ? req.id.slice(0, 64) : '?', action: req?.action === 'rollback' ? 'rollback' : 'install', state: 'running', step: 'starting', log: [], started_at: started, updated_at: started };
  const write = () => {
    status.updated_at = now();
    writeJsonAtomic(p.status, status);
  };
  const fail = (message: string): SpoolStatus => {
    Object.assign(status, { state: 'failed', ok: false, step: 'failed', message });
    write();
    return status;
  };
  if (bad) return fail(`the request could not be read: ${bad}`);
  if (req!.version !== SPOOL_FORMAT || (req!.action !== 'install' && req!.action !== 'rollback')) return fail(`the request is not one this release understands (version ${String(req!.version)}, action ${JSON.stringify(req!.action)})`);
  const onProgress = (line: string) => {
    opts.onProgress?.(line);
    const l = line.trim();
    if (!l) return;
    status.log.push(l.slice(0, 500));
    if (status.log.length > STATUS_LOG_LINES) status.log.shift();
    status.step = l.slice(0, 200);
    write();
  };
  let work: string | undefined;
  try {
    let result: ReleaseScriptResult;
    if (req!.action === 'rollback') {
      status.step = 'rolling back to the previous release';
      write();
      result = await runRollback({ ...opts, onProgress });
    } else {
      status.step = 'copying the bundle';
      write();
      work = mkdtempSync(path.join(os.tmpdir(), 'homeagent-update-'));
      const copy = path.join(work, 'bundle.tar.gz');
      const sha = await copyBundle(p.bundle, copy, opts.maxBytes ?? HELPER_MAX_BYTES);
      if (req!.sha256 && req!.sha256 !== sha) return fail(`the bundle in the spool is not the one the request is for (SHA-256 ${sha.slice(0, 12)}…, asked for ${req!.sha256.slice(0, 12)}…); upload it again`);
      status.step = 'verifying and installing';
      write();
      result = await runUpdate(copy, { ...opts, onProgress });
    }
    Object.assign(status, {
      state: 'done',
      ok: result.ok,
      outcome: result.outcome,
      code: result.code,
      message: result.message,
      step: result.ok ? 'finished' : result.outcome,
      ...(result.version ? { release: result.version } : {}),
      ...(result.signatureRefusal ? { signature_refusal: result.signatureRefusal } : {}),
    });
    write();
    return status;
  } catch (err) {
    return fail(errorMessage(err));
  } finally {
    if (work) rmSync(work, { recursive: true, force: true });
    if (req?.action === 'install') for (const f of [p.bundle, p.bundleInfo]) rmSync(f, { force: true });
  }
}

/** Copy the spool's bundle (a regular file, opened without following links, at most `maxBytes`) to `to`; resolves with its SHA-256 (hex). Throws HomeAgentError SPOOL_NO_BUNDLE / SPOOL_BUNDLE_TOO_LARGE. */
async function copyBundle(from: string, to: string, maxBytes: number): Promise<string> {
  let fd: number;
  try {
    fd = openSync(from, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (err) {
    throw new HomeAgentError('SPOOL_NO_BUNDLE', `no bundle to install in the spool (${errorMessage(err)}); upload it first`);
  }
  const st = fstatSync(fd);
  if (!st.isFile()) {
    closeSync(fd);
    throw new HomeAgentError('SPOOL_NO_BUNDLE', `${from} is not a regular file`);
  }
  if (st.size > maxBytes) {
    closeSync(fd);
    throw new HomeAgentError('SPOOL_BUNDLE_TOO_LARGE', `the bundle is ${st.size} bytes, over the helper's limit of ${maxBytes}`);
  }
  const hash = createHash('sha256');
  const src = createReadStream('', { fd });
  src.on('data', (c) => hash.update(c));
  await pipeline(src, createWriteStream(to, { flags: 'wx', mode: 0o600 }));
  return hash.digest('hex');
}
