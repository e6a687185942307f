/**
 * An injectable clock: wall time plus one-shot timers. The real one wraps
 * Date.now/setTimeout; `ManualClock` only moves when a test calls
 * `advance(ms)`, so rules about time are tested without waiting.
 */

/** Opaque timer handle. */
export interface ClockHandle {
  readonly id: number;
}

/** Wall clock (ms since epoch) and one-shot timers (ms). */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): ClockHandle;
  clearTimeout(handle: ClockHandle): void;
}

/** The real clock; its timers are unref'd so they never keep the process alive. Waits longer than setTimeout's 2^31-1 ms limit re-arm. */
export const systemClock: Clock = (() => {
  const live = new Map<number, NodeJS.Timeout>();
  let seq = 0;
  const MAX = 2_147_483_647;
  return {
    now: () => Date.now(),
    setTimeout(fn: () => void, ms: number): ClockHandle {
      const id = ++seq;
      const due = Date.now() + Math.max(0, ms);
      const arm = (): void => {
        const left = due - Date.now();
        const t = setTimeout(() => {
          if (due - Date.now() > 0 && left > MAX) arm();
          else {
            live.delete(id);
            fn();
          }
        }, Math.min(Math.max(0, left), MAX));
        t.unref();
        live.set(id, t);
      };
      arm();
      return { id };
    },
    clearTimeout(handle: ClockHandle): void {
      const t = live.get(handle.id);
      if (t) clearTimeout(t);
      live.delete(handle.id);
    },
  };
})();

/** A clock for tests: time stands still until `advance(ms)`; due timers fire in order. */
export class ManualClock implements Clock {
  private t: number;
  private seq = 0;
  private readonly timers = new Map<number, { at: number; fn: () => void }>();

  constructor(start = Date.UTC(2026, 0, 1, 12, 0, 0)) {
    this.t = start;
  }

  now(): number {
    return this.t;
  }

  setTimeout(fn: () => void, ms: number): ClockHandle {
    const id = ++this.seq;
    this.timers.set(id, { at: this.t + Math.max(0, ms), fn });
    return { id };
  }

  clearTimeout(handle: ClockHandle): void {
    this.timers.delete(handle.id);
  }

  /** Number of timers not yet fired. */
  pending(): number {
    return this.timers.size;
  }

  /** Move time forward by `ms`, firing every timer that falls due, earliest first. */
  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      let next: [number, { at: number; fn: () => void }] | undefined;
      for (const e of this.timers) if (e[1].at <= end && (!next || e[1].at < next[1].at)) next = e;
      if (!next) break;
      this.timers.delete(next[0]);
      this.t = Math.max(this.t, next[1].at);
      next[1].fn();
    }
    this.t = end;
  }
}
