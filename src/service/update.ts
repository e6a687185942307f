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
 */
import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
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
    case 'installed':
      return `homeagent ${kv.version ?? '?'} is installed and running${kv.previous ? ` (previous: ${kv.previous}; undo with "homeagent rollback")` : ''}`;
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
 * was (`refused`); a release that does not reach READY is rolled back
 * automatically (`rolled-back`, `failed` = the bad version).
 */
export function runUpdate(bundlePath: string, opts: ReleaseScriptOptions = {}): Promise<ReleaseScriptResult> {
  const args = [...(opts.noStart ? ['--no-start'] : []), resolve(bundlePath)];
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
