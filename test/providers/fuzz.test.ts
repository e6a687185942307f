/**
 * Fuzz: thousands of random byte splits and corruptions of recorded streams
 * (NDJSON and SSE) through the real pipeline (framing -> Lua adapter ->
 * merging). Splits never lose or change text; corruptions never crash: they
 * end in a complete answer or a typed ProviderError, and the text delivered
 * is always exactly what the events carried. A smaller round goes over HTTP.
 *
 * Issue 14: every field of every chunk of the recorded streams (Ollama NDJSON
 * and OpenAI-compatible SSE, as the LLM test server sends them, with and
 * without tool calls and reasoning) and of whole responses is replaced, one
 * at a time, by null, missing, a number, a string, [] and {}: the adapters
 * never raise, the stream still completes, and the text and tool calls of
 * every other chunk arrive unchanged.
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
import { prng as rng } from '../support/prng.js';


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

// ---- every field of every chunk (issue 14) ---------------------------------

type JsonPath = Array<string | number>;
const MISSING = Symbol('missing');
/** The replacements of a field: null, missing, a number, a string, an empty array, an empty object. */
const REPLACEMENTS: Array<{ name: string; value: unknown }> = [
  { name: 'null', value: null },
  { name: 'missing', value: MISSING },
  { name: 'number', value: 7 },
  { name: 'string', value: 's' },
  { name: 'empty array', value: [] },
  { name: 'empty object', value: {} },
];

/** Every path to a field or array item of `v`, depth first (a parent before its children). */
function fieldPaths(v: unknown, prefix: JsonPath = []): JsonPath[] {
  const out: JsonPath[] = [];
  if (Array.isArray(v)) {
    v.forEach((x, i) => {
      out.push([...prefix, i]);
      out.push(...fieldPaths(x, [...prefix, i]));
    });
  } else if (v && typeof v === 'object') {
    for (const [k, x] of Object.entries(v)) {
      out.push([...prefix, k]);
      out.push(...fieldPaths(x, [...prefix, k]));
    }
  }
  return out;
}

/** A copy of `v` with the field at `path` replaced by `value` (MISSING deletes it). */
function replaced(v: unknown, path: JsonPath, value: unknown): unknown {
  const copy = structuredClone(v) as Record<string | number, unknown>;
  let parent = copy as Record<string | number, unknown>;
  for (const k of path.slice(0, -1)) parent = parent[k] as Record<string | number, unknown>;
  const last = path.at(-1)!;
  if (value !== MISSING) parent[last] = structuredClone(value);
  else if (Array.isArray(parent)) parent.splice(last as number, 1);
  else delete parent[last];
  return copy;
}

/** A recorded stream cut into its JSON payloads (NDJSON lines, SSE `data:` events; `[DONE]` kept as text). */
function payloadsOf(rec: Recording): Array<unknown | string> {
  const text = Buffer.from(rec.bytes).toString('utf8');
  if (rec.adapter === 'ollama') return text.split('\n').filter(Boolean).map((l) => JSON.parse(l) as unknown);
  return text
    .split('\n\n')
    .filter(Boolean)
    .map((e) => e.replace(/^data: /, ''))
    .map((d) => (d === '[DONE]' ? d : (JSON.parse(d) as unknown)));
}

function bytesOf(adapter: Recording['adapter'], payloads: Array<unknown | string>): Uint8Array {
  const enc = new TextEncoder();
  if (adapter === 'ollama') return enc.encode(payloads.map((p) => `${JSON.stringify(p)}\n`).join(''));
  return enc.encode(payloads.map((p) => `data: ${typeof p === 'string' ? p : JSON.stringify(p)}\n\n`).join(''));
}

/** What one payload contributes: its content and reasoning pieces and the index of the tool call it carries. */
function contribution(adapter: Recording['adapter'], p: unknown, callsBefore: number): { content: string; reasoning: string; call?: number } {
  const o = p as Record<string, any>;
  if (adapter === 'ollama') {
    const m = o.message ?? {};
    return { content: m.content ?? '', reasoning: m.thinking ?? '', ...(m.tool_calls?.length ? { call: callsBefore } : {}) };
  }
  const d = o.choices?.[0]?.delta ?? {};
  return { content: d.content ?? '', reasoning: d.reasoning_content ?? '', ...(d.tool_calls?.length ? { call: d.tool_calls[0].index as number } : {}) };
}

test('every field of every chunk replaced by null, missing, a number, a string, [] or {}: the adapters never fail, the rest of the stream arrives whole', async () => {
  let runs = 0;
  for (const rec of recordings) {
    const payloads = payloadsOf(rec);
    let calls = 0;
    const parts = payloads.map((p) => {
      if (typeof p === 'string') return { content: '', reasoning: '' };
      const c = contribution(rec.adapter, p, calls);
      if (rec.adapter === 'ollama' && c.call !== undefined) calls++;
      return c;
    });
    const expectedCalls = rec.calls.map((c) => JSON.stringify(c));
    for (let i = 0; i < payloads.length; i++) {
      const p = payloads[i];
      if (typeof p === 'string') continue; // [DONE] is framing, not JSON
      const before = { content: parts.slice(0, i).map((x) => x.content).join(''), reasoning: parts.slice(0, i).map((x) => x.reasoning).join('') };
      const after = { content: parts.slice(i + 1).map((x) => x.content).join(''), reasoning: parts.slice(i + 1).map((x) => x.reasoning).join('') };
      for (const path of fieldPaths(p)) {
        for (const r of REPLACEMENTS) {
          const mutated = [...payloads];
          mutated[i] = replaced(p, path, r.value);
          const label = `${rec.adapter} chunk ${i} ${path.join('.')} = ${r.name}`;
          const { events, response, error } = await runPipeline(rec, [bytesOf(rec.adapter, mutated)], ['set_light', 'say']);
          runs++;
          assert.equal(error, undefined, `${label}: ${String(error)}`);
          assert.ok(response, label);
          for (const kind of ['content', 'reasoning'] as const) {
            const got = kind === 'content' ? response.content : (response.reasoning_content ?? '');
            const allowed = [before[kind] + parts[i]![kind] + after[kind], before[kind] + after[kind], `${before[kind]}s${after[kind]}`];
            assert.ok(allowed.includes(got), `${label}: ${kind} ${JSON.stringify(got)}`);
          }
          assert.equal(textOf(events, 'content'), response.content, `${label}: the delivered text is the final content`);
          const got = response.tool_calls.map((c) => JSON.stringify({ name: c.function.name, arguments: c.function.arguments }));
          assert.ok(got.length <= expectedCalls.length, `${label}: no call made up`);
          expectedCalls.forEach((c, k) => {
            if (k !== parts[i]!.call) assert.ok(got.includes(c), `${label}: call ${k} arrives whole`);
          });
        }
      }
    }
  }
  assert.ok(runs > 3000, `runs: ${runs}`);
});

test('every field of a whole response replaced: transform_response never fails and returns the unified shape', async () => {
  for (const adapter of ['ollama', 'openai'] as const) {
    for (const r of replies) {
      srv.enqueue(r);
      const path = adapter === 'ollama' ? '/api/chat' : '/v1/chat/completions';
      const res = await fetch(srv.url + path, { method: 'POST', body: JSON.stringify({ model: 'm', stream: false, messages: [] }) });
      const body = (await res.json()) as unknown;
      const a = registry.get(adapter);
      for (const p of fieldPaths(body)) {
        for (const rep of REPLACEMENTS) {
          const u = await a.transformResponse(new TextEncoder().encode(JSON.stringify(replaced(body, p, rep.value))));
          const label = `${adapter} ${p.join('.')} = ${rep.name}`;
          assert.ok(u.content === undefined || typeof u.content === 'string', label);
          for (const c of u.tool_calls ?? []) assert.ok(c.name === undefined || typeof c.name === 'string', label);
          assert.ok(u.token_usage === undefined || Number.isFinite(u.token_usage.total_tokens), label);
        }
      }
      for (const top of [null, 7, 's', [], {}]) {
        const u = await a.transformResponse(new TextEncoder().encode(JSON.stringify(top)));
        assert.ok(typeof u === 'object', `${adapter}: top-level ${JSON.stringify(top)}`);
      }
    }
  }
});
