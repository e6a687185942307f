/**
 * Benchmark (issue 4): stop latency while a reply is streaming from the LLM
 * and being spoken. The real service runs with the Ollama adapter against our
 * LLM test server (a long reply at 20 tokens/s) and the real speaker driver
 * playing through `aplay -D null`. Each run waits until the first sentence is
 * playing, presses stop, and measures from the stop to
 *  (a) the LLM test server seeing its socket closed (server side), and
 *  (b) the aplay process having exited.
 * Prints stop.llm_abort_p50/p99 and stop.speaker_p50/p99 in ms (200 runs;
 * HOMEAGENT_BENCH_RUNS overrides).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startApp } from '../../src/service/app.js';
import { startLlmTestServer } from '../support/llm-test-server.js';

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

export async function run(): Promise<void> {
  const runs = Number(process.env.HOMEAGENT_BENCH_RUNS ?? 200);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'homeagent-bench-stop-'));
  const story = Array.from({ length: 40 }, (_, i) => `This is sentence number ${i + 1} of a long story that keeps going.`).join(' ');
  const llm = await startLlmTestServer({ defaultReply: { content: story, tokensPerSecond: 20 } });
  const app = await startApp({
    dataDir: dir,
    console: false,
    socketPath: path.join(dir, 'homeagent.sock'),
    embeddedBrokerPort: 0,
    env: {
      HOMEAGENT__CORE__LLM__SOURCES__OLLAMA__BASE_URL: llm.url,
      HOMEAGENT__PLUGIN__SPEAKER__DRIVER: 'real',
      HOMEAGENT__PLUGIN__SPEAKER__DEVICE: 'null',
      HOMEAGENT__PLUGIN__GPIO__DRIVER: 'sim',
      HOMEAGENT__PLUGIN__MIC__DRIVER: 'sim',
      HOMEAGENT__CORE__SERVICE__DEMO_HOME: 'off',
      HOMEAGENT__CORE__AGENT__CONTEXT_WINDOW: '8192',
    },
  });
  const speaker = app.voice?.speaker;
  if (!speaker) throw new Error('no voice pipeline');
  const llmMs: number[] = [];
  const spkMs: number[] = [];
  try {
    for (let i = 0; i < runs; i++) {
      const started = new Promise<void>((resolve) => speaker.once('start', () => resolve()));
      const turn = app.kernel.injectInput('bench', 'speaker', `tell me story ${i}`);
      await started;
      const closed = llm.nextSocketClosed();
      const exited = new Promise<bigint>((resolve) => speaker.once('stopped', () => resolve(process.hrtime.bigint())));
      const t0 = process.hrtime.bigint();
      app.kernel.stopNow('bench');
      const [c, e] = await Promise.all([closed, exited]);
      llmMs.push(Number(c.at - t0) / 1e6);
      spkMs.push(Number(e - t0) / 1e6);
      await turn;
    }
  } finally {
    await app.stop();
    await llm.close();
    rmSync(dir, { recursive: true, force: true });
  }
  console.log(`stop.llm_abort_p50: ${pct(llmMs, 50).toFixed(2)} ms`);
  console.log(`stop.llm_abort_p99: ${pct(llmMs, 99).toFixed(2)} ms`);
  console.log(`stop.speaker_p50: ${pct(spkMs, 50).toFixed(2)} ms`);
  console.log(`stop.speaker_p99: ${pct(spkMs, 99).toFixed(2)} ms`);
  console.log(`stop.runs: ${runs} runs`);
}
