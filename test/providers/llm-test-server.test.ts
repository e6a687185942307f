/**
 * The shared LLM test server speaks both wire formats like the real servers
 * (headers, field order, done_reason, usage placement, [DONE]) and its fault
 * injection does what it says.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import http from 'node:http';
import { startLlmTestServer, tokenize, type LlmTestServer } from '../support/llm-test-server.js';

let srv: LlmTestServer;
before(async () => {
  srv = await startLlmTestServer({ models: [{ name: 'qwen2.5:3b', context_length: 32768, family: 'qwen2' }] });
});
after(() => srv.close());

interface Raw {
  status: number;
  headers: http.IncomingHttpHeaders;
  body: Buffer;
  reads: number;
  error?: string;
}

/**
 * POST and collect the answer. `stopAt`: hang up once that many body bytes
 * arrived (error 'stopped'), for an answer that never ends; the 3 s timer is
 * only a failure deadline (error 'timeout').
 */
function post(path: string, body: unknown, stopAt?: number): Promise<Raw> {
  return new Promise((resolve) => {
    const req = http.request(srv.url + path, { method: 'POST', headers: { 'Content-Type': 'application/json' } }, (res) => {
      const parts: Buffer[] = [];
      let reads = 0;
      let got = 0;
      const t = setTimeout(() => {
        res.destroy();
        resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(parts), reads, error: 'timeout' });
      }, 3000);
      res.on('data', (c: Buffer) => {
        parts.push(c);
        reads++;
        got += c.length;
        if (stopAt !== undefined && got >= stopAt) {
          clearTimeout(t);
          res.destroy();
          resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(parts), reads, error: 'stopped' });
        }
      });
      res.on('end', () => {
        clearTimeout(t);
        resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(parts), reads });
      });
      res.on('error', (e) => {
        clearTimeout(t);
        resolve({ status: res.statusCode!, headers: res.headers, body: Buffer.concat(parts), reads, error: e.message });
      });
    });
    req.end(JSON.stringify(body));
  });
}

const lines = (b: Buffer) => b.toString('utf8').split('\n').filter((l) => l !== '');

test('tokenize: token-sized pieces that concatenate to the text', () => {
  const t = 'Hello, world! 你好世界 naïve 42.5';
  assert.equal(tokenize(t).join(''), t);
  assert.deepEqual(tokenize('你好 ok'), ['你', '好', ' ok']);
});

test('Ollama /api/chat stream: NDJSON lines in Ollama field order, tool call chunk done:false, final done_reason + metrics', async () => {
  srv.enqueue({ content: 'Hi 你好', thinking: 'hm', tool_calls: [{ name: 'f', arguments: { a: 1 } }] });
  const r = await post('/api/chat', { model: 'qwen2.5:3b', messages: [] });
  assert.equal(r.status, 200);
  assert.equal(r.headers['content-type'], 'application/x-ndjson');
  assert.equal(r.headers['transfer-encoding'], 'chunked');
  const objs = lines(r.body).map((l) => JSON.parse(l) as Record<string, unknown>);
  assert.deepEqual(Object.keys(objs[0]!), ['model', 'created_at', 'message', 'done']);
  assert.deepEqual(objs[0]!.message, { role: 'assistant', content: '', thinking: 'hm' });
  assert.deepEqual(objs.slice(1, 4).map((o) => (o.message as { content: string }).content), ['Hi', ' 你', '好']);
  const toolChunk = objs[4]!;
  assert.equal(toolChunk.done, false);
  assert.deepEqual((toolChunk.message as { tool_calls: Array<{ function: unknown }> }).tool_calls[0]!.function, { index: 0, name: 'f', arguments: { a: 1 } });
  const last = objs.at(-1)!;
  assert.deepEqual(Object.keys(last), ['model', 'created_at', 'message', 'done_reason', 'done', 'total_duration', 'load_duration', 'prompt_eval_count', 'prompt_eval_duration', 'eval_count', 'eval_duration']);
  assert.equal(last.done_reason, 'stop');
  assert.deepEqual(last.message, { role: 'assistant', content: '' });
});

test('Ollama /api/chat non-stream: one JSON body with Content-Length', async () => {
  srv.enqueue({ content: 'Hello' });
  const r = await post('/api/chat', { model: 'qwen2.5:3b', messages: [], stream: false });
  assert.equal(r.headers['content-type'], 'application/json; charset=utf-8');
  assert.equal(Number(r.headers['content-length']), r.body.length);
  const o = JSON.parse(r.body.toString()) as Record<string, unknown>;
  assert.deepEqual(Object.keys(o).slice(0, 5), ['model', 'created_at', 'message', 'done_reason', 'done']);
  assert.deepEqual(o.message, { role: 'assistant', content: 'Hello' });
});

test('OpenAI /v1 stream: SSE chunks, finish_reason on the last choice, usage chunk only when asked, data: [DONE]', async () => {
  srv.enqueue({ content: 'Hi there', tool_calls: [{ name: 'search', arguments: { q: 'x' } }] });
  const r = await post('/v1/chat/completions', { model: 'gpt', messages: [], stream: true, stream_options: { include_usage: true } });
  assert.equal(r.headers['content-type'], 'text/event-stream');
  const text = r.body.toString();
  assert.ok(text.endsWith('data: [DONE]\n\n'));
  const events = text.split('\n\n').filter(Boolean);
  for (const e of events) assert.ok(e.startsWith('data: '));
  const objs = events.slice(0, -1).map((e) => JSON.parse(e.slice(6)) as Record<string, unknown>);
  assert.deepEqual(Object.keys(objs[0]!), ['id', 'object', 'created', 'model', 'system_fingerprint', 'choices']);
  assert.equal(objs[0]!.object, 'chat.completion.chunk');
  const usage = objs.at(-1)!;
  assert.deepEqual(usage.choices, []);
  assert.deepEqual(Object.keys(usage.usage as object), ['prompt_tokens', 'completion_tokens', 'total_tokens']);
  const fin = objs.at(-2)!.choices as Array<{ finish_reason: string }>;
  assert.equal(fin[0]!.finish_reason, 'tool_calls');
  const frags = objs.flatMap((o) => (o.choices as Array<{ delta: { tool_calls?: Array<{ function: { arguments?: string } }> } }>).flatMap((c) => c.delta.tool_calls ?? []));
  assert.equal(frags.map((f) => f.function.arguments ?? '').join(''), '{"q":"x"}');
  // without include_usage: no usage chunk
  srv.enqueue({ content: 'Hi' });
  const r2 = await post('/chat/completions', { model: 'gpt', messages: [], stream: true });
  assert.ok(!r2.body.toString().includes('"usage"'));
});

test('OpenAI /v1 non-stream: chat.completion in OpenAI field order with usage', async () => {
  srv.enqueue({ content: 'Hello', thinking: 'r' });
  const r = await post('/v1/chat/completions', { model: 'gpt', messages: [] });
  const o = JSON.parse(r.body.toString()) as Record<string, unknown>;
  assert.deepEqual(Object.keys(o), ['id', 'object', 'created', 'model', 'system_fingerprint', 'choices', 'usage']);
  assert.deepEqual((o.choices as unknown[])[0], { index: 0, message: { role: 'assistant', content: 'Hello', reasoning_content: 'r' }, finish_reason: 'stop' });
});

test('errors in both body shapes; /api/show and /api/tags', async () => {
  srv.enqueue({ status: 400, error: 'm does not support tools' }, { status: 400, error: 'm does not support tools' });
  const a = await post('/api/chat', { model: 'm' });
  assert.equal(a.status, 400);
  assert.deepEqual(JSON.parse(a.body.toString()), { error: 'm does not support tools' });
  const b = await post('/v1/chat/completions', { model: 'm' });
  assert.deepEqual(JSON.parse(b.body.toString()), { error: { message: 'm does not support tools', type: 'invalid_request_error', param: null, code: null } });
  const show = JSON.parse((await post('/api/show', { model: 'qwen2.5:3b' })).body.toString()) as { model_info: Record<string, unknown>; capabilities: string[] };
  assert.equal(show.model_info['qwen2.context_length'], 32768);
  assert.ok(show.capabilities.includes('tools'));
  assert.equal((await post('/api/show', { model: 'nope' })).status, 404);
  const tags = await fetch(`${srv.url}/api/tags`).then((res) => res.json() as Promise<{ models: Array<{ name: string }> }>);
  assert.equal(tags.models[0]!.name, 'qwen2.5:3b');
});

test('fault injection: drop after N bytes, stall after N bytes, garbage line, split writes, requests recorded', async () => {
  srv.enqueue({ content: 'one two three four five', dropAfterBytes: 100 });
  const dropped = await post('/api/chat', { model: 'm', messages: [] });
  assert.equal(dropped.body.length, 100);
  assert.ok(dropped.error, 'the connection broke');

  srv.enqueue({ content: 'one two three four five', stallAfterBytes: 120 });
  const stall = srv.nextStalled();
  const stalled = await post('/api/chat', { model: 'm', messages: [] }, 120);
  assert.equal(stalled.body.length, 120);
  assert.equal(stalled.error, 'stopped', 'the answer had not ended after 120 bytes');
  assert.deepEqual(await stall, { path: '/api/chat', bytesSent: 120 }, 'and the server stopped writing there');

  srv.enqueue({ content: 'a b', garbage: 'GARBAGE' });
  const g = await post('/api/chat', { model: 'm', messages: [] });
  assert.equal(lines(g.body)[1], 'GARBAGE');

  srv.enqueue({ content: 'a b c d e f', chunkBytes: 16 });
  const split = await post('/api/chat', { model: 'm', messages: [] });
  // Counted where they happen: the client may read several writes at once when it is slow (a loaded machine).
  assert.ok(srv.chatRequests().at(-1)!.writes! > 5, `split into separate writes (${srv.chatRequests().at(-1)!.writes} writes)`);
  assert.equal(lines(split.body).length, 7);

  const last = srv.chatRequests().at(-1)!;
  assert.equal(last.path, '/api/chat');
  assert.equal(last.body!.model, 'm');
});

test('socket-closed reports a client that hung up mid-answer, with an hrtime stamp', async () => {
  srv.enqueue({ content: 'word '.repeat(100), tokensPerSecond: 100 });
  const closed = srv.nextSocketClosed();
  await new Promise<void>((resolve) => {
    const req = http.request(srv.url + '/api/chat', { method: 'POST' }, (res) => {
      res.once('data', () => {
        req.destroy();
        resolve();
      });
    });
    req.end('{"model":"m","messages":[]}');
  });
  const info = await closed;
  assert.equal(typeof info.at, 'bigint');
  assert.ok(info.at <= process.hrtime.bigint());
  assert.equal(info.path, '/api/chat');
  assert.ok(info.bytesSent > 0);
});
