/**
 * Provider manager: settings, fallback in order, 401/403 unusable until the
 * source's settings change, back-off with a fake clock, status(), context window.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startLlmTestServer, type LlmTestServer } from '../support/llm-test-server.js';
import { ProviderManager, registerProviderSettings, registerSourceSettings } from '../../src/providers/manager.js';
import { AllSourcesFailedError } from '../../src/providers/errors.js';
import type { StreamEvent } from '../../src/kernel/llm-types.js';
import { adaptersDir, captureLogger, collect } from './helpers.js';
import { FakeSettings } from '../support/fake-sdk.js';

let srv: LlmTestServer;
before(async () => {
  srv = await startLlmTestServer({ models: [{ name: 'qwen2.5:3b', context_length: 32768, family: 'qwen2' }, { name: 'tuned', context_length: 32768, num_ctx: 8192 }] });
});
after(() => srv.close());

function setup(order: string[] = ['ollama', 'backup']) {
  const settings = new FakeSettings();
  registerProviderSettings(settings);
  settings.set('core.llm.sources.ollama.base_url', srv.url);
  registerSourceSettings(settings, 'backup', { adapter: 'openai', base_url: srv.url, model: 'backup-model', api_key: 'sk-backup' });
  settings.set('core.llm.sources_order', order);
  let clock = 1_000_000;
  const log = captureLogger();
  const m = new ProviderManager({ settings, adaptersDir, log, now: () => clock });
  return { settings, m, log, advance: (ms: number) => (clock += ms) };
}

const ask = { messages: [{ role: 'user' as const, content: 'hi' }] };
const final = (ev: StreamEvent[]) => {
  const d = ev.at(-1);
  assert.ok(d?.type === 'done');
  return d.response;
};

test('registerProviderSettings: the default source is Ollama on 127.0.0.1:11434', () => {
  const s = new FakeSettings();
  registerProviderSettings(s);
  assert.equal(s.get('core.llm.sources.ollama.adapter'), 'ollama');
  assert.equal(s.get('core.llm.sources.ollama.base_url'), 'http://127.0.0.1:11434');
  assert.equal(s.get('core.llm.sources.ollama.model'), 'qwen2.5:3b');
  assert.equal(s.get('core.llm.sources.ollama.api_key'), '');
  assert.equal(s.get('core.llm.sources.ollama.context_window'), 0);
  assert.deepEqual(s.get('core.llm.sources_order'), ['ollama']);
  assert.equal(s.get('core.llm.sources.deepseek.adapter'), 'deepseek');
  assert.ok(s.list('core.llm.').some((e) => e.key === 'core.llm.idle_timeout_ms'));
});

test('the first source answers; source and model are filled in; status says who answered', async (t) => {
  const { m } = setup();
  t.after(() => m.close());
  assert.deepEqual(m.status().sources.map((s) => [s.name, s.state]), [['ollama', 'untried'], ['backup', 'untried']], 'no source is called ok before it answered');
  srv.enqueue({ content: 'from ollama' });
  const r = await m.chat(ask);
  assert.equal(r.content, 'from ollama');
  assert.equal(r.source, 'ollama');
  assert.equal(r.model, 'qwen2.5:3b');
  const st = m.status();
  assert.equal(st.last_source, 'ollama');
  assert.deepEqual(st.sources.map((s) => [s.name, s.state]), [['ollama', 'ok'], ['backup', 'untried']]);
  // the Ollama source sends keep_alive; the backup sends its key
  srv.enqueue({ status: 500, error: 'x' }, { content: 'b' });
  await m.chat(ask);
  const [o, b] = srv.chatRequests().slice(-2);
  assert.equal(o!.body!.keep_alive, '30m');
  assert.equal(b!.headers.authorization, 'Bearer sk-backup');
  assert.equal(o!.headers.authorization, undefined);
});

test('fallback in order; a failed source backs off and is tried again after the back-off', async (t) => {
  const { m, advance } = setup();
  t.after(() => m.close());
  srv.enqueue({ status: 502, error: 'bad gateway' }, { content: 'backup answer' });
  const r = final(await collect(m.chatStream(ask)));
  assert.equal(r.content, 'backup answer');
  assert.equal(r.source, 'backup');
  let st = m.status().sources[0]!;
  assert.equal(st.state, 'backoff');
  assert.equal(st.failures, 1);
  assert.equal(st.last_error_code, 'HTTP_STATUS');
  // during the back-off the backup is asked first
  srv.enqueue({ content: 'backup again' });
  assert.equal((await m.chat(ask)).source, 'backup');
  // after it, ollama first again
  advance(60_000);
  srv.enqueue({ content: 'ollama back' });
  assert.equal((await m.chat(ask)).source, 'ollama');
  st = m.status().sources[0]!;
  assert.equal(st.state, 'ok');
  assert.equal(st.failures, 0);
});

test('a single backing-off source is still tried rather than failing outright', async (t) => {
  const { m } = setup(['ollama']);
  t.after(() => m.close());
  srv.enqueue({ status: 500, error: 'x' });
  await assert.rejects(m.chat(ask), (e: unknown) => e instanceof AllSourcesFailedError && e.errors.length === 1 && e.errors[0]!.source === 'ollama');
  srv.enqueue({ content: 'recovered' });
  assert.equal((await m.chat(ask)).content, 'recovered');
});

test('401/403 marks a source unusable until its settings change', async (t) => {
  const { m, settings, advance, log } = setup(['backup', 'ollama']);
  t.after(() => m.close());
  srv.enqueue({ status: 401, error: 'Incorrect API key provided' }, { content: 'ollama answers' });
  assert.equal((await m.chat(ask)).source, 'ollama');
  assert.equal(m.status().sources[0]!.state, 'unusable');
  assert.equal(m.status().sources[0]!.last_error_code, 'AUTH_FAILED');
  assert.ok(log.lines.some((l) => l.level === 'error' && /rejected the credentials/.test(l.msg ?? '')));
  advance(24 * 3600_000);
  const before = srv.chatRequests().length;
  srv.enqueue({ content: 'ollama again' });
  assert.equal((await m.chat(ask)).source, 'ollama');
  assert.equal(srv.chatRequests().length - before, 1, 'the unusable source is not asked, even a day later');
  // a new key makes it usable
  settings.set('core.llm.sources.backup.api_key', 'sk-new');
  assert.equal(m.status().sources[0]!.state, 'untried');
  srv.enqueue({ content: 'backup with new key' });
  const r = await m.chat(ask);
  assert.equal(r.source, 'backup');
  assert.equal(srv.chatRequests().at(-1)!.headers.authorization, 'Bearer sk-new');
  // 403 as well
  srv.enqueue({ status: 403, error: 'forbidden' }, { content: 'o' });
  await m.chat(ask);
  assert.equal(m.status().sources[0]!.state, 'unusable');
});

test('with its only source refusing its credentials, a later ask says so, not "no usable LLM source is configured"', async (t) => {
  const { m } = setup(['ollama']);
  t.after(() => m.close());
  srv.enqueue({ status: 401, errorBody: '' });
  await assert.rejects(m.chat(ask), (e: unknown) => e instanceof AllSourcesFailedError && e.errors[0]!.code === 'AUTH_FAILED');
  const before = srv.chatRequests().length;
  for (const call of [() => m.chat(ask), () => collect(m.chatStream(ask))]) {
    await assert.rejects(call(), (e: unknown) => {
      assert.ok(e instanceof AllSourcesFailedError);
      assert.equal(e.errors.length, 1);
      assert.equal(e.errors[0]!.source, 'ollama');
      assert.equal(e.errors[0]!.code, 'AUTH_FAILED');
      assert.match(e.message, /ollama: not asked since it refused its credentials \(.*401.*\); set core\.llm\.sources\.ollama\.api_key/);
      assert.doesNotMatch(e.message, /no usable LLM source is configured/);
      return true;
    });
  }
  assert.equal(srv.chatRequests().length, before, 'the source was not asked again');
});

test('connection refused on the first source falls over to the next', async (t) => {
  const { m, settings } = setup();
  t.after(() => m.close());
  settings.set('core.llm.sources.ollama.base_url', 'http://127.0.0.1:1');
  srv.enqueue({ content: 'backup' });
  const r = final(await collect(m.chatStream(ask)));
  assert.equal(r.source, 'backup');
  assert.equal(m.status().sources[0]!.last_error_code, 'CONNECTION_FAILED');
});

test('all sources failing gives AllSourcesFailedError listing each', async (t) => {
  const { m } = setup();
  t.after(() => m.close());
  srv.enqueue({ status: 500, error: 'one' }, { status: 503, error: 'two' });
  await assert.rejects(collect(m.chatStream(ask)), (e: unknown) => e instanceof AllSourcesFailedError && e.code === 'ALL_SOURCES_FAILED' && /one/.test(e.message) && /two/.test(e.message));
});

test('a stream failing after it yielded text is not failed over', async (t) => {
  const { m } = setup();
  t.after(() => m.close());
  srv.enqueue({ content: 'one two three four five six', dropAfterBytes: 250 }, { content: 'should not be asked' });
  const seen: StreamEvent[] = [];
  await assert.rejects(
    (async () => {
      for await (const e of m.chatStream(ask)) seen.push(e);
    })(),
    (e: unknown) => (e as { code?: string }).code === 'TRUNCATED_STREAM',
  );
  assert.ok(seen.some((e) => e.type === 'content'));
  assert.equal(srv.queued, 1);
  srv.reset();
});

test('maxContextTokens: the declared window wins, else the model\'s own from Ollama /api/show (num_ctx parameter over context_length) within core.llm.num_ctx; num_ctx fixed from the first request', async (t) => {
  const { m, settings } = setup(['ollama']);
  t.after(() => m.close());
  // core.llm.num_ctx (8192) is sent from the very first request, before /api/show was asked, and on every one after.
  srv.enqueue({ content: 'x' }, { content: 'y' });
  await m.chat(ask);
  assert.equal(srv.chatRequests().at(-1)!.body!.options!.num_ctx, 8192);
  assert.equal(await m.maxContextTokens(), 8192, 'the model has 32768; the box asks for 8192');
  assert.equal(srv.requests.filter((r) => r.path === '/api/show').at(-1)!.body!.model, 'qwen2.5:3b');
  await m.chat(ask);
  assert.equal(srv.chatRequests().at(-1)!.body!.options!.num_ctx, 8192);
  // 0: the model's own window, once the server said it.
  settings.set('core.llm.num_ctx', 0);
  assert.equal(await m.maxContextTokens(), 32768);
  srv.enqueue({ content: 'x' });
  await m.chat(ask);
  assert.equal(srv.chatRequests().at(-1)!.body!.options!.num_ctx, 32768);
  // A model whose own window is smaller than num_ctx: the budget is the model's.
  settings.set('core.llm.num_ctx', 16384);
  settings.set('core.llm.sources.ollama.model', 'tuned');
  assert.equal(await m.maxContextTokens(), 8192);
  settings.set('core.llm.num_ctx', 0);
  assert.equal(await m.maxContextTokens(), 8192);
  settings.set('core.llm.sources.ollama.context_window', 4096);
  assert.equal(await m.maxContextTokens(), 4096);
  // unknown model: undefined, no throw
  settings.set('core.llm.sources.ollama.context_window', 0);
  settings.set('core.llm.sources.ollama.model', 'nope');
  assert.equal(await m.maxContextTokens(), undefined);
});

test('Ollama options on every request as set (issue 19): num_ctx under options, keep_alive at the top level; an OpenAI-compatible source gets neither', async (t) => {
  const { m, settings, advance } = setup(['ollama', 'backup']);
  t.after(() => m.close());
  settings.set('core.llm.num_ctx', 4096);
  settings.set('core.llm.keep_alive', '24h');
  srv.enqueue({ content: 'a' }, { content: 'b' }, { status: 500, error: 'down' }, { content: 'c' });
  await m.chat(ask);
  await m.chat(ask);
  await m.chat(ask);
  const [a, b, o, backup] = srv.chatRequests().slice(-4).map((r) => r.body!);
  for (const r of [a!, b!, o!]) {
    assert.equal(r.options!.num_ctx, 4096);
    assert.equal(r.keep_alive, '24h');
    assert.equal((r.options as Record<string, unknown>).keep_alive, undefined, 'keep_alive is a top-level field of /api/chat');
  }
  assert.equal(backup!.model, 'backup-model');
  assert.equal(backup!.options, undefined);
  assert.equal(backup!.keep_alive, undefined);
  assert.equal(backup!.num_ctx, undefined);
  // '' = the server's own default: no keep_alive sent (after the Ollama source's back-off from its 500).
  settings.set('core.llm.keep_alive', '');
  advance(600_000);
  srv.enqueue({ content: 'd' });
  await m.chat(ask);
  assert.equal(srv.chatRequests().at(-1)!.body!.keep_alive, undefined);
  assert.equal(srv.chatRequests().at(-1)!.body!.options!.num_ctx, 4096);
});

test('a malformed chunk never marks a source failed when the rest of the stream is good (issue 14)', async (t) => {
  const { m } = setup();
  t.after(() => m.close());
  // ollama source: damaged fields in content and tool-call chunks, a garbage line, a 2 MB line
  const ollamaFaults: Array<Record<string, unknown>> = [
    { mutate: [{ chunk: 0, path: ['message'], value: null }], want: ' two three' },
    { mutate: [{ chunk: 1, path: ['message', 'content'], value: 7 }], want: 'one three' },
    { mutate: [{ chunk: 3, path: ['message', 'tool_calls', 0], value: null }], tool_calls: [{ name: 'a', arguments: {} }, { name: 'b', arguments: { x: 1 } }] },
    { mutate: [{ chunk: 3, path: ['message', 'tool_calls', 0, 'function'] }], tool_calls: [{ name: 'a', arguments: {} }, { name: 'b', arguments: { x: 1 } }] },
    { mutate: [{ chunk: 3, path: ['done'], value: 's' }] },
    { garbage: { line: '{"message": [}', after: 1 } },
    { garbage: { line: `{"message":{"content":"${'x'.repeat(2 * 1024 * 1024)}"}}`, after: 1 } },
  ];
  for (const f of ollamaFaults) {
    srv.enqueue({ content: 'one two three', ...f }, { content: 'backup must not be asked' });
    const r = final(await collect(m.chatStream(ask)));
    assert.equal(r.content, (f.want as string | undefined) ?? 'one two three', 'the rest of the text arrives');
    assert.equal(r.source, 'ollama', JSON.stringify(f).slice(0, 200));
    if (f.tool_calls) assert.deepEqual(r.tool_calls.map((c) => c.function.name), ['b'], 'the good call arrives');
    assert.deepEqual(m.status().sources.map((s) => [s.name, s.state, s.failures]), [['ollama', 'ok', 0], ['backup', 'untried', 0]]);
    srv.reset();
  }
  // the OpenAI-compatible source alone: choices, delta, tool_calls items, function, content as a number
  const { m: m2 } = setup(['backup']);
  t.after(() => m2.close());
  const calls = [{ name: 'a', arguments: { q: 1 } }, { name: 'b', arguments: { q: 2 } }];
  const v1Faults: Array<Record<string, unknown>> = [
    { mutate: [{ chunk: 0, path: ['choices'], value: null }] },
    { mutate: [{ chunk: 1, path: ['choices', 0, 'delta'], value: 's' }] },
    { mutate: [{ chunk: 1, path: ['choices', 0, 'delta', 'content'], value: 42 }] },
    { mutate: [{ chunk: 3, path: ['choices', 0, 'delta', 'tool_calls', 0], value: 7 }], tool_calls: calls },
    { mutate: [{ chunk: 3, path: ['choices', 0, 'delta', 'tool_calls', 0, 'function'], value: [] }], tool_calls: calls },
    { mutate: [{ chunk: 3, path: ['choices', 0, 'delta', 'tool_calls'], value: {} }], tool_calls: calls },
    { mutate: [{ chunk: 2, path: ['usage'], value: 's' }, { chunk: 2, path: ['choices', 0, 'finish_reason'], value: 3 }] },
  ];
  for (const f of v1Faults) {
    srv.enqueue({ content: 'one two', ...f });
    const r = final(await collect(m2.chatStream(ask)));
    if (f.tool_calls) assert.ok(r.tool_calls.some((c) => c.function.name === 'b' && (c.function.arguments as { q?: number }).q === 2), 'the undamaged call arrives');
    assert.deepEqual(m2.status().sources.map((s) => [s.name, s.state, s.failures]), [['backup', 'ok', 0]], JSON.stringify(f));
    srv.reset();
  }
});
