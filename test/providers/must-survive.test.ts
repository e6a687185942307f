/**
 * Issue 3 "Must survive": each case end to end, test server -> HTTP ->
 * framing -> Lua adapter -> merging -> CompletionResponse.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startLlmTestServer, type LlmTestServer } from '../support/llm-test-server.js';
import { AdapterRegistry } from '../../src/providers/adapter.js';
import { LuaAdaptedProvider } from '../../src/providers/lua-provider.js';
import { ProviderManager, registerProviderSettings } from '../../src/providers/manager.js';
import {
  ConnectionError,
  HttpStatusError,
  MalformedResponseError,
  ProviderError,
  ProviderTimeoutError,
  ToolsUnsupportedError,
  TruncatedStreamError,
} from '../../src/providers/errors.js';
import type { CompletionRequest, StreamEvent, ToolSchema } from '../../src/kernel/llm-types.js';
import { adaptersDir, captureLogger, collect } from './helpers.js';
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

function provider(adapter: string, extra: Partial<ConstructorParameters<typeof LuaAdaptedProvider>[0]> = {}): LuaAdaptedProvider {
  return new LuaAdaptedProvider({ name: adapter, adapter: registry.get(adapter), baseUrl: srv.url, model: 'qwen2.5:3b', ...extra });
}

const tool = (name: string): ToolSchema => ({
  type: 'function',
  function: { name, description: `${name} tool`, parameters: { type: 'object', properties: { message: { type: 'string' } }, required: [] } },
});
const ask = (tools?: ToolSchema[]): CompletionRequest => ({ messages: [{ role: 'user', content: 'hi' }], ...(tools ? { tools } : {}) });
const done = (ev: StreamEvent[]) => {
  const last = ev.at(-1);
  assert.ok(last && last.type === 'done', 'last event is done');
  return last.response;
};
const text = (ev: StreamEvent[]) => ev.filter((e) => e.type === 'content').map((e) => (e as { text: string }).text).join('');

test('Ollama: a tool call in a done:false chunk, then an empty done:true "stop" chunk -> exactly one call, object arguments, finish tool_calls', async () => {
  const body =
    '{"model":"qwen2.5:3b","created_at":"2025-05-27T22:54:57.641643Z","message":{"role":"assistant","content":"","tool_calls":[{"function":{"name":"get_weather","arguments":{"city":"北京","days":3}}}]},"done":false}\n' +
    '{"model":"qwen2.5:3b","created_at":"2025-05-27T22:54:57.700000Z","message":{"role":"assistant","content":""},"done_reason":"stop","done":true,"total_duration":5191566416,"prompt_eval_count":26,"eval_count":12}\n';
  srv.enqueue({ raw: body });
  const r = done(await collect(provider('ollama').chatStream(ask([tool('get_weather')]))));
  assert.equal(r.tool_calls.length, 1);
  assert.equal(r.tool_calls[0]!.function.name, 'get_weather');
  assert.deepEqual(r.tool_calls[0]!.function.arguments, { city: '北京', days: 3 });
  assert.match(r.tool_calls[0]!.id, /^call_/);
  assert.equal(r.finish_reason, 'tool_calls');
  assert.equal(r.content, '');
  assert.deepEqual(r.token_usage, { prompt_tokens: 26, completion_tokens: 12, total_tokens: 38 });
});

test('Ollama: calls spread over several chunks are appended, not overwritten', async () => {
  srv.enqueue({ tool_calls: [{ name: 'a', arguments: { x: 1 } }, { name: 'b', arguments: { y: '二' } }, { name: 'a', arguments: { x: 3 } }] });
  const r = done(await collect(provider('ollama').chatStream(ask([tool('a'), tool('b')]))));
  assert.deepEqual(r.tool_calls.map((c) => [c.function.name, c.function.arguments]), [['a', { x: 1 }], ['b', { y: '二' }], ['a', { x: 3 }]]);
  assert.equal(new Set(r.tool_calls.map((c) => c.id)).size, 3);
  // legacy shape (no id, no index)
  srv.enqueue({ ollamaToolStyle: 'legacy', tool_calls: [{ name: 'a', arguments: { x: 1 } }, { name: 'a', arguments: { x: 2 } }] });
  const r2 = done(await collect(provider('ollama').chatStream(ask([tool('a')]))));
  assert.deepEqual(r2.tool_calls.map((c) => c.function.arguments), [{ x: 1 }, { x: 2 }]);
});

test('JSON tool call written in content for a declared tool becomes a tool call; raw JSON is never spoken', async () => {
  const json = '{"name": "write_log", "parameters": {"message": "}A"}}';
  for (const adapter of ['ollama', 'openai']) {
    srv.enqueue({ content: json });
    const ev = await collect(provider(adapter).chatStream(ask([tool('write_log')])));
    const r = done(ev);
    assert.equal(text(ev), '', `${adapter}: no content event carries the JSON`);
    assert.equal(r.content, '');
    assert.equal(r.tool_calls.length, 1);
    assert.equal(r.tool_calls[0]!.function.name, 'write_log');
    assert.deepEqual(r.tool_calls[0]!.function.arguments, { message: '}A' });
    assert.equal(r.finish_reason, 'tool_calls');
    // non-stream too
    srv.enqueue({ content: json });
    const whole = await provider(adapter).chat(ask([tool('write_log')]));
    assert.deepEqual(whole.tool_calls.map((c) => c.function.arguments), [{ message: '}A' }]);
    assert.equal(whole.content, '');
  }
  // fenced and <tool_call> tagged forms
  srv.enqueue({ content: '<tool_call>\n{"name": "write_log", "arguments": {"message": "你好"}}\n</tool_call>' });
  const tagged = done(await collect(provider('ollama').chatStream(ask([tool('write_log')]))));
  assert.deepEqual(tagged.tool_calls[0]!.function.arguments, { message: '你好' });
});

test('JSON naming an undeclared tool stays text', async () => {
  const json = '{"name": "format_disk", "parameters": {"message": "}A"}}';
  srv.enqueue({ content: json });
  const ev = await collect(provider('ollama').chatStream(ask([tool('write_log')])));
  const r = done(ev);
  assert.equal(r.tool_calls.length, 0);
  assert.equal(r.content, json);
  assert.equal(text(ev), json);
  assert.equal(r.finish_reason, 'stop');
  // ordinary text is streamed as it comes, not held
  srv.enqueue({ content: 'Hello there, 你好.' });
  const ev2 = await collect(provider('ollama').chatStream(ask([tool('write_log')])));
  assert.ok(ev2.filter((e) => e.type === 'content').length > 3);
  assert.equal(text(ev2), 'Hello there, 你好.');
});

test('history replay: /api/chat carries arguments as objects, /v1 as a JSON string that parses back to the same object', async () => {
  const args = { message: '你好 "quoted" }A', count: 256, nested: { list: [1, 2.5, '三'] } };
  const req: CompletionRequest = {
    messages: [
      { role: 'user', content: '记下来' },
      { role: 'assistant', content: '', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'write_log', arguments: args } }] },
      { role: 'tool', content: 'ok', tool_call_id: 'call_1', name: 'write_log' },
    ],
    tools: [tool('write_log')],
  };
  srv.enqueue({ content: 'done' }, { content: 'done' });
  await provider('ollama').chat(req);
  await provider('openai').chat(req);
  const [native, v1] = srv.chatRequests().slice(-2);
  assert.equal(native!.path, '/api/chat');
  const nMsg = native!.body!.messages![1]!;
  assert.deepEqual(nMsg.tool_calls![0]!.function!.arguments, args);
  assert.equal(native!.body!.messages![2]!.tool_name, 'write_log');
  assert.ok(native!.raw.includes('"count":256') && !native!.raw.includes('256.0'));
  assert.equal(v1!.path, '/v1/chat/completions');
  const vArgs = v1!.body!.messages![1]!.tool_calls![0]!.function!.arguments;
  assert.equal(typeof vArgs, 'string');
  assert.deepEqual(JSON.parse(vArgs as string), args);
  assert.equal(v1!.body!.messages![2]!.tool_call_id, 'call_1');
});

test('HTTP 400 "does not support tools" in both body shapes -> ToolsUnsupportedError naming the model', async () => {
  const msg = 'registry.ollama.ai/library/gemma2:2b does not support tools';
  for (const adapter of ['ollama', 'openai']) {
    srv.enqueue({ status: 400, error: msg });
    await assert.rejects(provider(adapter, { model: 'gemma2:2b' }).chatStream(ask([tool('x')]))[Symbol.asyncIterator]().next(), (err: unknown) => {
      assert.ok(err instanceof ToolsUnsupportedError, `${adapter}: ${String(err)}`);
      assert.equal(err.model, 'gemma2:2b');
      assert.match(err.message, /gemma2:2b/);
      return true;
    });
  }
  // the /v1 body shape sent to the native adapter too
  srv.enqueue({ status: 400, errorBody: { error: { message: msg, type: 'invalid_request_error', param: null, code: null } } });
  await assert.rejects(provider('ollama', { model: 'gemma2:2b' }).chat(ask([tool('x')])), ToolsUnsupportedError);
});

test('ToolsUnsupportedError: the manager retries once without tools and says so in the log', async () => {
  const settings = new FakeSettings();
  registerProviderSettings(settings);
  settings.set('core.llm.sources.ollama.base_url', srv.url);
  settings.set('core.llm.sources.ollama.model', 'gemma2:2b');
  const log = captureLogger();
  const m = new ProviderManager({ settings, adaptersDir, log });
  try {
    const before = srv.chatRequests().length;
    srv.enqueue({ status: 400, error: 'registry.ollama.ai/library/gemma2:2b does not support tools' }, { content: 'Plain answer.' });
    const ev = await collect(m.chatStream(ask([tool('x')])));
    assert.equal(done(ev).content, 'Plain answer.');
    const reqs = srv.chatRequests().slice(before);
    assert.equal(reqs.length, 2);
    assert.ok(reqs[0]!.body!.tools);
    assert.equal(reqs[1]!.body!.tools, undefined);
    assert.ok(log.lines.some((l) => l.level === 'warn' && /does not support tools; retrying once without tools/.test(l.msg ?? '')));
    // non-stream path as well; a second refusal is not retried again
    srv.enqueue({ status: 400, error: 'gemma2:2b does not support tools' }, { status: 400, error: 'gemma2:2b does not support tools' });
    await assert.rejects(m.chat(ask([tool('x')])), ProviderError);
    assert.equal(srv.chatRequests().length - before, 4);
  } finally {
    m.close();
  }
});

test('OpenAI SSE tool-call deltas merge by index: call_1 / search / {"query":"weather"}', async () => {
  const head = '{"id":"chatcmpl-1","object":"chat.completion.chunk","created":1700000000,"model":"gpt-4o","system_fingerprint":"fp_1"';
  const body =
    `data: ${head},"choices":[{"index":0,"delta":{"role":"assistant","content":null,"tool_calls":[{"index":0,"id":"call_1","type":"function","function":{"name":"search","arguments":"{\\"query\\": \\""}}]},"finish_reason":null}]}\n\n` +
    `data: ${head},"choices":[{"index":0,"delta":{"tool_calls":[{"index":0,"id":"","function":{"arguments":"weather\\"}"}}]},"finish_reason":null}]}\n\n` +
    `data: ${head},"choices":[{"index":0,"delta":{},"finish_reason":"tool_calls"}]}\n\n` +
    'data: [DONE]\n\n';
  srv.enqueue({ raw: body });
  const ev = await collect(provider('openai').chatStream(ask([tool('search')])));
  const r = done(ev);
  assert.equal(r.tool_calls.length, 1);
  assert.deepEqual(r.tool_calls[0], { id: 'call_1', type: 'function', function: { name: 'search', arguments: { query: 'weather' } } });
  assert.equal(r.finish_reason, 'tool_calls');
  assert.deepEqual(
    ev.filter((e) => e.type === 'tool_call_delta'),
    [
      { type: 'tool_call_delta', index: 0, id: 'call_1', name: 'search', arguments: '{"query": "' },
      { type: 'tool_call_delta', index: 0, arguments: 'weather"}' },
    ],
  );
  // generated by the server, several calls with fragments
  srv.enqueue({ tool_calls: [{ name: 'search', arguments: { query: '天气 weather' } }, { name: 'search', arguments: { query: 'b', n: 256 } }], argumentFragment: 3 });
  const r2 = done(await collect(provider('openai').chatStream(ask([tool('search')]))));
  assert.deepEqual(r2.tool_calls.map((c) => c.function.arguments), [{ query: '天气 weather' }, { query: 'b', n: 256 }]);
});

test('你好 split inside 好 across reads, and a line split in the middle: exactly 你好, no U+FFFD, each line once (NDJSON and SSE)', async () => {
  for (const adapter of ['ollama', 'openai']) {
    srv.enqueue({ content: '你好' });
    // find the byte offsets of the first body through a dry run
    const probe = await collect(provider(adapter).chatStream(ask()));
    assert.equal(text(probe), '你好');
    const lastRaw = srv.chatRequests().at(-1)!;
    assert.ok(lastRaw);
    // build the same answer and split it: inside 好 (after E5) and in the middle of the first line
    const lines = adapter === 'ollama'
      ? ['{"model":"m","created_at":"t","message":{"role":"assistant","content":"你"},"done":false}\n', '{"model":"m","created_at":"t","message":{"role":"assistant","content":"好"},"done":false}\n', '{"model":"m","created_at":"t","message":{"role":"assistant","content":""},"done_reason":"stop","done":true}\n']
      : ['data: {"choices":[{"index":0,"delta":{"content":"你"},"finish_reason":null}]}\n\n', 'data: {"choices":[{"index":0,"delta":{"content":"好"},"finish_reason":null}]}\n\n', 'data: {"choices":[{"index":0,"delta":{},"finish_reason":"stop"}]}\n\n', 'data: [DONE]\n\n'];
    const bytes = Buffer.from(lines.join(''));
    const hao = bytes.indexOf(Buffer.from('好'));
    srv.enqueue({ raw: bytes, splitAt: [20, hao + 1, hao + 2], splitDelayMs: 15 });
    const ev = await collect(provider(adapter).chatStream(ask()));
    const contents = ev.filter((e) => e.type === 'content').map((e) => (e as { text: string }).text);
    assert.deepEqual(contents, ['你', '好'], `${adapter}: one content event per line`);
    assert.equal(done(ev).content, '你好');
    assert.ok(!done(ev).content.includes('\uFFFD'));
  }
});

test('Chinese passes through Lua unchanged in both directions, whole numbers stay integers', async () => {
  const zh = '请把客厅的灯调到百分之五十，谢谢！🌙';
  srv.enqueue({ content: zh });
  const r = await provider('ollama', { contextWindow: 256 }).chat({ messages: [{ role: 'user', content: zh }], temperature: 0.5, max_tokens: 256 });
  assert.equal(r.content, zh);
  const sent = srv.chatRequests().at(-1)!;
  assert.equal(sent.body!.messages![0]!.content, zh);
  assert.ok(sent.raw.includes(zh), 'UTF-8 bytes on the wire');
  assert.match(sent.raw, /"num_ctx":256[,}]/);
  assert.match(sent.raw, /"num_predict":256[,}]/);
  assert.ok(!/256\.0/.test(sent.raw));
  assert.match(sent.raw, /"temperature":0\.5/);
});

test('failures are typed within the configured timeout and the next source is tried', async (t) => {
  const fast = { connectMs: 2000, responseMs: 400, idleMs: 300 };
  const p = provider('ollama', { timeouts: fast });
  // 5xx
  srv.enqueue({ status: 500, error: 'llama runner process has terminated' });
  await assert.rejects(collect(p.chatStream(ask())), (e: unknown) => e instanceof HttpStatusError && e.status === 500 && /terminated/.test(e.message));
  // response timeout (no headers)
  srv.enqueue({ headerDelayMs: 2000, content: 'late' });
  await assert.rejects(p.chat(ask()), (e: unknown) => e instanceof ProviderTimeoutError && e.phase === 'response');
  // stall mid-stream -> idle timeout
  srv.enqueue({ content: 'one two three four', stallAfterBytes: 150 });
  await assert.rejects(collect(p.chatStream(ask())), (e: unknown) => e instanceof ProviderTimeoutError && e.phase === 'idle');
  // dropped connection -> truncated
  srv.enqueue({ content: 'one two three four five', dropAfterBytes: 200 });
  await assert.rejects(collect(p.chatStream(ask())), (e: unknown) => e instanceof TruncatedStreamError && e.partial.length > 0);
  // stream ends cleanly but without the final chunk -> truncated
  srv.enqueue({ content: 'one two', omitDone: true });
  await assert.rejects(collect(p.chatStream(ask())), TruncatedStreamError);
  // SSE: ending after the finish_reason chunk without [DONE] is accepted (some hosts omit it) ...
  srv.enqueue({ content: 'one two', omitDone: true });
  assert.equal(done(await collect(provider('openai', { timeouts: fast }).chatStream(ask()))).content, 'one two');
  // ... ending before any finish_reason is not
  srv.enqueue({ raw: 'data: {"choices":[{"index":0,"delta":{"content":"one"},"finish_reason":null}]}\n\n' });
  await assert.rejects(collect(provider('openai', { timeouts: fast }).chatStream(ask())), TruncatedStreamError);
  // a malformed line in a stream whose rest is good is skipped and logged (issue 14)
  const lines = captureLogger();
  srv.enqueue({ content: 'one two', garbage: true });
  assert.equal(done(await collect(provider('ollama', { timeouts: fast, log: lines }).chatStream(ask()))).content, 'one two');
  assert.ok(lines.lines.some((l) => l.level === 'warn' && /skipped 1 unreadable stream payload/.test(String(l.msg))), 'the skipped line is logged');
  // ... a stream of nothing but garbage is not an answer
  srv.enqueue({ raw: Array.from({ length: 100 }, () => '<html>not json</html>\n').join('') });
  await assert.rejects(collect(p.chatStream(ask())), MalformedResponseError);
  // mid-stream error line
  srv.enqueue({ content: 'one', streamError: 'out of memory' });
  await assert.rejects(collect(p.chatStream(ask())), (e: unknown) => e instanceof ProviderError && e.code === 'STREAM_ERROR' && /out of memory/.test(e.message));
  // connection refused
  const dead = provider('ollama', { baseUrl: 'http://127.0.0.1:1', timeouts: fast });
  await assert.rejects(dead.chat(ask()), ConnectionError);

  // the manager goes on to the next source for each of them
  const settings = new FakeSettings();
  registerProviderSettings(settings);
  settings.set('core.llm.sources.ollama.base_url', srv.url);
  settings.set('core.llm.sources.ollama.context_window', 4096);
  const { registerSourceSettings } = await import('../../src/providers/manager.js');
  registerSourceSettings(settings, 'backup', { adapter: 'openai', base_url: srv.url, model: 'backup-model' });
  settings.set('core.llm.sources_order', ['ollama', 'backup']);
  settings.set('core.llm.response_timeout_ms', 400);
  settings.set('core.llm.idle_timeout_ms', 300);
  let clock = 1_000_000;
  const m = new ProviderManager({ settings, adaptersDir, log: captureLogger(), now: () => clock });
  t.after(() => m.close());
  const faults = [
    { status: 503, error: 'busy' },
    { headerDelayMs: 2000, content: 'late' },
    { content: 'a b c', stallAfterBytes: 0 },
    { content: 'a b c', dropAfterBytes: 0 },
    { raw: '<html>\n<body>busy</body>\n</html>\n' },
  ];
  for (const fault of faults) {
    clock += 10 * 60_000; // past any back-off
    srv.enqueue(fault, { content: 'from backup' });
    const ev = await collect(m.chatStream(ask()));
    const r = done(ev);
    assert.equal(r.content, 'from backup', JSON.stringify(fault));
    assert.equal(r.source, 'backup');
    assert.equal(r.model, 'backup-model');
    assert.equal(m.status().last_source, 'backup');
  }
});

test('deepseek: /chat/completions, thinking off unless asked, reasoning_content kept apart and never replayed', async () => {
  const p = provider('deepseek', { model: 'deepseek-chat' });
  srv.enqueue({ content: '答案是 4。', thinking: '2+2=4' });
  const ev = await collect(p.chatStream({ messages: [{ role: 'user', content: '2+2?' }, { role: 'assistant', content: 'earlier', reasoning_content: 'old thoughts' }] }));
  const r = done(ev);
  assert.equal(r.content, '答案是 4。');
  assert.equal(r.reasoning_content, '2+2=4');
  assert.equal(ev.filter((e) => e.type === 'reasoning').map((e) => (e as { text: string }).text).join(''), '2+2=4');
  const sent = srv.chatRequests().at(-1)!;
  assert.equal(sent.path, '/chat/completions');
  assert.deepEqual(sent.body!.thinking, { type: 'disabled' });
  assert.ok(!sent.raw.includes('reasoning_content'), 'reasoning is not sent back');
  srv.enqueue({ content: 'x' });
  await p.chat({ messages: [{ role: 'user', content: 'think' }], options: { think: true } });
  assert.deepEqual(srv.chatRequests().at(-1)!.body!.thinking, { type: 'enabled' });
});

test('an error status with an empty body reads as its reason phrase, never "HTTP 404: HTTP 404" (a tester\'s message), with every bundled adapter', async () => {
  for (const adapter of ['ollama', 'openai', 'deepseek']) {
    srv.enqueue({ status: 404, errorBody: '' });
    await assert.rejects(collect(provider(adapter).chatStream(ask())), (e: unknown) => {
      assert.ok(e instanceof HttpStatusError && e.status === 404, `${adapter}: ${String(e)}`);
      assert.equal(e.message, 'HTTP 404: Not Found (no detail in the response)', adapter);
      return true;
    });
  }
  // Bodies that say nothing, a long HTML page with control characters: no raw bytes to the terminal, no 20 KB line.
  for (const body of ['null', '{}']) {
    srv.enqueue({ status: 404, errorBody: body });
    await assert.rejects(collect(provider('openai').chatStream(ask())), (e: unknown) => e instanceof HttpStatusError && e.message === 'HTTP 404: Not Found (no detail in the response)');
  }
  srv.enqueue({ status: 502, errorBody: `<html>\u001b[31m\u0007${'<p>bad gateway</p>'.repeat(1200)}</html>` });
  await assert.rejects(collect(provider('openai').chatStream(ask())), (e: unknown) => {
    assert.ok(e instanceof HttpStatusError);
    assert.doesNotMatch(e.message, /[\u0000-\u001f\u007f]/);
    assert.ok(e.message.length < 400, `${e.message.length} characters`);
    return true;
  });
  // An HTML error page reads as its title (a tester's 401 printed 5182 characters of page and script).
  srv.enqueue({ status: 401, errorBody: `<html><head><title>401 Authorization Required</title><script>${'x'.repeat(5000)}</script></head><body><h1>Authorization Required</h1></body></html>` });
  await assert.rejects(collect(provider('openai').chatStream(ask())), (e: unknown) => e instanceof HttpStatusError && e.message === 'HTTP 401: 401 Authorization Required (an HTML page)');
  srv.enqueue({ status: 502, errorBody: '<!DOCTYPE html><html><body><h1>Bad Gateway</h1><p>nginx</p></body></html>' });
  await assert.rejects(collect(provider('openai').chatStream(ask())), (e: unknown) => e instanceof HttpStatusError && e.message === 'HTTP 502: Bad Gateway (an HTML page)');
  // A body with a message keeps it.
  srv.enqueue({ status: 404, error: 'model "qwen9" not found, try pulling it first' });
  await assert.rejects(collect(provider('ollama').chatStream(ask())), (e: unknown) => e instanceof HttpStatusError && /^HTTP 404: model "qwen9" not found/.test(e.message));
});
