/**
 * Agent.betweenTurns (issue 17: a plugin's tools change between turns, never
 * in the middle of one): at once when idle; after the running turn when one
 * runs; and a turn that arrives while the job runs waits for it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { startHarness } from '../support/kernel-harness.js';

test('betweenTurns runs at once when idle, after the running turn otherwise, and holds the next turn until done', async () => {
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const h = await startHarness({ script: [{ content: 'first', gate }, { content: 'second' }] });
  try {
    const order: string[] = [];
    assert.equal(await h.kernel.agent.betweenTurns(() => 'idle job'), 'idle job');
    const t1 = h.kernel.injectInput('test', 'console', 'one').then((r) => order.push(`turn1:${r.reply}`));
    await h.provider.waitForRequests(1);
    let finishJob!: () => void;
    const jobDone = new Promise<void>((r) => (finishJob = r));
    const job = h.kernel.agent.betweenTurns(async () => {
      // Turn one has ended (its result may reach its caller a microtask later).
      order.push(h.kernel.agent.busy || h.provider.requests.length !== 1 ? 'job start during a turn' : 'job start');
      // A turn submitted now waits for the job.
      const t2 = h.kernel.injectInput('test', 'console', 'two').then((r) => order.push(`turn2:${r.reply}`));
      for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
      assert.equal(h.provider.requests.length, 1, 'turn two has not begun');
      order.push('job end');
      finishJob();
      return { t2 };
    });
    for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
    assert.deepEqual(order, [], 'the job waits for the running turn');
    release();
    await t1;
    await jobDone;
    await (await job).t2;
    assert.deepEqual(order.filter((x) => x !== 'turn1:first'), ['job start', 'job end', 'turn2:second']);
    assert.ok(order.includes('turn1:first'));
    await assert.rejects(h.kernel.agent.betweenTurns(() => {
      throw new Error('boom');
    }), /boom/);
    assert.equal((await h.kernel.injectInput('test', 'console', 'three')).status, 'done', 'a failing job does not stop the agent');
  } finally {
    release();
    await h.close();
  }
});
