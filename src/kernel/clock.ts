/**
 * The one time source of the program. Everything whose rules are about time
 * (kernel cooldowns and tool timeouts, HAL debounce, long-press, backoff and
 * pacing, home confirmations, voice timings, memory ages, timers) takes a
 * `Clock`, so tests pass a `FakeClock` and move time by hand instead of
 * sleeping.
 *
 * Two readings, two purposes:
 * - `now()`: wall time, ms since the Unix epoch (Date.now). For timestamps a
 *   person reads or that outlive the process (stored rows, timer due times,
 *   "what time is it").
 * - `monotonic()`: ms from an arbitrary origin (performance.now). Never jumps
 *   when NTP or a person sets the system clock. For durations, debouncing,
 *   pacing and latency figures.
 */

/** Opaque handle of a timer set with `Clock.setTimeout`. */
export type TimerHandle = { readonly id: number };

/** Options of `Clock.setTimeout`. */
export interface TimerOptions {
  /**
   * Hold the process open until the timer fires or is cleared (a Node timer
   * as it comes). Default false: the system clock's timers are unref'd, so a
   * cooldown or a timer due next week never keeps a process alive. Device
   * work that nothing else holds open (simulated playback, file pacing,
   * reconnect backoff, debounce, LED blinking: the HAL) sets it.
   */
  keepAlive?: boolean;
}

/** A clock: wall time, monotonic time (both ms) and one-shot timers. */
export interface Clock {
  /** Wall time, ms since the Unix epoch. */
  now(): number;
  /** Monotonic time, ms from an arbitrary origin; only differences are meaningful. */
  monotonic(): number;
  /** Run `fn` once after `ms` milliseconds (negative counts as 0). */
  setTimeout(fn: () => void, ms: number, opts?: TimerOptions): TimerHandle;
  /** Cancel a timer; an unknown, fired or undefined handle is ignored. */
  clearTimeout(handle: TimerHandle | undefined): void;
}

/** Node's longest timer delay, ms (2^31 - 1, about 24.8 days); longer delays fire at once. */
const MAX_NODE_DELAY = 2_147_483_647;

/**
 * The real clock: Date.now, performance.now and Node timers. Timers are
 * unref'd unless `keepAlive` is set (see TimerOptions). A delay longer than Node's
 * 24.8-day limit is re-armed until it is due (a timer set for a month fires
 * after a month, not at once); the remaining time is measured on the
 * monotonic clock.
 */
export const systemClock: Clock = (() => {
  const live = new Map<number, NodeJS.Timeout>();
  let seq = 0;
  return {
    now: () => Date.now(),
    monotonic: () => performance.now(),
    setTimeout(fn: () => void, ms: number, opts: TimerOptions = {}): TimerHandle {
      const id = ++seq;
      const due = performance.now() + Math.max(0, ms);
      const arm = (): void => {
        const left = due - performance.now();
        const t = setTimeout(() => {
          if (left > MAX_NODE_DELAY) arm();
          else {
            live.delete(id);
            fn();
          }
        }, Math.min(Math.max(0, left), MAX_NODE_DELAY));
        if (!opts.keepAlive) t.unref();
        live.set(id, t);
      };
      arm();
      return { id };
    },
    clearTimeout(handle: TimerHandle | undefined): void {
      if (!handle) return;
      const t = live.get(handle.id);
      if (t) clearTimeout(t);
      live.delete(handle.id);
    },
  };
})();

/**
 * A manual clock for tests: time moves only through `advance(ms)` or
 * `advanceTo(t)`, which run every timer that falls due in time order (timers
 * due at the same time in the order they were set; a timer set while
 * advancing fires within the same advance when it is due). `now()` and
 * `monotonic()` read the same fake time, so a test writes one number.
 * Starts at `start` ms (default 2026-01-01T00:00:00Z).
 */
export class FakeClock implements Clock {
  private t: number;
  private seq = 0;
  private timers: Array<{ id: number; at: number; fn: () => void }> = [];

  constructor(start = Date.UTC(2026, 0, 1)) {
    this.t = start;
  }

  now(): number {
    return this.t;
  }

  monotonic(): number {
    return this.t;
  }

  /** Set a fake timer; `opts.keepAlive` has no meaning here. */
  setTimeout(fn: () => void, ms: number, _opts?: TimerOptions): TimerHandle {
    const id = ++this.seq;
    this.timers.push({ id, at: this.t + Math.max(0, ms), fn });
    return { id };
  }

  clearTimeout(handle: TimerHandle | undefined): void {
    if (handle) this.timers = this.timers.filter((x) => x.id !== handle.id);
  }

  /** Number of timers set and not yet fired or cleared. */
  get pending(): number {
    return this.timers.length;
  }

  /** Delay in ms until the next timer fires, or undefined when none is pending. */
  nextDelay(): number | undefined {
    if (this.timers.length === 0) return undefined;
    return Math.min(...this.timers.map((x) => x.at)) - this.t;
  }

  /** Move time forward by `ms` (>= 0), running every timer that falls due, in time order. */
  advance(ms: number): void {
    if (!(ms >= 0)) throw new RangeError(`FakeClock.advance: ms must be >= 0, got ${ms}`);
    this.advanceTo(this.t + ms);
  }

  /** Move time forward to `target` ms (a target in the past leaves the time as it is), running due timers. */
  advanceTo(target: number): void {
    for (;;) {
      let due: { id: number; at: number; fn: () => void } | undefined;
      for (const x of this.timers) if (x.at <= target && (!due || x.at < due.at || (x.at === due.at && x.id < due.id))) due = x;
      if (!due) break;
      const fired = due;
      this.timers = this.timers.filter((x) => x !== fired);
      this.t = Math.max(this.t, fired.at);
      fired.fn();
    }
    this.t = Math.max(this.t, target);
  }
}
