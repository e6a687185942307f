/**
 * The child-process side of process plugins (src/plugins/external/process.ts):
 * process-group signals, the last-resort kills when the service goes away,
 * and stderr to the log under a rate cap.
 */
import { spawnSync, type ChildProcess } from 'node:child_process';
import type { Clock } from '../../kernel/clock.js';
import type { Logger } from '../../kernel/log-types.js';

/**
 * Children alive now. When the service's process exits without having
 * stopped its plugins (a fatal error, process.exit), their process groups
 * are SIGKILLed on the way out; a SIGKILLed service relies on bwrap's
 * --die-with-parent and on systemd's KillMode=mixed instead.
 */
export const liveChildren = new Set<ChildProcess>();
let exitHook = false;
export function track(child: ChildProcess): void {
  liveChildren.add(child);
  if (!exitHook) {
    exitHook = true;
    process.once('exit', () => {
      for (const c of liveChildren) killGroup(c, 'SIGKILL');
    });
  }
}

let pdeathsig: string[] | undefined;
/**
 * Outside the sandbox: `setpriv --pdeathsig KILL --` (util-linux >= 2.33) so
 * the plugin dies when the service does even if the service is SIGKILLed
 * (seed 001: "Linux Pdeathsig is the last-resort guard"); [] when setpriv
 * lacks it. Inside the sandbox bwrap's --die-with-parent does the same.
 */
export function pdeathsigPrefix(): string[] {
  if (pdeathsig) return pdeathsig;
  const r = spawnSync('setpriv', ['--help'], { encoding: 'utf8', timeout: 5000 });
  pdeathsig = r.status === 0 && /--pdeathsig/.test(r.stdout) ? ['setpriv', '--pdeathsig', 'KILL', '--'] : [];
  return pdeathsig;
}

/** Signal a child's whole process group (it was spawned detached: its PID is the group's id). Never throws. */
export function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    try {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    } catch {
      /* already gone */
    }
  }
}

/** At most `perSecond` events a second (a fixed one-second window on `clock`); counts what it refused. */
export class RateCap {
  private windowStart: number;
  private inWindow = 0;
  /** Refused since the last `takeDropped()`. */
  private dropped = 0;
  constructor(
    private readonly perSecond: number,
    private readonly clock: Clock,
  ) {
    this.windowStart = clock.monotonic();
  }

  allow(): boolean {
    const now = this.clock.monotonic();
    if (now - this.windowStart >= 1000) {
      this.windowStart = now;
      this.inWindow = 0;
    }
    if (++this.inWindow > this.perSecond) {
      this.dropped++;
      return false;
    }
    return true;
  }

  /** The number refused since the last call, reset to 0. */
  takeDropped(): number {
    const n = this.dropped;
    this.dropped = 0;
    return n;
  }
}

/** stderr to the log, line by line, within a rate cap; long lines cut at 2000 characters, never more than 8 KB held. */
export class StderrLogger {
  private buf = '';
  private last = '';
  constructor(
    private readonly log: Logger,
    private readonly cap: RateCap,
    private readonly onDrop: (n: number) => void,
  ) {}

  push(chunk: Buffer): void {
    this.buf += chunk.toString('utf8');
    let nl: number;
    while ((nl = this.buf.indexOf('\n')) !== -1) {
      this.line(this.buf.slice(0, nl));
      this.buf = this.buf.slice(nl + 1);
    }
    // A line without end is cut: never hold more than 8 KB of stderr.
    if (this.buf.length > 8192) {
      this.line(this.buf);
      this.buf = '';
    }
  }

  /** The last non-empty line seen (for a failed start's message). */
  lastLine(): string {
    return (this.buf.trim() || this.last).trim();
  }

  flush(): void {
    if (this.buf) this.line(this.buf);
    this.buf = '';
    this.reportDropped();
  }

  private reportDropped(): void {
    const n = this.cap.takeDropped();
    if (n) this.log.warn({ dropped: n }, 'plugin log lines dropped (rate cap core.plugins.stderr_lines_per_s)');
  }

  private line(text: string): void {
    const t = text.replace(/\r$/, '');
    if (!t.trim()) return;
    this.last = t;
    if (!this.cap.allow()) {
      this.onDrop(1);
      return;
    }
    this.reportDropped();
    this.log.info({ stream: 'stderr' }, t.slice(0, 2000));
  }
}
