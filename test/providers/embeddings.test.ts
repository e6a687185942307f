/**
 * Embeddings from the provider (issue 19): Ollama /api/embed and OpenAI
 * /v1/embeddings through the Lua adapters, against the LLM test server
 * (which answers both in their own shapes with vectors deterministic from
 * the text); the manager's configured embedder; a model the server does not
 * know and a source that is down fail with the provider's typed errors.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { AdapterRegistry } from '../../src/providers/adapter.js';
import { LuaAdaptedProvider } from '../../src/providers/lua-provider.js';
import { ProviderManager, registerProviderSettings, registerSourceSettings } from '../../src/providers/manager.js';
import { ConnectionError, HttpStatusError } from '../../src/providers/errors.js';
import { startLlmTestServer, testEmbedding, type LlmTestServer } from '../support/llm-test-server.js';
import { FakeSettings } from '../support/fake-sdk.js';
import { adaptersDir, captureLogger } from './helpers.js';
import { checkEmbeddings } from '../../src/service/doctor.js';

let srv: LlmTestServer;
let registry: AdapterRegistry;
before(async () => {
  srv = await startLlmTestServer({ embeddingModels: ['nomic-embed-text', 'bge-m3'] });
  registry = new AdapterRegistry(adaptersDir, { allowHost: () => true });
});
after(async () => {
  registry.close();
  await srv.close();
});

for (const [adapter, path] of [
  ['ollama', '/api/embed'],
  ['openai', '/v1/embeddings'],
] as const) {
  test(`${adapter}: ${path} gives one vector per text, in order, as the server computed them`, async () => {
    const p = new LuaAdaptedProvider({ name: adapter, adapter: registry.get(adapter), baseUrl: srv.url, model: 'qwen2.5:3b', requestOptions: { keep_alive: '30m' } });
    const texts = ['Anna is allergic to peanuts', '安娜对花生过敏', 'the plumber comes on Thursday'];
    const r = await p.embed(texts, 'nomic-embed-text');
    assert.deepEqual(r.vectors, texts.map((t) => testEmbedding(t)));
    assert.equal(r.model, 'nomic-embed-text');
    const req = srv.requests.filter((q) => q.path === path).at(-1)!;
    const body = req.body as Record<string, unknown>;
    assert.equal(body.model, 'nomic-embed-text');
    assert.deepEqual(body.input, texts);
    if (adapter === 'ollama') assert.equal(body.keep_alive, '30m');
    else assert.equal(body.encoding_format, 'float');
  });

  test(`${adapter}: a model the server does not know is an HTTP 404 naming it`, async () => {
    const p = new LuaAdaptedProvider({ name: adapter, adapter: registry.get(adapter), baseUrl: srv.url, model: 'm' });
    await assert.rejects(p.embed(['x'], 'no-such-embedder'), (err: unknown) => err instanceof HttpStatusError && err.status === 404 && /no-such-embedder/.test(err.message));
  });
}

test('the test vectors: unit length, the same for the same text, closer for texts that share words', () => {
  const cos = (a: number[], b: number[]) => a.reduce((s, x, i) => s + x * b[i]!, 0);
  const a = testEmbedding('Anna is allergic to peanuts');
  assert.ok(Math.abs(Math.hypot(...a) - 1) < 1e-4);
  assert.deepEqual(testEmbedding('Anna is allergic to peanuts'), a);
  assert.ok(cos(a, testEmbedding('is Anna allergic to peanuts?')) > cos(a, testEmbedding('the garage door is closed')));
});

test('manager: the embedder of core.llm.embedding.*; none when unset; a source that is down fails typed', async (t) => {
  const settings = new FakeSettings();
  registerProviderSettings(settings);
  const m = new ProviderManager({ settings, adaptersDir, log: captureLogger() });
  t.after(() => m.close());
  assert.equal(m.embedder(), undefined);
  registerSourceSettings(settings, 'local', { adapter: 'openai', base_url: srv.url, model: 'chat' });
  settings.set('core.llm.embedding.source', 'local');
  settings.set('core.llm.embedding.model', 'bge-m3');
  const e = m.embedder()!;
  assert.deepEqual([e.source, e.model], ['local', 'bge-m3']);
  assert.deepEqual(await e.embed(['hello there']), [testEmbedding('hello there')]);
  registerSourceSettings(settings, 'gone', { adapter: 'ollama', base_url: 'http://127.0.0.1:9', model: 'x' });
  settings.set('core.llm.embedding.source', 'gone');
  await assert.rejects(m.embedder()!.embed(['x']), ConnectionError);
});

test('doctor: says lexical only when no embedding model is configured or the source fails, the dimension when it answers', async () => {
  const none = await checkEmbeddings(undefined);
  assert.ok(none.ok && /lexical only/.test(none.detail));
  const ok = await checkEmbeddings({ source: 'ollama', adapter: 'ollama', base_url: srv.url, model: 'nomic-embed-text' });
  assert.ok(ok.ok && /32 dimensions/.test(ok.detail), ok.detail);
  const v1 = await checkEmbeddings({ source: 'local', adapter: 'openai', base_url: srv.url, model: 'bge-m3' });
  assert.ok(v1.ok && /32 dimensions/.test(v1.detail), v1.detail);
  const missing = await checkEmbeddings({ source: 'ollama', adapter: 'ollama', base_url: srv.url, model: 'mxbai-embed-large' });
  assert.ok(!missing.ok && /lexical only/.test(missing.detail) && missing.fix === 'ollama pull mxbai-embed-large', JSON.stringify(missing));
  const down = await checkEmbeddings({ source: 'ollama', adapter: 'ollama', base_url: 'http://127.0.0.1:9', model: 'nomic-embed-text' });
  assert.ok(!down.ok && /lexical only/.test(down.detail) && down.fix);
});
