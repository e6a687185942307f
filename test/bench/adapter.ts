/**
 * Benchmark of the Lua adapter layer (issue 3): a 32 KB request through
 * ollama.lua transform_request, and a 500-chunk NDJSON stream through the
 * whole pipeline (framing -> transform_stream_chunk -> merging), against a
 * plain JS pass-through of the same bytes (line split + JSON.parse + append)
 * in the same run. Prints:
 *   adapter.request: <ms> ms              (median per 32 KB request, history already
 *                                         converted once, as in the agent's tool loop; target < 1)
 *   adapter.request_cold: <ms> ms         (the same with every message converted anew)
 *   adapter.chunk: <us> us                (median per stream chunk; target < 50)
 *   adapter.ratio_vs_passthrough: <x> x   (stream pipeline / pass-through)
 *   adapter.chunk_openai: <us> us         (the same stream as SSE through openai.lua)
 *   adapter.budget_stop: <ms> ms          (an endless loop stopped by the budget)
 * Request and chunk figures are process CPU time per operation (these are
 * single-threaded, CPU-bound operations; CPU time keeps the figures
 * meaningful on a busy machine, where wall time counts other processes too).
 * The budget stop is wall time (it is a latency).
 * Run: npm run bench -- adapter
 */
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { performance } from 'node:perf_hooks';
import { AdapterRegistry } from '../../src/providers/adapter.js';
import { decodeStream } from '../../src/providers/lua-provider.js';
import { StreamAccumulator } from '../../src/providers/accumulator.js';
import { LuaVM } from '../../src/lua/vm.js';
import type { CompletionRequest } from '../../src/kernel/llm-types.js';

const adaptersDir = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../adapters');

/** CPU time (user + system) of `f`, ms. */
async function cpuMs(f: () => unknown): Promise<number> {
  const c0 = process.cpuUsage();
  await f();
  const c = process.cpuUsage(c0);
  return (c.user + c.system) / 1000;
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.floor(s.length / 2)]!;
}

/** A realistic ~32 KB request: persona, recalled memory, history with tool calls, tools. */
export function bigRequest(): CompletionRequest {
  const req: CompletionRequest = {
    model: 'qwen2.5:3b',
    messages: [{ role: 'system', content: '你是客厅里的语音助手，名叫小安。You are HomeAgent, a helpful voice assistant. '.repeat(20) }],
    tools: Array.from({ length: 12 }, (_, i) => ({
      type: 'function' as const,
      function: {
        name: `tool_${i}`,
        description: `Tool number ${i}: controls a device in the home 控制设备`,
        parameters: { type: 'object', properties: { entity: { type: 'string' }, brightness: { type: 'integer', minimum: 0, maximum: 100 } }, required: ['entity'] },
      },
    })),
    options: { keep_alive: '30m', num_ctx: 8192 },
  };
  let i = 0;
  while (JSON.stringify(req).length < 32 * 1024) {
    req.messages.push({ role: 'user', content: `第${i}轮：把客厅的灯调到百分之${i % 100}。Please also tell me the weather, turn ${i}.` });
    req.messages.push({
      role: 'assistant',
      content: '',
      tool_calls: [{ id: `call_${i}`, type: 'function', function: { name: 'tool_1', arguments: { entity: 'light.living_room', brightness: i % 100 } } }],
    });
    req.messages.push({ role: 'tool', content: '{"ok":true,"state":"on"}', tool_call_id: `call_${i}`, name: 'tool_1' });
    req.messages.push({ role: 'assistant', content: `好的，客厅的灯已经调到百分之${i % 100}了。The light is now at ${i % 100} percent.` });
    i++;
  }
  return req;
}

function ndjsonStream(n: number): { reads: Uint8Array[]; text: string } {
  const words = ['Hello', ' 你', '好', ',', ' the', ' weather', ' is', ' 晴', '朗', ' today', '.'];
  const reads: Uint8Array[] = [];
  let text = '';
  for (let i = 0; i < n - 1; i++) {
    const w = words[i % words.length]!;
    text += w;
    reads.push(Buffer.from(`${JSON.stringify({ model: 'qwen2.5:3b', created_at: '2025-05-27T22:54:57.641643123Z', message: { role: 'assistant', content: w }, done: false })}\n`));
  }
  reads.push(
    Buffer.from(
      `${JSON.stringify({ model: 'qwen2.5:3b', created_at: '2025-05-27T22:54:58Z', message: { role: 'assistant', content: '' }, done_reason: 'stop', done: true, total_duration: 5191566416, prompt_eval_count: 26, eval_count: n - 1 })}\n`,
    ),
  );
  return { reads, text };
}

function sseStream(n: number): Uint8Array[] {
  const words = ['Hello', ' 你', '好', ',', ' the', ' weather', ' is', ' 晴', '朗', ' today', '.'];
  const head = { id: 'chatcmpl-1', object: 'chat.completion.chunk', created: 1700000000, model: 'qwen2.5:3b', system_fingerprint: 'fp_ollama' };
  const reads: Uint8Array[] = [];
  for (let i = 0; i < n - 1; i++) {
    reads.push(Buffer.from(`data: ${JSON.stringify({ ...head, choices: [{ index: 0, delta: { role: 'assistant', content: words[i % words.length] }, finish_reason: null }] })}\n\n`));
  }
  reads.push(Buffer.from(`data: ${JSON.stringify({ ...head, choices: [{ index: 0, delta: { role: 'assistant', content: '' }, finish_reason: 'stop' }] })}\n\ndata: [DONE]\n\n`));
  return reads;
}

async function* iter(reads: Uint8Array[]): AsyncGenerator<Uint8Array> {
  for (const r of reads) yield r;
}

/** The plain JS pass-through: split lines on bytes, JSON.parse, append content. */
function passthrough(reads: Uint8Array[]): string {
  let carry = '';
  let text = '';
  const dec = new TextDecoder();
  for (const r of reads) {
    const s = carry + dec.decode(r, { stream: true });
    const parts = s.split('\n');
    carry = parts.pop()!;
    for (const l of parts) {
      if (!l) continue;
      const o = JSON.parse(l) as { message?: { content?: string }; done?: boolean };
      if (o.message?.content) text += o.message.content;
    }
  }
  return text;
}

/** Runs the benchmark and prints its figures. */
export async function run(): Promise<void> {
  const reg = new AdapterRegistry(adaptersDir, {});
  try {
    const ollama = reg.get('ollama');
    const openai = reg.get('openai');

    // 32 KB request
    const req = bigRequest();
    for (let i = 0; i < 30; i++) await ollama.transformRequest(req);
    const reqTimes: number[] = [];
    for (let i = 0; i < 10; i++) {
      // 10 requests per sample: one request is close to the CPU clock's resolution
      reqTimes.push((await cpuMs(async () => {
        for (let k = 0; k < 10; k++) {
          const body = await ollama.transformRequest(req);
          if (body.length < 20_000) throw new Error('request body unexpectedly small');
        }
      })) / 10);
    }
    const coldTimes: number[] = [];
    for (let i = 0; i < 15; i++) {
      ollama.clearMessageCache();
      coldTimes.push(await cpuMs(() => ollama.transformRequest(req)));
    }

    // 500-chunk stream
    const N = 500;
    const { reads, text } = ndjsonStream(N);
    const sse = sseStream(N);
    const pipeline = async (a: typeof ollama, rs: Uint8Array[]): Promise<string> => {
      const acc = new StreamAccumulator(new Set());
      for await (const _e of decodeStream(a, iter(rs), acc)) {
        // events are produced; nothing else to do
      }
      return acc.finish().response.content;
    };
    for (let i = 0; i < 5; i++) {
      if ((await pipeline(ollama, reads)) !== text) throw new Error('pipeline lost text');
      if (passthrough(reads) !== text) throw new Error('pass-through lost text');
      await pipeline(openai, sse);
    }
    const lua: number[] = [];
    const js: number[] = [];
    const luaSse: number[] = [];
    for (let i = 0; i < 15; i++) {
      lua.push(await cpuMs(() => pipeline(ollama, reads)));
      js.push(await cpuMs(() => passthrough(reads)));
      luaSse.push(await cpuMs(() => pipeline(openai, sse)));
    }

    // budget stop latency
    const vm = new LuaVM({ name: 'bench/loop.lua' });
    vm.load('return { spin = function() while true do end end }');
    const stops: number[] = [];
    for (let i = 0; i < 5; i++) {
      const t0 = performance.now();
      try {
        vm.callSync('spin', []);
      } catch {
        stops.push(performance.now() - t0);
      }
    }

    const chunkUs = (median(lua) * 1000) / N;
    console.log(`adapter.request: ${median(reqTimes).toFixed(3)} ms`);
    console.log(`adapter.request_cold: ${median(coldTimes).toFixed(3)} ms`);
    console.log(`adapter.chunk: ${chunkUs.toFixed(1)} us`);
    console.log(`adapter.ratio_vs_passthrough: ${(median(lua) / median(js)).toFixed(1)} x`);
    console.log(`adapter.chunk_openai: ${((median(luaSse) * 1000) / N).toFixed(1)} us`);
    console.log(`adapter.budget_stop: ${median(stops).toFixed(1)} ms`);
  } finally {
    reg.close();
  }
}
