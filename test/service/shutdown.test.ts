/** The graceful stop deadline (issue 9 "exit within the stop timeout"): stopWithin. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { stopWithin } from '../../src/service/app.js';
import { createLogger } from '../../src/kernel/log.js';

const log = createLogger('test:shutdown');

function exitCode(): { code: Promise<number>; exit: (c: number) => void } {
  let exit!: (c: number) => void;
  const code = new Promise<number>((r) => (exit = r));
  return { code, exit };
}

test('a stop that finishes exits 0 and cancels the deadline', async () => {
  const { code, exit } = exitCode();
  const calls: number[] = [];
  stopWithin(() => new Promise((r) => setTimeout(r, 20)), 2000, (c) => (calls.push(c), exit(c)), log);
  assert.equal(await code, 0);
  await new Promise((r) => setTimeout(r, 50));
  assert.deepEqual(calls, [0], 'exit is called once');
});

test('a stop that hangs (a plugin never returns) exits 1 at the deadline', async () => {
  const { code, exit } = exitCode();
  const t0 = performance.now();
  stopWithin(() => new Promise<void>(() => undefined), 150, exit, log);
  assert.equal(await code, 1);
  const took = performance.now() - t0;
  assert.ok(took >= 140 && took < 2000, `at the deadline (${took} ms)`);
});

test('a stop that fails exits 1 at once', async () => {
  const { code, exit } = exitCode();
  stopWithin(() => Promise.reject(new Error('database is locked')), 5000, exit, log);
  assert.equal(await code, 1);
});
