/**
 * The first read of the home at start-up. After the broker connection comes
 * up, the broker hands over its retained messages (discovery configs, then,
 * once the registry subscribed to their topics, the devices' states) in a
 * burst. The home is "read" when the broker is connected, every subscription
 * was acknowledged, and no retained message came for `quietMs` (default
 * 300 ms) since. A command that arrives before
 * that waits (`whenRead`), up to `maxWaitMs`, so the first command after a
 * fresh start already knows the home; it never waits for a broker that is
 * down (an attempt that failed before any connection ends the wait at once),
 * and nothing here holds the service's start back.
 */
import type { Clock, TimerHandle } from '../kernel/clock.js';

/** Options of StartupRead. */
export interface StartupReadOptions {
  clock: Clock;
  /** Quiet period after the last retained message, ms (default 300). */
  quietMs?: number;
}

/** See module comment. */
export class StartupRead {
  private read = false;
  private brokerDown = false;
  private connected = false;
  private quiet: TimerHandle | undefined;
  /** SUBSCRIBEs not yet acknowledged: their retained messages are still to come, so the quiet does not count. */
  private pending = 0;
  private readonly waiters = new Set<() => void>();
  private readonly quietMs: number;

  constructor(private readonly opts: StartupReadOptions) {
    this.quietMs = opts.quietMs ?? 300;
  }

  /** True once the first retained burst after a connection has been read. */
  get done(): boolean {
    return this.read;
  }

  /** The broker connection went up or down. */
  connection(up: boolean): void {
    this.connected = up;
    if (up) {
      this.brokerDown = false;
      this.rearm();
    } else {
      this.opts.clock.clearTimeout(this.quiet);
      this.quiet = undefined;
      this.pending = 0;
      if (!this.read) {
        // Down before the home was read: waiting would only delay the answer that the broker is down.
        this.brokerDown = true;
        this.release();
      }
    }
  }

  /** A connection attempt failed before any connection (the broker is unreachable). */
  unreachable(): void {
    if (this.connected || this.read) return;
    this.brokerDown = true;
    this.release();
  }

  /** A retained message arrived: the burst goes on. */
  retained(): void {
    if (this.read || !this.connected) return;
    this.rearm();
  }

  /**
   * A subscription went out: the home is not read before its SUBACK, however
   * long the broker takes (a loaded machine took over 300 ms, and the first
   * typed command found no devices, or found them before their availability).
   */
  subscribing(): void {
    this.pending++;
  }

  /** A subscription was acknowledged (or failed): its retained messages come now; the quiet period starts again. */
  subscribed(): void {
    this.pending = Math.max(0, this.pending - 1);
    this.rearm();
  }

  private rearm(): void {
    if (this.read) return;
    this.opts.clock.clearTimeout(this.quiet);
    this.quiet = this.opts.clock.setTimeout(() => {
      this.quiet = undefined;
      if (!this.connected || this.pending > 0) return;
      this.read = true;
      this.release();
    }, this.quietMs);
  }

  private release(): void {
    for (const w of [...this.waiters]) w();
  }

  /**
   * Resolves once the home has been read, at once when it already was or
   * when the broker is down, else after `maxWaitMs` at the latest.
   * Resolves to true when the home was read.
   */
  whenRead(maxWaitMs: number): Promise<boolean> {
    if (this.read || this.brokerDown || maxWaitMs <= 0) return Promise.resolve(this.read);
    return new Promise<boolean>((resolve) => {
      const done = (): void => {
        this.waiters.delete(done);
        this.opts.clock.clearTimeout(timer);
        resolve(this.read);
      };
      const timer = this.opts.clock.setTimeout(done, maxWaitMs);
      this.waiters.add(done);
    });
  }

  /** Cancel the quiet timer and release every waiter (plugin stop). */
  close(): void {
    this.opts.clock.clearTimeout(this.quiet);
    this.quiet = undefined;
    this.brokerDown = true;
    this.release();
  }
}
