/**
 * Aborting closes the HTTP connection at once (the stop button): the test
 * server sees its socket close while it is still answering, the caller gets
 * an AbortError, and the manager neither retries nor fails over.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startLlmTestServer, type LlmTestServer } from '../support/llm-test-server.js';
import { AdapterRegistry } from '../../src/providers/adapter.js';
import { LuaAdaptedProvider } from '../../src/providers/lua-provider.js';
import { ProviderManager, registerProviderSettings, registerSourceSettings } from '../../src/providers/manager.js';
import { ProviderAbortError } from '../../src/providers/errors.js';
import { adaptersDir, captureLogger } from './helpers.js';
import { FakeSettings } from '../support/fake-sdk.js';

let srv: LlmTestServer;
let registry: AdapterRegistry;
before(async () => {
  srv = await startLlmTestServer();
  registry = new AdapterRegistry(adaptersDir, { allowHost: () => true });
});
after(async () => {
  registry.close();
  await srv.close();
});

const longReply = { content: 'word '.repeat(400), tokensPerSecond: 50 };

for (const adapter of ['ollama', 'openai']) {
  test(`${adapter}: abort mid-stream closes the server-side socket and throws AbortError`, async () => {
    const p = new LuaAdaptedProvider({ name: adapter, adapter: registry.get(adapter), baseUrl: srv.url, model: 'm' });
    srv.enqueue(longReply);
    const ac = new AbortController();
    const closed = srv.nextSocketClosed();
    let got = 0;
    await assert.rejects(
      (async () => {
        for await (const ev of p.chatStream({ messages: [{ role: 'user', content: 'talk' }] }, ac.signal)) {
          if (ev.type === 'content' && ++got === 3) ac.abort();
        }
      })(),
      (err: unknown) => err instanceof ProviderAbortError && err.name === 'AbortError' && err.code === 'ABORTED',
    );
    const info = await closed;
    assert.equal(typeof info.at, 'bigint');
    assert.ok(info.bytesSent > 0);
    assert.equal(got, 3);
  });
}

test('abort while waiting for the response headers (model loading) closes the socket', async () => {
  const p = new LuaAdaptedProvider({ name: 'o', adapter: registry.get('ollama'), baseUrl: srv.url, model: 'm' });
  srv.enqueue({ headerDelayMs: 5000, content: 'late' });
  const ac = new AbortController();
  const closed = srv.nextSocketClosed();
  const arrived = srv.nextChatRequest();
  const call = p.chat({ messages: [{ role: 'user', content: 'x' }] }, ac.signal);
  await arrived; // the server holds its headers back now
  ac.abort();
  await assert.rejects(call, ProviderAbortError);
  await closed;
});

test('breaking out of the stream closes the connection too', async () => {
  const p = new LuaAdaptedProvider({ name: 'o', adapter: registry.get('ollama'), baseUrl: srv.url, model: 'm' });
  srv.enqueue(longReply);
  const closed = srv.nextSocketClosed();
  for await (const ev of p.chatStream({ messages: [{ role: 'user', content: 'x' }] })) {
    if (ev.type === 'content') break;
  }
  await closed;
});

test('an already aborted signal never sends a request', async () => {
  const p = new LuaAdaptedProvider({ name: 'o', adapter: registry.get('ollama'), baseUrl: srv.url, model: 'm' });
  const before = srv.chatRequests().length;
  await assert.rejects(p.chat({ messages: [] }, AbortSignal.abort()), ProviderAbortError);
  assert.equal(srv.chatRequests().length, before);
});

test('manager: an aborted call is neither retried nor failed over', async (t) => {
  const settings = new FakeSettings();
  registerProviderSettings(settings);
  settings.set('core.llm.sources.ollama.base_url', srv.url);
  registerSourceSettings(settings, 'backup', { adapter: 'openai', base_url: srv.url, model: 'b' });
  settings.set('core.llm.sources_order', ['ollama', 'backup']);
  const m = new ProviderManager({ settings, adaptersDir, log: captureLogger() });
  t.after(() => m.close());
  const before = srv.chatRequests().length;
  srv.enqueue(longReply, { content: 'must not be asked' });
  const ac = new AbortController();
  await assert.rejects(
    (async () => {
      for await (const ev of m.chatStream({ messages: [{ role: 'user', content: 'x' }] }, ac.signal)) if (ev.type === 'content') ac.abort();
    })(),
    ProviderAbortError,
  );
  assert.equal(srv.queued, 1, 'the second source was not asked');
  assert.equal(srv.chatRequests().length - before, 1);
  srv.reset();
  // non-stream abort before headers
  srv.enqueue({ headerDelayMs: 5000, content: 'slow' }, { content: 'must not be asked' });
  const ac2 = new AbortController();
  const arrived = srv.nextChatRequest();
  const call = m.chat({ messages: [{ role: 'user', content: 'x' }] }, ac2.signal);
  await arrived; // waiting for the headers
  ac2.abort();
  await assert.rejects(call, ProviderAbortError);
  assert.equal(srv.chatRequests().length, 1, 'one request, no fail-over');
  assert.equal(srv.queued, 1);
  const ollama = m.status().sources.find((s) => s.name === 'ollama')!;
  assert.ok(ollama.state !== 'backoff' && ollama.failures === 0, `an abort is not a source failure (${ollama.state})`);
  srv.reset();
});

test('keep-alive: many calls back to back and in parallel all succeed (a finished call never closes a pooled socket)', async () => {
  const p = new LuaAdaptedProvider({ name: 'o', adapter: registry.get('ollama'), baseUrl: srv.url, model: 'm' });
  srv.script((req) => ({ content: `echo ${String(req.body?.messages?.[0]?.content ?? '')}` }));
  try {
    for (let i = 0; i < 15; i++) assert.equal((await p.chat({ messages: [{ role: 'user', content: `s${i}` }] })).content, `echo s${i}`);
    const results = await Promise.all(
      Array.from({ length: 12 }, async (_, i) => {
        if (i % 2) return (await p.chat({ messages: [{ role: 'user', content: `p${i}` }] })).content;
        let text = '';
        for await (const e of p.chatStream({ messages: [{ role: 'user', content: `p${i}` }] })) if (e.type === 'content') text += e.text;
        return text;
      }),
    );
    assert.deepEqual(results, Array.from({ length: 12 }, (_, i) => `echo p${i}`));
  } finally {
    srv.script(null);
  }
});
