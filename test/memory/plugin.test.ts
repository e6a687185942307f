/**
 * MemoryPlugin under the plugin host: the host starts and stops the memory
 * loops like any plugin; a loop that throws or hangs neither stops its own
 * loop nor any other plugin. Time is a FakeClock: no wall-clock waits.
 */
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../src/kernel/clock.js';
import type { Plugin } from '../../src/kernel/sdk.js';
import { LOOP_NAMES, MemoryPlugin, type LoopName, type MemoryLoops } from '../../src/memory/index.js';
import { startHarness } from '../support/kernel-harness.js';
import { makeMemory, tempDir } from './helpers.js';

const MIN = 60_000;

/** Let promise chains of ticks fired by the fake clock settle (one event-loop turn, no wall-clock wait). */
const flush = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * Move fake time forward by `ms` in 10 s steps, letting ticks settle after
 * each, as real time would (FakeClock.advance fires timers synchronously, so
 * one big step would fire a tick's time limit before the tick could settle).
 */
async function run(clock: FakeClock, ms: number): Promise<void> {
  for (let left = ms; left > 0; left -= 10_000) {
    clock.advance(Math.min(10_000, left));
    await flush();
  }
}

/** A plugin that registers one tool, to see that it keeps running. */
function neighbour(): Plugin {
  return {
    name: 'neighbour',
    start: (sdk) => sdk.registerTool({ name: 'neighbour_ping', description: 'ping', parameters: { type: 'object', properties: {} }, handler: () => 'pong' }),
  };
}

describe('MemoryPlugin', () => {
  it('is started and stopped by the plugin host; its loops run on the clock and stop with it', async () => {
    const { dir, cleanup } = tempDir();
    const clock = new FakeClock();
    const calls: LoopName[] = [];
    let plugin!: MemoryPlugin;
    let mem!: ReturnType<typeof makeMemory>;
    const h = await startHarness({
      clock,
      beforeStart: (k) => {
        mem = makeMemory({ dir, settings: k.settings, clock });
        const loops: MemoryLoops = { runLoopOnce: (n) => (calls.push(n), mem.runLoopOnce(n)) };
        plugin = new MemoryPlugin({ loops, clock });
        k.use(plugin).use(neighbour());
      },
    });
    try {
      assert.equal(h.kernel.host.status().find((s) => s.name === 'memory')?.state, 'running');
      assert.deepEqual(plugin.armed().sort(), [...LOOP_NAMES].sort(), 'every loop is armed');
      h.settings.set('core.memory.rule_interval_min', 5);
      await run(clock, 10 * MIN); // rules (armed at 10 min) ticks once and is re-armed at 5 min from the setting
      assert.deepEqual(calls, ['rules']);
      await run(clock, 5 * MIN);
      assert.deepEqual(calls, ['rules', 'rules'], 'the changed interval applies from the next tick');
      await run(clock, 60 * MIN);
      for (const loop of ['distill', 'archive'] as const) assert.ok(calls.includes(loop), `${loop} ran`);
    } finally {
      await h.close();
    }
    assert.equal(h.kernel.host.status().find((s) => s.name === 'memory')?.state, 'stopped');
    assert.deepEqual(plugin.armed(), [], 'no loop armed after stop');
    const before = calls.length;
    await run(clock, 6 * 60 * MIN);
    assert.equal(calls.length, before, 'no tick after stop');
    mem.close();
    cleanup();
  });

  it('a loop that throws or hangs does not stop its loop, the other loops or other plugins', async () => {
    const clock = new FakeClock();
    const calls: LoopName[] = [];
    let plugin!: MemoryPlugin;
    const loops: MemoryLoops = {
      runLoopOnce: (n) => {
        calls.push(n);
        if (n === 'rules') throw new Error('rules exploded');
        if (n === 'merge') return new Promise(() => undefined); // never settles
        return Promise.resolve({ ok: 1 });
      },
    };
    const h = await startHarness({
      clock,
      beforeStart: (k) => {
        plugin = new MemoryPlugin({ loops, clock, tickTimeoutMs: 30_000 });
        k.use(plugin).use(neighbour());
      },
    });
    try {
      await run(clock, 10 * MIN); // rules throws
      await run(clock, 10 * MIN); // and runs again
      assert.deepEqual(calls, ['rules', 'rules'], 'the throwing loop goes on');
      await run(clock, 100 * MIN); // merge (120 min) hangs
      assert.ok(calls.includes('merge'));
      assert.ok(!plugin.armed().includes('merge'), 'merge is waiting for its tick');
      await run(clock, 30_000); // the tick's time limit
      assert.ok(plugin.armed().includes('merge'), 'a hung tick is given up and the loop re-armed');
      await run(clock, 120 * MIN);
      assert.equal(calls.filter((c) => c === 'merge').length, 2);
      assert.ok(calls.includes('distill') && calls.includes('archive') && calls.includes('review'), 'the other loops ran');
      const status = Object.fromEntries(h.kernel.host.status().map((s) => [s.name, s.state]));
      assert.deepEqual(status, { memory: 'running', neighbour: 'running' });
      assert.ok(h.kernel.tools.has('neighbour_ping'), 'the other plugin keeps its tool');
      assert.equal(await plugin.tick('rules'), undefined, 'a failed tick resolves undefined, never throws');
    } finally {
      // merge hangs again: stop waits for it no longer than its time limit
      const closing = h.close();
      await run(clock, 30_000);
      await closing;
    }
    assert.deepEqual(plugin.armed(), []);
  });
});
