/**
 * `homeagent update FILE` and `homeagent rollback [VERSION]`: run the release
 * scripts image/install.sh and image/rollback.sh of the release this code
 * belongs to (so the verifier that checks a new bundle is the installed one,
 * never the one inside the bundle) and turn their exit code and result line
 * into data.
 *
 * These run in the CLI process, as root (`sudo homeagent update FILE`), not in
 * the service: the service is unprivileged and /opt is read-only to it, and
 * install.sh restarts it.
 *
 * Exit codes and the result line are defined in image/lib.sh.
 *
 * Updates are signed: install.sh refuses a bundle whose manifest.sig is not an
 * ed25519 signature by a key in the device's keys directory
 * (/etc/homeagent/keys, HOMEAGENT_KEYS_DIR). `homeagent keys add|list|remove`
 * manage that directory through {@link addTrustedKeys}, {@link listTrustedKeys}
 * and {@link removeTrustedKey}, which use image/release-keys.mjs of this
 * release (the same code install.sh runs).
 */
import { spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import type * as ReleaseKeys from '../../image/release-keys.mjs';
import { HomeAgentError, errorMessage } from '../kernel/errors.js';

/** Options shared by {@link runUpdate} and {@link runRollback}; defaults are the device's. */
export interface ReleaseScriptOptions {
  /** Install root prefix (HOMEAGENT_ROOT). Default '/'. */
  root?: string;
  /** systemctl command (SYSTEMCTL). Default 'systemctl'. */
  systemctl?: string;
  /** npm command used for `npm ci --omit=dev` (HOMEAGENT_NPM). Default 'npm'. */
  npm?: string;
  /** node used to verify the bundle (HOMEAGENT_NODE). Default: this process's node. */
  node?: string;
  /** Seconds to wait for READY after the restart (HOMEAGENT_READY_TIMEOUT). Default 120. */
  readyTimeoutSec?: number;
  /** Seconds the new process must then stay up (HOMEAGENT_SETTLE). Default 5. */
  settleSec?: number;
  /** Releases kept on disk (HOMEAGENT_KEEP_RELEASES). Default 3. */
  keepReleases?: number;
  /** The service's data directory, whose stores a rollback puts back (HOMEAGENT_DATA_DIR). Default `<root>/var/lib/homeagent`. */
  dataDir?: string;
  /** Install/switch and enable only, no restart (image builds). */
  noStart?: boolean;
  /** Trusted release keys directory (HOMEAGENT_KEYS_DIR). Default `<root>/etc/homeagent/keys`. */
  keysDir?: string;
  /**
   * `runUpdate` only, DEVELOPMENT ONLY: install a bundle that is unsigned or not signed by a trusted key
   * (install.sh --allow-unsigned; it warns loudly and never enrolls keys the bundle carries).
   */
  allowUnsigned?: boolean;
  /** Directory holding install.sh/rollback.sh. Default: image/ of this release. */
  scriptsDir?: string;
  /** Extra environment for the script (tests: fake commands' settings). */
  env?: NodeJS.ProcessEnv;
  /** Progress lines from the script's stderr, as they come (the CLI prints them). */
  onProgress?: (line: string) => void;
}

/**
 * What the script did.
 * - installed: the new release runs (or was installed with noStart)
 * - already-current: the bundle's version is already current; nothing changed
 * - rolled-back: `runRollback` switched and the release runs, or `runUpdate`'s new release failed and the previous one runs again
 * - refused: bad bundle (checksum mismatch, missing files, not a bundle); nothing changed
 * - npm-failed: `npm ci` failed; nothing changed
 * - failed: not running and nothing to fall back to, or a usage/environment error
 */
export type ReleaseOutcome = 'installed' | 'already-current' | 'rolled-back' | 'refused' | 'npm-failed' | 'failed';

/**
 * Why install.sh's signature check refused a bundle (image/release-keys.mjs):
 * unsigned (no manifest.sig), malformed, no-trusted-keys (nothing enrolled on
 * the device), untrusted-key (signed by a key the device does not trust),
 * bad-signature (changed after it was signed).
 */
export type SignatureRefusal = 'unsigned' | 'malformed' | 'no-trusted-keys' | 'untrusted-key' | 'bad-signature' | 'signature';

/** Result of {@link runUpdate} / {@link runRollback}; `ok` is true for exit code 0 only. */
export interface ReleaseScriptResult {
  ok: boolean;
  outcome: ReleaseOutcome;
  /** Stable code: OK, USAGE, BUNDLE_REFUSED, NPM_FAILED, ROLLED_BACK, NOT_RUNNING, SPAWN_FAILED. */
  code: string;
  /** The script's exit code (-1 when it could not run or was killed). */
  exitCode: number;
  /** The release current after the script (from its result line), when known. */
  version?: string;
  /** The release that was current before, when reported. */
  previous?: string;
  /** The release that failed to start, when reported. */
  failed?: string;
  /**
   * Stores put back by a rollback (`<store>:v<schema version>`, e.g. `settings:v0`): the copies kept
   * before the release being left migrated them (src/kernel/store-version.ts, image/restore-stores.mjs).
   */
  storesRestored?: string[];
  /** Where the stores the left release wrote were moved (`<data dir>/backups/rolled-back/<time>-from-<version>`). */
  storesAside?: string;
  /** `runUpdate`: the id of the trusted key whose signature was verified. */
  signedBy?: string;
  /** `runUpdate`: true when --allow-unsigned installed it without a trusted signature. */
  signatureUnchecked?: boolean;
  /** `runUpdate`, outcome `refused`: the signature check's reason (absent when the bundle itself was bad). */
  signatureRefusal?: SignatureRefusal;
  /** Release keys the installed release added to the trusted keys (rotation). */
  keysAdded?: string[];
  /** Release keys the installed release retired. */
  keysRetired?: string[];
  /** One line for a person: what happened and what to do. */
  message: string;
  /** Everything the script wrote to stderr (its log). */
  log: string;
}

const EXIT_CODES: Record<number, string> = { 0: 'OK', 1: 'USAGE', 2: 'BUNDLE_REFUSED', 3: 'NPM_FAILED', 4: 'ROLLED_BACK', 5: 'NOT_RUNNING' };

/**
 * The image/ directory of the release this module belongs to: walks up from
 * src/service (tsx) or dist/src/service (built) to the directory that has
 * package.json and image/install.sh. Throws HomeAgentError RELEASE_SCRIPTS_MISSING.
 */
export function releaseScriptsDir(from: string = dirname(fileURLToPath(import.meta.url))): string {
  let dir = from;
  for (;;) {
    if (existsSync(join(dir, 'package.json')) && existsSync(join(dir, 'image', 'install.sh'))) return join(dir, 'image');
    const parent = dirname(dir);
    if (parent === dir) throw new HomeAgentError('RELEASE_SCRIPTS_MISSING', `no image/install.sh above ${from}; is this an installed release?`);
    dir = parent;
  }
}

/** Parse `homeagent-release: result=... version=...` (the last such line wins). */
export function parseResultLine(stdout: string): Record<string, string> {
  const lines = stdout.split('\n').filter((l) => l.startsWith('homeagent-release: '));
  const last = lines.at(-1);
  const out: Record<string, string> = {};
  if (!last) return out;
  for (const pair of last.slice('homeagent-release: '.length).trim().split(/\s+/)) {
    const eq = pair.indexOf('=');
    if (eq > 0) out[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  return out;
}

function scriptEnv(opts: ReleaseScriptOptions): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...process.env, ...opts.env };
  const set = (key: string, value: string | number | undefined): void => {
    if (value !== undefined) env[key] = String(value);
  };
  set('HOMEAGENT_ROOT', opts.root);
  set('SYSTEMCTL', opts.systemctl);
  set('HOMEAGENT_NPM', opts.npm);
  set('HOMEAGENT_NODE', opts.node ?? process.execPath);
  set('HOMEAGENT_READY_TIMEOUT', opts.readyTimeoutSec);
  set('HOMEAGENT_SETTLE', opts.settleSec);
  set('HOMEAGENT_KEEP_RELEASES', opts.keepReleases);
  set('HOMEAGENT_DATA_DIR', opts.dataDir);
  set('HOMEAGENT_KEYS_DIR', opts.keysDir);
  return env;
}

/** The sentence about stores put back by a rollback ('' when none were). */
function storesSentence(kv: Record<string, string>, left: string | undefined): string {
  if (!kv.stores_restored) return '';
  return `; the stores ${left ?? 'it'} had migrated were put back as they were before (${kv.stores_restored.split(',').join(', ')}), and the stores it wrote are kept in ${kv.stores_aside ?? '?'} (nothing was deleted)`;
}

function describe(outcome: ReleaseOutcome, kv: Record<string, string>, lastLogLine: string): string {
  const stores = storesSentence(kv, kv.failed ?? kv.previous);
  switch (outcome) {
    case 'installed': {
      const keys = [kv.keys_added ? `now also trusts release key ${kv.keys_added.split(',').join(', ')}` : '', kv.keys_retired ? `no longer trusts ${kv.keys_retired.split(',').join(', ')}` : '']
        .filter((p) => p !== '')
        .join('; ');
      const unsigned = kv.signature === 'unchecked' ? ' WITHOUT a trusted signature (--allow-unsigned, development only)' : '';
      return `homeagent ${kv.version ?? '?'} is installed and running${unsigned}${kv.previous ? ` (previous: ${kv.previous}; undo with "homeagent rollback")` : ''}${keys ? `; ${keys}` : ''}`;
    }
    case 'already-current':
      return `homeagent ${kv.version ?? '?'} is already the current release; nothing changed`;
    case 'rolled-back':
      return kv.failed
        ? `homeagent ${kv.failed} did not become ready; rolled back to ${kv.version ?? '?'}, which is running${stores} (logs: journalctl -u homeagent -b)`
        : `rolled back: homeagent ${kv.version ?? '?'} is running${kv.previous ? ` (was ${kv.previous})` : ''}${stores}`;
    case 'refused':
      return `bundle refused, nothing changed: ${lastLogLine}`;
    case 'npm-failed':
      return `installing dependencies failed, nothing changed: ${lastLogLine}`;
    case 'failed':
      return `${lastLogLine || 'the release script failed'} (logs: journalctl -u homeagent -b)`;
  }
}

function outcomeFor(exitCode: number, kv: Record<string, string>): ReleaseOutcome {
  switch (exitCode) {
    case 0:
      return kv.result === 'already-current' ? 'already-current' : kv.result === 'rolled-back' ? 'rolled-back' : 'installed';
    case 2:
      return 'refused';
    case 3:
      return 'npm-failed';
    case 4:
      return 'rolled-back';
    default:
      return 'failed';
  }
}

function runScript(name: string, args: string[], opts: ReleaseScriptOptions): Promise<ReleaseScriptResult> {
  return new Promise((resolvePromise) => {
    let script = name;
    let stdout = '';
    let log = '';
    let partial = '';
    const finish = (exitCode: number, spawnError?: unknown): void => {
      if (partial !== '') opts.onProgress?.(partial);
      const kv = parseResultLine(stdout);
      const lastLogLine =
        log
          .trim()
          .split('\n')
          .filter((l) => l.includes('error:'))
          .at(-1)
          ?.replace(/^[\w-]+: error: /, '') ?? log.trim().split('\n').at(-1) ?? '';
      if (spawnError !== undefined) {
        resolvePromise({ ok: false, outcome: 'failed', code: 'SPAWN_FAILED', exitCode: -1, message: `cannot run ${script}: ${errorMessage(spawnError)}`, log });
        return;
      }
      const outcome = outcomeFor(exitCode, kv);
      resolvePromise({
        ok: exitCode === 0,
        outcome,
        code: EXIT_CODES[exitCode] ?? 'NOT_RUNNING',
        exitCode,
        ...(kv.version ? { version: kv.version } : {}),
        ...(kv.previous ? { previous: kv.previous } : {}),
        ...(kv.failed ? { failed: kv.failed } : {}),
        ...(kv.stores_restored ? { storesRestored: kv.stores_restored.split(','), storesAside: kv.stores_aside ?? '' } : {}),
        ...(kv.signed_by ? { signedBy: kv.signed_by } : {}),
        ...(kv.signature === 'unchecked' ? { signatureUnchecked: true } : {}),
        ...(outcome === 'refused' && kv.reason ? { signatureRefusal: kv.reason as SignatureRefusal } : {}),
        ...(kv.keys_added ? { keysAdded: kv.keys_added.split(',') } : {}),
        ...(kv.keys_retired ? { keysRetired: kv.keys_retired.split(',') } : {}),
        message: describe(outcome, kv, lastLogLine),
        log,
      });
    };
    let child;
    try {
      script = join(opts.scriptsDir ?? releaseScriptsDir(), name);
      if (!existsSync(script)) throw new HomeAgentError('RELEASE_SCRIPTS_MISSING', `${script} does not exist`);
      child = spawn('bash', [script, ...args], { env: scriptEnv(opts), stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (err) {
      finish(-1, err);
      return;
    }
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => {
      log += d;
      partial += d;
      const lines = partial.split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) opts.onProgress?.(line);
    });
    child.on('error', (err) => finish(-1, err));
    child.on('close', (code) => finish(code ?? -1));
  });
}

/**
 * Install or update from a bundle: runs `image/install.sh [--no-start] BUNDLE`.
 * Resolves (never rejects) with the outcome; `ok` only when the new release
 * runs or was already current. A bad bundle leaves the running release as it
 * was (`refused`), and so does one that is unsigned or not signed by a key in
 * `keysDir` (`refused`, `signatureRefusal` says why) unless `allowUnsigned`
 * (development only); a release that does not reach READY is rolled back
 * automatically (`rolled-back`, `failed` = the bad version).
 */
export function runUpdate(bundlePath: string, opts: ReleaseScriptOptions = {}): Promise<ReleaseScriptResult> {
  const args = [...(opts.noStart ? ['--no-start'] : []), ...(opts.allowUnsigned ? ['--allow-unsigned'] : []), resolve(bundlePath)];
  return runScript('install.sh', args, opts);
}

/**
 * Switch back to the previous release (or `version`) and restart it: runs
 * `image/rollback.sh [--no-start] [VERSION]`. When the release being left
 * migrated stores, the copies from before are put back and the newer stores
 * kept aside (`storesRestored`, `storesAside`; the message says so).
 * Resolves (never rejects); if the target does not reach READY the release
 * that was running is restored with its stores (`rolled-back` with `failed` =
 * the target, exit code 4).
 */
export function runRollback(opts: ReleaseScriptOptions & { version?: string } = {}): Promise<ReleaseScriptResult> {
  const args = [...(opts.noStart ? ['--no-start'] : []), ...(opts.version ? [opts.version] : [])];
  return runScript('rollback.sh', args, opts);
}

/** Options of the `homeagent keys` functions; defaults are the device's. */
export interface KeysOptions {
  /** The trusted keys directory. Default: $HOMEAGENT_KEYS_DIR, else `<root>/etc/homeagent/keys`. */
  keysDir?: string;
  /** Install root prefix (HOMEAGENT_ROOT) used for the default keys directory. Default $HOMEAGENT_ROOT or '/'. */
  root?: string;
  /** Directory holding release-keys.mjs. Default: image/ of this release. */
  scriptsDir?: string;
}

/** A trusted release key: its id (16 hex digits of sha256 over the DER public key) and file. */
export interface TrustedKey {
  id: string;
  file: string;
}

/**
 * Result of a `homeagent keys` command. `code`: OK, KEY_INVALID (not an
 * ed25519 public key, or a private key), KEYS_DIR (cannot write: not root),
 * NOT_FOUND (remove: no such key), READ_FAILED (the file cannot be read),
 * RELEASE_SCRIPTS_MISSING.
 */
export interface KeysResult {
  ok: boolean;
  code: string;
  /** The keys directory acted on. */
  keysDir: string;
  /** The keys trusted after the command. */
  keys: TrustedKey[];
  /** add: ids newly trusted; remove: the id removed. */
  changed: string[];
  /** One line for a person. */
  message: string;
  /** Key files in the directory that were ignored, and similar notes. */
  warnings: string[];
}

async function releaseKeysModule(scriptsDir: string | undefined): Promise<typeof ReleaseKeys> {
  const file = join(scriptsDir ?? releaseScriptsDir(), 'release-keys.mjs');
  if (!existsSync(file)) throw new HomeAgentError('RELEASE_SCRIPTS_MISSING', `${file} does not exist`);
  return (await import(pathToFileURL(file).href)) as typeof ReleaseKeys;
}

function keysDirFor(mod: typeof ReleaseKeys, opts: KeysOptions): string {
  if (opts.keysDir) return resolve(opts.keysDir);
  if (opts.root !== undefined) return `${opts.root.replace(/\/+$/, '')}/etc/homeagent/keys`;
  return mod.defaultKeysDir();
}

async function keysCommand(opts: KeysOptions, run: (mod: typeof ReleaseKeys, dir: string) => Omit<KeysResult, 'keysDir' | 'keys' | 'warnings'>): Promise<KeysResult> {
  let mod: typeof ReleaseKeys;
  try {
    mod = await releaseKeysModule(opts.scriptsDir);
  } catch (err) {
    return { ok: false, code: 'RELEASE_SCRIPTS_MISSING', keysDir: opts.keysDir ?? '', keys: [], changed: [], message: errorMessage(err), warnings: [] };
  }
  const dir = keysDirFor(mod, opts);
  let result: Omit<KeysResult, 'keysDir' | 'keys' | 'warnings'>;
  try {
    result = run(mod, dir);
  } catch (err) {
    const code = err instanceof mod.ReleaseKeyError ? err.code : 'KEYS_DIR';
    result = { ok: false, code, changed: [], message: errorMessage(err) };
  }
  const { keys, warnings } = mod.loadTrustedKeys(dir);
  return { ...result, keysDir: dir, keys: keys.map((k) => ({ id: k.id, file: k.file })), warnings };
}

/**
 * `homeagent keys add FILE...`: trust the ed25519 public keys (PEM) in the
 * files for release signatures. How a first key is enrolled on a box whose
 * releases you build yourself. Needs root on the device. Resolves (never
 * rejects); a private key, another key type or a file that cannot be read is
 * refused with nothing changed for that file (the ones before it stay added).
 */
export function addTrustedKeys(files: string[], opts: KeysOptions = {}): Promise<KeysResult> {
  return keysCommand(opts, (mod, dir) => {
    const changed: string[] = [];
    const lines: string[] = [];
    for (const f of files) {
      let text: Buffer;
      try {
        text = readFileSync(f);
      } catch (err) {
        return { ok: false, code: 'READ_FAILED', changed, message: [...lines, `cannot read ${f}: ${errorMessage(err)}`].join('\n') };
      }
      const r = mod.addTrustedKey(dir, text, f);
      if (r.added) changed.push(r.id);
      lines.push(r.added ? `trusted release key ${r.id} (${r.file}); updates signed by it are accepted from now on` : `release key ${r.id} is already trusted (${r.file})`);
    }
    return { ok: true, code: 'OK', changed, message: lines.join('\n') };
  });
}

/** `homeagent keys list`: the trusted release keys. */
export function listTrustedKeys(opts: KeysOptions = {}): Promise<KeysResult> {
  return keysCommand(opts, (mod, dir) => {
    const n = mod.loadTrustedKeys(dir).keys.length;
    return {
      ok: true,
      code: 'OK',
      changed: [],
      message: n === 0 ? `no trusted release keys in ${dir}: every update is refused until you add one (sudo homeagent keys add KEY.pub)` : `${n} trusted release key${n === 1 ? '' : 's'} in ${dir}`,
    };
  });
}

/** `homeagent keys remove ID`: stop trusting a release key (says so when none is left). */
export function removeTrustedKey(id: string, opts: KeysOptions = {}): Promise<KeysResult> {
  return keysCommand(opts, (mod, dir) => {
    if (!mod.KEY_ID_PATTERN.test(id)) return { ok: false, code: 'KEY_INVALID', changed: [], message: `${JSON.stringify(id)} is not a key id (16 hex digits; see homeagent keys list)` };
    const r = mod.removeTrustedKey(dir, id);
    if (r.removed.length === 0) return { ok: false, code: 'NOT_FOUND', changed: [], message: `release key ${id} is not trusted in ${dir}` };
    const none = r.remaining === 0 ? `; no trusted release keys are left: every update is refused until you add one` : '';
    return { ok: true, code: 'OK', changed: [id], message: `release key ${id} is no longer trusted${none}` };
  });
}
