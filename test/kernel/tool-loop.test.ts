/**
 * The tool loop's three exits (plain text, all calls denied, max_tool_rounds),
 * deny-wins in before_toolcall, argument rewriting, JSON Schema validation of
 * arguments (invalid arguments go back to the model as a tool error), the
 * registry's duplicate rejection.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Plugin } from '../../src/kernel/sdk.js';
import { startHarness } from '../support/kernel-harness.js';
import { DuplicateToolError } from '../../src/kernel/errors.js';
import { waitUntil } from '../support/wait.js';

const counter = (calls: Array<Record<string, unknown>>): Plugin => ({
  name: 'counter',
  start(sdk) {
    sdk.registerTool({
      name: 'set_brightness',
      description: 'Set a light brightness',
      parameters: {
        type: 'object',
        properties: { light: { type: 'string' }, brightness: { type: 'integer', minimum: 0, maximum: 100 } },
        required: ['light', 'brightness'],
        additionalProperties: false,
      },
      handler: (args) => {
        calls.push(args);
        return { ok: true, brightness: args.brightness };
      },
    });
  },
});

test('exit on plain text: tool round then text', async () => {
  const calls: Array<Record<string, unknown>> = [];
  const h = await startHarness({
    script: [{ tool_calls: [{ name: 'set_brightness', arguments: { light: 'bed', brightness: 50 } }] }, { content: 'Bed light at half.' }],
    beforeStart: (k) => k.use(counter(calls)),
  });
  try {
    const r = await h.kernel.injectInput('test', 'console', 'dim the bed light');
    assert.equal(r.status, 'done');
    assert.equal(r.reply, 'Bed light at half.');
    assert.deepEqual(calls, [{ light: 'bed', brightness: 50 }]);
    assert.equal(h.provider.requests.length, 2);
    const second = h.provider.requests[1]!.messages;
    const assistant = second.find((m) => m.role === 'assistant' && m.tool_calls);
    assert.equal(assistant!.tool_calls![0]!.function.name, 'set_brightness');
    const tool = second.find((m) => m.role === 'tool')!;
    assert.equal(tool.content, '{"ok":true,"brightness":50}');
    assert.equal(tool.tool_call_id, assistant!.tool_calls![0]!.id);
  } finally {
    await h.close();
  }
});

test('exit when every call is denied; any handler\'s deny wins', async () => {
  const calls: Array<Record<string, unknown>> = [];
  const veto: Plugin = {
    name: 'veto',
    start(sdk) {
      sdk.registerStage('before_toolcall', (ctx) => {
        ctx.deny = true;
        ctx.deny_reason = 'not allowed at night';
      });
      sdk.registerStage('before_toolcall', () => {
        /* an approving handler does nothing: deny still wins */
      });
    },
  };
  const h = await startHarness({
    script: [{ content: 'Trying.', tool_calls: [{ name: 'set_brightness', arguments: { light: 'a', brightness: 1 } }, { name: 'set_brightness', arguments: { light: 'b', brightness: 2 } }] }],
    beforeStart: (k) => k.use(counter(calls)).use(veto),
  });
  try {
    const r = await h.kernel.injectInput('test', 'console', 'go');
    assert.deepEqual(calls, []);
    assert.equal(h.provider.requests.length, 1, 'no second LLM round after all calls were denied');
    assert.equal(r.tools.length, 2);
    assert.ok(r.tools.every((t) => t.denied && t.result === 'denied: not allowed at night'));
    assert.equal(r.reply, 'Trying.');
  } finally {
    await h.close();
  }
});

test('exit at core.agent.max_tool_rounds', async () => {
  const calls: Array<Record<string, unknown>> = [];
  const h = await startHarness({ beforeStart: (k) => k.use(counter(calls)) });
  h.settings.set('core.agent.max_tool_rounds', 3);
  for (let i = 0; i < 10; i++) h.provider.enqueue({ content: `round ${i}`, tool_calls: [{ name: 'set_brightness', arguments: { light: 'x', brightness: i } }] });
  try {
    const r = await h.kernel.injectInput('test', 'console', 'loop forever');
    assert.equal(h.provider.requests.length, 3);
    assert.equal(calls.length, 3);
    assert.equal(r.status, 'done');
  } finally {
    await h.close();
  }
});

test('before_toolcall may rewrite arguments', async () => {
  const calls: Array<Record<string, unknown>> = [];
  const clamp: Plugin = {
    name: 'clamp',
    start(sdk) {
      sdk.registerStage('before_toolcall', (ctx) => {
        if (ctx.tool_call) ctx.tool_call = { ...ctx.tool_call, function: { ...ctx.tool_call.function, arguments: { ...ctx.tool_call.function.arguments, brightness: 10 } } };
      });
    },
  };
  const h = await startHarness({ script: [{ tool_calls: [{ name: 'set_brightness', arguments: { light: 'x', brightness: 90 } }] }, { content: 'ok.' }], beforeStart: (k) => k.use(counter(calls)).use(clamp) });
  try {
    await h.kernel.injectInput('test', 'console', 'go');
    assert.deepEqual(calls, [{ light: 'x', brightness: 10 }]);
  } finally {
    await h.close();
  }
});

test('invalid arguments go back to the model as a tool error, never throw', async () => {
  const calls: Array<Record<string, unknown>> = [];
  const h = await startHarness({
    script: [
      { tool_calls: [{ name: 'set_brightness', arguments: { light: 'x', brightness: 'fifty' } }] },
      { tool_calls: [{ name: 'set_brightness', arguments: { light: 'x', brightness: 500 } }] },
      { tool_calls: [{ name: 'no_such_tool', arguments: {} }] },
      { content: 'Sorry.' },
    ],
    beforeStart: (k) => k.use(counter(calls)),
  });
  try {
    const r = await h.kernel.injectInput('test', 'console', 'go');
    assert.equal(r.status, 'done');
    assert.deepEqual(calls, []);
    assert.match(r.tools[0]!.result, /invalid arguments for set_brightness: \/brightness must be integer/);
    assert.match(r.tools[1]!.result, /\/brightness must be <= 100/);
    assert.match(r.tools[2]!.result, /unknown tool "no_such_tool"/);
    assert.ok(r.tools.every((t) => t.is_error));
    const last = h.provider.requests[3]!.messages.filter((m) => m.role === 'tool');
    assert.equal(last.length, 3);
  } finally {
    await h.close();
  }
});

test('a tool that throws or hangs becomes a tool error', async () => {
  const p: Plugin = {
    name: 'flaky',
    start(sdk) {
      sdk.registerTool({ name: 'explode', description: 'x', parameters: { type: 'object' }, handler: () => {
        throw new Error('kaboom');
      } });
      sdk.registerTool({ name: 'hang', description: 'x', parameters: { type: 'object' }, timeout_ms: 50, handler: () => new Promise(() => undefined) });
    },
  };
  const h = await startHarness({ script: [{ tool_calls: [{ name: 'explode', arguments: {} }, { name: 'hang', arguments: {} }] }, { content: 'done.' }], beforeStart: (k) => k.use(p) });
  try {
    const r = await h.kernel.injectInput('test', 'console', 'go');
    assert.match(r.tools[0]!.result, /kaboom/);
    assert.match(r.tools[1]!.result, /timed out after 50 ms/);
    assert.equal(r.reply, 'done.');
  } finally {
    await h.close();
  }
});

test('duplicate tool names are rejected with the owner named', async () => {
  const h = await startHarness({ beforeStart: (k) => k.use(counter([])) });
  try {
    assert.throws(
      () => h.kernel.tools.register('other', { name: 'set_brightness', description: 'x', parameters: {}, handler: () => 1 }),
      (e: unknown) => e instanceof DuplicateToolError && /registered by plugin "counter"/.test(e.message),
    );
  } finally {
    await h.close();
  }
});

test('a before_toolcall handler can wait for the user\'s answer: the next input goes to it, not to the queue', async () => {
  const ran: string[] = [];
  const gatePlugin: Plugin = {
    name: 'gate',
    start(sdk) {
      sdk.registerTool({ name: 'unlock', description: 'unlock the door', parameters: { type: 'object' }, handler: () => void ran.push('unlock') });
      sdk.registerStage(
        'before_toolcall',
        async (ctx) => {
          await sdk.sendOutput(ctx.input.channel, 'Really unlock?');
          const answer = await sdk.awaitInput({ channel: ctx.input.channel, timeout_ms: 5000, accept: (t) => /^(yes|no)$/i.test(t) });
          if (answer?.text.toLowerCase() !== 'yes') {
            ctx.deny = true;
            ctx.deny_reason = 'not confirmed';
          }
        },
        { timeout_ms: 10000 },
      );
    },
  };
  const h = await startHarness({ script: [{ tool_calls: [{ name: 'unlock', arguments: {} }] }, { content: 'Unlocked.' }], beforeStart: (k) => k.use(gatePlugin) });
  try {
    const turn = h.kernel.injectInput('t', 'console', 'let my friend in');
    await waitUntil(() => h.outputs.some((o) => o.content === 'Really unlock?'), 'the confirmation question');
    const otherChannel = h.kernel.injectInput('t', 'speaker', 'yes'); // another channel: queued as its own turn
    // An announcement on the same channel is the box's own words, never the person's answer: queued as its own turn.
    const announced = h.kernel.injectInput('t', 'console', 'yes', { announcement: true });
    const yes = await h.kernel.injectInput('t', 'console', 'yes');
    assert.equal(yes.status, 'short_circuit');
    const r = await turn;
    assert.deepEqual(ran, ['unlock']);
    assert.equal(r.reply, 'Unlocked.');
    assert.equal((await otherChannel).status, 'done', 'the other channel\'s input ran as a turn of its own afterwards');
    assert.notEqual((await announced).status, 'short_circuit', 'the announcement answered nothing');
  } finally {
    await h.close();
  }
});

test('a before_toolcall handler that crashes or hangs denies the call (fail closed)', async () => {
  const ran: string[] = [];
  const p: Plugin = {
    name: 'broken-veto',
    start(sdk) {
      sdk.registerTool({ name: 'open_garage', description: 'x', parameters: { type: 'object' }, handler: () => void ran.push('open') });
      sdk.registerStage('before_toolcall', () => {
        throw new Error('policy database unreachable');
      });
    },
  };
  const h = await startHarness({ script: [{ tool_calls: [{ name: 'open_garage', arguments: {} }] }, { content: 'Could not.' }], beforeStart: (k) => k.use(p) });
  try {
    const r = await h.kernel.injectInput('t', 'console', 'open the garage');
    assert.deepEqual(ran, []);
    assert.equal(r.tools[0]!.denied, true);
    assert.match(r.tools[0]!.result, /safety check \(broken-veto\) failed: policy database unreachable/);
  } finally {
    await h.close();
  }
});

test('images a tool returns (ToolOutput) reach the model in a user message after the tool results', async () => {
  const p: Plugin = {
    name: 'cam',
    start(sdk) {
      sdk.registerTool({ name: 'snapshot', description: 'x', parameters: { type: 'object' }, handler: () => ({ kind: 'tool_output', text: '{"width":320}', images: ['/9j/AAAA'] }) });
    },
  };
  const h = await startHarness({ script: [{ tool_calls: [{ name: 'snapshot', arguments: {} }] }, { content: 'A cat on the sofa.' }], beforeStart: (k) => k.use(p) });
  try {
    const r = await h.kernel.injectInput('t', 'console', 'what do you see?');
    assert.equal(r.tools[0]!.result, '{"width":320}');
    const msgs = h.provider.requests[1]!.messages;
    const toolIdx = msgs.findIndex((m) => m.role === 'tool');
    assert.equal(msgs[toolIdx]!.content, '{"width":320}');
    assert.deepEqual(msgs[toolIdx + 1], { role: 'user', content: '[image returned by snapshot]', images: ['/9j/AAAA'] });
  } finally {
    await h.close();
  }
});
