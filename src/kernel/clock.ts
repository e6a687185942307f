/**
 * Time source for everything in the kernel whose rules are about time
 * (cooldowns, backlog feedback, tool timeouts), so tests use a fake clock.
 */

/** Opaque timer handle. */
export type TimerHandle = { readonly id: number };

/** A clock: wall time in ms and one-shot timers. */
export interface Clock {
  now(): number;
  setTimeout(fn: () => void, ms: number): TimerHandle;
  clearTimeout(h: TimerHandle): void;
}

/**
 * The real clock: Date.now and Node timers, unref'd so they never hold the
 * process open. Delays longer than Node's 24.8-day limit are re-armed until
 * they are due (a timer set for a month fires after a month, not at once).
 */
export const systemClock: Clock = (() => {
  const live = new Map<number, NodeJS.Timeout>();
  let seq = 0;
  const MAX = 2_147_483_647;
  return {
    now: () => Date.now(),
    setTimeout(fn: () => void, ms: number): TimerHandle {
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
    clearTimeout(h: TimerHandle): void {
      const t = live.get(h.id);
      if (t) clearTimeout(t);
      live.delete(h.id);
    },
  };
})();

/** A manual clock for tests: time moves only with `advance(ms)`, firing due timers in order. */
export class FakeClock implements Clock {
  private t: number;
  private seq = 1;
  private readonly timers: Array<{ id: number; at: number; fn: () => void }> = [];
  constructor(start = Date.UTC(2026, 0, 1)) {
    this.t = start;
  }
  now(): number {
    return this.t;
  }
  setTimeout(fn: () => void, ms: number): TimerHandle {
    const id = this.seq++;
    this.timers.push({ id, at: this.t + Math.max(0, ms), fn });
    return { id };
  }
  clearTimeout(h: TimerHandle): void {
    const i = this.timers.findIndex((x) => x.id === h.id);
    if (i >= 0) this.timers.splice(i, 1);
  }
  /** Move time forward by `ms`, running every timer that falls due, in time order. */
  advance(ms: number): void {
    const end = this.t + ms;
    for (;;) {
      this.timers.sort((a, b) => a.at - b.at || a.id - b.id);
      const due = this.timers[0];
      if (!due || due.at > end) break;
      this.timers.shift();
      this.t = due.at;
      due.fn();
    }
    this.t = end;
  }
  /** Number of timers not yet fired. */
  pending(): number {
    return this.timers.length;
  }
}
