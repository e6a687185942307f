/**
 * A kernel (test/support/kernel-harness.ts) with the plugins-from-outside
 * loader: the built-in skills plugin, the approvals store in the harness's
 * temporary data directory and ExternalPlugins over the kernel's host.
 * Plugin folders are written before the loader's first scan by
 * `setup(dataDir)`.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Clock } from '../../src/kernel/clock.js';
import type { Plugin } from '../../src/kernel/sdk.js';
import { ApprovalStore } from '../../src/plugins/external/approvals.js';
import { ExternalPlugins } from '../../src/plugins/external/loader.js';
import { SkillCatalog, SkillsPlugin } from '../../src/plugins/external/skills.js';
import type { FakeReply } from '../support/fake-provider.js';
import { startHarness, type Harness } from '../support/kernel-harness.js';

/** What a rig gives a test. */
export interface PluginRig extends Harness {
  external: ExternalPlugins;
  approvals: ApprovalStore;
  skills: SkillCatalog;
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
  const skills = new SkillCatalog();
  let external!: ExternalPlugins;
  let approvals!: ApprovalStore;
  const h = await startHarness({
    ...(opts.script ? { script: opts.script } : {}),
    ...(opts.clock ? { clock: opts.clock } : {}),
    beforeStart: async (kernel) => {
      opts.setup?.(kernel.dataDir);
      kernel.use(new SkillsPlugin({ catalog: skills, sections: () => kernel.services.promptSections }));
      for (const b of opts.builtins ?? []) kernel.use(b);
      approvals = new ApprovalStore(kernel.dataDir);
      external = new ExternalPlugins({
        dataDir: kernel.dataDir,
        ...(opts.packageDir ? { packageDir: opts.packageDir } : {}),
        host: kernel.host,
        betweenTurns: (fn) => kernel.agent.betweenTurns(fn),
        settings: kernel.settings,
        approvals,
        skills,
        sandboxed: () => false,
        ...(opts.platform ? { platform: opts.platform } : {}),
        ...(opts.arch ? { arch: opts.arch } : {}),
      });
      await external.loadAll();
    },
  });
  return Object.assign(h, { external, approvals, skills });
}

/** `<dataDir>/plugins`. */
export function pluginsDir(dataDir: string): string {
  return path.join(dataDir, 'plugins');
}
