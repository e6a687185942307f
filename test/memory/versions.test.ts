/**
 * Versions (issue 18): memory_edit keeps a fact's old value as an earlier
 * version that normal recall (memory_recall, the prompt's known facts) no
 * longer returns and `earlier: true` still reaches; so does memory_purge
 * (a fact retired by the review loop); an entity merge keeps
 * them with the entity that stays; forgetting the fact removes every version.
 */
import { it } from 'node:test';
import assert from 'node:assert/strict';
import { callTool, makeMemory, tempDir } from './helpers.js';

it('memory_edit keeps the old value as an earlier version; recall returns the new one; forgetting removes all', async () => {
  const { dir, cleanup } = tempDir('ha-mem-versions-');
  const mem = makeMemory({ dir });
  try {
    const tools = mem.tools();
    await callTool(tools, 'memory_commit', { triples: [{ subject: 'Tom', relation: 'drives', object: 'a blue Volvo' }] });
    const rel = mem.graph.relationsOf(mem.graph.resolve('Tom')!.id)[0]!;
    assert.match(String(await callTool(tools, 'memory_edit', { relation_id: rel.id, target: 'a red Tesla' })), /Tom drives a red Tesla/);
    await callTool(tools, 'memory_edit', { relation_id: rel.id, confidence: 0.99 });
    const now = (await callTool(tools, 'memory_recall', { query: 'Tom' })) as { relations: Array<{ fact: string }>; earlier?: unknown };
    assert.deepEqual(now.relations.map((r) => r.fact), ['Tom drives a red Tesla']);
    assert.equal(now.earlier, undefined, 'normal recall gives no earlier values');
    assert.ok(!(await mem.recallForPrompt('what does Tom drive', 500)).text.includes('Volvo'));
    const before = (await callTool(tools, 'memory_recall', { query: 'Tom', earlier: true })) as { earlier: Array<{ fact: string; until: string }> };
    assert.deepEqual(before.earlier.map((v) => v.fact), ['Tom drives a blue Volvo'], 'a confidence change is no new value');
    // A second change: both earlier values, newest first.
    await callTool(tools, 'memory_edit', { relation_id: rel.id, relation_type: 'rides', target: 'a green bike' });
    const both = (await callTool(tools, 'memory_recall', { query: 'Tom', earlier: true })) as { earlier: Array<{ fact: string }> };
    assert.deepEqual(both.earlier.map((v) => v.fact), ['Tom drives a red Tesla', 'Tom drives a blue Volvo']);
    // A merge keeps the versions with the entity that stays.
    await callTool(tools, 'memory_commit', { triples: [{ subject: 'Thomas', relation: 'likes', object: 'jazz' }] });
    await callTool(tools, 'memory_merge', { keep: 'Thomas', merge: 'Tom' });
    const merged = (await callTool(tools, 'memory_recall', { query: 'Thomas bike', earlier: true })) as { earlier: Array<{ fact: string }> };
    assert.deepEqual(merged.earlier.map((v) => v.fact), ['Thomas drives a red Tesla', 'Thomas drives a blue Volvo']);
    // memory_purge (the review loop retiring an outdated fact) keeps it as an earlier version too.
    await callTool(tools, 'memory_commit', { triples: [{ subject: 'Thomas', relation: 'lives_in', object: 'Leeds' }] });
    await callTool(tools, 'memory_purge', { subject: 'Thomas', relation: 'lives_in' });
    const moved = (await callTool(tools, 'memory_recall', { query: 'Thomas', earlier: true })) as { relations: Array<{ fact: string }>; earlier: Array<{ fact: string }> };
    assert.ok(!moved.relations.some((x) => /Leeds/.test(x.fact)));
    assert.ok(moved.earlier.some((x) => x.fact === 'Thomas lives_in Leeds'), JSON.stringify(moved.earlier));
    mem.forget({ about: 'Leeds' });
    // Forgetting the fact removes every version.
    const r = mem.forget({ about: 'Thomas bike' });
    assert.equal(r.relations, 1);
    assert.equal(r.versions, 2);
    assert.equal(mem.db.prepare('SELECT count(*) FROM relation_versions').pluck().get(), 0);
    assert.ok(r.rareWords.includes('volvo') && r.rareWords.includes('tesla'), r.rareWords.join(','));
  } finally {
    mem.close();
    cleanup();
  }
});
