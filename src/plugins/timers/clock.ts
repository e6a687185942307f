/**
 * The timers' clock is the kernel's (src/kernel/clock.ts): wall time in ms and
 * one-shot timers safe past Node's 24.8-day limit. `ManualClock` is the
 * kernel's FakeClock starting at noon, for tests of spoken times.
 */
import { FakeClock } from '../../kernel/clock.js';

export { systemClock, type Clock, type TimerHandle as ClockHandle } from '../../kernel/clock.js';

/** A manual clock for tests: time moves only with `advance(ms)`; starts at 2026-01-01 12:00 UTC. */
export class ManualClock extends FakeClock {
  constructor(start = Date.UTC(2026, 0, 1, 12, 0, 0)) {
    super(start);
  }
}
