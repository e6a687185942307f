/**
 * Dense recall from the provider's embeddings (issue 19; src/memory/dense.ts):
 * documents embedded in the background with progress, the dense channel
 * fused with the lexical ones by reciprocal rank fusion (a document no word
 * of the query matches is found through it), vectors stored with their
 * fingerprint and only one fingerprint compared (a model change recomputes
 * and drops the old vectors), and lexical-only recall when no model is
 * configured or the source is down (said once, never an error). End to end
 * through ProviderManager, the Ollama adapter and the LLM test server.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MemorySystem } from '../../src/memory/memory-system.js';
import { RETRY_MS, type EmbeddingSource } from '../../src/memory/dense.js';
import { ProviderManager, registerProviderSettings } from '../../src/providers/manager.js';
import { FakeClock } from '../../src/kernel/clock.js';
import { FakeSettings } from '../support/fake-sdk.js';
import { startLlmTestServer } from '../support/llm-test-server.js';
import { fakeSettings } from './helpers.js';
import { adaptersDir, captureLogger, type LogLine } from '../providers/helpers.js';

/** Concepts of the fake embedding model: words of one concept point the same way (what a real model learns; no word overlap needed). */
const CONCEPTS: string[][] = [
  ['car', 'automobile', 'vehicle', 'sedan'],
  ['doctor', 'physician', 'dentist', 'appointment'],
  ['pasta', 'spaghetti', 'noodles'],
  ['dog', 'puppy', 'biscuit'],
  ['garden', 'roses', 'hedge'],
];

/** A fake model of `dim` dimensions (>= 6): a unit vector over the concepts named in the text. */
function conceptModel(model: string, dim: number, calls: string[][] = []): EmbeddingSource & { down: boolean; calls: string[][] } {
  const src = {
    source: 'fake',
    model,
    down: false,
    calls,
    async embed(texts: string[]): Promise<number[][]> {
      if (src.down) throw new Error('connect ECONNREFUSED 127.0.0.1:11434');
      calls.push(texts);
      return texts.map((t) => {
        const v = new Array<number>(dim).fill(0);
        const words = t.toLowerCase().split(/[^a-z]+/);
        CONCEPTS.forEach((c, i) => {
          if (words.some((w) => c.includes(w))) v[i] = 1;
        });
        v[dim - 1] = 0.05;
        return v;
      });
    },
  };
  return src;
}

function memory(dir: string, embedder: () => EmbeddingSource | undefined, lines: LogLine[] = [], clock = new FakeClock(Date.UTC(2026, 11, 1))): MemorySystem {
  return new MemorySystem({ dataDir: dir, settings: fakeSettings(), log: captureLogger(lines), clock, embedder, knowledgeSeedDir: path.join(dir, 'no-seeds') });
}

const SAID = ['We parked the sedan in front of the house', 'Anna has a physician visit on Monday', 'Tom cooked spaghetti for everyone', 'The puppy chewed a shoe again', 'The roses need water', 'Thanks, good night'];

function addDocs(m: MemorySystem): void {
  SAID.forEach((t, i) => m.docs.add({ time: Date.UTC(2026, 10, 1 + i), kind: 'user', source: 'voice', input: t, response: '' }, Date.UTC(2026, 10, 1 + i)));
}

test('the dense channel finds what no word of the query matches, fused with the lexical channels', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'homeagent-dense-'));
  try {
    const lexical = memory(path.join(dir, 'a'), () => undefined);
    addDocs(lexical);
    const without = await lexical.recallForPrompt('where is the automobile', 400);
    assert.ok(!without.text.includes('sedan'), without.text);
    lexical.close();

    const model = conceptModel('concepts-v1', 8);
    const m = memory(path.join(dir, 'b'), () => model);
    try {
      addDocs(m);
      await m.dense.catchUp();
      assert.deepEqual(m.dense.status(), { state: 'ready', fingerprint: 'fake/concepts-v1/8', done: 6, total: 6 });
      const r = await m.recallForPrompt('where is the automobile', 400);
      assert.ok(r.text.includes('We parked the sedan'), r.text);
      // A word the query shares still counts (the lexical channels are fused, not replaced).
      const both = await m.recallForPrompt('what did Tom cook', 400);
      assert.ok(both.text.includes('Tom cooked spaghetti'), both.text);
    } finally {
      m.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('vectors carry their fingerprint; a model change recomputes in the background, compares only the new ones and drops the old', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'homeagent-dense-'));
  try {
    let model = conceptModel('concepts-v1', 8);
    const m = memory(dir, () => model);
    try {
      addDocs(m);
      await m.dense.catchUp();
      const fps = () => m.db.prepare('SELECT fingerprint, COUNT(*) AS n FROM doc_embeddings GROUP BY fingerprint ORDER BY fingerprint').all();
      assert.deepEqual(fps(), [{ fingerprint: 'fake/concepts-v1/8', n: 6 }]);
      // Another model of another dimension: until its vectors exist, none of the old ones is compared with its query.
      const calls: string[][] = [];
      model = conceptModel('concepts-v2', 12, calls);
      assert.deepEqual(await m.dense.rank('where is the automobile'), []);
      // rank started the catch-up; its first batch ran with the query's.
      await m.dense.catchUp();
      assert.deepEqual(m.dense.status(), { state: 'ready', fingerprint: 'fake/concepts-v2/12', done: 6, total: 6 });
      assert.deepEqual(fps(), [{ fingerprint: 'fake/concepts-v2/12', n: 6 }], 'the old vectors went once the new ones were complete');
      assert.equal(calls.flat().filter((t) => SAID.includes(t)).length, 6, 'every document embedded once by the new model');
      const top = await m.dense.rank('where is the automobile', 1);
      assert.equal(m.docs.get(top[0]!)?.input, SAID[0]);
      // Progress while indexing: a new document is counted as not done until the next catch-up.
      m.docs.add({ time: Date.UTC(2026, 10, 20), kind: 'user', source: 'voice', input: 'The hedge needs cutting', response: '' }, Date.UTC(2026, 10, 20));
      assert.deepEqual(m.dense.status(), { state: 'indexing', fingerprint: 'fake/concepts-v2/12', done: 6, total: 7 });
      await m.dense.catchUp();
      assert.equal(m.dense.status().done, 7);
    } finally {
      m.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('no model configured, or the source down: lexical only, said once in the log, never an error; the source is asked again later', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'homeagent-dense-'));
  try {
    const lines: LogLine[] = [];
    const clock = new FakeClock(Date.UTC(2026, 11, 1));
    let model: ReturnType<typeof conceptModel> | undefined;
    const m = memory(dir, () => model, lines, clock);
    try {
      addDocs(m);
      for (let i = 0; i < 3; i++) assert.ok((await m.recallForPrompt('Tom cooked', 400)).text.includes('spaghetti'));
      assert.equal(m.dense.status().state, 'off');
      assert.equal(lines.filter((l) => /lexical only/.test(l.msg ?? '')).length, 1, 'said once');

      model = conceptModel('concepts-v1', 8);
      model.down = true;
      for (let i = 0; i < 3; i++) assert.ok((await m.recallForPrompt('Tom cooked', 400)).text.includes('spaghetti'), 'a turn still gets lexical recall');
      const st = m.dense.status();
      assert.equal(st.state, 'unavailable');
      assert.match(st.reason ?? '', /ECONNREFUSED/);
      assert.equal(lines.filter((l) => l.level === 'warn' && /lexical only/.test(l.msg ?? '')).length, 1, 'the failure said once');
      // Within RETRY_MS the source is not asked in a turn; after it, it is, and recall is dense again.
      model.down = false;
      await m.recallForPrompt('where is the automobile', 400);
      assert.equal(model.calls.length, 0);
      clock.advance(RETRY_MS);
      await m.recallForPrompt('where is the automobile', 400);
      assert.ok(model.calls.length > 0);
      await m.dense.catchUp();
      assert.equal(m.dense.status().state, 'ready');
      assert.ok((await m.recallForPrompt('where is the automobile', 400)).text.includes('We parked the sedan'));
    } finally {
      m.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('end to end: documents embedded through ProviderManager, the Ollama adapter and /api/embed of the LLM test server', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'homeagent-dense-'));
  const srv = await startLlmTestServer();
  const settings = new FakeSettings();
  registerProviderSettings(settings);
  settings.set('core.llm.sources.ollama.base_url', srv.url);
  settings.set('core.llm.embedding.source', 'ollama');
  settings.set('core.llm.embedding.model', 'nomic-embed-text');
  const providers = new ProviderManager({ settings, adaptersDir, log: captureLogger() });
  const m = memory(dir, () => providers.embedder());
  try {
    addDocs(m);
    await m.dense.catchUp();
    assert.deepEqual(m.dense.status(), { state: 'ready', fingerprint: 'ollama/nomic-embed-text/32', done: 6, total: 6 });
    const r = await m.recallForPrompt('Anna physician Monday', 400);
    assert.ok(r.text.includes('physician visit'), r.text);
    const embeds = srv.requests.filter((q) => q.path === '/api/embed');
    assert.ok(embeds.length >= 2);
    assert.deepEqual((embeds[0]!.body as { input: string[] }).input, SAID);
  } finally {
    m.close();
    providers.close();
    await srv.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
