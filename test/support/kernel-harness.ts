/**
 * A kernel on an in-memory ConfigRegistry with a FakeProvider and two
 * recording output channels: `console` (text) and `speaker` (text + stream).
 */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigRegistry } from '../../src/config/registry.js';
import { Kernel } from '../../src/kernel/kernel.js';
import { Cap, type OutputMessage } from '../../src/kernel/output-types.js';
import { FakeProvider, type FakeReply } from './fake-provider.js';
import type { Clock } from '../../src/kernel/clock.js';

/** What a harness gives a test. */
export interface Harness {
  kernel: Kernel;
  provider: FakeProvider;
  settings: ConfigRegistry;
  outputs: OutputMessage[];
  dataDir: string;
  close(): Promise<void>;
}

/** Build and start a kernel for a test; `env` holds setting overrides (`HOMEAGENT__PLUGIN__MQTT__URL`). */
export async function startHarness(opts: { script?: FakeReply[]; clock?: Clock; beforeStart?: (k: Kernel) => void | Promise<void>; env?: Record<string, string> } = {}): Promise<Harness> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'homeagent-kernel-'));
  const settings = new ConfigRegistry(':memory:', { env: opts.env ?? {} });
  const provider = new FakeProvider(opts.script ?? []);
  const kernel = new Kernel({ settings, dataDir, provider, clock: opts.clock });
  const outputs: OutputMessage[] = [];
  kernel.registerOutputChannel('_test_', 'console', Cap.Text, 'test console', (m) => {
    outputs.push(m);
  });
  kernel.registerOutputChannel('_test_', 'speaker', Cap.Text | Cap.Audio | Cap.Stream, 'test speaker', (m) => {
    outputs.push(m);
  });
  await opts.beforeStart?.(kernel);
  await kernel.start();
  return {
    kernel,
    provider,
    settings,
    outputs,
    dataDir,
    async close() {
      await kernel.stop();
      settings.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
