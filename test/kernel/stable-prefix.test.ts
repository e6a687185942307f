/**
 * Issue 19 "A stable prefix": a request is ordered persona and fixed rules,
 * tool schemas, history, then the turn context (time to the minute, the
 * input's channel, a short recall) right before the new user message, so
 * two consecutive ordinary turns' requests share every byte up to the
 * history's end. Checked on the requests the LLM test server received,
 * through both Lua adapters, as the wire bytes and as a chat template renders
 * them; and the history the prompt shows grows by appending, dropping its
 * oldest block in one step (PromptHistory).
 */
import { describe, it, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Plugin } from '../../src/kernel/sdk.js';
import type { ContextEvent } from '../../src/kernel/memory-port.js';
import { PromptHistory, contextText, maskPrivate, minuteTime, timelineMessages, turnContextParts } from '../../src/kernel/prompt.js';
import type { ReceivedRequest } from '../support/llm-test-server.js';
import { startLlmRig } from './llm-rig.js';
import { renderRequest, renderUpToHistoryEnd, TURN_CONTEXT_MARK } from './prompt-render.js';

const lights: Plugin = {
  name: 'lights',
  start(sdk) {
    sdk.registerTool({
      name: 'light_set',
      description: 'Switch a light. Example: {"room":"kitchen","on":true}',
      parameters: { type: 'object', properties: { room: { type: 'string' }, on: { type: 'boolean' } }, required: ['room', 'on'] },
      handler: (a) => `ok: ${String((a as { room?: string }).room)} light ${(a as { on?: boolean }).on ? 'on' : 'off'}`,
    });
  },
};

const TURNS = ['turn on the kitchen light', 'what should I cook tonight?', 'turn on the hallway light', 'thanks, that is all'];

/** The wire bytes of a request up to the start of its turn-context message. */
function rawUpToContext(req: ReceivedRequest): string {
  const at = req.raw.lastIndexOf(JSON.stringify(TURN_CONTEXT_MARK).slice(0, -1));
  assert.ok(at > 0, 'the request carries a turn context');
  return req.raw.slice(0, req.raw.lastIndexOf('{', at));
}

for (const adapter of ['ollama', 'openai'] as const) {
  test(`${adapter}: consecutive ordinary turns share every byte up to the history's end; the turn context sits right before the new message`, async () => {
    const rig = await startLlmRig(adapter, {}, (k) => k.use(lights));
    try {
      rig.srv.script((req) => {
        const last = req.body?.messages?.at(-1);
        const text = typeof last?.content === 'string' ? last.content : '';
        if (last?.role === 'user' && text.startsWith('turn on the ')) return { tool_calls: [{ name: 'light_set', arguments: { room: text.split(' ')[3]!, on: true } }] };
        if (last?.role === 'tool') return { content: 'Done, the light is on.' };
        return { content: `You said: ${text}` };
      });
      const firsts: ReceivedRequest[] = [];
      for (const t of TURNS) {
        const before = rig.srv.chatRequests().length;
        const r = await rig.kernel.injectInput('console', 'console', t);
        assert.equal(r.status, 'done', t);
        firsts.push(rig.srv.chatRequests()[before]!);
      }
      for (const [i, req] of firsts.entries()) {
        const msgs = req.body!.messages!;
        assert.equal(msgs.at(-1)!.content, TURNS[i], 'the new message is last, as the user said it');
        const ctx = msgs.at(-2)!;
        assert.equal(ctx.role, 'user');
        const text = String(ctx.content);
        assert.ok(text.startsWith(TURN_CONTEXT_MARK), text);
        assert.match(text, / \d{2}:\d{2} GMT[^;]*; /, 'the time');
        assert.doesNotMatch(text, /\d{2}:\d{2}:\d{2}/, 'the time to the minute');
        assert.match(text, /; channel console[;\]]/);
        assert.equal(msgs[0]!.role, 'system');
        assert.doesNotMatch(String(msgs[0]!.content), /Current time|"console"/, 'nothing that changes per turn in the system message');
        assert.equal(msgs.filter((m) => m.role === 'system').length, 1, 'one system message, at the top');
      }
      for (let i = 1; i < firsts.length; i++) {
        const prev = firsts[i - 1]!;
        const next = firsts[i]!;
        // On the wire: every byte before the previous request's turn context comes again, unchanged.
        assert.ok(next.raw.startsWith(rawUpToContext(prev)), `turn ${i + 1}: the wire bytes up to the history's end are the previous request's`);
        // As a chat template reads it (system, tools, messages in order).
        const shared = renderUpToHistoryEnd(prev.body!)!;
        assert.ok(renderRequest(next.body!).startsWith(shared), `turn ${i + 1}: the rendered prompt up to the history's end is the previous one's`);
        // More: the whole previous request (its turn context and message included) comes again, so only the reply and this turn are new.
        const whole = renderRequest(prev.body!).slice(0, -'<|im_start|>assistant\n'.length);
        assert.ok(renderRequest(next.body!).startsWith(whole), `turn ${i + 1}: the previous request, turn context and all, is the prefix of this one`);
        // The history grew by the previous turn, appended: its context and user message, then (for a command) the call and its result, then the reply.
        const grown = renderUpToHistoryEnd(next.body!)!.slice(shared.length);
        assert.ok(grown.startsWith(`<|im_start|>user\n${TURN_CONTEXT_MARK}`), grown.slice(0, 200));
        assert.ok(grown.includes(`]<|im_end|>\n<|im_start|>user\n${TURNS[i - 1]}<|im_end|>`), grown.slice(0, 300));
        if (TURNS[i - 1]!.startsWith('turn on')) assert.match(grown, /<tool_call>\{"name":"light_set","arguments":\{"room":"\w+","on":true\}\}<\/tool_call>[\s\S]*<tool_response name="light_set">\nok: \w+ light on/);
      }
    } finally {
      await rig.close();
    }
  });
}

const T0 = Date.UTC(2026, 11, 1, 8, 0, 0);

/** Turn `n` of a conversation: a user event and a reply, each ~`words` words. */
function exchange(n: number, words = 20): ContextEvent[] {
  const say = (w: string): string => Array.from({ length: words }, (_, i) => `${w}${i}`).join(' ');
  return [
    { id: `t${n}:user`, time: T0 + n * 60_000, kind: 'user', source: 'console', input: say(`q${n}-`), response: '' },
    { id: `t${n}:agent`, time: T0 + n * 60_000 + 1000, kind: 'agent', source: 'console', input: '', response: say(`a${n}-`) },
  ];
}

describe('PromptHistory', () => {
  it('appends turn by turn and drops the oldest block in one step when the budget is reached', () => {
    const h = new PromptHistory();
    const all: ContextEvent[] = [];
    const budget = 1000;
    let drops = 0;
    let prev: ContextEvent[] = [];
    for (let n = 0; n < 60; n++) {
      all.push(...exchange(n));
      // The window keeps the newest 12 events (its own pruning): the history does not follow it.
      const shown = h.update(all.slice(-12), budget);
      assert.equal(shown.at(-1)!.id, `t${n}:agent`);
      assert.equal(shown[0]!.kind, 'user', 'the history starts at a user message');
      const tokens = shown.reduce((s, e) => s + Math.ceil(e.input.length / 4) + Math.ceil(e.response.length / 4) + 4, 0);
      assert.ok(tokens <= budget, `turn ${n}: ${tokens} tokens`);
      const prefix = prev.length > 0 && shown[0]!.id === prev[0]!.id;
      if (prefix) {
        // Grew by appending only: the previous history is its prefix.
        assert.deepEqual(shown.slice(0, prev.length).map((e) => e.id), prev.map((e) => e.id));
        assert.equal(shown.length, prev.length + 2);
      } else if (prev.length) {
        drops++;
        assert.ok(prev.length - (shown.length - 2) >= prev.length / 3, `a block of the oldest goes at once: ${prev.length} -> ${shown.length}`);
      }
      prev = shown;
    }
    assert.ok(drops >= 2 && drops <= 10, `${drops} drops in 60 turns`);
  });

  it('events the window archives from the middle stay shown; events moved back into the window are appended', () => {
    const h = new PromptHistory();
    const events = [...exchange(0), ...exchange(1), ...exchange(2)];
    h.update(events, 10_000);
    // Relevance pruning archived turn 1 out of the window.
    const pruned = events.filter((e) => !e.id.startsWith('t1:'));
    assert.deepEqual(h.update(pruned, 10_000).map((e) => e.id), events.map((e) => e.id));
    const back: ContextEvent = { id: 'doc-7', time: T0 - 86_400_000, kind: 'cold_storage', source: 'memory', input: 'the piano tuner came', response: '' };
    const shown = h.update([back, ...pruned, ...exchange(3)], 10_000);
    assert.deepEqual(shown.map((e) => e.id), [...events.map((e) => e.id), 'doc-7', 't3:user', 't3:agent']);
  });

  it('renders past tool calls as the assistant call and its result, the same bytes every time', () => {
    const ev: ContextEvent = { id: 't5:tool:call_1', time: T0, kind: 'tool', source: 'console', input: 'light_set({"room":"kitchen","on":true})', response: 'ok', tool: 'light_set' };
    const a = timelineMessages([ev]);
    assert.deepEqual(a, [
      { role: 'assistant', content: '', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'light_set', arguments: { room: 'kitchen', on: true } } }] },
      { role: 'tool', tool_call_id: 'call_1', name: 'light_set', content: 'ok' },
    ]);
    assert.deepEqual(timelineMessages([ev]), a);
  });

  it("a turn's context is shown again before its message; another speaker does not see a sensitive recall in it; forgetting takes a recall holding the word", () => {
    const h = new PromptHistory();
    const anna: ContextEvent = { id: 't1:user', time: T0, kind: 'user', source: 'console', input: 'what is my bank PIN?', response: '', speaker: 'Anna' };
    const reply: ContextEvent = { id: 't1:agent', time: T0 + 1, kind: 'agent', source: 'console', input: '', response: 'It is the one you told me.' };
    const annaCtx = turnContextParts({ now: T0, channel: 'console', mode: 'auto', speaker: 'Anna', memory: '[Known facts]\n- Anna bank PIN 4321' });
    h.update([anna], 10_000);
    h.setContext('t1:user', annaCtx);
    const shown = h.update([anna, reply], 10_000);
    // As Anna: the two messages her turn was sent with, byte for byte, then the reply.
    const asAnna = timelineMessages(maskPrivate(shown, 'Anna'));
    assert.deepEqual(asAnna.slice(0, 2), [
      { role: 'user', content: contextText(annaCtx) },
      { role: 'user', content: 'what is my bank PIN?' },
    ]);
    assert.ok(String(asAnna[0]!.content).startsWith(TURN_CONTEXT_MARK));
    assert.match(String(asAnna[0]!.content), /; speaker: Anna\]\n\[Known facts\]\n- Anna bank PIN 4321$/);
    // As Ben: the context without its recall (Anna's words themselves are a placeholder too).
    const asBen = JSON.stringify(timelineMessages(maskPrivate(shown, 'Ben')));
    assert.doesNotMatch(asBen, /4321/);
    assert.match(asBen, /; speaker: Anna\]/);
    // Forgetting the PIN: the recall block that held it goes; the context's head stays.
    h.forget(() => false, ['4321']);
    const after = timelineMessages(h.events());
    assert.equal(after[0]!.content, annaCtx.head);
    assert.doesNotMatch(JSON.stringify(after), /4321/);
    // An event that leaves the history takes its context along.
    h.forget((e) => e.id === 't1:user');
    assert.deepEqual(h.events().map((e) => e.id), ['t1:agent']);
  });

  it('says the time to the minute', () => {
    assert.doesNotMatch(minuteTime(T0 + 42_000), /:\d{2}:\d{2}/);
    assert.match(minuteTime(T0 + 42_000), /\d{2}:\d{2}/);
  });
});
