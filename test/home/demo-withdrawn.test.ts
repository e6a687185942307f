/**
 * The demo home's devices are the box's only while it announces them
 * (core.service.demo_home; HomePluginOptions.ignoredNodes): a newcomer set
 * `core.service.demo_home off`, restarted, and "turn on the kitchen light"
 * still went to the demo's light, kept in registry.json from the run before.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startApp } from '../../src/service/app.js';
import { request } from '../../src/cli/client.js';
import { waitUntil } from '../support/wait.js';

test('after a run with the demo home, a run with it off has none of its devices', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'homeagent-demo-off-'));
  const socket = path.join(dir, 'homeagent.sock');
  const env = (demo: string): Record<string, string> => ({ HOMEAGENT__PLUGIN__WEBUI__PORT: '0', HOMEAGENT__CORE__LLM__SOURCES__OLLAMA__BASE_URL: 'http://127.0.0.1:9', HOMEAGENT__CORE__SERVICE__DEMO_HOME: demo });
  try {
    const first = await startApp({ dataDir: dir, console: false, socketPath: socket, embeddedBrokerPort: 0, env: env('on') });
    try {
      await waitUntil(() => first.home.registry?.view('demo_kitchen_light')?.available === true, 'the demo home discovered', 60_000);
    } finally {
      await first.stop();
    }
    const second = await startApp({ dataDir: dir, console: false, socketPath: socket, embeddedBrokerPort: 0, env: env('off') });
    try {
      const demo = second.home.registry?.entities().filter((e) => e.id.startsWith('demo_')).map((e) => e.id) ?? [];
      assert.deepEqual(demo, [], 'no demo device is kept from the run before');
      const r = (await request(socket, 'ask', { text: 'turn on the kitchen light' }, undefined, { timeoutMs: 30_000 })) as { reply: string; actions?: unknown[] };
      assert.doesNotMatch(r.reply, /Turned on/, r.reply);
    } finally {
      await second.stop();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
