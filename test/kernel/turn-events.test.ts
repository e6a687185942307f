/**
 * The turn event stream (issue 13, seed 002 run event names): a turn emits
 * each fact once, in order, on one stream; the run log (all but llm.delta),
 * the memory window, the bus and the `ask` result are its subscribers; turn
 * outcomes are values (reply, short_circuit, interrupted, preempted, error).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Plugin } from '../../src/kernel/sdk.js';
import type { TurnEvent } from '../../src/kernel/turn-events.js';
import { TURN_EVENT_TYPES } from '../../src/kernel/turn-events.js';
import type { ContextEvent } from '../../src/kernel/memory-port.js';
import { SimpleContextStore } from '../../src/kernel/memory-port.js';
import { startHarness, type Harness } from '../support/kernel-harness.js';
import { deferred } from '../support/fake-provider.js';

/** Every turn event the bus carries, in order. */
function recordBus(h: Harness): TurnEvent[] {
  const seen: TurnEvent[] = [];
  for (const t of TURN_EVENT_TYPES) h.kernel.bus.subscribe('_test_', t, (e) => void seen.push(e as TurnEvent));
  return seen;
}

const lookup: Plugin = {
  name: 'lookup',
  start(sdk) {
    sdk.registerTool({ name: 'lookup', description: 'x', parameters: { type: 'object', properties: { q: { type: 'string' } } }, handler: (a) => `result for ${String(a.q)}` });
  },
};

test('one turn, one stream: events in order; the run log, the memory window, the bus and the ask result each keep it once', async () => {
  const appended: ContextEvent[] = [];
  class Watched extends SimpleContextStore {
    override append(e: ContextEvent): void {
      appended.push(e);
      super.append(e);
    }
  }
  const h = await startHarness({
    script: [{ content: 'Let me look. ', tool_calls: [{ name: 'lookup', arguments: { q: 'lamp' } }] }, { content: 'The lamp is on.' }],
    beforeStart: (k) => k.use(lookup),
  });
  (h.kernel as unknown as { memoryRef: SimpleContextStore }).memoryRef = new Watched();
  const bus = recordBus(h);
  try {
    const r = await h.kernel.injectInput('t', 'console', 'is the lamp on?');
    const mine = bus.filter((e) => e.turn === r.input_id);
    const types = mine.map((e) => e.type).filter((t, i, a) => t !== 'llm.delta' || a[i - 1] !== 'llm.delta');
    assert.deepEqual(types, [
      'turn.started',
      'context.projected',
      'llm.requested',
      'llm.delta',
      'llm.completed',
      'tool.pre_execute',
      'tool.executed',
      'llm.requested',
      'llm.delta',
      'llm.completed',
      'output',
      'turn.finished',
    ]);
    const deltas = mine.filter((e): e is Extract<TurnEvent, { type: 'llm.delta' }> => e.type === 'llm.delta' && e.round === 2);
    assert.equal(deltas.map((d) => d.text).join(''), 'The lamp is on.', 'the deltas are the streamed text');
    // The run log: the same events, llm.delta excepted.
    const logged = h.kernel.services.runLog.turn(r.input_id).map((e) => e.type);
    assert.deepEqual(logged, mine.filter((e) => e.type !== 'llm.delta').map((e) => e.type));
    // The ask result: folded from tool.executed and turn.finished.
    assert.equal(r.status, 'done');
    assert.equal(r.reply, 'The lamp is on.');
    assert.deepEqual(r.tools, [{ name: 'lookup', arguments: { q: 'lamp' }, result: 'result for lamp', is_error: false }]);
    const finished = mine.at(-1) as Extract<TurnEvent, { type: 'turn.finished' }>;
    assert.deepEqual(finished.outcome, { kind: 'reply', reply: 'The lamp is on.' });
    // The memory window: the user's words, the tool, the agent's words; each once.
    assert.deepEqual(
      appended.filter((e) => e.id.startsWith(r.input_id)).map((e) => [e.kind, e.kind === 'agent' ? e.response : e.input]),
      [
        ['user', 'is the lamp on?'],
        ['tool', 'lookup({"q":"lamp"})'],
        ['agent', 'The lamp is on.'],
      ],
    );
    // The channel got the reply once.
    assert.deepEqual(h.outputs.filter((o) => o.input_id === r.input_id).map((o) => o.content), ['The lamp is on.']);
  } finally {
    await h.close();
  }
});

test('outcomes are values: short circuit, LLM error, stop, cancel and preemption', async () => {
  const gate = deferred();
  const answer: Plugin = {
    name: 'answer',
    start(sdk) {
      sdk.registerStage('on_input', (ctx) => {
        if (ctx.raw_message === 'what time is it') ctx.response = 'Noon.';
      });
    },
  };
  const h = await startHarness({ beforeStart: (k) => k.use(answer) });
  const bus = recordBus(h);
  const outcome = (id: string) => (bus.find((e) => e.turn === id && e.type === 'turn.finished') as Extract<TurnEvent, { type: 'turn.finished' }> | undefined)?.outcome;
  try {
    const sc = await h.kernel.injectInput('t', 'console', 'what time is it');
    assert.deepEqual(outcome(sc.input_id), { kind: 'short_circuit', reply: 'Noon.', stage: 'on_input' });
    assert.equal(sc.status, 'short_circuit');

    h.provider.enqueue({ error: new Error('connection refused') });
    const err = await h.kernel.injectInput('t', 'console', 'hello');
    const o = outcome(err.input_id);
    assert.equal(o?.kind, 'error');
    assert.match(o?.kind === 'error' ? o.message : '', /connection refused/);
    assert.ok(bus.some((e) => e.turn === err.input_id && e.type === 'error' && e.where === 'llm'));
    assert.equal(err.status, 'error');

    // Stop: the running turn is interrupted, the queued one cancelled.
    h.provider.enqueue({ content: 'Once upon a time. ', pieces: ['Once upon a time. '], gate: gate.promise });
    const spoken = new Promise<void>((resolve) => h.kernel.bus.subscribe('_test_', 'output', (e) => e.kind === 'sentence' && resolve()));
    const story = h.kernel.injectInput('t', 'speaker', 'tell me a story');
    await spoken; // the first sentence went out; the call waits on its gate
    const queued = h.kernel.injectInput('t', 'console', 'and then?');
    h.kernel.stopNow('button');
    const [s, q] = await Promise.all([story, queued]);
    assert.deepEqual(outcome(s.input_id), { kind: 'interrupted', reply: 'Once upon a time.', cancelled: false });
    assert.deepEqual(outcome(q.input_id), { kind: 'interrupted', reply: '', cancelled: true });
    assert.deepEqual(bus.filter((e) => e.turn === q.input_id).map((e) => e.type), ['turn.started', 'turn.interrupted', 'turn.finished'], 'a cancelled turn never reached a stage or the LLM');
    assert.equal(s.status, 'interrupted');
    assert.equal(q.status, 'cancelled');

    // Preemption: the first turn yields (no turn.finished), resumes and finishes once.
    const hold = deferred();
    h.settings.set('core.scheduler.preempt_cooldown_ms', 0);
    h.provider.enqueue({ content: 'Long answer.', gate: hold.promise }, { content: 'Urgent.' }, { content: 'Long answer, resumed.' });
    const long = h.kernel.injectInput('t', 'console', 'explain everything');
    await h.provider.waitForRequests(h.provider.requests.length + 1);
    const urgent = await h.kernel.injectInterrupt('t', 2, 'console', 'the doorbell');
    const l = await long;
    assert.equal(urgent.reply, 'Urgent.');
    assert.equal(l.reply, 'Long answer, resumed.');
    assert.equal(bus.filter((e) => e.turn === l.input_id && e.type === 'turn.finished').length, 1, 'a preempted turn finishes once');
    assert.equal(bus.filter((e) => e.turn === l.input_id && e.type === 'turn.started').length, 1, 'and starts once');
    hold.resolve();
  } finally {
    gate.resolve();
    await h.close();
  }
});

test('a subscriber that throws never breaks the turn or the other subscribers', async () => {
  const h = await startHarness({ script: [{ content: 'Fine.' }] });
  let seen = 0;
  h.kernel.services.turnEvents.subscribe('broken', () => {
    throw new Error('subscriber bug');
  });
  h.kernel.services.turnEvents.subscribe('counter', () => void seen++);
  try {
    const r = await h.kernel.injectInput('t', 'console', 'hi');
    assert.equal(r.reply, 'Fine.');
    assert.ok(seen >= 5, 'the other subscriber got every event');
    assert.equal(h.kernel.services.runLog.turn(r.input_id).at(-1)?.type, 'turn.finished');
  } finally {
    await h.close();
  }
});
