/**
 * Process-plugin fixtures: plugin folders in a temporary directory, plugins
 * written with our TypeScript SDK bundled by esbuild into one .mjs (what an
 * author ships; plain `node` runs it inside the sandbox), a small capability
 * check around the kernel's SDK (as the loader wraps it: PERMISSION_DENIED on
 * a call the manifest does not grant), and event waits (no wall-clock sleeps).
 */
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildSync } from 'esbuild';
import type { Plugin, PluginSDK } from '../../src/kernel/sdk.js';
import { HomeAgentError } from '../../src/kernel/errors.js';
import { ProcessPlugin, type ProcessPluginOptions } from '../../src/plugins/external/process.js';
import { validateManifest, maxInjectLevel, type PluginManifest } from '../../src/plugins/external/manifest.js';

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const sdkSource = path.join(repoRoot, 'src', 'plugin-sdk', 'index.ts');

/** A temporary root holding plugin folders and their state folders. */
export function tempRoot(prefix = 'ha-proc-'): { root: string; cleanup: () => void } {
  const root = mkdtempSync(path.join(os.tmpdir(), prefix));
  return { root, cleanup: () => rmSync(root, { recursive: true, force: true }) };
}

/** Write a plugin folder `<root>/plugins/<name>` with plugin.json and files; returns the validated manifest and folders. */
export function pluginDir(root: string, manifest: Partial<PluginManifest> & { name: string }, files: Record<string, string>): { manifest: PluginManifest; dir: string; stateDir: string } {
  const dir = path.join(root, 'plugins', manifest.name);
  mkdirSync(dir, { recursive: true });
  const raw = { version: '1.0.0', kind: 'process', capabilities: ['tools'], ...manifest };
  writeFileSync(path.join(dir, 'plugin.json'), JSON.stringify(raw, null, 2));
  for (const [f, text] of Object.entries(files)) writeFileSync(path.join(dir, f), text, { mode: 0o755 });
  const stateDir = path.join(root, 'state', manifest.name);
  return { manifest: validateManifest(raw, path.join(dir, 'plugin.json'), manifest.name), dir, stateDir };
}

/**
 * A plugin written with the TS SDK: `body` is the module's code after
 * `import { definePlugin } from 'homeagent/plugin-sdk'`; bundled into
 * `<dir>/main.mjs`. Returns the plugin.json fields for it.
 */
export function sdkPluginFiles(body: string): Record<string, string> {
  const src = `import { definePlugin } from ${JSON.stringify(sdkSource)};\n${body}\n`;
  const out = buildSync({ stdin: { contents: src, resolveDir: repoRoot, loader: 'ts', sourcefile: 'plugin.ts' }, bundle: true, platform: 'node', format: 'esm', target: 'node20', write: false, logLevel: 'silent' });
  return { 'main.mjs': out.outputFiles[0]!.text };
}

/**
 * The capability checks a loader puts around the kernel's SDK (issue 17
 * "Restricted SDK"): calls the manifest does not grant throw HomeAgentError
 * PERMISSION_DENIED and are logged.
 */
export function checkedSdk(sdk: PluginSDK, granted: readonly string[]): PluginSDK {
  const has = (c: string) => granted.includes(c);
  const deny = (what: string, cap: string): never => {
    sdk.log.warn({ capability: cap }, `refused: ${what} needs capability ${cap}`);
    throw new HomeAgentError('PERMISSION_DENIED', `plugin ${sdk.name}: ${what} needs the capability "${cap}", which was not granted`);
  };
  return {
    ...sdk,
    registerTool: (def) => (has('tools') ? sdk.registerTool(def) : deny(`registering tool ${def.name}`, 'tools')),
    registerStage: (stage, h, o) => (has(`stage:${stage}`) ? sdk.registerStage(stage, h, o) : deny(`a ${stage} handler`, `stage:${stage}`)),
    subscribe: (type, h) => (has('events:subscribe') ? sdk.subscribe(type, h) : deny(`subscribing to ${type}`, 'events:subscribe')),
    publish: (type, p) => (has('events:publish') ? sdk.publish(type, p) : deny(`publishing ${type}`, 'events:publish')),
    registerOutputChannel: (n, c, d, h, o) => (has('output') ? sdk.registerOutputChannel(n, c, d, h, o) : deny(`output channel ${n}`, 'output')),
    injectInput: (ch, t, o) => (maxInjectLevel(granted) >= 0 ? sdk.injectInput(ch, t, o) : deny('injecting input', 'inject:L0')),
    injectInterrupt: (l, ch, t, o) => (maxInjectLevel(granted) >= Math.min(l, 3) ? sdk.injectInterrupt(Math.min(l, 3) as 0 | 1 | 2 | 3, ch, t, o) : deny(`an L${l} interrupt (L4 is clamped to L3)`, `inject:L${Math.min(l, 3)}`)),
    memory: () => (has('memory:read') ? sdk.memory() : deny('reading memory', 'memory:read')),
    crashed: (r) => sdk.crashed(r),
    settings: () => sdk.settings(),
    social: () => sdk.social(),
  };
}

/** A ProcessPlugin behind capability checks, as the loader hands it to the host. */
export function processPlugin(opts: ProcessPluginOptions): { plugin: Plugin; proc: ProcessPlugin } {
  const proc = new ProcessPlugin(opts);
  const granted = opts.granted ?? opts.manifest.capabilities;
  return {
    proc,
    plugin: { name: proc.name, external: true, start: (sdk) => proc.start(checkedSdk(sdk, granted)), stop: () => proc.stop() },
  };
}

/** Whether a process is gone (or a zombie nobody reaped). */
export function processGone(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return true;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z');
  } catch {
    return true;
  }
}
