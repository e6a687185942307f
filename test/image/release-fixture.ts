/**
 * Test fixtures for the release machinery: a small project tree bundled with
 * the real scripts/bundle.mjs (`--no-build`, prebuilt dist/), a temporary
 * install root, and fake `systemctl` / `npm` commands.
 *
 * Bundles are signed (as every release must be) with a test key pair this
 * module makes once per process with scripts/keygen.mjs ({@link testKey});
 * a fake device trusts that key (its <root>/etc/homeagent/keys) unless made
 * with `trust: false`.
 *
 * The fake systemctl behaves like systemd for what install.sh looks at:
 * `--no-block restart` starts a new invocation of whatever release
 * <root>/opt/homeagent/current points at (and fails when the unit file is not
 * installed); `show` reports ActiveState/SubState/InvocationID/MainPID. A
 * release whose version is listed in $FAKE_SYSTEMD_DIR/bad never reaches
 * READY (activating/auto-restart, like a crash loop under Restart=always), and
 * one without node_modules (npm ci never ran) does not either. `stop` stops
 * it; an executable $FAKE_SYSTEMD_DIR/on-start is run with the version at
 * each start (a test's stand-in for what the release does when it starts).
 */
import { spawnSync } from 'node:child_process';
import { chmodSync, cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, readlinkSync, rmSync, writeFileSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { addTrustedKey } from '../../image/release-keys.mjs';
import { createBundle } from '../../scripts/bundle.mjs';
import { generateReleaseKeyPair } from '../../scripts/keygen.mjs';
import type { ReleaseScriptOptions } from '../../src/service/update.js';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

const FAKE_SYSTEMCTL = `#!/usr/bin/env bash
# fake systemctl for tests (see test/image/release-fixture.ts)
set -u
state=\${FAKE_SYSTEMD_DIR:?}
echo "$*" >>"$state/calls"
verb=""
for a in "$@"; do
  case $a in
    -p) ;;
    -*) ;;
    daemon-reload|enable|reset-failed|restart|stop|show|is-active) [ -z "$verb" ] && verb=$a ;;
  esac
done
base="\${HOMEAGENT_ROOT:-}/opt/homeagent"
case $verb in
  daemon-reload|enable|reset-failed) exit 0 ;;
  restart)
    [ -f "\${HOMEAGENT_ROOT:-}/etc/systemd/system/homeagent.service" ] || { echo "Unit homeagent.service not found." >&2; exit 5; }
    n=$(( $(cat "$state/count" 2>/dev/null || echo 0) + 1 ))
    echo "$n" >"$state/count"
    target=$(readlink "$base/current")
    echo "\${target##*/}" >"$state/running"
    echo "\${target##*/}" >>"$state/started"
    # A test's stand-in for what the started release does first (e.g. migrate stores).
    if [ -x "$state/on-start" ]; then "$state/on-start" "\${target##*/}" >&2; fi
    exit 0 ;;
  stop)
    rm -f "$state/running"
    exit 0 ;;
  show|is-active)
    if [ ! -f "$state/running" ]; then
      active=inactive; sub=dead; inv=""; pid=0
    else
      v=$(cat "$state/running"); n=$(cat "$state/count")
      inv=$(printf 'inv%030d' "$n")
      if grep -qx "$v" "$state/bad" 2>/dev/null || [ ! -d "$base/releases/$v/node_modules" ]; then
        active=activating; sub=auto-restart; pid=0
      else
        active=active; sub=running; pid=$((4000 + n))
      fi
    fi
    if [ "$verb" = is-active ]; then echo "$active"; [ "$active" = active ]; exit; fi
    printf 'ActiveState=%s\\nSubState=%s\\nInvocationID=%s\\nMainPID=%s\\n' "$active" "$sub" "$inv" "$pid"
    exit 0 ;;
  *) echo "fake systemctl: unsupported: $*" >&2; exit 1 ;;
esac
`;

const FAKE_NPM = `#!/usr/bin/env bash
# fake npm for tests: records the call, "installs" node_modules
set -u
echo "$PWD $*" >>"\${FAKE_NPM_LOG:?}"
if [ -n "\${FAKE_NPM_FAIL:-}" ]; then echo "npm ERR! gyp: build failed" >&2; exit 1; fi
mkdir -p node_modules/better-sqlite3
echo installed >node_modules/better-sqlite3/marker
`;

/** A project tree that bundles like the real one (real systemd/ and image/, a tiny dist/). */
export function makeProject(parent: string, version: string, opts: { mainJs?: string } = {}): string {
  const dir = join(parent, `project-${version}`);
  mkdirSync(join(dir, 'dist', 'src', 'cli'), { recursive: true });
  const mainJs =
    opts.mainJs ?? `process.stdout.write(JSON.stringify({ version: ${JSON.stringify(version)}, args: process.argv.slice(2) }) + '\\n');\n`;
  writeFileSync(join(dir, 'dist', 'src', 'cli', 'main.js'), mainJs);
  writeFileSync(
    join(dir, 'package.json'),
    `${JSON.stringify({ name: 'homeagent', version, type: 'module', private: true, engines: { node: '>=20' }, bin: { homeagent: 'dist/src/cli/main.js' } }, null, 2)}\n`,
  );
  writeFileSync(
    join(dir, 'package-lock.json'),
    `${JSON.stringify({ name: 'homeagent', version, lockfileVersion: 3, requires: true, packages: { '': { name: 'homeagent', version } } }, null, 2)}\n`,
  );
  mkdirSync(join(dir, 'adapters'));
  writeFileSync(join(dir, 'adapters', 'ollama.lua'), `-- adapter of ${version}\nreturn {}\n`);
  mkdirSync(join(dir, 'data'));
  writeFileSync(join(dir, 'data', 'personal.md'), `# persona ${version}\n`);
  cpSync(join(repoRoot, 'systemd'), join(dir, 'systemd'), { recursive: true });
  cpSync(join(repoRoot, 'image'), join(dir, 'image'), { recursive: true });
  return dir;
}

/** A release key pair made by scripts/keygen.mjs: the private key file signs, the public one is trusted. */
export interface TestKey {
  id: string;
  privateKeyFile: string;
  publicKeyFile: string;
}

const keyDir = mkdtempSync(join(tmpdir(), 'ha-test-keys-'));
process.on('exit', () => rmSync(keyDir, { recursive: true, force: true }));
let defaultKey: TestKey | undefined;

/** A fresh release key pair (in a temp directory removed when the process exits). */
export function makeKey(name?: string): TestKey {
  return generateReleaseKeyPair({ outDir: keyDir, ...(name ? { name } : {}) });
}

/** The test release key every fixture bundle is signed with and every fake device trusts by default. */
export function testKey(): TestKey {
  defaultKey ??= makeKey('test-release');
  return defaultKey;
}

/** Run `node scripts/bundle.mjs ARGS` (the `npm run bundle` entry point); `env` is added to this process's environment. */
export function runBundleCli(args: string[], env: NodeJS.ProcessEnv = {}): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [join(repoRoot, 'scripts', 'bundle.mjs'), ...args], { encoding: 'utf8', timeout: 300_000, env: { ...process.env, ...env } });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

/** How a fixture bundle is signed: by `keys` (default: the test key), or not at all; with keys to ship or retire (rotation). */
export interface SignOptions {
  /** Private keys that sign it; default [testKey()]. */
  keys?: TestKey[];
  /** An unsigned development bundle. */
  unsigned?: boolean;
  /** Public keys shipped in the release (--add-key). */
  addKeys?: TestKey[];
  /** Key ids the release retires (--retire-key). */
  retireKeys?: string[];
}

/** Bundle a project in-process with scripts/bundle.mjs's createBundle (no tsc: prebuilt dist/), signed with the test key. */
export async function bundleProject(project: string, outDir: string, sign: SignOptions = {}): Promise<string> {
  return (
    await createBundle({
      project,
      outDir,
      build: false,
      ...(sign.unsigned ? { unsigned: true } : { keys: (sign.keys ?? [testKey()]).map((k) => k.privateKeyFile) }),
      addKeys: (sign.addKeys ?? []).map((k) => k.publicKeyFile),
      retireKeys: sign.retireKeys ?? [],
    })
  ).file;
}

/** Bundles of fresh projects for each version, made in `parent`. */
export async function makeBundles(parent: string, versions: string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const v of versions) out.set(v, await bundleProject(makeProject(parent, v), parent));
  return out;
}

/** A temporary install root with fake systemctl/npm and the environment to use them. */
export interface FakeDevice {
  /** Temp directory holding everything (remove it when done). */
  dir: string;
  /** HOMEAGENT_ROOT. */
  root: string;
  /** Path of the fake systemctl. */
  systemctl: string;
  /** Path of the fake npm. */
  npm: string;
  /** Environment for the scripts (FAKE_SYSTEMD_DIR, FAKE_NPM_LOG, fast polling). */
  env: NodeJS.ProcessEnv;
  /** Make `version` never reach READY. */
  markBad(version: string): void;
  /** The version `current` points at ('' for none). */
  current(): string;
  /** The version `previous` points at ('' for none). */
  previous(): string;
  /** Versions started by `systemctl restart`, in order. */
  started(): string[];
  /** Calls made to systemctl, one string each. */
  systemctlCalls(): string[];
  /** Calls made to npm ("cwd args"). */
  npmCalls(): string[];
  /** <root>/etc/homeagent/keys: the trusted release keys (HOMEAGENT_KEYS_DIR's default under the root). */
  keysDir: string;
  /** Ids of the keys trusted now. */
  trustedKeys(): string[];
}

/**
 * A fake device. `trust` (default [testKey()]) are the release keys it trusts
 * from the start, as an image would; [] for a box with none enrolled yet.
 */
export function makeDevice(parent: string, opts: { trust?: TestKey[] } = {}): FakeDevice {
  const dir = mkdtempSync(join(parent, 'device-'));
  const root = join(dir, 'root');
  const state = join(dir, 'systemd-state');
  const bin = join(dir, 'bin');
  mkdirSync(root);
  mkdirSync(state);
  mkdirSync(bin);
  const systemctl = join(bin, 'systemctl');
  const npm = join(bin, 'npm');
  writeFileSync(systemctl, FAKE_SYSTEMCTL);
  writeFileSync(npm, FAKE_NPM);
  chmodSync(systemctl, 0o755);
  chmodSync(npm, 0o755);
  const npmLog = join(dir, 'npm-calls');
  const keysDir = join(root, 'etc', 'homeagent', 'keys');
  for (const k of opts.trust ?? [testKey()]) addTrustedKey(keysDir, readFileSync(k.publicKeyFile), k.publicKeyFile);
  const read = (file: string): string[] => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter((l) => l !== '') : []);
  const link = (name: string): string => {
    try {
      return readlinkSync(join(root, 'opt', 'homeagent', name)).split('/').at(-1) ?? '';
    } catch {
      return '';
    }
  };
  return {
    dir,
    root,
    systemctl,
    npm,
    env: {
      FAKE_SYSTEMD_DIR: state,
      FAKE_NPM_LOG: npmLog,
      HOMEAGENT_POLL_INTERVAL: '0.1',
      HOMEAGENT_NODE_BIN: process.execPath,
    },
    markBad: (version) => appendFileSync(join(state, 'bad'), `${version}\n`),
    current: () => link('current'),
    previous: () => link('previous'),
    started: () => read(join(state, 'started')),
    systemctlCalls: () => read(join(state, 'calls')),
    npmCalls: () => read(npmLog),
    keysDir,
    trustedKeys: () => (existsSync(keysDir) ? readdirSync(keysDir).filter((n) => n.endsWith('.pub')).map((n) => n.slice(0, -'.pub'.length)).sort() : []),
  };
}

/** A fresh temp directory for one test file. */
export function tempDir(prefix: string): string {
  return mkdtempSync(join(tmpdir(), prefix));
}

/** runUpdate/runRollback options for a fake device (1 s READY timeout, no settle wait). */
export function deviceOptions(device: FakeDevice, extra: Partial<ReleaseScriptOptions> = {}): ReleaseScriptOptions {
  return { root: device.root, systemctl: device.systemctl, npm: device.npm, readyTimeoutSec: 1, settleSec: 0, env: device.env, ...extra };
}

/** <root>/opt/homeagent of a fake device. */
export const homeagentDir = (d: FakeDevice): string => join(d.root, 'opt', 'homeagent');

/** Release directories on a fake device, sorted. */
export const releaseDirs = (d: FakeDevice): string[] => readdirSync(join(homeagentDir(d), 'releases')).sort();

/** Staging directories left in <root>/opt/homeagent (there must be none after a run). */
export const stagingLeftovers = (d: FakeDevice): string[] => readdirSync(homeagentDir(d)).filter((n) => n.startsWith('.staging'));
