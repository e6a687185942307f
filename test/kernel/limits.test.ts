/**
 * Issue 14 "Limits": a turn accepts at most core.agent.max_reply_chars
 * characters of model output per round, core.agent.max_tool_result_bytes of
 * one tool result and core.agent.max_tool_calls calls per round. Past a
 * reply or call limit the stream is closed (the server sees the connection
 * go long before its answer is done), the turn ends `cut_short` with the
 * limit as its reason and says so; a tool result is cut with a note. The
 * run log and memory databases stay small (a 20 MB reply once added 203 MB
 * and 20 MB). Through the LLM test server, both adapters.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { statSync, existsSync } from 'node:fs';
import path from 'node:path';
import type { Plugin } from '../../src/kernel/sdk.js';
import type { TurnEvent } from '../../src/kernel/turn-events.js';
import { startLlmRig, type LlmRig } from './llm-rig.js';

const MB = 1024 * 1024;

/** Bytes of a SQLite store with its WAL. */
function storeBytes(rig: LlmRig, file: string): number {
  let n = 0;
  for (const f of [file, `${file}-wal`]) {
    const p = path.join(rig.dataDir, f);
    if (existsSync(p)) n += statSync(p).size;
  }
  return n;
}

const PIECE = 'All work and no play makes Jack a dull boy. ';

for (const adapter of ['ollama', 'openai'] as const) {
  test(`${adapter}: a 20 MB reply stops at core.agent.max_reply_chars; the connection is closed there and the stores stay small`, async () => {
    const rig = await startLlmRig(adapter, { 'core.agent.max_reply_chars': 5000 });
    try {
      const runlog0 = storeBytes(rig, 'runlog.db');
      const memory0 = storeBytes(rig, 'memory.db');
      const count = Math.ceil((20 * MB) / PIECE.length);
      rig.srv.enqueue({ repeatContent: { piece: PIECE, count } });
      const closed = rig.srv.nextSocketClosed();
      const r = await rig.kernel.injectInput('console', 'console', 'write forever');
      const seen = await closed;
      assert.ok(seen.bytesSent < 8 * MB, `the server stopped early: ${seen.bytesSent} bytes of ~${(count * PIECE.length) / MB} MB of text sent`);
      assert.equal(r.status, 'cut_short');
      assert.equal(r.cut_reason, 'reply_limit');
      const ending = 'That answer was too long, so I stopped it there.';
      assert.ok(r.reply.endsWith(ending), r.reply.slice(-100));
      const kept = r.reply.slice(0, -ending.length - 1);
      assert.equal(kept, PIECE.repeat(200).slice(0, 5000).trim(), 'the text up to the cap is kept');
      const fin = rig.kernel.services.runLog.turn(r.input_id).find((e) => e.type === 'turn.finished') as Extract<TurnEvent, { type: 'turn.finished' }>;
      assert.deepEqual(fin.outcome.kind === 'cut_short' && fin.outcome.reason, 'reply_limit');
      assert.equal(rig.memory.timeline(100000).find((e) => e.id === `${r.input_id}:agent`)?.cut, 'reply_limit');
      assert.ok(storeBytes(rig, 'runlog.db') - runlog0 < MB, `runlog.db grew by ${storeBytes(rig, 'runlog.db') - runlog0} bytes`);
      assert.ok(storeBytes(rig, 'memory.db') - memory0 < MB, `memory.db grew by ${storeBytes(rig, 'memory.db') - memory0} bytes`);
      // the source did nothing wrong: it is not failed
      assert.deepEqual(rig.providers.status().sources.map((s) => s.failures), [0]);
    } finally {
      await rig.close();
    }
  });
}

test('speaker: a runaway reply is spoken up to the cap, then one ending; the stream stops', async () => {
  const rig = await startLlmRig('ollama', { 'core.agent.max_reply_chars': 500 });
  try {
    rig.srv.enqueue({ repeatContent: { piece: PIECE, count: 100000 } });
    const closed = rig.srv.nextSocketClosed();
    const r = await rig.kernel.injectInput('voice', 'speaker', 'talk');
    await closed;
    const sentences = rig.outputs.filter((o) => o.input_id === r.input_id && o.kind === 'sentence').map((o) => o.content);
    assert.equal(sentences.at(-1), 'That answer was too long, so I stopped it there.');
    assert.ok(sentences.length <= 500 / PIECE.length + 2);
    assert.ok(sentences.slice(0, -1).every((s) => s === PIECE.trim()));
    assert.equal(r.status, 'cut_short');
  } finally {
    await rig.close();
  }
});

test('a huge tool result is cut at core.agent.max_tool_result_bytes with a note; the model and the stores get the cut one', async () => {
  const huge = '电'.repeat(7 * MB); // 21 MB of UTF-8, 3 bytes a character
  const dump: Plugin = {
    name: 'dump',
    start(sdk) {
      sdk.registerTool({ name: 'dump', description: 'x', parameters: { type: 'object', properties: {} }, handler: () => huge });
    },
  };
  const rig = await startLlmRig('ollama', { 'core.agent.max_tool_result_bytes': 1000 }, (k) => k.use(dump));
  try {
    const runlog0 = storeBytes(rig, 'runlog.db');
    const memory0 = storeBytes(rig, 'memory.db');
    rig.srv.enqueue({ tool_calls: [{ name: 'dump', arguments: {} }] }, { content: 'Done.' });
    const r = await rig.kernel.injectInput('console', 'console', 'dump it');
    assert.equal(r.status, 'done');
    assert.equal(r.reply, 'Done.');
    const result = r.tools[0]!.result;
    assert.ok(result.startsWith('电'.repeat(333)), 'the head is kept, whole characters only');
    assert.ok(!result.includes('\uFFFD'));
    assert.match(result, /\[result cut: 22020096 bytes, only the first 1000 kept\]$/);
    assert.ok(Buffer.byteLength(result) < 1100);
    const toolMsg = rig.srv.chatRequests().at(-1)!.body!.messages!.find((m) => m.role === 'tool');
    assert.equal(toolMsg?.content, result, 'the model gets the cut result');
    assert.ok(storeBytes(rig, 'runlog.db') - runlog0 < MB);
    assert.ok(storeBytes(rig, 'memory.db') - memory0 < MB);
  } finally {
    await rig.close();
  }
});

for (const adapter of ['ollama', 'openai'] as const) {
  test(`${adapter}: more tool calls in one round than core.agent.max_tool_calls: the stream is closed and none of them runs`, async () => {
    let ran = 0;
    const count: Plugin = {
      name: 'count',
      start(sdk) {
        sdk.registerTool({ name: 'count', description: 'x', parameters: { type: 'object', properties: { n: { type: 'integer' } } }, handler: () => String(++ran) });
      },
    };
    const rig = await startLlmRig(adapter, {}, (k) => k.use(count));
    try {
      const calls = Array.from({ length: 5000 }, (_, n) => ({ name: 'count', arguments: { n } }));
      rig.srv.enqueue({ content: 'Counting.', tool_calls: calls });
      const r = await rig.kernel.injectInput('console', 'console', 'count to five thousand');
      assert.equal(ran, 0, 'no call ran');
      assert.equal(r.status, 'cut_short');
      assert.equal(r.cut_reason, 'tool_call_limit');
      assert.equal(r.reply, 'Counting. That needed more than 16 actions at once, so I did none of them.');
      const events = rig.kernel.services.runLog.turn(r.input_id).map((e) => e.type);
      assert.ok(!events.includes('tool.pre_execute') && !events.includes('llm.completed'), events.join(' '));
      assert.equal(rig.srv.chatRequests().length, 1, 'no second round');
      // on the speaker the text before the calls is spoken whole, then the ending
      rig.srv.enqueue({ content: 'Counting now.', tool_calls: calls });
      const spoken = await rig.kernel.injectInput('voice', 'speaker', 'count to five thousand');
      assert.deepEqual(
        rig.outputs.filter((o) => o.input_id === spoken.input_id && o.kind === 'sentence').map((o) => o.content),
        ['Counting now.', 'That needed more than 16 actions at once, so I did none of them.'],
      );
      assert.equal(ran, 0);
      // a round within the limit runs
      rig.srv.enqueue({ tool_calls: calls.slice(0, 16) }, { content: 'Done.' });
      const ok = await rig.kernel.injectInput('console', 'console', 'count to sixteen');
      assert.equal(ok.status, 'done');
      assert.equal(ran, 16);
    } finally {
      await rig.close();
    }
  });
}

test('the limits have settings with defaults sane for a Pi', async () => {
  const rig = await startLlmRig('ollama');
  try {
    assert.equal(rig.settings.get('core.agent.max_reply_chars'), 20000);
    assert.equal(rig.settings.get('core.agent.max_tool_result_bytes'), 32768);
    assert.equal(rig.settings.get('core.agent.max_tool_calls'), 16);
    assert.throws(() => rig.settings.set('core.agent.max_tool_calls', 0));
  } finally {
    await rig.close();
  }
});

test('a runaway reply that starts like a JSON tool call is still counted and cut (held text is released past 64 Ki characters)', async () => {
  const tool: Plugin = {
    name: 'noop',
    start(sdk) {
      sdk.registerTool({ name: 'noop', description: 'x', parameters: { type: 'object', properties: {} }, handler: () => 'ok' });
    },
  };
  const rig = await startLlmRig('ollama', { 'core.agent.max_reply_chars': 5000 }, (k) => k.use(tool));
  try {
    rig.srv.enqueue({ repeatContent: { piece: '[1,2,3,', count: 3_000_000 } });
    const closed = rig.srv.nextSocketClosed();
    const r = await rig.kernel.injectInput('console', 'console', 'numbers');
    const seen = await closed;
    assert.ok(seen.bytesSent < 8 * MB, `${seen.bytesSent} bytes sent of ~${(3_000_000 * 130) / MB} MB`);
    assert.equal(r.status, 'cut_short');
    assert.equal(r.cut_reason, 'reply_limit');
  } finally {
    await rig.close();
  }
});

test('tool-call arguments count towards the reply limit: a call with 5 MB of arguments is cut and never runs', async () => {
  let ran = 0;
  const echo: Plugin = {
    name: 'echo',
    start(sdk) {
      sdk.registerTool({ name: 'echo', description: 'x', parameters: { type: 'object', properties: { text: { type: 'string' } } }, handler: () => String(++ran) });
    },
  };
  const rig = await startLlmRig('openai', { 'core.agent.max_reply_chars': 20000 }, (k) => k.use(echo));
  try {
    const runlog0 = storeBytes(rig, 'runlog.db');
    rig.srv.enqueue({ tool_calls: [{ name: 'echo', arguments: { text: 'x'.repeat(5 * MB) } }], argumentFragment: 4096 });
    const r = await rig.kernel.injectInput('console', 'console', 'echo a lot');
    assert.equal(ran, 0);
    assert.equal(r.status, 'cut_short');
    assert.equal(r.cut_reason, 'reply_limit');
    assert.ok(storeBytes(rig, 'runlog.db') - runlog0 < MB);
  } finally {
    await rig.close();
  }
});
