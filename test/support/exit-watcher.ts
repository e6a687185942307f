/**
 * Watches processes end from outside the service's event loop (benchmarks,
 * issue 16/17 stop figures): a python3 child (Debian's, standard library
 * only) opens a pidfd for each pid it is given (os.pidfd_open, Linux 5.3+),
 * waits on it in a thread and prints the moment the process ended on
 * CLOCK_MONOTONIC, the clock process.hrtime.bigint() reads. The service may
 * be busy when the player dies; this sees the death when it happens.
 */
import { spawn, type ChildProcessWithoutNullStreams } from 'node:child_process';
import { createInterface } from 'node:readline';

const WATCHER = `
import os, sys, threading, time, select
def watch(pid):
    try:
        fd = os.pidfd_open(pid)
    except ProcessLookupError:
        print(pid, time.monotonic_ns(), "gone", flush=True); return
    print(pid, 0, "armed", flush=True)
    select.select([fd], [], [])
    print(pid, time.monotonic_ns(), "exited", flush=True)
    os.close(fd)
print("ready", flush=True)
for line in sys.stdin:
    line = line.strip()
    if line: threading.Thread(target=watch, args=(int(line),), daemon=True).start()
`;

/** When a watched process ended: `at` in monotonic ns; `gone`: it had ended before it could be watched. */
export interface ProcessEnd {
  at: bigint;
  gone: boolean;
}

/** A running watcher (see the module comment). */
export interface ExitWatcher {
  /** Resolves once the watch on `pid` is armed, with `ended`, which resolves when `pid` ends (or at once when it had already ended). */
  watch(pid: number): Promise<{ ended: Promise<ProcessEnd> }>;
  close(): void;
}

/** Start the watcher (python3 on PATH). Rejects when python3 cannot start. */
export async function startExitWatcher(): Promise<ExitWatcher> {
  const child: ChildProcessWithoutNullStreams = spawn('python3', ['-u', '-c', WATCHER], { stdio: ['pipe', 'pipe', 'pipe'] });
  await new Promise<void>((resolve, reject) => {
    child.once('spawn', () => resolve());
    child.once('error', (err) => reject(new Error(`exit watcher: cannot start python3: ${err.message}`)));
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => void (stderr += d.toString()));
  const armed = new Map<number, () => void>();
  const waiting = new Map<number, (r: ProcessEnd) => void>();
  let ready!: () => void;
  const isReady = new Promise<void>((resolve) => (ready = resolve));
  createInterface({ input: child.stdout }).on('line', (line) => {
    if (line === 'ready') return ready();
    const [pid, at, how] = line.split(' ');
    armed.get(Number(pid))?.();
    armed.delete(Number(pid));
    if (how === 'armed') return;
    const done = waiting.get(Number(pid));
    if (!done) return;
    waiting.delete(Number(pid));
    done({ at: BigInt(at!), gone: how === 'gone' });
  });
  child.once('exit', (code) => {
    for (const [pid] of waiting) waiting.delete(pid);
    if (code) process.emitWarning(`exit watcher ended with code ${code}: ${stderr.trim()}`);
  });
  await isReady;
  return {
    /** Resolves once `pid` has ended; call it while the process still runs (the watch is armed within a millisecond or so). */
    watch(pid) {
      const ended = new Promise<ProcessEnd>((resolve) => waiting.set(pid, resolve));
      const isArmed = new Promise<void>((resolve) => armed.set(pid, resolve));
      child.stdin.write(`${pid}\n`);
      return isArmed.then(() => ({ ended }));
    },
    close() {
      child.stdin.end();
      child.kill();
    },
  };
}
