/** The graceful stop deadline (issue 9 "exit within the stop timeout"): stopWithin. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { stopWithin } from '../../src/service/app.js';
import { createLogger } from '../../src/kernel/log.js';
import { FakeClock } from '../../src/kernel/clock.js';
import { deferred } from '../support/fake-provider.js';

const log = createLogger('test:shutdown');

function exitCode(): { code: Promise<number>; exit: (c: number) => void } {
  let exit!: (c: number) => void;
  const code = new Promise<number>((r) => (exit = r));
  return { code, exit };
}

test('a stop that finishes exits 0 and cancels the deadline', async () => {
  const clock = new FakeClock();
  const { code, exit } = exitCode();
  const calls: number[] = [];
  const stopped = deferred();
  stopWithin(() => stopped.promise, 2000, (c) => (calls.push(c), exit(c)), log, clock);
  clock.advance(1999);
  stopped.resolve();
  assert.equal(await code, 0);
  assert.equal(clock.pending, 0, 'the deadline is cancelled');
  clock.advance(10_000);
  assert.deepEqual(calls, [0], 'exit is called once');
});

test('a stop that hangs (a plugin never returns) exits 1 at the deadline', async () => {
  const clock = new FakeClock();
  const calls: number[] = [];
  stopWithin(() => new Promise<void>(() => undefined), 150, (c) => void calls.push(c), log, clock);
  clock.advance(149);
  assert.deepEqual(calls, [], 'not before the deadline');
  clock.advance(1);
  assert.deepEqual(calls, [1], 'at the deadline');
});

test('a stop that fails exits 1 at once', async () => {
  const { code, exit } = exitCode();
  stopWithin(() => Promise.reject(new Error('database is locked')), 5000, exit, log);
  assert.equal(await code, 1);
});
