/**
 * Issue 14 "A broken LLM stream must not throw away what was said": a stream
 * that breaks part-way (reset, truncated, stalled, an error line) after text
 * arrived ends the turn `cut_short` with reason `connection_lost`: the text
 * that arrived is the reply (with one short ending), the run log's
 * turn.finished and the memory window keep it marked with that reason (never
 * "[interrupted by the user]"), and the next prompt tells the model the
 * truth. Both adapters, through the LLM test server, the real provider
 * manager, SQLite run log and memory.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Reply } from '../support/llm-test-server.js';
import type { TurnEvent } from '../../src/kernel/turn-events.js';
import { startLlmRig, type LlmRig } from './llm-rig.js';

const STORY = 'The moon is far away. It is made of rock. It has no air.';
/** The first 14 chunks of STORY (tokens: The| moon| is| far| away|.| It| is| made| of| rock|.| It| has). */
const ARRIVED = 'The moon is far away. It is made of rock. It has';
const ENDING = 'I lost the connection to my language model mid-answer.';

const faults: Array<{ name: string; reply: Reply; arrived: string }> = [
  { name: 'reset', reply: { content: STORY, dropAfterChunks: 14 }, arrived: ARRIVED },
  { name: 'truncated', reply: { content: STORY, endAfterChunks: 14 }, arrived: ARRIVED },
  { name: 'stall', reply: { content: STORY, stallAfterChunks: 14 }, arrived: ARRIVED },
  { name: 'error line', reply: { content: STORY, streamError: 'model runner crashed' }, arrived: STORY },
];

function finishedOf(rig: LlmRig, turn: string): Extract<TurnEvent, { type: 'turn.finished' }> {
  const all = rig.kernel.services.runLog.turn(turn).filter((e) => e.type === 'turn.finished');
  assert.equal(all.length, 1, 'turn.finished is recorded once');
  return all[0] as Extract<TurnEvent, { type: 'turn.finished' }>;
}

function agentEvent(rig: LlmRig, turn: string) {
  return rig.memory.timeline(100000).find((e) => e.id === `${turn}:agent`);
}

for (const adapter of ['ollama', 'openai'] as const) {
  test(`${adapter}: a stream broken part-way keeps the text that arrived (reply, run log, memory), marked connection_lost`, async () => {
    const rig = await startLlmRig(adapter, { 'core.llm.idle_timeout_ms': 300 });
    try {
      for (const f of faults) {
        rig.srv.enqueue(f.reply);
        const r = await rig.kernel.injectInput('console', 'console', 'tell me about the moon');
        assert.equal(r.status, 'cut_short', `${f.name}: ${r.status} ${r.error ?? ''}`);
        assert.equal(r.cut_reason, 'connection_lost', f.name);
        assert.equal(r.reply, `${f.arrived} ${ENDING}`, `${f.name}: the reply is the text that arrived and one honest ending`);
        assert.ok(!r.reply.includes("can't reach"), `${f.name}: not the apology`);
        // the console got exactly that, once
        assert.deepEqual(rig.outputs.filter((o) => o.input_id === r.input_id).map((o) => o.content), [r.reply], f.name);
        // run log: the outcome is a value with its reason, and the text
        const fin = finishedOf(rig, r.input_id);
        assert.equal(fin.outcome.kind, 'cut_short', f.name);
        assert.equal(fin.outcome.kind === 'cut_short' && fin.outcome.reason, 'connection_lost');
        assert.equal(fin.said, f.arrived, `${f.name}: the run log keeps the text that arrived`);
        assert.equal(fin.status, 'cut_short');
        assert.ok(rig.kernel.services.runLog.turn(r.input_id).some((e) => e.type === 'error' && e.where === 'llm'), `${f.name}: the failure is logged`);
        // memory: the agent's words, marked with the reason, not as a stop
        const ev = agentEvent(rig, r.input_id);
        assert.equal(ev?.response, f.arrived, `${f.name}: memory keeps the text`);
        assert.equal(ev?.cut, 'connection_lost');
        assert.ok(!ev?.interrupted, `${f.name}: not "interrupted by the user"`);
      }
      // the next prompt tells the model what happened, truthfully
      rig.srv.enqueue({ content: 'Sure.' });
      await rig.kernel.injectInput('console', 'console', 'go on');
      const history = (rig.srv.chatRequests().at(-1)!.body!.messages ?? []).map((m) => String(m.content));
      assert.ok(history.includes(`${ARRIVED} [cut off: the connection to the language model was lost]`), history.join('\n'));
      assert.ok(!history.some((h) => h.includes('[interrupted by the user]')));
    } finally {
      await rig.close();
    }
  });
}

test('an invalid line in a stream whose rest is good is skipped: the reply is whole, no ending, the source stays ok', async () => {
  for (const adapter of ['ollama', 'openai'] as const) {
    const rig = await startLlmRig(adapter);
    try {
      rig.srv.enqueue({ content: STORY, garbage: { line: '{"message": nope', after: 5 } });
      const r = await rig.kernel.injectInput('console', 'console', 'tell me about the moon');
      assert.equal(r.status, 'done', adapter);
      assert.equal(r.reply, STORY);
      assert.deepEqual(rig.providers.status().sources.map((s) => [s.state, s.failures]), [['ok', 0]], adapter);
    } finally {
      await rig.close();
    }
  }
});

test('speaker: the finished sentences are spoken, then one short ending (not the apology); Chinese after a Chinese question', async () => {
  const rig = await startLlmRig('ollama');
  try {
    rig.srv.enqueue({ content: STORY, dropAfterChunks: 14 });
    const r = await rig.kernel.injectInput('voice', 'speaker', 'tell me about the moon');
    const mine = rig.outputs.filter((o) => o.input_id === r.input_id);
    assert.deepEqual(
      mine.filter((o) => o.kind === 'sentence').map((o) => o.content),
      ['The moon is far away.', 'It is made of rock.', ENDING],
      'the unfinished "It has" is not spoken',
    );
    const end = mine.find((o) => o.kind === 'end');
    assert.equal(end?.content, `The moon is far away. It is made of rock. ${ENDING}`);
    assert.ok(!end?.interrupted, 'not ended as a stop');
    assert.equal(r.reply, end?.content);
    assert.equal(agentEvent(rig, r.input_id)?.response, ARRIVED, 'memory keeps all the text that arrived');

    // A sentence that arrived whole is spoken even when the stream breaks right after it
    // (the splitter was waiting for the next word to be sure it had ended).
    rig.srv.enqueue({ content: STORY, dropAfterChunks: 12 });
    const whole = await rig.kernel.injectInput('voice', 'speaker', 'tell me about the moon');
    assert.deepEqual(
      rig.outputs.filter((o) => o.input_id === whole.input_id && o.kind === 'sentence').map((o) => o.content),
      ['The moon is far away.', 'It is made of rock.', ENDING],
    );

    rig.srv.enqueue({ content: '月亮离我们很远。它是岩石构成的。', dropAfterChunks: 9 });
    const zh = await rig.kernel.injectInput('voice', 'speaker', '给我讲讲月亮');
    assert.equal(zh.status, 'cut_short');
    assert.equal(zh.reply, '月亮离我们很远。 我和语言模型的连接在回答中途断开了。', 'sentences joined as every streamed reply is');
  } finally {
    await rig.close();
  }
});

test('a stream that breaks before any text is still the "cannot reach" answer, in the language of the question', async () => {
  const rig = await startLlmRig('ollama');
  try {
    rig.srv.enqueue({ content: STORY, dropAfterChunks: 0 });
    const r = await rig.kernel.injectInput('console', 'console', 'tell me about the moon');
    assert.equal(r.status, 'error');
    assert.equal(r.reply, rig.settings.get('core.agent.llm_unavailable_message'));
    rig.srv.enqueue({ status: 500, error: 'down' });
    const zh = await rig.kernel.injectInput('console', 'console', '给我讲讲月亮');
    assert.equal(zh.reply, rig.settings.get('core.agent.llm_unavailable_message_zh'));
    assert.match(zh.reply, /语言模型/);
    // An introduction is taken with no model to answer: the reply greets first (a newcomer read the bare "can't reach"
    // as the introduction failing).
    rig.srv.enqueue({ status: 500, error: 'down' });
    const anna = await rig.kernel.injectInput('console', 'console', 'this is Anna');
    assert.equal(anna.reply, `Hello, Anna. ${rig.settings.get<string>('core.agent.llm_unavailable_message')}`);
  } finally {
    await rig.close();
  }
});
