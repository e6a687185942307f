/**
 * Layer behaviour: pruning keeps the protected tail and the relevant events,
 * archived events keep their timestamps, tool memory policies, vector
 * archived turns' vectors holding their neighbours' words, vector
 * fingerprints recomputed on mismatch, prompt budget, argument errors, loops.
 */
import assert from 'node:assert/strict';
import path from 'node:path';
import { describe, it } from 'node:test';
import { openMemoryDb } from '../../src/memory/db.js';
import { MemoryArgumentError, MemoryNotFoundError, MemorySystem, VECTOR_FINGERPRINT } from '../../src/memory/index.js';
import { estimateTokens } from '../../src/kernel/memory-port.js';
import { ToolArgumentsError } from '../../src/kernel/tool-registry.js';
import { FakeClock } from '../../src/kernel/clock.js';
import { callTool, eid, fakeSettings, makeMemory, quietLog, tempDir } from './helpers.js';

describe('context window', () => {
  it('prune protects the newest 10, keeps the most relevant and archives the rest at original times', () => {
    const { dir, cleanup } = tempDir();
    const clock = new FakeClock(Date.UTC(2026, 0, 5, 9, 0, 0));
    const mem = makeMemory({ dir, clock });
    try {
      const times = new Map<string, number>();
      for (let i = 0; i < 40; i++) {
        const id = `e${i}`;
        const text = i === 3 ? '我的自行车停在地下车库B2层' : i === 7 ? 'the bicycle pump is in the garage' : `背景闲聊第${i}句，今天吃了面条${i}`;
        mem.append({ id, time: clock.now(), kind: 'user', source: 'console', input: text, response: '' });
        times.set(id, clock.now());
        clock.advance(1000);
      }
      mem.prune('自行车 bicycle 在哪里');
      const ids = mem.timeline(1e9).map((e) => e.id);
      assert.equal(ids.length, 30);
      for (let i = 30; i < 40; i++) assert.ok(ids.includes(`e${i}`), `tail e${i} kept`);
      assert.ok(ids.includes('e3') && ids.includes('e7'), 'relevant old events kept');
      assert.equal(mem.docs.count(), 10);
      const archived = mem.db.prepare('SELECT event_id, time FROM docs').all() as Array<{ event_id: string; time: number }>;
      for (const a of archived) assert.equal(a.time, times.get(a.event_id), 'original timestamp kept');
      // survives a restart
      mem.close();
      const again = makeMemory({ dir, clock });
      assert.deepEqual(again.timeline(1e9).map((e) => e.id), ids);
      again.close();
    } finally {
      cleanup();
    }
  });

  it('timeline respects its token budget and keeps the newest', () => {
    const { dir, cleanup } = tempDir();
    const clock = new FakeClock(Date.UTC(2026, 0, 5, 9, 0, 0));
    const mem = makeMemory({ dir, clock });
    try {
      for (let i = 0; i < 20; i++) {
        mem.append({ id: `t${i}`, time: clock.now(), kind: 'user', source: 'console', input: 'x'.repeat(400), response: '' });
        clock.advance(1000);
      }
      const tl = mem.timeline(350);
      assert.ok(tl.length >= 2 && tl.length < 20);
      assert.equal(tl.at(-1)!.id, 't19');
    } finally {
      mem.close();
      cleanup();
    }
  });

  it('applies NoMemory and cleaners to tool events', () => {
    const { dir, cleanup } = tempDir();
    const clock = new FakeClock(Date.UTC(2026, 0, 5, 9, 0, 0));
    const settings = fakeSettings({ 'core.memory.top_k': 2, 'core.memory.protected_tail': 0 });
    const mem = makeMemory({ dir, clock, settings });
    try {
      mem.registerToolMemoryPolicy('camera_snapshot', { no_memory: true });
      mem.registerToolMemoryPolicy('weather', { cleaner: (s) => s.replace(/<[^>]+>/g, ' ') });
      mem.append({ id: 'a', time: clock.now(), kind: 'tool', tool: 'camera_snapshot', source: 'console', input: 'camera_snapshot()', response: 'zebra zebra zebra' });
      mem.append({ id: 'b', time: clock.now(), kind: 'tool', tool: 'weather', source: 'console', input: 'weather()', response: '<td>platypus</td><span>rain</span>' });
      for (let i = 0; i < 3; i++) mem.append({ id: `c${i}`, time: clock.now() + i, kind: 'user', source: 'console', input: `hello ${i}`, response: '' });
      mem.prune('nothing related');
      assert.ok(mem.docs.count() >= 2);
      assert.equal(mem.search('zebra', 5).length, 0, 'NoMemory output is not vectorised');
      assert.ok(mem.search('platypus', 5).some((h) => h.event_id === 'b'));
      assert.equal(mem.search('span td', 5).filter((h) => h.event_id === 'b').length, 0, 'cleaner removed the markup');
      const distilled = mem.db.prepare("SELECT distilled FROM docs WHERE event_id = 'a'").pluck().get();
      assert.equal(distilled, 1, 'NoMemory documents are never distilled');
    } finally {
      mem.close();
      cleanup();
    }
  });
});

describe('archived neighbours', () => {
  it("an archived turn's vector holds its neighbours' words, unless recallRules.neighbourContext is false", () => {
    for (const neighbourContext of [true, false]) {
      const { dir, cleanup } = tempDir();
      const clock = new FakeClock(Date.UTC(2026, 0, 5, 9, 0, 0));
      const settings = fakeSettings({ 'core.memory.top_k': 2, 'core.memory.protected_tail': 0 });
      const mem = new MemorySystem({ dataDir: dir, settings, log: quietLog(), clock, knowledgeSeedDir: path.join(dir, 'no-seeds'), recallRules: { neighbourContext } });
      try {
        mem.append({ id: 'q', time: clock.now(), kind: 'user', source: 'console', input: 'where did you hide the marzipan', response: '' });
        mem.append({ id: 'a', time: clock.now() + 1000, kind: 'user', source: 'console', input: 'behind the flour jar', response: '' });
        for (let i = 0; i < 3; i++) mem.append({ id: `c${i}`, time: clock.now() + 2000 + i, kind: 'user', source: 'console', input: `hello ${i}`, response: '' });
        mem.prune('nothing related');
        const answer = Number(mem.db.prepare("SELECT id FROM docs WHERE event_id = 'a'").pluck().get());
        assert.equal('marzipan' in mem.docs.vectorOf(answer), neighbourContext);
      } finally {
        mem.close();
        cleanup();
      }
    }
  });
});

describe('vector fingerprint', () => {
  it('recomputes vectors stored under another fingerprint on open', () => {
    const { dir, cleanup } = tempDir();
    const clock = new FakeClock(Date.UTC(2026, 0, 5, 9, 0, 0));
    let mem = makeMemory({ dir, clock });
    try {
      const id = mem.commitDocument('洗衣机', '洗衣机的滤网每个月清洗一次');
      mem.append({ id: 'w1', time: clock.now(), kind: 'user', source: 'console', input: '烤箱预热到200度', response: '' });
      mem.close();
      const db = openMemoryDb(dir);
      db.prepare("UPDATE docs SET fp = 'old-space', vec = '{\"bogus\":1}' WHERE id = ?").run(id);
      db.prepare("DELETE FROM doc_terms WHERE doc_id = ?").run(id);
      db.prepare("INSERT INTO doc_terms(term, doc_id, w) VALUES('bogus', ?, 1)").run(id);
      db.prepare("UPDATE context_events SET fp = 'old-space', vec = '{}'").run();
      db.close();
      mem = makeMemory({ dir, clock });
      const row = mem.db.prepare('SELECT fp, vec FROM docs WHERE id = ?').get(id) as { fp: string; vec: string };
      assert.equal(row.fp, VECTOR_FINGERPRINT);
      assert.ok(!row.vec.includes('bogus'));
      assert.ok(mem.search('滤网 清洗', 3).some((h) => h.id === `doc:${id}`), 'found again after recompute');
      assert.equal(mem.search('bogus', 3).length, 0);
      const ev = mem.db.prepare("SELECT fp, vec FROM context_events WHERE id = 'w1'").get() as { fp: string; vec: string };
      assert.equal(ev.fp, VECTOR_FINGERPRINT);
      assert.match(ev.vec, /烤箱/);
    } finally {
      mem.close();
      cleanup();
    }
  });
});

describe('prompt and tools', () => {
  it('keeps the memory block within the token budget', async () => {
    const { dir, cleanup } = tempDir();
    const clock = new FakeClock(Date.UTC(2026, 0, 5, 9, 0, 0));
    const mem = makeMemory({ dir, clock });
    try {
      for (let i = 0; i < 10; i++) mem.commitDocument(`花园笔记${i}`, `花园里的玫瑰需要每周浇水${i}次，月季和玫瑰都喜欢阳光。`.repeat(3));
      mem.graph.commit([{ subject: '玫瑰', relation: '种在', object: '花园' }], clock.now());
      for (const budget of [30, 80, 200]) {
        const p = await mem.recallForPrompt('玫瑰怎么浇水', budget);
        assert.ok(estimateTokens(p.text) <= budget + 5, `${estimateTokens(p.text)} <= ${budget}`);
      }
      const big = await mem.recallForPrompt('玫瑰怎么浇水', 5000);
      assert.equal(big.items.filter((i) => i.kind === 'document').length, 3, 'top-3 documents');
      assert.equal((await mem.recallForPrompt('完全无关的量子计算', 5000)).text, '');
    } finally {
      mem.close();
      cleanup();
    }
  });

  it('rejects bad arguments with typed errors', async () => {
    const { dir, cleanup } = tempDir();
    const mem = makeMemory({ dir });
    try {
      const tools = mem.tools();
      const names = tools.map((t) => t.name).sort();
      assert.deepEqual(names, [
        'doc_commit', 'doc_query', 'knowledge_create', 'knowledge_list', 'knowledge_search', 'memory_commit', 'memory_confirm', 'memory_delete_entity',
        'memory_edit', 'memory_forget', 'memory_introspect', 'memory_merge', 'memory_purge', 'memory_recall', 'people_list', 'person_query', 'picture_show', 'pictures_recall', 'relate', 'set_trait',
      ]);
      // Checks the schema states are the registry's (ajv), with the argument named:
      await assert.rejects(async () => callTool(tools, 'memory_commit', { triples: [] }), { code: 'TOOL_ARGUMENTS_INVALID', message: /\/triples must NOT have fewer than 1 items/ });
      await assert.rejects(async () => callTool(tools, 'memory_commit', { triples: [{ subject: 'a', relation: '', object: 'b' }] }), /\/triples\/0\/relation must NOT have fewer than 1 characters/);
      await assert.rejects(async () => callTool(tools, 'memory_commit', { triples: [{ subject: 'a', relation: '  ', object: 'b' }] }), /\/triples\/0\/relation must match pattern/);
      await assert.rejects(async () => callTool(tools, 'memory_recall', { query: 42 }), ToolArgumentsError);
      await assert.rejects(async () => callTool(tools, 'memory_recall', { query: 42 }), /invalid arguments for memory_recall: \/query must be string/);
      await assert.rejects(async () => callTool(tools, 'doc_query', { query: 'x', limit: 99 }), /doc_query: \/limit must be <= 10/);
      await assert.rejects(async () => callTool(tools, 'doc_query', { query: 'x', limit: 2.5 }), /\/limit must be integer/);
      await assert.rejects(async () => callTool(tools, 'memory_delete_entity', {}), /must have required property 'name'/);
      // ... and those it cannot state are the handler's:
      await assert.rejects(async () => callTool(tools, 'memory_merge', { keep: 'x', merge: 'y' }), MemoryNotFoundError);
      await assert.rejects(async () => callTool(tools, 'memory_delete_entity', { name: 'nobody' }), { code: 'MEMORY_NOT_FOUND' });
      await assert.rejects(async () => callTool(tools, 'memory_edit', { relation_id: 5 }), MemoryNotFoundError);
      await assert.rejects(async () => callTool(tools, 'memory_edit', {}), { code: 'MEMORY_BAD_ARGS', message: /give "entity" or "relation_id"/ });
      await assert.rejects(async () => callTool(tools, 'memory_purge', { subject: 'x' }), MemoryArgumentError);
      // Optional arguments may be null (absent), strings are trimmed:
      assert.match(String(await callTool(tools, 'memory_commit', { triples: [{ subject: ' 小红 ', relation: '喜欢', object: '画画', subject_type: null, confidence: null }] })), /Stored 1 fact/);
      assert.ok(mem.graph.resolve('小红'), 'trimmed name stored');
      assert.match(String(await callTool(tools, 'memory_delete_entity', { name: '小红 ' })), /Forgot 「小红」/);
      assert.equal(await callTool(tools, 'doc_query', { query: 'nothing like this', limit: null }), 'No documents match.');
      await callTool(tools, 'memory_commit', { triples: [{ subject: '小明', relation: '喜欢', object: '恐龙' }] });
      assert.match(String(await callTool(tools, 'memory_edit', { entity: '小明', new_name: '王小明', type: 'person' })), /Updated/);
      assert.equal(mem.graph.resolve('小明')?.name, '王小明');
      const rel = mem.graph.relationsOf(mem.graph.resolve('王小明')!.id)[0]!;
      assert.match(String(await callTool(tools, 'memory_edit', { relation_id: rel.id, relation_type: '最喜欢', confidence: 0.95 })), /王小明 最喜欢 恐龙 \(0\.95\)/);
      assert.match(String(await callTool(tools, 'memory_delete_entity', { name: '王小明' })), /1 fact\(s\)/);
      const stats = (await callTool(tools, 'memory_introspect', {})) as Record<string, unknown>;
      assert.equal(stats.relations, 0);
    } finally {
      mem.close();
      cleanup();
    }
  });

  it('a loop tick logs its error and the next tick works; a tick after close does nothing', async () => {
    const { dir, cleanup } = tempDir();
    let boom = true;
    const mem = makeMemory({
      dir,
      enqueue: () => {
        if (boom) throw new Error('queue down');
      },
    });
    try {
      mem.graph.commit([{ subject: '刘先生', subject_type: 'person', relation: '住', object: '3楼' }, { subject: '刘备', subject_type: 'person', relation: '住', object: '4楼' }], mem.now());
      const r = await mem.runLoopOnce('merge');
      assert.deepEqual(r, { error: 1 });
      boom = false;
      assert.equal((await mem.runLoopOnce('merge')).candidates, 1, 'the next tick works');
    } finally {
      mem.close();
      cleanup();
    }
    assert.deepEqual(await mem.runLoopOnce('archive'), { closed: 1 }, 'no tick on a closed database');
  });
});

describe('graph overview (the WebUI memory graph)', () => {
  it('gives the most mentioned entities and only the relations between them', () => {
    const { dir, cleanup } = tempDir();
    const mem = makeMemory({ dir });
    try {
      const now = Date.now();
      mem.graph.commit([{ subject: 'Anna', relation: 'likes', object: 'tea' }, { subject: 'Anna', relation: 'lives in', object: 'Lisbon' }, { subject: 'Anna', relation: 'knows', object: 'Tom' }], now);
      mem.graph.commit([{ subject: 'Tom', relation: 'owns', object: 'car' }], now);
      const all = mem.graph.overview(10);
      assert.deepEqual(all.entities.map((e) => e.name).slice(0, 2), ['Anna', 'Tom']);
      assert.equal(all.entities.length, 5);
      assert.equal(all.relations.length, 4);
      const two = mem.graph.overview(2);
      assert.deepEqual(two.entities.map((e) => e.name), ['Anna', 'Tom']);
      assert.deepEqual(two.relations.map((r) => `${r.source_name} ${r.relation_type} ${r.target_name}`), ['Anna knows Tom']);
      mem.close();
    } finally {
      cleanup();
    }
  });
});
