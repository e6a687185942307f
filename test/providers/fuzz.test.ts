/**
 * Fuzz: thousands of random byte splits and corruptions of recorded streams
 * (NDJSON and SSE) through the real pipeline (framing -> Lua adapter ->
 * merging). Splits never lose or change text; corruptions never crash: they
 * end in a complete answer or a typed ProviderError, and the text delivered
 * is always exactly what the events carried. A smaller round goes over HTTP.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { startLlmTestServer, type LlmTestServer, type Reply } from '../support/llm-test-server.js';
import { AdapterRegistry } from '../../src/providers/adapter.js';
import { LuaAdaptedProvider, decodeStream } from '../../src/providers/lua-provider.js';
import { StreamAccumulator } from '../../src/providers/accumulator.js';
import { ProviderError } from '../../src/providers/errors.js';
import type { CompletionResponse, StreamEvent } from '../../src/kernel/llm-types.js';
import { adaptersDir, captureLogger } from './helpers.js';

/** Deterministic PRNG (mulberry32) so a failure can be replayed from its seed. */
function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

interface Recording {
  adapter: 'ollama' | 'openai';
  bytes: Uint8Array;
  content: string;
  reasoning: string;
  calls: Array<{ name: string; arguments: Record<string, unknown> }>;
}

const replies: Reply[] = [
  { content: '你好！今天北京天气晴，气温 25 度。Hello, world 🌏🌙 — naïve café.', thinking: '用户问天气。' },
  { content: '', tool_calls: [{ name: 'set_light', arguments: { room: '客厅', brightness: 50, on: true } }, { name: 'say', arguments: { text: '好的 "ok" }A' } }] },
  { content: 'Line one.\nLine two with \\ backslash and \u2028 separator.\r\nEnd.' },
];

let srv: LlmTestServer;
let registry: AdapterRegistry;
const recordings: Recording[] = [];

before(async () => {
  srv = await startLlmTestServer();
  registry = new AdapterRegistry(adaptersDir, { allowHost: () => true, log: captureLogger() });
  for (const adapter of ['ollama', 'openai'] as const) {
    for (const r of replies) {
      srv.enqueue(r);
      const path = adapter === 'ollama' ? '/api/chat' : '/v1/chat/completions';
      const res = await fetch(srv.url + path, { method: 'POST', body: JSON.stringify({ model: 'm', stream: true, stream_options: { include_usage: true }, messages: [] }) });
      const bytes = new Uint8Array(await res.arrayBuffer());
      recordings.push({ adapter, bytes, content: r.content ?? '', reasoning: r.thinking ?? '', calls: r.tool_calls ?? [] });
    }
  }
});
after(async () => {
  registry.close();
  await srv.close();
});

async function* reads(parts: Uint8Array[]): AsyncGenerator<Uint8Array> {
  for (const p of parts) yield p;
}

function randomSplit(bytes: Uint8Array, rnd: () => number): Uint8Array[] {
  const cuts = new Set<number>();
  const n = 1 + Math.floor(rnd() * 40);
  for (let i = 0; i < n; i++) cuts.add(Math.floor(rnd() * bytes.length));
  const sorted = [...cuts].sort((a, b) => a - b);
  const parts: Uint8Array[] = [];
  let prev = 0;
  for (const c of sorted) {
    parts.push(bytes.slice(prev, c));
    prev = c;
  }
  parts.push(bytes.slice(prev));
  return parts;
}

async function runPipeline(rec: Recording, parts: Uint8Array[], declared: string[]): Promise<{ events: StreamEvent[]; response?: CompletionResponse; error?: unknown }> {
  const adapter = registry.get(rec.adapter);
  const acc = new StreamAccumulator(new Set(declared));
  const events: StreamEvent[] = [];
  try {
    for await (const e of decodeStream(adapter, reads(parts), acc, 'fuzz')) events.push(e);
    const fin = acc.finish();
    events.push(...fin.events);
    return { events, response: fin.response };
  } catch (error) {
    return { events, error };
  }
}

const textOf = (events: StreamEvent[], type: 'content' | 'reasoning') =>
  events.filter((e) => e.type === type).map((e) => (e as { text: string }).text).join('');

test('random byte splits of recorded streams never lose or change text (2000 runs)', async () => {
  const rnd = rng(0xc0ffee);
  for (let i = 0; i < 2000; i++) {
    const rec = recordings[i % recordings.length]!;
    const parts = randomSplit(rec.bytes, rnd);
    const { events, response, error } = await runPipeline(rec, parts, ['set_light', 'say']);
    assert.equal(error, undefined, `run ${i} (${rec.adapter}): ${String(error)}`);
    assert.ok(response);
    assert.equal(response.content, rec.content, `run ${i}`);
    assert.equal(textOf(events, 'content'), rec.content);
    assert.equal(response.reasoning_content ?? '', rec.reasoning);
    assert.deepEqual(response.tool_calls.map((c) => ({ name: c.function.name, arguments: c.function.arguments })), rec.calls);
    assert.ok(!response.content.includes('\uFFFD'));
  }
});

test('random corruptions never crash: a complete answer or a typed ProviderError (2000 runs)', async () => {
  const rnd = rng(0xbadf00d);
  const garbage = ['\n', '{', '}', '"', '\\', '\xff', 'data: ', 'data: [DONE]', '\n\n', '{"error":"x"}\n', 'null\n', '[]\n', '{"message":7}\n', '\u0000', '你'];
  let complete = 0;
  let typed = 0;
  for (let i = 0; i < 2000; i++) {
    const rec = recordings[i % recordings.length]!;
    let b = Buffer.from(rec.bytes);
    const kind = Math.floor(rnd() * 4);
    if (kind === 0) {
      // flip random bytes
      const n = 1 + Math.floor(rnd() * 4);
      for (let k = 0; k < n; k++) b[Math.floor(rnd() * b.length)] = Math.floor(rnd() * 256);
    } else if (kind === 1) {
      // insert garbage
      const at = Math.floor(rnd() * b.length);
      const g = Buffer.from(garbage[Math.floor(rnd() * garbage.length)]!, 'utf8');
      b = Buffer.concat([b.subarray(0, at), g, b.subarray(at)]);
    } else if (kind === 2) {
      // truncate
      b = b.subarray(0, Math.floor(rnd() * b.length));
    } else {
      // delete a range
      const at = Math.floor(rnd() * b.length);
      b = Buffer.concat([b.subarray(0, at), b.subarray(Math.min(b.length, at + 1 + Math.floor(rnd() * 30)))]);
    }
    const { events, response, error } = await runPipeline(rec, randomSplit(new Uint8Array(b), rnd), ['set_light', 'say']);
    if (error !== undefined) {
      assert.ok(error instanceof ProviderError, `run ${i}: untyped ${String(error)}`);
      typed++;
      if ((error as ProviderError).code === 'TRUNCATED_STREAM') {
        // the partial text is the content seen so far, which is a prefix of what the events carried or held back
        const partial = (error as { partial: string }).partial;
        assert.ok(partial.startsWith(textOf(events, 'content')), `run ${i}: partial text`);
      }
    } else {
      assert.ok(response);
      complete++;
      assert.equal(textOf(events, 'content'), response.content, `run ${i}: delivered text equals the final content`);
    }
  }
  assert.ok(complete > 0 && typed > 0, `both outcomes occur (complete ${complete}, typed ${typed})`);
});

test('over HTTP: random splits at the server, text arrives whole (40 runs)', async () => {
  const rnd = rng(42);
  for (let i = 0; i < 40; i++) {
    const adapter = i % 2 ? 'openai' : 'ollama';
    const reply = replies[i % replies.length]!;
    const size = 600;
    const splitAt = Array.from({ length: 6 }, () => Math.floor(rnd() * size));
    srv.enqueue({ ...reply, splitAt, splitDelayMs: 1 });
    const p = new LuaAdaptedProvider({ name: adapter, adapter: registry.get(adapter), baseUrl: srv.url, model: 'm' });
    let text = '';
    let last: StreamEvent | undefined;
    for await (const e of p.chatStream({ messages: [{ role: 'user', content: 'x' }], tools: [{ type: 'function', function: { name: 'set_light', description: '', parameters: {} } }, { type: 'function', function: { name: 'say', description: '', parameters: {} } }] })) {
      if (e.type === 'content') text += e.text;
      last = e;
    }
    assert.equal(text, reply.content ?? '');
    assert.ok(last?.type === 'done');
    assert.equal(last.response.tool_calls.length, reply.tool_calls?.length ?? 0);
  }
});
