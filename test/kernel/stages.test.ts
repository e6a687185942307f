/**
 * Stage semantics (seed 000 §3): every write right of the table, short-circuit
 * at every stage, concurrency on one shared context, isolation of failing and
 * hanging handlers.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { StageHost, newStageContext } from '../../src/kernel/stages.js';
import type { Plugin } from '../../src/kernel/sdk.js';
import { STAGES, STAGE_WRITE_RIGHTS, type StageContext, type StageName } from '../../src/kernel/stage-types.js';
import type { InputMessage } from '../../src/kernel/turn-types.js';
import { createLogger } from '../../src/kernel/log.js';
import { FakeClock } from '../../src/kernel/clock.js';
import { startHarness } from '../support/kernel-harness.js';

const input: InputMessage = { id: 'i1', source: 'test', channel: 'console', text: 'hello', kind: 'queued', level: 0, received_at: 0 };
const ALL_FIELDS: Array<keyof StageContext> = ['raw_message', 'context_messages', 'llm_text', 'tool_calls', 'tool_call', 'deny', 'deny_reason', 'tool_result', 'final_text', 'skip_output', 'response', 'response_meta'];
const sample: Record<string, unknown> = {
  raw_message: 'x',
  context_messages: [{ role: 'system', content: 'x' }],
  llm_text: 'x',
  tool_calls: [],
  tool_call: { id: 'c', type: 'function', function: { name: 'n', arguments: {} } },
  deny: true,
  deny_reason: 'x',
  tool_result: { call_id: 'c', name: 'n', content: 'x', is_error: false },
  final_text: 'x',
  skip_output: true,
  response: 'x',
  response_meta: { expects_reply: true },
};

test('each stage may write exactly the fields of the seed table', async () => {
  for (const stage of STAGES) {
    for (const field of ALL_FIELDS) {
      const host = new StageHost(createLogger('test'), 1000);
      host.register('p', stage, (ctx) => {
        (ctx as unknown as Record<string, unknown>)[field] = sample[field];
      });
      const ctx = newStageContext(stage, input);
      const failures = await host.run(ctx);
      const allowed = STAGE_WRITE_RIGHTS[stage].includes(field);
      assert.equal(failures.length === 0, allowed, `${stage}.${field} allowed=${allowed}`);
      if (allowed) assert.deepEqual((ctx as unknown as Record<string, unknown>)[field], sample[field]);
      if (!allowed) assert.match(failures[0]!.error, /may not write/);
    }
  }
});

test('in-place edits of read-only objects fail (context_messages outside pre/post_action)', async () => {
  const host = new StageHost(createLogger('test'), 1000);
  host.register('p', 'before_output', (ctx) => {
    ctx.context_messages.push({ role: 'system', content: 'sneaky' });
  });
  const ctx = newStageContext('before_output', input, { context_messages: [] });
  const failures = await host.run(ctx);
  assert.equal(failures.length, 1);
  assert.equal(ctx.context_messages.length, 0);
});

test('handlers of one stage run at the same time on one shared context', async () => {
  // Each handler finishes only once both have started: run one after the other, the first would wait for ever
  // (and time out on the clock, which never moves here).
  const host = new StageHost(createLogger('test'), 1000, new FakeClock());
  let started = 0;
  let bothStarted!: () => void;
  const together = new Promise<void>((r) => (bothStarted = r));
  const make = (tag: string) => async (ctx: StageContext) => {
    if (++started === 2) bothStarted();
    await together;
    ctx.extra[tag] = true;
  };
  host.register('a', 'pre_action', make('a'));
  host.register('b', 'pre_action', make('b'));
  const ctx = newStageContext('pre_action', input);
  const failures = await host.run(ctx);
  assert.deepEqual(failures, []);
  assert.equal(ctx.extra.a, true);
  assert.equal(ctx.extra.b, true);
});

test('a throwing handler and a hanging one are logged; the others\' effects stand', async () => {
  const clock = new FakeClock();
  const host = new StageHost(createLogger('test'), 100, clock);
  let wake!: () => void;
  const hanging = new Promise<void>((r) => (wake = r));
  let lateWrite: Promise<void> | undefined;
  host.register('bad', 'on_input', () => {
    throw new Error('boom');
  });
  host.register('slow', 'on_input', (ctx) => {
    lateWrite = hanging.then(() => {
      ctx.raw_message = 'late write must not land';
    });
    return lateWrite;
  });
  host.register('good', 'on_input', (ctx) => {
    ctx.raw_message = 'rewritten';
  });
  const ctx = newStageContext('on_input', input);
  const run = host.run(ctx);
  await new Promise((r) => setImmediate(r)); // every handler has been called
  clock.advance(100); // the slow handler's time limit
  const failures = await run;
  assert.deepEqual(failures.map((f) => f.owner).sort(), ['bad', 'slow']);
  assert.equal(ctx.raw_message, 'rewritten');
  wake(); // the timed-out handler wakes up and tries to write
  await assert.rejects(lateWrite!, /./, 'its write is refused');
  assert.equal(ctx.raw_message, 'rewritten', 'a timed-out handler cannot write afterwards');
});

/** Short-circuit at every stage that allows a response: delivered to the origin channel, then after_output only. */
for (const stage of STAGES.filter((s) => s !== 'after_output')) {
  test(`response set in ${stage} short-circuits to the channel and after_output`, async () => {
    const seen: StageName[] = [];
    const plugin: Plugin = {
      name: 'sc',
      start(sdk) {
        for (const s of STAGES) {
          sdk.registerStage(s, (ctx) => {
            seen.push(s);
            if (s === stage) ctx.response = `short from ${stage}`;
          });
        }
        sdk.registerTool({ name: 'noop', description: 'noop', parameters: { type: 'object', properties: {} }, handler: () => 'done' });
      },
    };
    // A tool call first (so the toolcall stages run), then text (so before_output runs).
    const h = await startHarness({ script: [{ tool_calls: [{ name: 'noop', arguments: {} }] }, { content: 'final text.' }], beforeStart: (k) => k.use(plugin) });
    try {
      const r = await h.kernel.injectInput('test', 'console', 'hi');
      assert.equal(r.status, 'short_circuit');
      assert.equal(r.reply, `short from ${stage}`);
      const idx = STAGES.indexOf(stage);
      // Everything up to and including the stage, then after_output, nothing in between.
      assert.equal(seen[seen.length - 1], 'after_output');
      assert.equal(seen[seen.length - 2], stage);
      assert.ok(!seen.slice(0, -1).some((s) => STAGES.indexOf(s) > idx), `no later stage ran: ${seen.join(',')}`);
      const delivered = h.outputs.filter((o) => o.channel === 'console');
      assert.deepEqual(delivered.map((o) => o.content), [`short from ${stage}`]);
    } finally {
      await h.close();
    }
  });
}

test('an on_input response with response_meta is delivered with that meta (a question the voice box listens for the answer to)', async () => {
  const plugin: Plugin = {
    name: 'asks',
    start(sdk) {
      sdk.registerStage('on_input', (ctx) => {
        ctx.response = ctx.raw_message === 'cancel the timer' ? 'Which timer do you mean?' : 'OK.';
        if (ctx.raw_message === 'cancel the timer') ctx.response_meta = { expects_reply: true };
      });
    },
  };
  const h = await startHarness({ script: [], beforeStart: (k) => k.use(plugin) });
  try {
    await h.kernel.injectInput('test', 'console', 'cancel the timer');
    await h.kernel.injectInput('test', 'console', 'hello');
    const delivered = h.outputs.filter((o) => o.channel === 'console');
    assert.deepEqual(delivered.map((o) => [o.content, o.meta]), [['Which timer do you mean?', { expects_reply: true }], ['OK.', {}]]);
  } finally {
    await h.close();
  }
});

test('on_input rewrite reaches the model; pre_action injection reaches the model', async () => {
  const plugin: Plugin = {
    name: 'rw',
    start(sdk) {
      sdk.registerStage('on_input', (ctx) => {
        ctx.raw_message = ctx.raw_message.toUpperCase();
      });
      sdk.registerStage('pre_action', (ctx) => {
        ctx.context_messages.push({ role: 'system', content: 'INJECTED FACT' });
      });
    },
  };
  const h = await startHarness({ script: [{ content: 'fine.' }], beforeStart: (k) => k.use(plugin) });
  try {
    await h.kernel.injectInput('test', 'console', 'hello there');
    const req = h.provider.requests[0]!;
    assert.ok(req.messages.some((m) => m.role === 'user' && m.content === 'HELLO THERE'));
    assert.equal(req.messages[req.messages.length - 1]!.content, 'INJECTED FACT');
  } finally {
    await h.close();
  }
});

test('post_action may rewrite text and remove tool calls; before_output may rewrite; after_output sees the final text', async () => {
  let afterText = '';
  const plugin: Plugin = {
    name: 'po',
    start(sdk) {
      sdk.registerStage('post_action', (ctx) => {
        ctx.llm_text = ctx.llm_text.replace('darn', '****');
        ctx.tool_calls = ctx.tool_calls.filter((c) => c.function.name !== 'forbidden');
      });
      sdk.registerStage('before_output', (ctx) => {
        ctx.final_text = `[home] ${ctx.final_text}`;
      });
      sdk.registerStage('after_output', (ctx) => {
        afterText = ctx.final_text;
      });
      sdk.registerTool({ name: 'forbidden', description: 'x', parameters: { type: 'object' }, handler: () => assert.fail('must not run') });
    },
  };
  const h = await startHarness({ script: [{ content: 'oh darn', tool_calls: [{ name: 'forbidden', arguments: {} }] }], beforeStart: (k) => k.use(plugin) });
  try {
    const r = await h.kernel.injectInput('test', 'console', 'go');
    assert.equal(r.reply, '[home] oh ****');
    assert.equal(afterText, '[home] oh ****');
    assert.equal(r.tools.length, 0);
  } finally {
    await h.close();
  }
});

test('after_toolcall may rewrite the tool result the model sees', async () => {
  const plugin: Plugin = {
    name: 'redact',
    start(sdk) {
      sdk.registerTool({ name: 'secret', description: 'x', parameters: { type: 'object' }, handler: () => 'password=hunter2' });
      sdk.registerStage('after_toolcall', (ctx) => {
        if (ctx.tool_result) ctx.tool_result = { ...ctx.tool_result, content: ctx.tool_result.content.replace(/hunter2/, '[redacted]') };
      });
    },
  };
  const h = await startHarness({ script: [{ tool_calls: [{ name: 'secret', arguments: {} }] }, { content: 'done.' }], beforeStart: (k) => k.use(plugin) });
  try {
    await h.kernel.injectInput('test', 'console', 'go');
    const second = h.provider.requests[1]!;
    const toolMsg = second.messages.find((m) => m.role === 'tool')!;
    assert.equal(toolMsg.content, 'password=[redacted]');
  } finally {
    await h.close();
  }
});
