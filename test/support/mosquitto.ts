/**
 * Test peer: a real Mosquitto broker (the Debian package) on a free localhost
 * port with a temporary config (`listener PORT 127.0.0.1`, `allow_anonymous
 * true`, persistence off). `startMosquitto()` resolves once the port accepts
 * TCP connections; `stop()` kills the process and waits for it to exit;
 * `restart()` stops and starts it again on the same port (tests of broker
 * outages). A process-exit hook kills any broker still running, so a failing
 * test never leaves one behind.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

/** A running broker. */
export interface MosquittoBroker {
  /** `mqtt://127.0.0.1:PORT` */
  url: string;
  port: number;
  /** Kill the broker and remove its temp dir; safe to call twice. */
  stop(): Promise<void>;
  /** Stop, then start again on the same port; resolves when it accepts connections. */
  restart(): Promise<void>;
  /** Stop only the process (the broker is down until `start()`); for outage tests. */
  kill(): Promise<void>;
  /** Start again after `kill()`. */
  start(): Promise<void>;
  /** Freeze the process (SIGSTOP: connections stay open, nothing is answered), or let it go on (SIGCONT): a hung broker. */
  freeze(frozen: boolean): void;
}

/** Options of startMosquitto. */
export interface MosquittoOptions {
  /** Path of the binary (default: `mosquitto` on PATH, else /usr/sbin/mosquitto). */
  binary?: string;
  /** Extra config lines. */
  extraConfig?: string[];
  /** ms to wait for the port to accept connections (default 10000). */
  readyTimeoutMs?: number;
  /**
   * Keep sessions, subscriptions and queued QoS>0 messages across restart()
   * in the temp dir (default false: persistence off).
   */
  persistence?: boolean;
}

const running = new Set<ChildProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const child of running) {
      try {
        child.kill('SIGKILL');
      } catch {
        /* already gone */
      }
    }
  });
}

/** A free TCP port on 127.0.0.1 (bind to 0, read, close). */
export async function freePort(): Promise<number> {
  return await new Promise<number>((resolve, reject) => {
    const srv = net.createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const addr = srv.address();
      const port = typeof addr === 'object' && addr ? addr.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const sock = net.connect({ port, host: '127.0.0.1' });
    const done = (ok: boolean): void => {
      sock.removeAllListeners();
      sock.destroy();
      resolve(ok);
    };
    sock.once('connect', () => done(true));
    sock.once('error', () => done(false));
    sock.setTimeout(1000, () => done(false));
  });
}

function pickBinary(explicit?: string): string {
  if (explicit) return explicit;
  return process.env.MOSQUITTO_BIN ?? 'mosquitto';
}

/**
 * Start a Mosquitto on a free port. Throws when the binary is missing or the
 * port does not accept connections within `readyTimeoutMs`.
 */
export async function startMosquitto(opts: MosquittoOptions = {}): Promise<MosquittoBroker> {
  installExitHook();
  let port = await freePort();
  const dir = mkdtempSync(path.join(os.tmpdir(), 'homeagent-mosq-'));
  const conf = path.join(dir, 'mosquitto.conf');
  // Mosquitto started as root drops to the `mosquitto` user; it must be able to write its persistence file here.
  if (opts.persistence) chmodSync(dir, 0o777);
  const writeConf = (): void => writeFileSync(
    conf,
    [
      `listener ${port} 127.0.0.1`,
      'allow_anonymous true',
      ...(opts.persistence ? ['persistence true', `persistence_location ${dir}/`, 'autosave_interval 1'] : ['persistence false']),
      'log_dest stderr',
      'log_type error',
      'log_type warning',
      ...(opts.extraConfig ?? []),
      '',
    ].join('\n'),
  );
  writeConf();
  const binary = pickBinary(opts.binary);
  const readyTimeout = opts.readyTimeoutMs ?? 10_000;
  let child: ChildProcess | undefined;
  let stderr = '';

  const launch = async (): Promise<void> => {
    stderr = '';
    const proc = spawn(binary, ['-c', conf], { stdio: ['ignore', 'ignore', 'pipe'] });
    child = proc;
    running.add(proc);
    proc.stderr?.setEncoding('utf8');
    proc.stderr?.on('data', (d: string) => {
      stderr = (stderr + d).slice(-4000);
    });
    let exited = false;
    let spawnError: Error | undefined;
    proc.once('error', (err) => {
      spawnError = err;
      exited = true;
    });
    proc.once('exit', () => {
      exited = true;
      running.delete(proc);
    });
    const deadline = Date.now() + readyTimeout;
    for (;;) {
      if (spawnError) throw new Error(`cannot start ${binary}: ${spawnError.message}`);
      if (exited) throw new Error(`mosquitto exited at start: ${stderr.trim()}`);
      if (await canConnect(port)) {
        // Someone else may own the port: make sure our broker did not die with "address in use".
        await new Promise((r) => setTimeout(r, 100));
        if (exited) throw new Error(`mosquitto exited at start: ${stderr.trim()}`);
        return;
      }
      if (Date.now() > deadline) {
        proc.kill('SIGKILL');
        throw new Error(`mosquitto did not accept connections on ${port} within ${readyTimeout} ms: ${stderr.trim()}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  const killProc = async (): Promise<void> => {
    const proc = child;
    child = undefined;
    if (!proc || proc.exitCode !== null || proc.signalCode !== null) {
      if (proc) running.delete(proc);
      return;
    }
    await new Promise<void>((resolve) => {
      const force = setTimeout(() => proc.kill('SIGKILL'), 3000);
      proc.once('exit', () => {
        clearTimeout(force);
        running.delete(proc);
        resolve();
      });
      proc.kill('SIGTERM');
    });
  };

  // Another process may grab the free port before Mosquitto binds it: try a few ports.
  for (let attempt = 1; ; attempt++) {
    try {
      await launch();
      break;
    } catch (err) {
      if (attempt >= 3) {
        rmSync(dir, { recursive: true, force: true });
        throw err;
      }
      port = await freePort();
      writeConf();
    }
  }
  let stopped = false;
  return {
    url: `mqtt://127.0.0.1:${port}`,
    port,
    async stop() {
      if (stopped) return;
      stopped = true;
      await killProc();
      rmSync(dir, { recursive: true, force: true });
    },
    async restart() {
      await killProc();
      await launch();
    },
    kill: killProc,
    start: launch,
    freeze(frozen: boolean) {
      child?.kill(frozen ? 'SIGSTOP' : 'SIGCONT');
    },
  };
}
