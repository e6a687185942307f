/**
 * Output channels: output_send__X and _help tools, auto and explicit modes,
 * sentence streaming through before_output (partial) to stream channels,
 * JSON-looking text held back, the internal `_consolidation_` channel.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Plugin } from '../../src/kernel/sdk.js';
import type { StageContext } from '../../src/kernel/stage-types.js';
import { Cap } from '../../src/kernel/output-types.js';
import { startHarness } from '../support/kernel-harness.js';
import { SentenceSplitter, splitSentences } from '../../src/kernel/sentences.js';
import { waitUntil } from '../support/wait.js';

test('registerOutputChannel creates output_send__{name} and output_send__{name}_help', async () => {
  const got: string[] = [];
  const p: Plugin = {
    name: 'qq',
    start(sdk) {
      sdk.registerOutputChannel('qq', Cap.Text | Cap.Image, 'QQ group chat', (m) => {
        got.push(`${m.type}:${m.content}:${JSON.stringify(m.meta)}`);
      }, { types: ['text', 'image'] });
    },
  };
  const h = await startHarness({
    script: [
      { tool_calls: [{ name: 'output_send__qq_help', arguments: {} }, { name: 'output_send__qq', arguments: { payload: 'hi group', type: 'text', meta: { group: 42 } } }] },
      { content: 'Sent.' },
    ],
    beforeStart: (k) => k.use(p),
  });
  try {
    assert.ok(h.kernel.tools.has('output_send__qq'));
    assert.ok(h.kernel.tools.has('output_send__qq_help'));
    const r = await h.kernel.injectInput('test', 'console', 'tell the group hi');
    assert.match(r.tools[0]!.result, /Capabilities: text, image/);
    assert.deepEqual(got, ['text:hi group:{"group":42}']);
    assert.equal(r.reply, 'Sent.');
  } finally {
    await h.close();
  }
});

test('explicit mode: plain text reaches no channel (turn.finished says it); output_send reaches the channel through before/after_output', async () => {
  const stages: string[] = [];
  const reasoning: string[] = [];
  const p: Plugin = {
    name: 'watch',
    start(sdk) {
      sdk.registerStage('before_output', (ctx) => {
        stages.push(`before:${ctx.final_text}`);
        ctx.final_text = ctx.final_text + '!';
      });
      sdk.registerStage('after_output', (ctx) => {
        stages.push(`after:${ctx.final_text}`);
      });
      sdk.subscribe('turn.finished', (e) => {
        reasoning.push(e.said);
      });
    },
  };
  const h = await startHarness({
    script: [{ content: 'I will answer on the console.', tool_calls: [{ name: 'output_send__console', arguments: { payload: 'Hello' } }] }, { content: 'Done thinking.' }],
    beforeStart: (k) => k.use(p),
  });
  h.settings.set('core.output.mode', 'explicit');
  try {
    await h.kernel.injectInput('test', 'console', 'hi');
    assert.deepEqual(h.outputs.map((o) => o.content), ['Hello!']);
    assert.deepEqual(reasoning, ['Done thinking.']);
    assert.deepEqual(stages, ['before:Hello', 'after:Hello!', 'after:Done thinking.']);
  } finally {
    await h.close();
  }
});

test('auto mode: a stream channel gets sentences as they complete, each through before_output marked partial; post_action sees the whole text', async () => {
  const before: Array<{ text: string; partial: boolean }> = [];
  let postText = '';
  let firstSentenceAt = -1;
  let streamed = 0;
  const p: Plugin = {
    name: 'watch',
    start(sdk) {
      sdk.registerStage('before_output', (ctx: StageContext) => {
        before.push({ text: ctx.final_text, partial: ctx.partial });
      });
      sdk.registerStage('post_action', (ctx) => {
        postText = ctx.llm_text;
      });
    },
  };
  const text = 'The kitchen light is on. The door is locked. It is 21.5 degrees inside.';
  const h = await startHarness({
    script: [(_req) => ({ content: text, delayMs: 2 })],
    beforeStart: (k) => k.use(p),
  });
  h.kernel.bus.subscribe('_test_', 'output', (e) => {
    if (e.kind === 'sentence' && firstSentenceAt < 0) firstSentenceAt = streamed;
  });
  try {
    const r = await h.kernel.injectInput('test', 'speaker', 'status please');
    const sentences = h.outputs.filter((o) => o.kind === 'sentence').map((o) => o.content);
    assert.deepEqual(sentences, ['The kitchen light is on.', 'The door is locked.', 'It is 21.5 degrees inside.']);
    assert.ok(before.length === 3 && before.every((b) => b.partial));
    assert.equal(postText, text);
    const end = h.outputs.find((o) => o.kind === 'end')!;
    assert.equal(end.content, text);
    assert.equal(r.reply, text);
  } finally {
    await h.close();
  }
});

/**
 * Stream `pieces` to the speaker channel with the end of the stream held back: `before` is what must have
 * reached the channel while the model was still writing, `all` the sentences at the end.
 */
async function whileWriting(pieces: string[], before: string[], all: string[]): Promise<void> {
  let releaseRest!: () => void;
  const gate = new Promise<void>((r) => (releaseRest = r));
  const h = await startHarness({ script: [{ content: pieces.join(''), pieces, gate }] });
  try {
    const done = h.kernel.injectInput('test', 'speaker', 'talk');
    await waitUntil(() => h.outputs.some((o) => o.kind === 'sentence'), 'the first sentence while the model still writes');
    assert.deepEqual(h.outputs.map((o) => o.content), before, 'out before the stream ended');
    releaseRest();
    await done;
    assert.deepEqual(h.outputs.filter((o) => o.kind === 'sentence').map((o) => o.content), all);
  } finally {
    await h.close();
  }
}

test('auto mode: the first sentence is handed over while the model is still writing', async () => {
  await whileWriting(['First sentence here. ', 'Second one follows.'], ['First sentence here.'], ['First sentence here.', 'Second one follows.']);
});

test('auto mode: the first clause is handed over while the model still writes the first sentence (core.output.first_clause)', async () => {
  await whileWriting(['Sure, I can', ' do that.'], ['Sure,'], ['Sure,', 'I can do that.']);
});

test('auto mode: text that starts like JSON is held back and never spoken when it is a tool call', async () => {
  const p: Plugin = {
    name: 't',
    start(sdk) {
      sdk.registerTool({ name: 'write_log', description: 'x', parameters: { type: 'object', properties: { message: { type: 'string' } } }, handler: () => 'logged' });
    },
  };
  const h = await startHarness({
    // A provider that turned JSON-in-content into a tool call still streamed the raw JSON as content.
    script: [{ content: '{"name": "write_log", "parameters": {"message": "}A"}}', tool_calls: [{ name: 'write_log', arguments: { message: '}A' } }] }, { content: 'Logged it.' }],
    beforeStart: (k) => k.use(p),
  });
  try {
    await h.kernel.injectInput('test', 'speaker', 'log something');
    const spoken = h.outputs.filter((o) => o.kind === 'sentence').map((o) => o.content);
    assert.deepEqual(spoken, ['Logged it.']);
  } finally {
    await h.close();
  }
});

test('auto mode: JSON-looking text that is not a tool call is delivered after all', async () => {
  const h = await startHarness({ script: [{ content: '{braces} are fine here. Really.' }] });
  try {
    await h.kernel.injectInput('test', 'speaker', 'x');
    assert.deepEqual(h.outputs.filter((o) => o.kind === 'sentence').map((o) => o.content), ['{braces} are fine here.', 'Really.']);
  } finally {
    await h.close();
  }
});

test('the _consolidation_ channel never reaches external channels, and its turns get no output_send tools', async () => {
  const h = await startHarness({ script: [{ content: 'Merged Zhang San.' }] });
  try {
    const r = await h.kernel.injectSelf('Entities 张先生 and 张三 may be the same person. Decide.');
    assert.equal(r.status, 'done');
    assert.deepEqual(h.outputs, []);
    const tools = (h.provider.requests[0]!.tools ?? []).map((t) => t.function.name);
    assert.ok(!tools.some((t) => t.startsWith('output_send__')));
  } finally {
    await h.close();
  }
});

test('sentence splitting keeps decimals, abbreviations and Chinese punctuation', () => {
  assert.deepEqual(splitSentences('It is 21.5 degrees. Mr. Smith is home! Ok?'), ['It is 21.5 degrees.', 'Mr. Smith is home!', 'Ok?']);
  assert.deepEqual(splitSentences('客厅灯已打开。卧室很暖和！好吗？'), ['客厅灯已打开。', '卧室很暖和！', '好吗？']);
  const s = new SentenceSplitter();
  assert.deepEqual(s.push('Hello wor'), []);
  assert.deepEqual(s.push('ld. How'), ['Hello world.']);
  assert.equal(s.flush(), 'How');
});
