/**
 * The one clock (src/kernel/clock.ts): the FakeClock every test uses, and the
 * system clock's readings and timers (event-driven, no wall-clock sleeps).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FakeClock, systemClock } from '../../src/kernel/clock.js';

describe('FakeClock', () => {
  it('fires timers in time order, including ones set while advancing', () => {
    const clock = new FakeClock(100);
    const fired: string[] = [];
    clock.setTimeout(() => fired.push(`b@${clock.now()}`), 20);
    clock.setTimeout(() => {
      fired.push(`a@${clock.now()}`);
      clock.setTimeout(() => fired.push(`c@${clock.now()}`), 5);
    }, 10);
    const cancelled = clock.setTimeout(() => fired.push('never'), 15);
    clock.clearTimeout(cancelled);
    assert.equal(clock.pending, 2);
    assert.equal(clock.nextDelay(), 10);
    clock.advance(30);
    assert.deepEqual(fired, ['a@110', 'c@115', 'b@120']);
    assert.equal(clock.now(), 130);
    assert.equal(clock.pending, 0);
    assert.equal(clock.nextDelay(), undefined);
  });

  it('timers due at the same time fire in the order they were set; a negative delay counts as 0', () => {
    const clock = new FakeClock(0);
    const fired: string[] = [];
    clock.setTimeout(() => fired.push('first'), 10);
    clock.setTimeout(() => fired.push('second'), 10);
    clock.setTimeout(() => fired.push('now'), -5);
    clock.advance(0);
    assert.deepEqual(fired, ['now']);
    clock.advance(10);
    assert.deepEqual(fired, ['now', 'first', 'second']);
  });

  it('advanceTo moves to an absolute time and never backwards', () => {
    const clock = new FakeClock(1000);
    let at: number | undefined;
    clock.setTimeout(() => (at = clock.now()), 250);
    clock.advanceTo(1249);
    assert.equal(at, undefined);
    assert.equal(clock.nextDelay(), 1);
    clock.advanceTo(2000);
    assert.equal(at, 1250);
    assert.equal(clock.now(), 2000);
    clock.advanceTo(1500);
    assert.equal(clock.now(), 2000);
  });

  it('now() and monotonic() read the same fake time; the default start is 2026-01-01T00:00:00Z', () => {
    const clock = new FakeClock();
    assert.equal(clock.now(), Date.UTC(2026, 0, 1));
    clock.advance(1234);
    assert.equal(clock.monotonic(), clock.now());
    assert.equal(clock.now(), Date.UTC(2026, 0, 1) + 1234);
  });

  it('clearing an undefined, unknown or fired handle is harmless; a negative advance is a RangeError', () => {
    const clock = new FakeClock(0);
    const h = clock.setTimeout(() => undefined, 1);
    clock.advance(1);
    clock.clearTimeout(h);
    clock.clearTimeout(undefined);
    clock.clearTimeout({ id: 999 });
    assert.equal(clock.pending, 0);
    assert.throws(() => clock.advance(-1), RangeError);
  });
});

describe('systemClock', () => {
  it('now() is wall time (ms since the epoch) and monotonic() never goes back', () => {
    const before = Date.now();
    const now = systemClock.now();
    assert.ok(now >= before && now <= Date.now());
    const a = systemClock.monotonic();
    const b = systemClock.monotonic();
    assert.ok(b >= a);
  });

  it('fires a timer, not a cleared one, and not a 30-day one before a short one', async () => {
    const fired: string[] = [];
    const cleared = systemClock.setTimeout(() => fired.push('cleared'), 0);
    systemClock.clearTimeout(cleared);
    const month = systemClock.setTimeout(() => fired.push('month'), 30 * 24 * 3600 * 1000);
    await new Promise<void>((resolve) => {
      // The clock's timers are unref'd by design: a ref'd interval keeps the test process alive meanwhile.
      const keep = setInterval(() => undefined, 1000);
      systemClock.setTimeout(() => {
        fired.push('short');
        clearInterval(keep);
        resolve();
      }, 5);
    });
    systemClock.clearTimeout(month);
    assert.deepEqual(fired, ['short']);
  });

  it('a delay past Node 24.8-day limit is re-armed, not fired at once', async () => {
    // Node fires a delay above 2^31-1 ms after 1 ms (with a warning); the clock must not.
    const fired: string[] = [];
    const far = systemClock.setTimeout(() => fired.push('far'), 2 ** 31 + 10);
    await new Promise<void>((resolve) => {
      const keep = setInterval(() => undefined, 1000);
      systemClock.setTimeout(() => {
        clearInterval(keep);
        resolve();
      }, 20);
    });
    systemClock.clearTimeout(far);
    assert.deepEqual(fired, []);
  });
});
