/**
 * Issue 18 in the memory store: a store written before it (version 1) is
 * repaired when opened — speakers stored as a channel's name (`console`,
 * `cli`) become unknown, entities named after a channel or the old unknown
 * subject (`user`, `用户`) become "someone in the household" (`家里某人`),
 * and what the kernel's own `_consolidation_` turns left in the window, the
 * rule queue and the documents is removed; sensitive words are recognised;
 * a sensitive document is recalled for the person who said it only.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import path from 'node:path';
import Database from 'better-sqlite3';
import { MEMORY_STORE, openMemoryDb } from '../../src/memory/db.js';
import { isSensitiveText, sensitiveTopic } from '../../src/kernel/sensitive.js';
import { docVisible } from '../../src/memory/memory-system.js';
import { FakeClock } from '../../src/kernel/clock.js';
import { eid, makeMemory, tempDir } from './helpers.js';

it('repairs a store of version 1: channel names are not speakers, the old subjects become "someone in the household", consolidation turns are gone', () => {
  const { dir, cleanup } = tempDir();
  try {
    openMemoryDb(dir).close();
    const db = new Database(path.join(dir, 'memory.db'));
    // Back to version 1 as an older release left it.
    db.exec('DROP TABLE people; ALTER TABLE relations DROP COLUMN sensitive; ALTER TABLE relations DROP COLUMN owner; DELETE FROM meta');
    db.pragma('user_version = 1');
    const ev = db.prepare("INSERT INTO context_events(id, time, kind, source, input, response, speaker, vec, fp) VALUES(?, ?, ?, ?, ?, '', ?, '{}', 'old')");
    ev.run('u1', 1000, 'user', 'console', 'I live in Lisbon', 'console');
    ev.run('u2', 2000, 'user', '_kernel_', '[memory review] said: "I live in Porto"', null);
    ev.run('a2', 2001, 'agent', '_kernel_', '', null);
    db.prepare("INSERT INTO rule_queue(event_id, time, speaker, text) VALUES('u1', 1000, 'console', 'I live in Lisbon'), ('u2', 2000, NULL, '[memory review] said: \"I live in Porto\"')").run();
    db.prepare("INSERT INTO docs(id, event_id, time, kind, source, speaker, input, response, last_access, vec, fp) VALUES(1, 'c1', 500, 'user', '_kernel_', NULL, '[memory consolidation] A: x', '', 500, '{}', 'old'), (2, 'd1', 600, 'user', 'cli', 'cli', 'I like tea', '', 600, '{}', 'old')").run();
    const ent = db.prepare("INSERT INTO entities(id, name, type, created, updated) VALUES(?, ?, 'person', 1, 1)");
    ent.run(1, 'cli');
    ent.run(2, 'user');
    ent.run(3, '用户');
    db.prepare("INSERT INTO entities(id, name, type, created, updated) VALUES(4, 'Lisbon', 'place', 1, 1), (5, 'tea', 'thing', 1, 1), (6, '北京', 'place', 1, 1)").run();
    db.prepare("INSERT INTO relations(source, target, relation_type, created, updated) VALUES(1, 4, 'lives_in', 1, 1), (2, 5, 'likes', 1, 1), (3, 6, '住在', 1, 1)").run();
    db.close();

    const mem = makeMemory({ dir, clock: new FakeClock(10_000) });
    try {
      assert.equal(mem.db.pragma('user_version', { simple: true }), MEMORY_STORE.version);
      assert.deepEqual(mem.window.all().map((e) => [e.event.id, e.event.speaker ?? null]), [['u1', null]], 'the consolidation turn is gone; console is no speaker');
      assert.deepEqual(mem.db.prepare('SELECT event_id, speaker FROM rule_queue').all(), [{ event_id: 'u1', speaker: null }]);
      assert.deepEqual(mem.db.prepare('SELECT id, speaker FROM docs').all(), [{ id: 2, speaker: null }]);
      const facts = (mem.db.prepare('SELECT id FROM relations').pluck().all() as number[]).map((id) => {
        const r = mem.graph.relation(id)!;
        return `${r.source_name} ${r.relation_type} ${r.target_name}`;
      });
      assert.deepEqual(facts.sort(), ['someone in the household likes tea', 'someone in the household lives_in Lisbon', '家里某人 住在 北京']);
      for (const gone of ['cli', 'user', '用户']) assert.notEqual(mem.graph.resolve(gone)?.name, gone);
    } finally {
      mem.close();
    }
  } finally {
    cleanup();
  }
});

it('recognises sensitive words in English and Chinese, and not ordinary talk', () => {
  for (const [t, topic] of [
    ['my bank PIN is 4321', 'money'],
    ['I take insulin every morning', 'health'],
    ['the spare key is under the flower pot', 'key'],
    ['the alarm code is 9911', 'secret'],
    ['我的工资是一万', 'money'],
    ['我的密码是123456', 'secret'],
    ['我最近生病了', 'health'],
    ['钥匙藏在门口的花盆下', 'key'],
  ] as const) {
    assert.equal(sensitiveTopic(t), topic, t);
  }
  for (const t of ['I live in Lisbon', 'I work as a nurse at the hospital', 'turn on the kitchen light', '我的工作是医生', 'I like jazz']) assert.equal(isSensitiveText(t), false, t);
});

it('a sensitive document is recalled for the person who said it only; a household note for people, not plugins', async () => {
  const { dir, cleanup } = tempDir();
  const clock = new FakeClock(Date.UTC(2026, 0, 5));
  const mem = makeMemory({ dir, clock });
  try {
    const doc = (speaker: string | null, kind: string, input: string) => ({ title: '', input, response: '', speaker, kind });
    assert.equal(docVisible(doc('Anna', 'user', 'my bank PIN is 4321'), 'Anna'), true);
    assert.equal(docVisible(doc('Anna', 'user', 'my bank PIN is 4321'), 'anna'), true, 'names compare as the household says them');
    assert.equal(docVisible(doc('Anna', 'user', 'my bank PIN is 4321'), 'Ben'), false);
    assert.equal(docVisible(doc('Anna', 'user', 'my bank PIN is 4321'), undefined), false, 'nor to an unidentified speaker');
    assert.equal(docVisible(doc(null, 'user', 'my bank PIN is 4321'), undefined), true, "an unidentified speaker's to unidentified speakers");
    assert.equal(docVisible(doc(null, 'user', 'my bank PIN is 4321'), 'Ben'), false);
    assert.equal(docVisible(doc(null, 'agent', 'Your PIN 4321 is noted.'), 'Anna'), false, "the box's reply is volunteered to nobody");
    assert.equal(docVisible(doc(null, 'note', 'guest wifi password sunflower'), 'Ben'), true);
    assert.equal(docVisible(doc(null, 'note', 'guest wifi password sunflower'), null), false, 'not to plugins');
    assert.equal(docVisible(doc('Anna', 'user', 'I like tea'), null), true);

    // Through the prompt's recall: archived into documents, then recalled per speaker.
    mem.append({ id: eid(), time: clock.now(), kind: 'user', source: 'speaker', input: 'my bank PIN is 4321, remember it', response: '', speaker: 'Anna' });
    mem.append({ id: eid(), time: clock.now() + 1, kind: 'user', source: 'speaker', input: 'my favourite bank is the one on Elm Street', response: '', speaker: 'Ben' });
    mem.window.prune('', 0, 0, clock.now());
    assert.equal(mem.window.size(), 0);
    const anna = await mem.recallForPrompt('what is my bank PIN', 800, undefined, 'Anna');
    assert.match(anna.text, /4321/);
    const ben = await mem.recallForPrompt('what is my bank PIN', 800, undefined, 'Ben');
    assert.doesNotMatch(ben.text, /4321/);
    assert.ok(!(await mem.api().recall('bank PIN', 10)).some((i) => i.text.includes('4321')), 'plugins do not get it');
  } finally {
    mem.close();
    cleanup();
  }
});

it('files what a person says under one spelling of their name', async () => {
  const { dir, cleanup } = tempDir();
  const clock = new FakeClock(Date.UTC(2026, 0, 5));
  const mem = makeMemory({ dir, clock });
  try {
    mem.append({ id: eid(), time: clock.now(), kind: 'user', source: 'speaker', input: 'I live in Lisbon', response: '', speaker: 'Anna' });
    mem.append({ id: eid(), time: clock.now() + 1, kind: 'user', source: 'cli', input: 'I like green tea', response: '', speaker: 'ANNA' });
    assert.deepEqual(mem.window.all().map((e) => e.event.speaker), ['Anna', 'Anna']);
    await mem.runLoopOnce('rules');
    assert.deepEqual(mem.social.person('anna', 'Anna')!.traits, { lives_in: 'Lisbon', likes: 'green tea' });
    assert.equal(mem.graph.resolve('ANNA'), undefined, 'no second entity');
    assert.deepEqual(mem.social.list().map((p) => p.name), ['Anna']);
  } finally {
    mem.close();
    cleanup();
  }
});
