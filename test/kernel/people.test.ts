/**
 * Issue 18 "People" and "Faults to fix first", at the kernel's ports:
 * - who is speaking: the plain introductions are taken ("this is Anna",
 *   "my name is Anna", "我叫安娜"; "I'm Anna", "Anna here" only for a known
 *   person) and common words never are ("this is great"); a said speaker
 *   holds for the channel until core.people.speaker_ttl_min passes without
 *   an input there (FakeClock); `--as` names are checked;
 * - the kernel's own `_consolidation_` turn (with a tool call and an answer)
 *   calls nothing of the memory: no append (context window, rule queue,
 *   recall state), no prune, no recall; a real turn does all three, with its
 *   speaker;
 * - another person's private turn in the prompt's history is masked as a
 *   whole turn (the reply to a sensitive question too), through the kernel
 *   and the LLM test server;
 * - the SDK's social API: every plugin reads (sensitive facts left out), a
 *   built-in plugin writes, an external one cannot.
 */
import { describe, it, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { SpeakerSessions, normalisePersonName, speakerIntroduction, validatePersonName } from '../../src/kernel/people.js';
import { maskPrivate } from '../../src/kernel/prompt.js';
import { FakeClock } from '../../src/kernel/clock.js';
import { SimpleContextStore, type ContextEvent, type KernelMemory } from '../../src/kernel/memory-port.js';
import { Kernel } from '../../src/kernel/kernel.js';
import { Cap } from '../../src/kernel/output-types.js';
import { ConfigRegistry } from '../../src/config/registry.js';
import type { Plugin, PluginSDK } from '../../src/kernel/sdk.js';
import type { SocialAPI } from '../../src/kernel/memory-types.js';
import { FakeProvider } from '../support/fake-provider.js';
import { silentLogger } from '../support/quiet.js';
import { makeMemory } from '../memory/helpers.js';
import { startLlmRig } from './llm-rig.js';

describe('speaker introductions', () => {
  it('takes the plain forms, title-cased', () => {
    for (const [said, name] of [
      ['this is Anna', 'Anna'],
      ['Hi, this is Anna.', 'Anna'],
      ['my name is ben', 'Ben'],
      ['hello this is Anna Maria, turn on the light', 'Anna Maria'],
      ['my name is Ben', 'Ben'],
      ["it's Carla here", 'Carla'],
      ['this is Dana speaking', 'Dana'],
      ['Hi, my name is John Smith and I live in Portland.', 'John Smith'],
      ['我叫安娜。', '安娜'],
      ['你好，我的名字是李雷', '李雷'],
    ] as const) {
      assert.equal(speakerIntroduction(said), name, said);
    }
  });

  it('never takes a common word or a sentence for a name', () => {
    for (const said of ['this is great', 'this is hilarious', 'this is anna', 'stay here', 'Stay here', 'come here', "it's dark here", 'this is the kitchen light', 'this is taking too long', "it's raining", "it's Anna", "I'm tired", "I'm Anna", 'this is not working', 'my name is not important', '我是老师', '我叫外卖。', '我叫了车', 'this is so cool', 'what is this']) {
      assert.equal(speakerIntroduction(said), undefined, said);
    }
  });

  it('takes "I\'m Anna" / "我是安娜" / "it\'s Anna" for a person the household knows', () => {
    const known = (n: string) => n === 'Anna' || n === '安娜';
    assert.equal(speakerIntroduction("I'm Anna", known), 'Anna');
    assert.equal(speakerIntroduction("it's anna", known), 'Anna');
    assert.equal(speakerIntroduction('this is anna', known), 'Anna', 'lower case for a known person');
    assert.equal(speakerIntroduction('anna here', known), 'Anna');
    assert.equal(speakerIntroduction('我是安娜', known), '安娜');
    assert.equal(speakerIntroduction("I'm Zed", known), undefined);
  });

  it('checks a name given with --as', () => {
    assert.equal(validatePersonName('  Anna  '), 'Anna');
    assert.equal(normalisePersonName('anna-lena smith'), 'Anna-Lena Smith');
    assert.throws(() => validatePersonName(''), /person name is empty/);
    assert.throws(() => validatePersonName('x'.repeat(61)), /longer than 60 characters/);
    assert.throws(() => validatePersonName('a\u0007b'), /control characters/);
    assert.throws(() => validatePersonName('console'), /channel's name, not a person's/);
    assert.throws(() => validatePersonName(42), /must be a string/);
  });
});

test('a said speaker holds for its channel while inputs keep coming, and is forgotten after core.people.speaker_ttl_min of silence', () => {
  const clock = new FakeClock();
  const s = new SpeakerSessions(() => clock.now(), () => 10 * 60_000);
  assert.deepEqual(s.resolve({ channel: 'console', text: 'this is Anna' }), { user: 'Anna', user_via: 'said' });
  clock.advance(9 * 60_000);
  assert.deepEqual(s.resolve({ channel: 'console', text: 'turn on the light' }), { user: 'Anna', user_via: 'session' });
  assert.deepEqual(s.resolve({ channel: 'speaker', text: 'turn on the light' }), {}, 'another channel is not Anna');
  assert.deepEqual(s.resolve({ channel: 'webui', text: 'hello', meta: { session: 's1' } }, { user: 'Ben', user_via: 'pairing' }), { user: 'Ben', user_via: 'pairing' });
  clock.advance(9 * 60_000);
  assert.equal(s.current('console'), 'Anna', 'renewed by the last input');
  clock.advance(60_001 + 60_000);
  assert.deepEqual(s.resolve({ channel: 'console', text: 'what time is it' }), {}, 'forgotten after ten quiet minutes');
});

test("the history shows another person's sensitive words, tool calls and replies as placeholders, and the same bytes for the same speaker", () => {
  const ev = (id: string, kind: ContextEvent['kind'], input: string, response = '', extra: Partial<ContextEvent> = {}): ContextEvent => ({ id, time: 1, kind, source: 'cli', input, response, ...extra });
  const history = [
    ev('t1:user', 'user', 'remember my bank PIN is 4321', '', { speaker: 'Anna' }),
    ev('t1:tool:c1', 'tool', 'set_trait({"trait":"bank PIN","value":"4321"})', 'Remembered: Anna bank PIN 4321.', { tool: 'set_trait' }),
    ev('t1:agent', 'agent', '', 'Your bank PIN 4321 is saved.'),
    ev('t2:user', 'user', 'I live in Porto', '', { speaker: 'Anna' }),
    ev('t3:user', 'user', 'my password is hunter2'),
    ev('t9:agent', 'agent', '', 'The alarm code is 9911.'),
  ];
  const forBen = maskPrivate(history, 'Ben');
  assert.deepEqual(
    forBen.map((e) => `${e.input}|${e.response}`),
    ['[Anna said something private]|', 'set_trait({})|[private]', '|[private]', 'I live in Porto|', '[someone in the household said something private]|', '|[private]'],
  );
  assert.deepEqual(maskPrivate(history, 'anna').slice(0, 4), history.slice(0, 4), "Anna's own turn is hers");
  assert.equal(maskPrivate(history, undefined)[4], history[4], "an unidentified speaker's words to unidentified speakers");
  assert.equal(maskPrivate(history, null)[4]!.input, '[someone in the household said something private]', 'the kernel\'s own turns see nobody\'s');
  assert.equal(JSON.stringify(maskPrivate(history, 'Ben')), JSON.stringify(forBen), 'same events, same speaker: same bytes');
});

test("the model, answering Alice, sees none of Bob's private turn: the answer to his sensitive question is masked with it, though its own words are plain; Bob's next prompt has it", async () => {
  const rig = await startLlmRig('ollama');
  try {
    const answer = 'Take the small white one every morning with breakfast.';
    rig.srv.script((req) => {
      const last = req.body!.messages!.at(-1)!;
      return { content: typeof last.content === 'string' && /medication/.test(last.content) ? answer : 'Good morning.' };
    });
    const prompt = async (user: string, text: string): Promise<string> => {
      const before = rig.srv.chatRequests().length;
      assert.equal((await rig.kernel.injectInput('console', 'console', text, { user })).status, 'done');
      return JSON.stringify(rig.srv.chatRequests()[before]!.body!.messages);
    };
    await prompt('Bob', 'which of my medication do I take in the morning?');
    const alice = await prompt('Alice', 'good morning');
    for (const words of [/small white one/, /breakfast/, /which of my medication/]) assert.doesNotMatch(alice, words);
    assert.match(alice, /\[Bob said something private\]/);
    assert.match(alice, /\[private\]/, "the reply's place stays, masked");
    const bob = await prompt('Bob', 'thanks');
    assert.match(bob, /small white one every morning with breakfast/);
    assert.match(bob, /which of my medication do I take/);
    assert.match(bob, /good morning/i, "Alice's plain turn is shared");
  } finally {
    await rig.close();
  }
});

/** A KernelMemory that records every call (a SimpleContextStore underneath). */
class RecordingMemory extends SimpleContextStore implements KernelMemory {
  readonly appended: ContextEvent[] = [];
  readonly pruned: string[] = [];
  readonly recalled: Array<{ input: string; speaker: string | undefined }> = [];
  override append(e: ContextEvent): void {
    this.appended.push(e);
    super.append(e);
  }
  override prune(input?: string): void {
    this.pruned.push(input ?? '');
    super.prune();
  }
  override async recallForPrompt(input: string, _b?: number, _x?: ReadonlySet<string>, speaker?: string) {
    this.recalled.push({ input, speaker });
    return { text: '', items: [] };
  }
}

test("the kernel's own consolidation turn touches nothing of the memory; a real turn records its speaker", async () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'homeagent-people-'));
  const settings = new ConfigRegistry(':memory:', { env: {} });
  const memory = new RecordingMemory();
  const provider = new FakeProvider([
    { tool_calls: [{ name: 'note_tool', arguments: { x: 1 } }] },
    { content: 'skip' },
    { content: 'Hello.' },
    { content: 'Hello Anna.' },
    { content: 'It is on.' },
    { content: 'Your pasta timer is done.' },
  ]);
  const kernel = new Kernel({ settings, dataDir, provider, memory, log: silentLogger });
  kernel.registerOutputChannel('_test_', 'console', Cap.Text, 'test console', () => {});
  kernel.tools.register('_test_', { name: 'note_tool', description: 'a tool', parameters: { type: 'object', properties: {} }, handler: () => 'noted' });
  await kernel.start();
  try {
    const self = await kernel.injectSelf('[memory review] These facts may conflict:\n- relation 1: Anna lives_in Lisbon — said: "I live in Lisbon."');
    assert.equal(self.tools[0]?.name, 'note_tool', 'the consolidation turn ran its tool');
    assert.deepEqual(memory.appended, [], 'nothing appended: not in the window, the rule queue or the recall state');
    assert.deepEqual(memory.pruned, [], 'no prune against the consolidation prompt');
    assert.deepEqual(memory.recalled, [], 'no recall for it');
    assert.ok(!JSON.stringify(provider.requests[1]!.messages).includes('Speaker:'), 'a self-input has no speaker');

    await kernel.injectInput('console', 'console', 'hello', { user: 'console' });
    assert.equal(memory.appended.at(-2)!.speaker, undefined, "a channel's name given as the user is dropped");
    await kernel.injectInput('console', 'console', 'this is Anna');
    await kernel.injectInput('console', 'console', 'turn on the lamp');
    await kernel.injectInput('timers', 'console', 'Your pasta timer is done.', { announcement: true });
    const users = memory.appended.filter((e) => e.kind === 'user');
    // An announcement is nobody's words: no user record (a tester found a device notice in memory as a user document).
    assert.deepEqual(users.map((e) => [e.input, e.speaker]), [['hello', undefined], ['this is Anna', 'Anna'], ['turn on the lamp', 'Anna']], 'an announcement is nobody\'s');
    assert.deepEqual(memory.pruned, ['hello', 'this is Anna', 'turn on the lamp', 'Your pasta timer is done.']);
    assert.deepEqual(memory.recalled.map((r) => r.speaker), [undefined, 'Anna', 'Anna', undefined]);
    const last = provider.requests.at(-2)!.messages;
    assert.match(String(last.at(-2)!.content), /; speaker: Anna\]/);
    assert.ok(!last.some((m) => /memory review|skip/.test(String(m.content))), 'the later prompt is free of the consolidation turn');
  } finally {
    await kernel.stop();
    settings.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});

test('the SDK social API: every plugin reads (no sensitive facts), a built-in plugin writes, an external one cannot', async () => {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'homeagent-social-'));
  const settings = new ConfigRegistry(':memory:', { env: {} });
  const memory = makeMemory({ dir: dataDir, settings });
  const kernel = new Kernel({ settings, dataDir, provider: new FakeProvider([]), memory, socialApi: () => memory.socialApi(), log: silentLogger });
  const sdks: Record<string, PluginSDK> = {};
  const plugin = (name: string, external: boolean): Plugin => ({ name, external, start: (sdk) => void (sdks[name] = sdk) });
  kernel.use(plugin('builtin', false)).use(plugin('outside', true));
  await kernel.start();
  try {
    // Anna and Ben are heard speaking: the household's people.
    memory.append({ id: 'h1:user', time: 1000, kind: 'user', source: 'speaker', input: 'hello', response: '', speaker: 'Ben' });
    memory.append({ id: 'h2:user', time: 2000, kind: 'user', source: 'speaker', input: 'hi', response: '', speaker: 'Anna' });
    const writer: SocialAPI = sdks.builtin!.socialWrite();
    await writer.setTrait('Anna', 'favourite colour', 'green');
    await writer.setTrait('Anna', 'favourite colour', 'blue');
    await writer.setTrait('Anna', 'alarm code', '9911');
    await writer.relate('Anna', 'sister_of', 'Ben');
    const reader = sdks.outside!.social();
    assert.equal('setTrait' in reader, false, 'the read-only API has no write methods at all');
    assert.equal('relate' in reader, false);
    assert.throws(() => sdks.outside!.socialWrite(), { code: 'PERMISSION_DENIED' });
    await writer.relate('Anna', 'sister_of', 'Dora');
    assert.deepEqual((await reader.listPersons()).map((p) => p.name), ['Anna', 'Ben'], 'most recently heard first; Dora is a person, not of the household');
    assert.equal((await reader.getPerson('Dora'))?.name, 'Dora');
    const anna = (await reader.getPerson('anna'))!;
    assert.equal(anna.name, 'Anna');
    assert.deepEqual(anna.traits, { 'favourite colour': 'blue' }, 'one value per trait; the alarm code (sensitive) left out');
    assert.equal(await reader.getTrait('Anna', 'alarm code'), undefined);
    const net = await reader.getNetwork('Ben');
    assert.deepEqual(net.people.sort(), ['Anna', 'Dora'], "Ben's sister and hers, two steps away");
    assert.deepEqual(net.relations.map((f) => `${f.subject} ${f.relation} ${f.object}`).sort(), ['Anna sister_of Ben', 'Anna sister_of Dora']);
    assert.ok(!JSON.stringify(await reader.getRelations('Anna')).includes('9911'));
    // The person herself sees it (the model's person_query as Anna).
    assert.equal(memory.social.person('Anna', 'Anna')!.traits['alarm code'], '9911');
    assert.equal(memory.social.person('Anna', 'Ben')!.traits['alarm code'], undefined);
  } finally {
    await kernel.stop();
    settings.close();
    rmSync(dataDir, { recursive: true, force: true });
  }
});
