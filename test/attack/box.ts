/**
 * The service under attack, as its own process: `homeagent run --no-console`
 * on a temporary data directory, configured only through HOMEAGENT__*
 * environment overrides (docs/SETTINGS.md), with the simulated microphone,
 * speaker and GPIO, the broker and LLM host the attack gives it, and its
 * maintenance socket in the data directory. Its own process, so its memory
 * (/proc/<pid>/status VmRSS, VmHWM) is its own and a crash is seen as an
 * exit, not as the attack script dying.
 *
 * It runs the current sources compiled as the device runs them: `tsc` with
 * the project's tsconfig into a private build directory
 * (os.tmpdir()/homeagent-attack-build-<checkout hash>, incremental, never the checkout's
 * dist/ that other tools use), so the memory figures are those of plain
 * JavaScript, not of a TypeScript loader. `HOMEAGENT_ATTACK_SRC=1` runs the
 * sources through tsx instead (quicker to start, about 70 MB more RSS).
 * Every box started is killed (SIGKILL) when the attack process exits, so a
 * failing attack never leaves one behind.
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { closeSync, existsSync, mkdirSync, mkdtempSync, symlinkSync, openSync, readFileSync, readSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createHash } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from '../../src/cli/client.js';

/** Repository root (test/attack is two levels below). */
export const REPO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');

const live = new Set<ChildProcess>();
let hookInstalled = false;
function installExitHook(): void {
  if (hookInstalled) return;
  hookInstalled = true;
  process.on('exit', () => {
    for (const c of live) {
      try {
        c.kill('SIGKILL');
      } catch {
        /* gone */
      }
    }
  });
}

/** Where the private build of this checkout lives (one per checkout: its links point into it). */
export const BUILD_DIR = path.join(os.tmpdir(), `homeagent-attack-build-${createHash('sha256').update(REPO_ROOT).digest('hex').slice(0, 12)}`);

let entryArgs: string[] | undefined;

/**
 * Compile the sources for the boxes (once per attack run) and return the
 * node arguments that start the CLI. Type errors do not stop it (tsc still
 * emits, as `npm run build` output would be used); they are reported on
 * stdout as a `#` note. Throws when nothing was emitted.
 */
export function prepareService(): string[] {
  if (entryArgs) return entryArgs;
  if (process.env.HOMEAGENT_ATTACK_SRC === '1') return (entryArgs = ['--import', 'tsx', path.join(REPO_ROOT, 'src/cli/main.ts')]);
  mkdirSync(BUILD_DIR, { recursive: true });
  const unlock = lockBuild();
  try {
    return (entryArgs = build());
  } finally {
    unlock();
  }
}

/**
 * One build at a time in BUILD_DIR (two attack runs at once): a lock
 * directory, waited for up to 3 minutes; a lock older than 10 minutes is
 * left over from a killed run and taken over.
 */
function lockBuild(): () => void {
  const lock = path.join(BUILD_DIR, '.lock');
  const end = Date.now() + 180_000;
  for (;;) {
    try {
      mkdirSync(lock);
      return () => rmSync(lock, { recursive: true, force: true });
    } catch {
      try {
        if (Date.now() - statSync(lock).mtimeMs > 600_000) rmSync(lock, { recursive: true, force: true });
      } catch {
        /* gone meanwhile */
      }
      if (Date.now() > end) throw new Error(`another attack run holds ${lock} for over 3 minutes`);
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 500);
    }
  }
}

function build(): string[] {
  for (const name of ['node_modules', 'adapters', 'data', 'package.json']) {
    const link = path.join(BUILD_DIR, name);
    if (!existsSync(link)) symlinkSync(path.join(REPO_ROOT, name), link);
  }
  const tsc = path.join(REPO_ROOT, 'node_modules', 'typescript', 'bin', 'tsc');
  const r = spawnSync(process.execPath, [tsc, '-p', path.join(REPO_ROOT, 'tsconfig.json'), '--outDir', path.join(BUILD_DIR, 'dist'), '--incremental', '--tsBuildInfoFile', path.join(BUILD_DIR, 'tsbuildinfo'), '--sourceMap', 'false'], { cwd: REPO_ROOT, encoding: 'utf8' });
  const main = path.join(BUILD_DIR, 'dist', 'src', 'cli', 'main.js');
  if (r.status !== 0) {
    const errors = (r.stdout ?? '').split('\n').filter((l) => /error TS/.test(l));
    if (!existsSync(main) || errors.length === 0) throw new Error(`tsc failed: ${(r.stdout ?? '') + (r.stderr ?? '')}`.slice(0, 2000));
    console.log(`# tsc reported ${errors.length} type error(s) (first: ${errors[0]}); attacking what it emitted`);
  }
  return [main];
}

/** One JSON log line of the service (pino): `level` 30 info, 40 warn, 50 error, 60 fatal. */
export interface LogLine {
  level: number;
  time?: number;
  ns?: string;
  msg?: string;
  [k: string]: unknown;
}

/** Options of startBox. */
export interface BoxOptions {
  /** HOMEAGENT__* overrides (and any other environment) for the service. */
  env: Record<string, string>;
  /** Reuse this data directory (a restart); default: a new temporary one. */
  dataDir?: string;
  /** Failure deadline for the socket to answer `status`, ms (default 90000). */
  readyTimeoutMs?: number;
}

/** A running service process. */
export interface Box {
  pid: number;
  dataDir: string;
  socketPath: string;
  /** One maintenance-socket request (the CLI's own client); `timeoutMs` default 30000. */
  call(cmd: string, args?: Record<string, unknown>, timeoutMs?: number): Promise<unknown>;
  /** `status` as the CLI gets it. */
  status(): Promise<BoxStatus>;
  /** Whether the process is still running. */
  alive(): boolean;
  /** Exit code or signal once it ended. */
  exit(): { code: number | null; signal: NodeJS.Signals | null } | undefined;
  /** Every log line so far (stderr JSON lines; other lines as `{level: 0, msg}`). */
  logs(): LogLine[];
  /** Resident set of the process now (VmRSS), MB; NaN when it is gone. */
  rssMb(): number;
  /** Peak resident set (VmHWM) since start or since resetPeak(), MB; NaN when it is gone. */
  peakRssMb(): number;
  /** Reset VmHWM to the current RSS (writes 5 to /proc/<pid>/clear_refs); false when the kernel refuses. */
  resetPeak(): boolean;
  /** SIGTERM, then SIGKILL after `graceMs` (default 10000); resolves when the process ended. Keeps the data dir. */
  stop(graceMs?: number): Promise<void>;
  /** stop() and remove the data directory. */
  close(): Promise<void>;
}

/** The parts of `homeagent status` the attacks read. */
export interface BoxStatus {
  devices: number;
  broker: { url: string; connected: boolean };
  llm: { sources: Array<{ name: string; adapter: string; state: string; failures: number; last_error?: string; last_error_code?: string }> };
  plugins: Array<{ name: string; state: string; error?: string }>;
  [k: string]: unknown;
}

function procField(pid: number, field: string): number {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Number(m[1]) / 1024 : NaN;
  } catch {
    return NaN;
  }
}

/** Environment of the service: ours minus anything that would point it at another box, broker or socket. */
function serviceEnv(extra: Record<string, string>): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (k.startsWith('HOMEAGENT') || k === 'RUNTIME_DIRECTORY' || k === 'STATE_DIRECTORY' || k === 'NOTIFY_SOCKET' || k === 'JOURNAL_STREAM' || k === 'WATCHDOG_USEC') continue;
    env[k] = v;
  }
  return {
    ...env,
    NODE_ENV: 'production',
    HOMEAGENT_LOG_LEVEL: 'info',
    HOMEAGENT__PLUGIN__SPEAKER__DRIVER: 'sim',
    HOMEAGENT__PLUGIN__MIC__DRIVER: 'sim',
    HOMEAGENT__PLUGIN__GPIO__DRIVER: 'sim',
    HOMEAGENT__PLUGIN__WEBUI__PORT: '0',
    HOMEAGENT__CORE__SERVICE__DEMO_HOME: 'off',
    // Never 1883: should the broker URL be missing, the embedded broker takes any free port.
    HOMEAGENT__CORE__SERVICE__EMBEDDED_BROKER_PORT: '0',
    ...extra,
  };
}

/**
 * Start the service and resolve once its socket answers `status`.
 * Throws (after killing it) when it exits or does not answer in time.
 */
export async function startBox(opts: BoxOptions): Promise<Box> {
  installExitHook();
  const dataDir = opts.dataDir ?? mkdtempSync(path.join(os.tmpdir(), 'homeagent-attack-'));
  const socketPath = path.join(dataDir, 'homeagent.sock');
  const logPath = path.join(dataDir, `service-${Date.now()}.log`);
  const fd = openSync(logPath, 'a');
  const entry = prepareService();
  const child = spawn(process.execPath, [...entry, '--data-dir', dataDir, '--socket', socketPath, 'run', '--no-console'], {
    cwd: REPO_ROOT,
    env: serviceEnv(opts.env),
    stdio: ['ignore', fd, fd],
  });
  closeSync(fd);
  live.add(child);
  let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  const exitedP = new Promise<void>((resolve) => {
    child.once('exit', (code, signal) => {
      exited = { code, signal };
      live.delete(child);
      resolve();
    });
  });
  const pid = child.pid ?? -1;

  let parsedBytes = 0;
  let partial = '';
  const lines: LogLine[] = [];
  const logs = (): LogLine[] => {
    let size = 0;
    try {
      size = statSync(logPath).size;
    } catch {
      return lines;
    }
    if (size > parsedBytes) {
      const buf = Buffer.alloc(size - parsedBytes);
      const rfd = openSync(logPath, 'r');
      try {
        readSync(rfd, buf, 0, buf.length, parsedBytes);
      } finally {
        closeSync(rfd);
      }
      parsedBytes = size;
      const text = partial + buf.toString('utf8');
      const parts = text.split('\n');
      partial = parts.pop() ?? '';
      for (const l of parts) {
        if (!l.trim()) continue;
        try {
          const o = JSON.parse(l) as LogLine;
          lines.push(typeof o.level === 'number' ? o : { level: 0, msg: l });
        } catch {
          lines.push({ level: 0, msg: l });
        }
      }
    }
    return lines;
  };

  const stop = async (graceMs = 10_000): Promise<void> => {
    if (exited) return;
    child.kill('SIGTERM');
    const force = setTimeout(() => child.kill('SIGKILL'), graceMs);
    await exitedP;
    clearTimeout(force);
  };

  const box: Box = {
    pid,
    dataDir,
    socketPath,
    call: (cmd, args = {}, timeoutMs = 30_000) => request(socketPath, cmd, args, undefined, { timeoutMs }),
    status: async () => (await request(socketPath, 'status', {}, undefined, { timeoutMs: 15_000 })) as BoxStatus,
    alive: () => !exited,
    exit: () => exited,
    logs,
    rssMb: () => procField(pid, 'VmRSS'),
    peakRssMb: () => procField(pid, 'VmHWM'),
    resetPeak: () => {
      try {
        writeFileSync(`/proc/${pid}/clear_refs`, '5');
        return true;
      } catch {
        return false;
      }
    },
    stop,
    async close() {
      await stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };

  const deadline = Date.now() + (opts.readyTimeoutMs ?? 90_000);
  for (;;) {
    if (exited) {
      const tail = logs().slice(-8).map((l) => l.msg ?? JSON.stringify(l)).join('\n  ');
      throw new Error(`the service exited while starting (code ${exited.code}, signal ${exited.signal}):\n  ${tail}`);
    }
    if (existsSync(socketPath)) {
      try {
        await box.status();
        return box;
      } catch {
        /* not yet */
      }
    }
    if (Date.now() > deadline) {
      await stop(2000);
      throw new Error(`the service did not answer on ${socketPath} within ${opts.readyTimeoutMs ?? 90_000} ms`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
}

/** Size of an SQLite database with its -wal and -shm files, MB (0 when absent). */
export function dbSizeMb(file: string): number {
  let total = 0;
  for (const f of [file, `${file}-wal`, `${file}-shm`]) {
    try {
      total += statSync(f).size;
    } catch {
      /* absent */
    }
  }
  return total / 1048576;
}
