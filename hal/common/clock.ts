/**
 * Time source for every HAL rule that is about time (debounce, long-press,
 * backoff, real-time pacing, LED blinking). Drivers take a `Clock` so tests
 * pass a `FakeClock` and advance it by hand instead of sleeping.
 */

/** Opaque timer handle returned by `Clock.setTimeout`. */
export type TimerHandle = { readonly __timer: true } | NodeJS.Timeout;

/** A clock: `now()` in ms (monotonic for the system clock), timers in ms. */
export interface Clock {
  /** Current time, ms. */
  now(): number;
  /** Run `fn` after `ms` milliseconds. */
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(handle: TimerHandle | undefined): void;
}

/** The real clock: `performance.now()` and Node timers. */
export const systemClock: Clock = {
  now: () => performance.now(),
  setTimeout: (fn, ms) => setTimeout(fn, ms),
  clearTimeout: (h) => {
    if (h !== undefined) clearTimeout(h as NodeJS.Timeout);
  },
};

interface FakeTimer {
  readonly __timer: true;
  id: number;
  at: number;
  fn: () => void;
}

/**
 * A manual clock for tests: time moves only through `tick(ms)` / `advanceTo`.
 * Timers due at the same time fire in creation order; timers created while
 * ticking fire within the same tick when due.
 */
export class FakeClock implements Clock {
  private t: number;
  private seq = 0;
  private timers: FakeTimer[] = [];

  constructor(start = 0) {
    this.t = start;
  }

  now(): number {
    return this.t;
  }

  setTimeout(fn: () => void, ms: number): TimerHandle {
    const timer: FakeTimer = { __timer: true, id: ++this.seq, at: this.t + Math.max(0, ms), fn };
    this.timers.push(timer);
    return timer;
  }

  clearTimeout(handle: TimerHandle | undefined): void {
    this.timers = this.timers.filter((t) => t !== handle);
  }

  /** Number of pending timers. */
  get pending(): number {
    return this.timers.length;
  }

  /** Delay in ms until the next timer fires, or undefined when none is pending. */
  nextDelay(): number | undefined {
    if (this.timers.length === 0) return undefined;
    return Math.min(...this.timers.map((t) => t.at)) - this.t;
  }

  /** Advance by `ms`, firing every timer that falls due, in time order. */
  tick(ms: number): void {
    this.advanceTo(this.t + ms);
  }

  /** Advance to absolute time `target` (ms). */
  advanceTo(target: number): void {
    for (;;) {
      const due = this.timers.filter((t) => t.at <= target).sort((a, b) => a.at - b.at || a.id - b.id)[0];
      if (!due) break;
      this.timers = this.timers.filter((t) => t !== due);
      this.t = Math.max(this.t, due.at);
      due.fn();
    }
    this.t = Math.max(this.t, target);
  }
}
