/**
 * The input scheduler and stop (seed 001 "Input Scheduler & Interrupt
 * Mechanism"), deterministic with a fake clock: same level waits, higher
 * preempts, LIFO resume order, starvation guard, cooldown, clamp, stop budget
 * including inbox items, inputs after a stop untouched, backlog feedback,
 * spawn_child.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Scheduler, clampPluginLevel, effectiveLevel, type Task } from '../../src/kernel/scheduler.js';
import { FakeClock } from '../../src/kernel/clock.js';
import type { Plugin } from '../../src/kernel/sdk.js';
import type { Level } from '../../src/kernel/turn-types.js';
import { startHarness } from '../support/kernel-harness.js';
import { deferred } from '../support/fake-provider.js';

let seq = 0;
function task(level: Level, kind: 'queued' | 'interrupt' = level === 0 ? 'queued' : 'interrupt'): Task<string> {
  const id = `t${++seq}`;
  return { id, level, kind, payload: id, preemptions: 0, submittedAt: 0 };
}

test('idle: the first task runs; same level waits; strictly higher preempts', () => {
  const s = new Scheduler<string>(new FakeClock());
  const a = task(1);
  assert.deepEqual(s.submit(a), { action: 'run' });
  assert.equal(s.current, a);
  assert.equal(s.submit(task(1)).action, 'wait');
  const hi = task(2);
  const d = s.submit(hi);
  assert.equal(d.action, 'preempt');
  assert.equal(d.action === 'preempt' && d.victim, a);
});

test('a queued task (level 0) is preempted by any interrupt and queued tasks never preempt', () => {
  const s = new Scheduler<string>(new FakeClock());
  const q = task(0);
  s.submit(q);
  assert.equal(s.submit(task(0)).action, 'wait');
  assert.equal(s.submit(task(1)).action, 'preempt');
});

test('preempted tasks resume LIFO from the interrupt stack, after the interrupts that outrank them', () => {
  const clock = new FakeClock();
  const s = new Scheduler<string>(clock, 2000);
  const q = task(0);
  const l1 = task(1);
  const l2 = task(2);
  const q2 = task(0);
  s.submit(q);
  assert.equal(s.submit(l1).action, 'preempt');
  s.suspend(q);
  assert.equal(s.next(), l1);
  assert.equal(s.submit(q2).action, 'wait');
  assert.equal(s.submit(l2).action, 'preempt');
  s.suspend(l1);
  assert.equal(s.next(), l2);
  s.finish(l2);
  assert.equal(s.next(), l1, 'top of the stack first');
  s.finish(l1);
  assert.equal(s.next(), q, 'then the older preempted task');
  s.finish(q);
  assert.equal(s.next(), q2, 'then the queue');
});

test('starvation guard: effective level = level + min(preemptions, 2), capped at L4', () => {
  assert.equal(effectiveLevel({ level: 1, preemptions: 0 }), 1);
  assert.equal(effectiveLevel({ level: 1, preemptions: 1 }), 2);
  assert.equal(effectiveLevel({ level: 1, preemptions: 5 }), 3);
  assert.equal(effectiveLevel({ level: 3, preemptions: 2 }), 4);
  const clock = new FakeClock();
  const s = new Scheduler<string>(clock, 0);
  const t = task(1);
  s.submit(t);
  s.suspend(t); // preempted once
  s.suspend(t); // and again (bookkeeping only): 2 preemptions
  assert.equal(s.next(), t);
  assert.equal(s.submit(task(3)).action, 'wait', 'L3 no longer outranks an L1 task preempted twice (effective L3)');
  assert.equal(s.submit(task(4)).action, 'preempt');
});

test('cooldown: a task preempted less than 2 s ago cannot be preempted again; recheck after it ends', () => {
  const clock = new FakeClock();
  const s = new Scheduler<string>(clock, 2000);
  const q = task(0);
  s.submit(q);
  const l1 = task(1);
  s.submit(l1);
  s.suspend(q);
  assert.equal(s.next(), l1);
  s.finish(l1);
  assert.equal(s.next(), q, 'q resumes');
  clock.advance(500);
  const l2 = task(2);
  const d = s.submit(l2);
  assert.equal(d.action, 'wait');
  assert.equal(d.action === 'wait' && d.retryAt, clock.now() + 1500);
  clock.advance(1500);
  assert.equal(s.recheck().action, 'preempt');
});

test('clamp: default L1, external L4 -> L3, kernel-level L4 stays', () => {
  assert.equal(clampPluginLevel(4, false), 3);
  assert.equal(clampPluginLevel(4, true), 4);
  assert.equal(clampPluginLevel(0, false), 1);
  assert.equal(clampPluginLevel(2, false), 2);
});

test('agent: a higher interrupt cancels the in-flight LLM call, runs, and the preempted turn resumes with an [interrupt] note', async () => {
  const gate = deferred();
  const h = await startHarness({ script: [{ content: 'Long answer.', gate: gate.promise }, { content: 'Timer done.' }, { content: 'Resumed answer.' }] });
  h.settings.set('core.scheduler.preempt_cooldown_ms', 0);
  try {
    const first = h.kernel.injectInput('test', 'console', 'tell me a long story');
    await h.provider.waitForRequests(1);
    const urgent = h.kernel.injectInterrupt('timers', 3, 'console', 'The tea timer is done.');
    const u = await urgent;
    assert.equal(u.reply, 'Timer done.');
    assert.equal(h.provider.aborted, 1, 'the in-flight request was aborted');
    const f = await first;
    assert.equal(f.reply, 'Resumed answer.');
    assert.equal(f.status, 'done');
    const resumed = h.provider.requests[2]!.messages;
    assert.ok(resumed.some((m) => m.role === 'system' && m.content === '[interrupt] The tea timer is done.'));
    assert.deepEqual(h.outputs.map((o) => o.content), ['Timer done.', 'Resumed answer.']);
  } finally {
    gate.resolve();
    await h.close();
  }
});

test('agent: same-level input waits for the running turn', async () => {
  const gate = deferred();
  const h = await startHarness({ script: [{ content: 'One.', gate: gate.promise }, { content: 'Two.' }] });
  try {
    const a = h.kernel.injectInterrupt('x', 1, 'console', 'a');
    await h.provider.waitForRequests(1);
    const b = h.kernel.injectInterrupt('x', 1, 'console', 'b');
    await new Promise((r) => setImmediate(r)); // b pumped into the scheduler: its decision is made
    assert.deepEqual(h.kernel.agent.stats(), { running: true, stack: 0, pending: 1, queue: 0, inbox: 0 }, 'b waits');
    assert.equal(h.provider.aborted, 0);
    gate.resolve();
    assert.equal((await a).reply, 'One.');
    assert.equal((await b).reply, 'Two.');
  } finally {
    await h.close();
  }
});

test('stop: aborts the LLM call, cancels inputs queued at that moment (inbox included) before any stage runs; later inputs run', async () => {
  const gate = deferred();
  const stagesSeen: Record<string, string[]> = {};
  const watcher: Plugin = {
    name: 'watch',
    start(sdk) {
      for (const st of ['on_input', 'pre_action', 'after_output'] as const) {
        sdk.registerStage(st, (ctx) => {
          (stagesSeen[ctx.input.text] ??= []).push(st);
        });
      }
    },
  };
  const h = await startHarness({ script: [{ content: 'Once upon a time. ', pieces: ['Once upon a time. '], gate: gate.promise }], beforeStart: (k) => k.use(watcher) });
  let stopEvents = 0;
  h.kernel.bus.subscribe('_test_', 'stop', () => void stopEvents++);
  try {
    const running = h.kernel.injectInput('test', 'speaker', 'story');
    await h.provider.waitForRequests(1);
    const q1 = h.kernel.injectInput('test', 'console', 'queued one');
    const q2 = h.kernel.injectInput('test', 'console', 'queued two');
    await new Promise((r) => setImmediate(r)); // q1, q2 pumped into the scheduler
    const q3 = h.kernel.injectInput('test', 'console', 'still in the inbox');
    assert.equal(h.kernel.agent.stats().inbox, 1, 'q3 has not been pumped yet');
    const cancelled = h.kernel.stopNow('button');
    assert.equal(cancelled, 3);
    assert.equal(stopEvents, 1);
    const after = h.kernel.injectInput('test', 'console', 'after the stop');
    h.provider.enqueue({ content: 'Fresh answer.' });
    const r = await running;
    assert.equal(r.status, 'interrupted');
    assert.equal(r.reply, 'Once upon a time.');
    for (const q of [q1, q2, q3]) assert.equal((await q).status, 'cancelled');
    for (const t of ['queued one', 'queued two', 'still in the inbox']) assert.equal(stagesSeen[t], undefined, `${t}: no stage ran`);
    const a = await after;
    assert.equal(a.status, 'done');
    assert.deepEqual(stagesSeen['after the stop'], ['on_input', 'pre_action', 'after_output']);
    assert.equal(a.reply, 'Fresh answer.');
    assert.equal(h.provider.requests.length, 2, 'the stopped call was not retried; cancelled inputs never reached the LLM');
    const end = h.outputs.find((o) => o.kind === 'end')!;
    assert.equal(end.interrupted, true);
    assert.ok(!h.outputs.some((o) => o.channel === 'console' && o.content !== 'Fresh answer.'), 'cancelled inputs got no reply');
    const timeline = h.kernel.services.memory.timeline(100000);
    const agentEv = timeline.find((e) => e.kind === 'agent' && e.response === 'Once upon a time.')!;
    assert.equal(agentEv.interrupted, true, 'the cut reply is recorded as interrupted');
  } finally {
    gate.resolve();
    await h.close();
  }
});

test('stop is not held back by the preemption cooldown', async () => {
  // The fake clock never moves, so a turn preempted once stays inside its cooldown for the whole test.
  const firstCall = deferred();
  const resumedCall = deferred();
  const clock = new FakeClock();
  const h = await startHarness({ clock, script: [{ content: 'A.', gate: firstCall.promise }, { content: 'B.' }, { content: 'A resumed.', gate: resumedCall.promise }] });
  try {
    const a = h.kernel.injectInput('t', 'console', 'a');
    await h.provider.waitForRequests(1);
    const b = h.kernel.injectInterrupt('t', 2, 'console', 'b'); // preempts a: a's cooldown starts now
    assert.equal((await b).reply, 'B.');
    await h.provider.waitForRequests(3); // a resumed and waits on its LLM call, inside its cooldown
    const c = h.kernel.injectInterrupt('t', 2, 'console', 'c'); // outranks a (effective L1), but the cooldown holds it back
    await new Promise((r) => setImmediate(r)); // c pumped into the scheduler
    assert.deepEqual(h.kernel.agent.stats(), { running: true, stack: 0, pending: 1, queue: 0, inbox: 0 }, 'c waits: the cooldown is in force');
    assert.equal(h.provider.aborted, 1, 'only the first preemption aborted a call');
    assert.equal(h.kernel.stopNow('button'), 1);
    const r = await a;
    assert.equal(r.status, 'interrupted', 'stop cut the running turn despite its cooldown');
    assert.equal((await c).status, 'cancelled');
    assert.equal(h.provider.aborted, 2);
    assert.equal(h.provider.requests.length, 3, 'nothing reached the LLM after the stop');
  } finally {
    firstCall.resolve();
    resumedCall.resolve();
    await h.close();
  }
});

test('backlog feedback: after the agent is busy past the threshold, waiting inputs hear "busy" at once', async () => {
  const gate = deferred();
  const clock = new FakeClock();
  const h = await startHarness({ clock, script: [{ content: 'Slow.', gate: gate.promise }, { content: 'Q1.' }, { content: 'Q2.' }] });
  h.settings.set('core.scheduler.busy_feedback_ms', 60000);
  try {
    const slow = h.kernel.injectInput('t', 'console', 'slow job');
    await h.provider.waitForRequests(1);
    const q1 = h.kernel.injectInput('t', 'speaker', 'question one');
    await new Promise((r) => setImmediate(r));
    assert.equal(h.outputs.length, 0, 'not busy long enough yet');
    clock.advance(61000);
    assert.deepEqual(h.outputs.map((o) => [o.channel, o.meta.busy_feedback]), [['speaker', true]]);
    const q2 = h.kernel.injectInput('t', 'console', 'question two');
    await new Promise((r) => setImmediate(r));
    await new Promise((r) => setImmediate(r));
    assert.equal(h.outputs.filter((o) => o.meta.busy_feedback).length, 2, 'a new input during the backlog hears it immediately');
    gate.resolve();
    await Promise.all([slow, q1, q2]);
    assert.equal(h.outputs.filter((o) => o.meta.busy_feedback).length, 2, 'once per input');
  } finally {
    gate.resolve();
    await h.close();
  }
});

test('spawn_child: own prompt, only output tools, no memory, at most 5 rounds, returns its text', async () => {
  const h = await startHarness();
  h.provider.enqueue({ tool_calls: [{ name: 'spawn_child', arguments: { task: 'Summarise the weather in one line.' } }] });
  for (let i = 0; i < 5; i++) h.provider.enqueue({ content: `child round ${i}`, tool_calls: [{ name: 'output_send__console', arguments: { payload: `note ${i}` } }] });
  h.provider.enqueue({ content: 'Parent done.' });
  try {
    const r = await h.kernel.injectInput('t', 'console', 'delegate');
    const child = h.provider.requests[1]!;
    assert.match(child.messages[0]!.content, /Task: Summarise the weather/);
    assert.ok((child.tools ?? []).every((t) => t.function.name.startsWith('output_send__')));
    assert.equal(r.tools[0]!.name, 'spawn_child');
    assert.equal(r.tools[0]!.result, 'child round 4', 'stopped after 5 rounds');
    assert.equal(h.outputs.filter((o) => o.content.startsWith('note ')).length, 5);
    assert.equal(r.reply, 'Parent done.');
  } finally {
    await h.close();
  }
});
