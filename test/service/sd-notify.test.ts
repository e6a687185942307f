/**
 * sd-notify against the real `systemd-notify` binary and a real AF_UNIX
 * datagram socket (NOTIFY_SOCKET). Node cannot open datagram Unix sockets, so
 * the listener is a tiny python3 program; it also closes the BARRIER=1 file
 * descriptor systemd-notify sends, exactly as systemd does.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync, existsSync, chmodSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { createNotifier, watchdogIntervalMs } from '../../src/service/sd-notify.js';
import type { Logger } from '../../src/kernel/log-types.js';

const LISTENER = `
import array, json, os, socket, sys
s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
s.bind(sys.argv[1])
print(json.dumps({"ready": True}), flush=True)
while True:
    data, anc, _flags, _addr = s.recvmsg(65536, socket.CMSG_SPACE(16 * 4))
    fds = 0
    for level, kind, payload in anc:
        if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
            a = array.array("i")
            a.frombytes(payload[: len(payload) - len(payload) % 4])
            for fd in a:
                os.close(fd)
                fds += 1
    print(json.dumps({"message": data.decode(), "fds": fds}), flush=True)
`;

interface Received {
  message: string;
  fds: number;
}

let dir: string;
let socketPath: string;
let listener: ChildProcessWithoutNullStreams;
const received: Received[] = [];
const waiters: Array<() => void> = [];

/** Resolve once `predicate` holds for the messages received so far (generous timeout). */
function waitFor(predicate: (msgs: Received[]) => boolean, what: string, timeoutMs = 15_000): Promise<void> {
  if (predicate(received)) return Promise.resolve();
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`timed out waiting for ${what}; got ${JSON.stringify(received)}`)), timeoutMs);
    const check = (): void => {
      if (predicate(received)) {
        clearTimeout(timer);
        resolve();
      } else {
        waiters.push(check);
      }
    };
    waiters.push(check);
  });
}

/** Messages other than the BARRIER=1 handshake. */
const payloads = (): string[] => received.map((r) => r.message).filter((m) => m !== 'BARRIER=1');

function captureLogger(lines: string[]): Logger {
  const logger: Logger = {
    debug: (_o, m) => lines.push(`debug ${m ?? ''}`),
    info: (_o, m) => lines.push(`info ${m ?? ''}`),
    warn: (o, m) => lines.push(`warn ${m ?? ''} ${JSON.stringify(o)}`),
    error: (o, m) => lines.push(`error ${m ?? ''} ${JSON.stringify(o)}`),
    child: () => logger,
  };
  return logger;
}

before(async () => {
  dir = mkdtempSync(join(tmpdir(), 'ha-sdnotify-'));
  socketPath = join(dir, 'notify.sock');
  const script = join(dir, 'listener.py');
  writeFileSync(script, LISTENER);
  listener = spawn('python3', [script, socketPath], { stdio: ['pipe', 'pipe', 'pipe'] });
  const lines = createInterface({ input: listener.stdout });
  await new Promise<void>((resolve, reject) => {
    listener.once('error', reject);
    listener.once('exit', (code) => reject(new Error(`listener exited with ${code}`)));
    lines.on('line', (line) => {
      const parsed = JSON.parse(line) as { ready?: boolean; message?: string; fds?: number };
      if (parsed.ready) {
        resolve();
        return;
      }
      received.push({ message: parsed.message ?? '', fds: parsed.fds ?? 0 });
      for (const w of waiters.splice(0)) w();
    });
  });
  listener.removeAllListeners('exit');
});

after(() => {
  listener.kill('SIGKILL');
  listener.stdout.destroy();
  listener.stderr.destroy();
  listener.stdin.destroy();
  rmSync(dir, { recursive: true, force: true });
});

test('does nothing at all when NOTIFY_SOCKET is unset', async () => {
  const marker = join(dir, 'spawned');
  const fake = join(dir, 'fake-notify.sh');
  writeFileSync(fake, `#!/bin/sh\ntouch '${marker}'\n`);
  chmodSync(fake, 0o755);
  const n = createNotifier({ env: { PATH: process.env.PATH }, command: fake });
  assert.equal(n.enabled(), false);
  assert.equal(await n.notifyReady('up'), false);
  assert.equal(await n.notifyWatchdog(), false);
  assert.equal(await n.notifyStopping(), false);
  assert.equal(await n.notifyStatus('x'), false);
  assert.equal(n.startWatchdog(), undefined);
  assert.equal(existsSync(marker), false, 'systemd-notify must not be spawned');
});

test('READY, STATUS, WATCHDOG and STOPPING reach the notify socket through systemd-notify', async () => {
  const n = createNotifier({ env: { ...process.env, NOTIFY_SOCKET: socketPath } });
  assert.equal(n.enabled(), true);
  const start = received.length;
  assert.equal(await n.notifyReady('listening on 3 inputs'), true);
  assert.equal(await n.notifyStatus('model loaded'), true);
  assert.equal(await n.notifyWatchdog(), true);
  assert.equal(await n.notifyStopping('cutting the current reply'), true);
  await waitFor((m) => m.slice(start).filter((r) => r.message !== 'BARRIER=1').length >= 4, 'four notifications');
  // One datagram per call; the order of the variables inside one is not significant.
  const got = payloads().slice(-4).map((p) => p.split('\n').sort());
  assert.deepEqual(got, [
    ['READY=1', 'STATUS=listening on 3 inputs'],
    ['STATUS=model loaded'],
    ['WATCHDOG=1'],
    ['STATUS=cutting the current reply', 'STOPPING=1'],
  ]);
  // systemd-notify waited for the manager each time: a BARRIER=1 with one fd follows every message.
  const barriers = received.slice(start).filter((r) => r.message === 'BARRIER=1');
  assert.equal(barriers.length, 4);
  assert.ok(barriers.every((b) => b.fds === 1));
});

test('a newline in a status cannot inject another variable', async () => {
  const n = createNotifier({ env: { ...process.env, NOTIFY_SOCKET: socketPath } });
  assert.equal(await n.notifyStatus('broker down\nREADY=1'), true);
  await waitFor(() => payloads().some((p) => p.startsWith('STATUS=broker down')), 'status');
  const last = payloads().filter((p) => p.startsWith('STATUS=broker down')).at(-1);
  assert.equal(last, 'STATUS=broker down READY=1');
});

test('startWatchdog pings WATCHDOG=1 at half of WATCHDOG_USEC until stopped', async () => {
  const env = { ...process.env, NOTIFY_SOCKET: socketPath, WATCHDOG_USEC: '200000', WATCHDOG_PID: String(process.pid) };
  const n = createNotifier({ env });
  const before = payloads().filter((p) => p === 'WATCHDOG=1').length;
  const handle = n.startWatchdog();
  assert.ok(handle);
  assert.equal(handle.intervalMs, 100);
  await waitFor(() => payloads().filter((p) => p === 'WATCHDOG=1').length >= before + 2, 'two watchdog pings');
  handle.stop();
  handle.stop();
});

test('the watchdog stays off for another PID or without WATCHDOG_USEC', () => {
  assert.equal(watchdogIntervalMs({ WATCHDOG_USEC: '30000000' }, 42), 15_000);
  assert.equal(watchdogIntervalMs({ WATCHDOG_USEC: '30000000', WATCHDOG_PID: '42' }, 42), 15_000);
  assert.equal(watchdogIntervalMs({ WATCHDOG_USEC: '30000000', WATCHDOG_PID: '43' }, 42), undefined);
  assert.equal(watchdogIntervalMs({}, 42), undefined);
  assert.equal(watchdogIntervalMs({ WATCHDOG_USEC: 'soon' }, 42), undefined);
  assert.equal(watchdogIntervalMs({ WATCHDOG_USEC: '0' }, 42), undefined);
  const n = createNotifier({ env: { NOTIFY_SOCKET: socketPath, WATCHDOG_USEC: '30000000', WATCHDOG_PID: '1' }, pid: 2 });
  assert.equal(n.startWatchdog(), undefined);
});

test('a failing systemd-notify is logged and reported as false, never thrown', async () => {
  const logs: string[] = [];
  const missing = createNotifier({
    env: { NOTIFY_SOCKET: socketPath },
    command: join(dir, 'no-such-systemd-notify'),
    log: captureLogger(logs),
  });
  assert.equal(await missing.notifyReady(), false);
  // A socket nobody listens on: systemd-notify itself fails.
  const nowhere = createNotifier({ env: { ...process.env, NOTIFY_SOCKET: join(dir, 'nobody.sock') }, log: captureLogger(logs) });
  assert.equal(await nowhere.notifyWatchdog(), false);
  assert.equal(logs.length, 2);
  assert.ok(logs.every((l) => l.startsWith('warn systemd-notify')), logs.join('\n'));
});
