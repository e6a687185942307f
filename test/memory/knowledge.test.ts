/**
 * Knowledge base (seed 000 §5): shipped seeds plus user documents, its own
 * index (memory never sees knowledge and vice versa), tools and validation.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { it } from 'node:test';
import { KnowledgeBase, KnowledgeError } from '../../src/memory/index.js';
import { defaultSeedDir } from '../../src/knowledge/store.js';
import { callTool, makeMemory, quietLog, tempDir } from './helpers.js';

it('loads the shipped seed document of the repo', () => {
  const { dir, cleanup } = tempDir();
  try {
    const kb = new KnowledgeBase({ dir: path.join(dir, 'knowledge'), log: quietLog() });
    assert.ok(fs.existsSync(defaultSeedDir()));
    assert.ok(kb.list().length >= 1);
    const hit = kb.search('stop button', 1)[0];
    assert.ok(hit && hit.score > 0.1, JSON.stringify(hit));
    assert.match(hit.snippet, /stop/i);
    const zh = kb.search('停止按钮', 1)[0];
    assert.ok(zh && zh.score > 0.1 && /停止/.test(zh.snippet));
  } finally {
    cleanup();
  }
});

it('creates, lists and searches documents through the tools; separate from memory; survives restart', async () => {
  const { dir, cleanup } = tempDir();
  const seeds = path.join(dir, 'seeds');
  fs.mkdirSync(path.join(seeds, 'router'), { recursive: true });
  fs.writeFileSync(path.join(seeds, 'router', 'content.md'), '# Router\n\nThe router reboots itself every Sunday at 4 am.\n');
  let mem = makeMemory({ dir, seedDir: seeds });
  try {
    const tools = mem.tools();
    assert.deepEqual(await callTool(tools, 'knowledge_list', {}), ['router']);
    await callTool(tools, 'knowledge_create', { name: '洗碗机', content: '# 洗碗机\n\n洗碗机的软水盐每两个月添加一次。\n\n滤网每周清洗。' });
    await callTool(tools, 'knowledge_create', { name: 'router', content: '# Router\n\nThe router was replaced; it no longer reboots on Sundays. Admin page: 192.168.1.1.' });
    assert.deepEqual(await callTool(tools, 'knowledge_list', {}), ['router', '洗碗机']);
    const hits = (await callTool(tools, 'knowledge_search', { query: '软水盐多久加一次' })) as Array<{ name: string; snippet: string }>;
    assert.equal(hits[0]!.name, '洗碗机');
    assert.match(hits[0]!.snippet, /两个月/);
    const router = mem.knowledge.search('router admin page', 1)[0]!;
    assert.match(router.snippet, /192\.168\.1\.1/, 'the user document replaces the seed');
    assert.equal(mem.search('软水盐', 5).length, 0, 'knowledge never enters the memory index');
    mem.commitDocument('memo', 'the plumber comes on Tuesday');
    assert.equal(mem.knowledge.search('plumber Tuesday', 3).length, 0, 'memory never enters the knowledge index');
    await assert.rejects(async () => callTool(tools, 'knowledge_create', { name: '../escape', content: 'x' }), KnowledgeError);
    await assert.rejects(async () => callTool(tools, 'knowledge_create', { name: 'ok', content: '' }), { code: 'TOOL_ARGUMENTS_INVALID', message: /knowledge_create: \/content must NOT have fewer than 1 characters/ });
    const prompt = await mem.recallForPrompt('洗碗机的软水盐怎么加', 500);
    assert.match(prompt.text, /\[Knowledge\][\s\S]*软水盐/);
    mem.close();
    mem = makeMemory({ dir, seedDir: seeds });
    assert.deepEqual(await mem.knowledge.api().list(), ['router', '洗碗机']);
    assert.equal((await mem.knowledge.api().search('软水盐'))[0]!.name, '洗碗机');
  } finally {
    mem.close();
    cleanup();
  }
});
