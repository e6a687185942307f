/**
 * Issue 19 "Ollama options that keep the cache useful": `homeagent doctor`
 * says when the context Ollama gives the model (the num_ctx the box sends,
 * within the model's trained window from /api/show) is smaller than the
 * prompt the box sends (the largest recent request in the run log, whose
 * `llm.requested` events carry `prompt_tokens`). Against the LLM test
 * server's /api/show and a real run log written by a kernel's turns.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigRegistry } from '../../src/config/registry.js';
import { estimateTokens } from '../../src/kernel/memory-port.js';
import { messagesTokens } from '../../src/kernel/prompt.js';
import { SqliteRunLog } from '../../src/kernel/run-log.js';
import type { ChatMessage } from '../../src/kernel/llm-types.js';
import { registerProviderSettings } from '../../src/providers/manager.js';
import { checkLlmSource, doctorInputFromSettings, largestRecentPrompt, ollamaContext } from '../../src/service/doctor.js';
import { startLlmTestServer } from '../support/llm-test-server.js';
import { startLlmRig } from '../kernel/llm-rig.js';

test('the context Ollama gives: num_ctx sent within the trained window; with none sent, the Modelfile num_ctx over the trained window', () => {
  const show = { parameters: 'num_ctx                        4096\nstop "<|im_end|>"', model_info: { 'general.architecture': 'qwen2', 'qwen2.context_length': 32768 } };
  assert.deepEqual(ollamaContext(show, 8192), { context: 8192, trained: 32768 });
  assert.deepEqual(ollamaContext(show, 65536), { context: 32768, trained: 32768 });
  assert.deepEqual(ollamaContext(show, 0), { context: 4096, trained: 32768 });
  assert.deepEqual(ollamaContext({ model_info: { 'general.architecture': 'llama', 'llama.context_length': 131072 } }, 0), { context: 131072, trained: 131072 });
  assert.deepEqual(ollamaContext({ model_info: { 'x.context_length': 2048 } }, 0), { context: 2048, trained: 2048 });
  assert.deepEqual(ollamaContext({}, 8192), { context: 8192 });
  assert.deepEqual(ollamaContext({}, 0), {});
});

test('doctor: an Ollama context smaller than the prompt fails with the fix; large enough says both figures', async () => {
  const srv = await startLlmTestServer({ models: [{ name: 'qwen2.5:3b', context_length: 32768 }, { name: 'tiny', context_length: 2048, family: 'llama' }] });
  try {
    const src = { name: 'ollama', adapter: 'ollama', base_url: srv.url, model: 'qwen2.5:3b' };
    const ok = await checkLlmSource(src, fetch, { numCtx: 8192, promptTokens: 1500 });
    assert.equal(ok.ok, true, ok.detail);
    assert.match(ok.detail, /context 8192 tokens \(prompts up to 1500\)/);
    assert.equal(srv.requests.filter((r) => r.path === '/api/show').at(-1)!.body!.model, 'qwen2.5:3b', 'doctor asked /api/show');

    const small = await checkLlmSource(src, fetch, { numCtx: 1024, promptTokens: 1500 });
    assert.equal(small.ok, false);
    assert.match(small.detail, /context is 1024 tokens \(num_ctx 1024, the model's 32768\), smaller than the box's prompt \(up to 1500 tokens/);
    assert.equal(small.fix, 'homeagent config set core.llm.num_ctx 2048');

    const declared = await checkLlmSource({ ...src, context_window: 1024 }, fetch, { numCtx: 8192, promptTokens: 1500 });
    assert.equal(declared.ok, false, 'a source\'s own context_window is what is sent');
    assert.equal(declared.fix, 'homeagent config set core.llm.sources.ollama.context_window 2048');

    const tiny = await checkLlmSource({ ...src, model: 'tiny' }, fetch, { numCtx: 8192, promptTokens: 3000 });
    assert.equal(tiny.ok, false);
    assert.match(tiny.detail, /context is 2048 tokens/);
    assert.equal(tiny.fix, 'choose a model with a longer context than 2048 tokens');

    const unknownPrompt = await checkLlmSource(src, fetch, { numCtx: 1024 });
    assert.equal(unknownPrompt.ok, true, 'no prompt measured yet: nothing to compare');
    assert.match(unknownPrompt.detail, /context 1024 tokens$/);
  } finally {
    await srv.close();
  }
});

test('the run log carries each request\'s prompt tokens; doctor reads the largest recent one and the settings it compares with', async () => {
  const rig = await startLlmRig('ollama');
  try {
    assert.equal(largestRecentPrompt(rig.dataDir), undefined, 'no request yet');
    rig.srv.script((req) => ({ content: `Noted: ${String(req.body?.messages?.at(-1)?.content ?? '')}` }));
    await rig.kernel.injectInput('console', 'console', 'hello there');
    await rig.kernel.injectInput('console', 'console', 'and now a somewhat longer message, so that this request is the largest of the two');
    const reqs = rig.srv.chatRequests();
    // The estimate of the whole request as sent: messages and tool schemas.
    const estimate = (i: number): number => messagesTokens(reqs[i]!.body!.messages as ChatMessage[]) + estimateTokens(JSON.stringify(reqs[i]!.body!.tools));
    assert.ok(estimate(1) > estimate(0));
    assert.equal(largestRecentPrompt(rig.dataDir), estimate(1));
  } finally {
    await rig.close();
  }
  // A log written by any run: the largest of the last requests.
  const dir = mkdtempSync(path.join(os.tmpdir(), 'homeagent-doctor-ctx-'));
  try {
    const log = new SqliteRunLog(path.join(dir, 'runlog.db'));
    for (const [i, n] of [900, 1400, 1100].entries()) log.append({ type: 'llm.requested', turn: `t${i}`, round: 1, appended: [], prompt_tokens: n });
    log.append({ type: 'llm.requested', turn: 'old', round: 1, appended: [] });
    log.close();
    assert.equal(largestRecentPrompt(dir), 1400);
    const settings = new ConfigRegistry(':memory:', { env: {} });
    registerProviderSettings(settings);
    settings.set('core.llm.num_ctx', 4096);
    settings.set('core.llm.sources.ollama.context_window', 2048);
    const input = doctorInputFromSettings(settings, dir);
    assert.equal(input.numCtx, 4096);
    assert.equal(input.sources[0]!.context_window, 2048);
    settings.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
