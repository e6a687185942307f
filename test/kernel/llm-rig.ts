/**
 * A kernel wired as the service wires it for the LLM (issue 14 tests): the
 * ProviderManager over the real Lua adapters, talking to the LLM test server
 * (one source, Ollama or OpenAI-compatible), the SQLite run log
 * (`runlog.db`) and the SQLite memory (`memory.db`) in a temporary data
 * directory, and two recording output channels: `console` (text) and
 * `speaker` (text + stream).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigRegistry } from '../../src/config/registry.js';
import { Kernel } from '../../src/kernel/kernel.js';
import { Cap, type OutputMessage } from '../../src/kernel/output-types.js';
import { SqliteRunLog } from '../../src/kernel/run-log.js';
import { ProviderManager, registerProviderSettings } from '../../src/providers/manager.js';
import type { MemorySystem } from '../../src/memory/memory-system.js';
import { startLlmTestServer, type LlmTestServer, type LlmTestServerOptions } from '../support/llm-test-server.js';
import { silentLogger } from '../support/quiet.js';
import { makeMemory } from '../memory/helpers.js';
import { adaptersDir } from '../providers/helpers.js';

/** What a rig gives a test. */
export interface LlmRig {
  kernel: Kernel;
  srv: LlmTestServer;
  providers: ProviderManager;
  memory: MemorySystem;
  settings: ConfigRegistry;
  outputs: OutputMessage[];
  dataDir: string;
  close(): Promise<void>;
}

/**
 * Start a rig whose one LLM source uses `adapter`. `core` holds core.*
 * settings set after the kernel registered them (e.g. limits, timeouts);
 * `beforeStart` adds plugins; `server` are the LLM test server's options.
 */
export async function startLlmRig(adapter: 'ollama' | 'openai', core: Record<string, unknown> = {}, beforeStart?: (k: Kernel) => void, server: LlmTestServerOptions = {}): Promise<LlmRig> {
  const srv = await startLlmTestServer(server);
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'homeagent-llm-rig-'));
  const settings = new ConfigRegistry(':memory:', { env: {} });
  registerProviderSettings(settings);
  settings.set('core.llm.sources.ollama.adapter', adapter);
  settings.set('core.llm.sources.ollama.base_url', srv.url);
  settings.set('core.llm.sources.ollama.context_window', 8192);
  const providers = new ProviderManager({ settings, adaptersDir, log: silentLogger });
  const memory = makeMemory({ dir: dataDir });
  const kernel = new Kernel({ settings, dataDir, provider: providers, memory, runLog: new SqliteRunLog(path.join(dataDir, 'runlog.db')), log: silentLogger });
  for (const [k, v] of Object.entries(core)) settings.set(k, v);
  const outputs: OutputMessage[] = [];
  kernel.registerOutputChannel('_test_', 'console', Cap.Text, 'test console', (m) => void outputs.push(m));
  kernel.registerOutputChannel('_test_', 'speaker', Cap.Text | Cap.Audio | Cap.Stream, 'test speaker', (m) => void outputs.push(m));
  beforeStart?.(kernel);
  await kernel.start();
  return {
    kernel,
    srv,
    providers,
    memory,
    settings,
    outputs,
    dataDir,
    async close() {
      await kernel.stop();
      providers.close();
      settings.close();
      await srv.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
