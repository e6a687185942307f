/**
 * Forgetting in the memory store (issue 18): a Chinese request ("忘记我的自行车
 * 锁密码") forgets the turn that said it in other words order, and its
 * documents' neighbours keep none of its terms in their vectors (doc_terms,
 * term_df, the stored vector); the memory file's bytes (database, -wal)
 * hold none of it; what nothing names is refused with a clear error.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fakeSettings, makeMemory, tempDir } from './helpers.js';
import { MemoryArgumentError } from '../../src/memory/errors.js';
import { forgetWords, mentionsAll } from '../../src/memory/forget.js';

it('forgets a Chinese sentence everywhere in the store, neighbours\' vectors included', () => {
  const { dir, cleanup } = tempDir('ha-mem-forget-');
  const mem = makeMemory({ dir, settings: fakeSettings({ 'core.memory.top_k': 2, 'core.memory.protected_tail': 0 }) });
  try {
    const said = ['今天天气很好，我们去公园散步', '我的自行车锁的密码是佐布拉', '晚饭吃饺子好不好', '明天早上八点开会'];
    said.forEach((t, i) => {
      mem.append({ id: `z${i}:user`, time: 1000 + i * 10, kind: 'user', source: 'cli', speaker: 'Anna', input: t, response: '' });
      mem.append({ id: `z${i}:agent`, time: 1001 + i * 10, kind: 'agent', source: 'cli', input: '', response: i === 1 ? '好的，记住了佐布拉。' : '好的。' });
    });
    mem.prune('无关');
    assert.ok(mem.docs.count() >= 6, 'archived with their neighbours folded in');
    const neighbour = Number(mem.db.prepare("SELECT id FROM docs WHERE input LIKE '%饺子%'").pluck().get());
    assert.ok(Object.keys(mem.docs.vectorOf(neighbour)).some((t) => t.includes('布拉')), 'a neighbour holds the sentence\'s terms before');
    assert.deepEqual(forgetWords('忘记我的自行车锁密码'), ['自行车', '密码']);
    assert.ok(mentionsAll(said[1]!, forgetWords('忘记我的自行车锁密码')));
    const r = mem.forget({ about: '忘记我的自行车锁密码' });
    assert.deepEqual(r.turns, ['z1']);
    assert.equal(r.documents, 2);
    assert.ok(!Object.keys(mem.docs.vectorOf(neighbour)).some((t) => t.includes('布拉') || t.includes('自行车')), 'the neighbour\'s vector is its own again');
    assert.equal(mem.db.prepare("SELECT count(*) FROM doc_terms WHERE term LIKE '%布拉%' OR term LIKE '%自行车%'").pluck().get(), 0);
    assert.equal(mem.db.prepare("SELECT count(*) FROM term_df WHERE term LIKE '%布拉%' OR term LIKE '%自行车%'").pluck().get(), 0);
    assert.equal(mem.db.prepare('SELECT count(*) FROM forgotten').pluck().get(), 1);
    assert.ok(r.checkpointed);
    for (const f of readdirSync(dir).filter((x) => x.startsWith('memory.db'))) {
      const bytes = readFileSync(path.join(dir, f)).toString('utf8');
      for (const w of ['佐布拉', '自行车']) assert.ok(!bytes.includes(w), `${f} holds ${w}`);
    }
    assert.ok(mem.search('饺子', 3).some((h) => h.text.includes('饺子')), 'the rest is remembered');
    assert.throws(() => mem.forget({ about: 'forget that' }), MemoryArgumentError);
  } finally {
    mem.close();
    cleanup();
  }
});

it('the safety net: a table nobody taught forgetting about (FTS5 with its shadow tables, summaries, embeddings by doc_id / event_id) loses what names a forgotten word or points at what was forgotten; a copy is scrubbed the same way', async () => {
  const { sweepTables, scrubSqliteFile } = await import('../../src/memory/forget.js');
  const Database = (await import('better-sqlite3')).default;
  const { dir, cleanup } = tempDir('ha-mem-sweep-');
  const mem = makeMemory({ dir });
  try {
    mem.db.exec("CREATE VIRTUAL TABLE later_fts USING fts5(body); CREATE TABLE later_summaries(id INTEGER PRIMARY KEY, text TEXT, vec BLOB)");
    mem.db.prepare('INSERT INTO later_fts(body) VALUES (?), (?)').run('the gate code is snorkelwump', 'the garden is green');
    mem.db.prepare('INSERT INTO later_summaries(text, vec) VALUES (?, ?), (?, ?)').run('Anna: gate code snorkelwump', Buffer.from([1, 2]), 'Anna likes tea', Buffer.from([3]));
    mem.db.exec('CREATE TABLE later_embeddings(doc_id INTEGER, event_id TEXT, vec BLOB)');
    mem.append({ id: 'g1:user', time: 1, kind: 'user', source: 'cli', speaker: 'Anna', input: 'the gate code is snorkelwump', response: '' });
    const noteId = mem.commitDocument('gate', 'the gate code is snorkelwump');
    const otherId = mem.commitDocument('tea', 'Anna likes tea');
    mem.db.prepare('INSERT INTO later_embeddings VALUES (?, NULL, ?), (?, NULL, ?), (NULL, ?, ?)').run(noteId, Buffer.from([1]), otherId, Buffer.from([2]), 'g1:user', Buffer.from([3]));
    const r = mem.forget({ about: 'gate code' });
    assert.ok(r.rareWords.includes('snorkelwump'));
    assert.deepEqual(mem.db.prepare('SELECT body FROM later_fts').pluck().all(), ['the garden is green']);
    assert.deepEqual(mem.db.prepare('SELECT text FROM later_summaries').pluck().all(), ['Anna likes tea']);
    assert.deepEqual(mem.db.prepare('SELECT doc_id FROM later_embeddings').pluck().all(), [otherId], 'the embeddings of the forgotten note and turn go with them');
    for (const f of readdirSync(dir).filter((x) => x.startsWith('memory.db'))) assert.ok(!readFileSync(path.join(dir, f)).toString('latin1').includes('snorkelwump'), f);
    // A copy (any schema) by the same sweep, then vacuumed.
    const copy = path.join(dir, 'copy.db');
    const c = new Database(copy);
    c.exec("CREATE VIRTUAL TABLE f USING fts5(body); CREATE TABLE t(x TEXT); INSERT INTO f(body) VALUES ('quarbleton here'), ('nothing'); INSERT INTO t(x) VALUES ('QUARBLETON'), ('keep')");
    c.close();
    assert.equal(scrubSqliteFile(copy, ['quarbleton']), 2);
    assert.ok(!readFileSync(copy).toString('latin1').toLowerCase().includes('quarbleton'));
    const again = new Database(copy);
    assert.deepEqual([again.prepare('SELECT x FROM t').pluck().all(), again.prepare('SELECT body FROM f').pluck().all()], [['keep'], ['nothing']]);
    assert.equal(sweepTables(again, []), 0);
    again.close();
  } finally {
    mem.close();
    cleanup();
  }
});

it("forgetting removes the paragraphs of the knowledge base's user documents that say it (a document left empty goes)", async () => {
  const { dir, cleanup } = tempDir('ha-mem-forget-kb-');
  const mem = makeMemory({ dir });
  try {
    mem.knowledge.create('gym', 'Gym opens at six.\n\nThe locker code is frumpledash.\n\nTowels cost two euros.');
    mem.knowledge.create('locker', 'Locker code: frumpledash');
    mem.knowledge.create('bins', 'Recycling goes out on Mondays.');
    const r = mem.forget({ about: 'locker code' });
    assert.equal(r.knowledge, 2);
    assert.ok(r.rareWords.includes('frumpledash'));
    assert.equal(mem.knowledge.read('gym'), 'Gym opens at six.\n\nTowels cost two euros.');
    assert.equal(mem.knowledge.read('locker'), undefined);
    assert.deepEqual(mem.knowledge.list(), ['bins', 'gym']);
    assert.deepEqual(mem.knowledge.search('frumpledash locker code', 3).filter((h) => /frumpledash/.test(h.snippet)), []);
    const all = (d: string): string[] => readdirSync(d, { withFileTypes: true }).flatMap((e) => (e.isDirectory() ? all(path.join(d, e.name)) : [path.join(d, e.name)]));
    for (const f of all(dir)) assert.ok(!readFileSync(f).toString('latin1').includes('frumpledash'), f);
  } finally {
    mem.close();
    cleanup();
  }
});

it('a rolled-back store under backups with a WAL of its own is scrubbed through its database, its other rows kept', async () => {
  const { scrubBackups } = await import('../../src/service/forgetting.js');
  const Database = (await import('better-sqlite3')).default;
  const { mkdirSync, copyFileSync, existsSync } = await import('node:fs');
  const { dir, cleanup } = tempDir('ha-mem-rolled-');
  try {
    const live = path.join(dir, 'live.db');
    const db = new Database(live);
    db.pragma('journal_mode = WAL');
    db.exec("CREATE TABLE docs(id INTEGER PRIMARY KEY, input TEXT); INSERT INTO docs(input) VALUES ('keep this one')");
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.prepare('INSERT INTO docs(input) VALUES (?), (?)').run('the shed code is wibbleplonk', 'and this one too');
    // Set aside while open, as a rollback moves a store with its WAL: the word is only in the -wal.
    const aside = path.join(dir, 'backups', 'rolled-back', '20261201T070000Z-from-0.9', 'memory.db');
    mkdirSync(path.dirname(aside), { recursive: true });
    copyFileSync(live, aside);
    copyFileSync(`${live}-wal`, `${aside}-wal`);
    db.close();
    assert.ok(!readFileSync(aside).toString('latin1').includes('wibbleplonk') && readFileSync(`${aside}-wal`).toString('latin1').includes('wibbleplonk'));
    assert.deepEqual(scrubBackups(dir, ['wibbleplonk']), { scrubbed: 1, removed: 0 });
    assert.ok(!existsSync(`${aside}-wal`) || !readFileSync(`${aside}-wal`).toString('latin1').includes('wibbleplonk'));
    assert.ok(!readFileSync(aside).toString('latin1').includes('wibbleplonk'));
    const back = new Database(aside, { readonly: true });
    assert.deepEqual(back.prepare('SELECT input FROM docs ORDER BY id').pluck().all(), ['keep this one', 'and this one too'], 'what the WAL held otherwise is kept');
    back.close();
  } finally {
    cleanup();
  }
});
