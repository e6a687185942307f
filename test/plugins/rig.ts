/**
 * A kernel with the plugins-from-outside loader for tests: an in-memory
 * settings registry, a FakeProvider, a recording `console` channel, the
 * built-in skills plugin, the approvals store in a temporary data directory
 * and ExternalPlugins over the kernel's host. Plugin folders are written
 * before the loader's first scan by `setup(dataDir)`.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigRegistry } from '../../src/config/registry.js';
import { Kernel } from '../../src/kernel/kernel.js';
import { Cap, type OutputMessage } from '../../src/kernel/output-types.js';
import type { Clock } from '../../src/kernel/clock.js';
import type { Plugin } from '../../src/kernel/sdk.js';
import { ApprovalStore } from '../../src/plugins/external/approvals.js';
import { ExternalPlugins } from '../../src/plugins/external/loader.js';
import { SkillCatalog, SkillsPlugin } from '../../src/plugins/external/skills.js';
import { FakeProvider, type FakeReply } from '../support/fake-provider.js';

/** What a rig gives a test. */
export interface PluginRig {
  kernel: Kernel;
  provider: FakeProvider;
  settings: ConfigRegistry;
  outputs: OutputMessage[];
  dataDir: string;
  external: ExternalPlugins;
  approvals: ApprovalStore;
  skills: SkillCatalog;
  close(): Promise<void>;
}

/** Write a plugin folder `root/name` with `plugin.json` = manifest (omitted when null) and other files. Returns its path. */
export function writePlugin(root: string, name: string, manifest: Record<string, unknown> | null, files: Record<string, string> = {}): string {
  const dir = path.join(root, name);
  mkdirSync(dir, { recursive: true });
  if (manifest) writeFileSync(path.join(dir, 'plugin.json'), JSON.stringify(manifest, null, 1));
  for (const [f, text] of Object.entries(files)) {
    mkdirSync(path.dirname(path.join(dir, f)), { recursive: true });
    writeFileSync(path.join(dir, f), text);
  }
  return dir;
}

/** Start a rig. `setup` writes plugin folders (data dir given) before the first scan; `builtins` are added before them. */
export async function startRig(opts: { setup?: (dataDir: string) => void; packageDir?: string; script?: FakeReply[]; clock?: Clock; builtins?: Plugin[]; platform?: string; arch?: string } = {}): Promise<PluginRig> {
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'homeagent-plugins-'));
  opts.setup?.(dataDir);
  const settings = new ConfigRegistry(':memory:', { env: {} });
  const provider = new FakeProvider(opts.script ?? []);
  const kernel = new Kernel({ settings, dataDir, provider, ...(opts.clock ? { clock: opts.clock } : {}) });
  const outputs: OutputMessage[] = [];
  kernel.registerOutputChannel('_test_', 'console', Cap.Text, 'test console', (m) => {
    outputs.push(m);
  });
  const skills = new SkillCatalog();
  kernel.use(new SkillsPlugin({ catalog: skills, sections: () => kernel.services.promptSections }));
  for (const b of opts.builtins ?? []) kernel.use(b);
  const approvals = new ApprovalStore(dataDir);
  const external = new ExternalPlugins({
    dataDir,
    ...(opts.packageDir ? { packageDir: opts.packageDir } : {}),
    host: kernel.host,
    betweenTurns: (fn) => kernel.agent.betweenTurns(fn),
    settings,
    approvals,
    skills,
    sandboxed: () => false,
    ...(opts.platform ? { platform: opts.platform } : {}),
    ...(opts.arch ? { arch: opts.arch } : {}),
  });
  await external.loadAll();
  await kernel.start();
  return {
    kernel,
    provider,
    settings,
    outputs,
    dataDir,
    external,
    approvals,
    skills,
    async close() {
      await kernel.stop();
      settings.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

/** `<dataDir>/plugins`. */
export function pluginsDir(dataDir: string): string {
  return path.join(dataDir, 'plugins');
}
