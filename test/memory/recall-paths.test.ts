/**
 * One recall ranking for every path (issue 18 "Recall that generalises";
 * src/memory/recall.ts): the prompt's automatic recall reads the question
 * with the person speaking ("my" is theirs) and the turn's time ("last
 * week"), as the LoCoMo bench measures (MemorySystem.prepareRecall); its
 * documents are that ranking with the prompt's filters on top; doc_query and
 * the plugins' MemoryAPI.recall rank the same way.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { MemorySystem } from '../../src/memory/index.js';
import { eid, fakeSettings, makeMemory, tempDir } from './helpers.js';

const DAY = 86_400_000;

describe('the prompt recall ranks as the bench measures', () => {
  const { dir, cleanup } = tempDir();
  const start = Date.UTC(2026, 2, 1, 10);
  let now = start;
  const clock = { now: () => now };
  let mem: MemorySystem;
  /** One user turn and the box's reply at `at` (ms), pruned as the kernel does. */
  const say = (at: number, speaker: string, input: string, reply: string): void => {
    now = at;
    mem.append({ id: `${eid()}:user`, time: at, kind: 'user', source: 'voice', speaker, input, response: '' });
    mem.prune(input);
    mem.append({ id: `${eid()}:agent`, time: at + 5_000, kind: 'agent', source: 'voice', input: '', response: reply });
  };
  /** The document lines of the prompt's recall for `question` asked by `speaker` now, as a turn asks it (its event appended first). */
  const promptDocs = async (question: string, speaker?: string): Promise<string[]> => {
    mem.append({ id: `${eid()}:user`, time: clock.now(), kind: 'user', source: 'voice', input: question, response: '', ...(speaker ? { speaker } : {}) });
    const shown = mem.timeline(Number.MAX_SAFE_INTEGER).map((e) => `${e.input}\n${e.response}`).join('\n');
    const p = await mem.recallForPrompt(question, 2000, undefined, speaker, shown);
    return p.items.filter((i) => i.kind === 'document').map((i) => i.text);
  };

  before(() => {
    mem = makeMemory({ dir, clock, settings: fakeSettings({ 'core.memory.top_k': 4, 'core.memory.protected_tail': 2, 'plugin.home.time_zone': 'UTC' }) });
    say(start, 'Anna', 'My favourite tea is jasmine', 'Jasmine it is.');
    say(start + 60_000, 'Ben', 'My favourite tea is rooibos', 'Rooibos, noted.');
    say(start + 20 * DAY, 'Anna', 'Can we talk about the roof? We need to talk about the roof gutters soon', 'Sure, the roof.');
    say(start + 40 * DAY, 'Ben', "Let's talk about the summer holiday plans", 'Summer holiday, got it.');
    for (let i = 0; i < 8; i++) say(start + 50 * DAY + i * 60_000, 'Anna', `set the kitchen timer for ${i + 1} minutes`, `Timer set for ${i + 1} minutes.`);
    now = start + 50 * DAY + DAY / 2;
  });
  after(() => {
    mem.close();
    cleanup();
  });

  it('"my favourite tea" is the speaker\'s own: the person speaking ranks their words first', async () => {
    const anna = await promptDocs('What is my favourite tea?', 'Anna');
    assert.match(anna[0] ?? '', /Anna: My favourite tea is jasmine/, anna.join('\n'));
    const ben = await promptDocs('What is my favourite tea?', 'Ben');
    assert.match(ben[0] ?? '', /Ben: My favourite tea is rooibos/, ben.join('\n'));
  });

  it('"last week" is read from the turn\'s time: the talk of ten days ago before an older, closer match', async () => {
    const q = 'What did we talk about last week?';
    const docs = await promptDocs(q, 'Anna');
    assert.match(docs[0] ?? '', /summer holiday/, docs.join('\n'));
    // Without the date reading the older turn, which says "talk" twice, comes first: the date is what ranks the holiday up.
    const undated = mem.prepareRecall({ text: q, speaker: 'Anna' }, 3, { keep: (s) => s.kind === 'document' })({ wTime: 0 });
    assert.match(undated[0]?.text ?? '', /roof/, undated.map((h) => h.text).join('\n'));
  });

  it("the prompt's documents are the bench's ranking with the prompt's filters on top; the turn's own words are not recalled into it", async () => {
    const q = 'What is my favourite tea?';
    const prompt = await promptDocs(q, 'Ben');
    const ranked = mem.prepareRecall({ text: q, speaker: 'Ben' }, 3, { keep: (s) => s.kind === 'document' })();
    assert.deepEqual(prompt, ranked.map((h) => `[${new Date(h.time).toISOString().slice(0, 16).replace('T', ' ')}] ${h.text}`));
    assert.ok(!prompt.some((t) => t.includes(q)), 'the question itself is not recalled');
  });

  it('doc_query and MemoryAPI.recall rank the same way: the speaker and the date reading apply', async () => {
    const plugin = await mem.api().recall('What did we talk about last week?', 3);
    assert.match(plugin.find((i) => i.kind === 'document')?.text ?? '', /summer holiday/);
    // doc_query consumes what it finds (back into the window): last.
    const consumed = mem.consumeDocuments('What is my favourite tea?', 1, 'Ben');
    assert.deepEqual(consumed.map((d) => d.input), ['My favourite tea is rooibos']);
  });
});
