/**
 * image/install.sh driven through runUpdate (src/service/update.ts, what
 * `homeagent update FILE` calls) in a temporary root with a fake systemctl and
 * a fake npm; bundles made by scripts/bundle.mjs from small project trees.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync, readlinkSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { runRollback, runUpdate } from '../../src/service/update.js';
import { deviceOptions, homeagentDir, makeBundles, makeDevice, releaseDirs, stagingLeftovers, tempDir } from './release-fixture.js';

const work = tempDir('ha-install-');
let bundles: Map<string, string> = new Map<string, string>();
before(async () => {
  bundles = await makeBundles(work, ['1.0.0', '1.1.0', '1.2.0', '1.3.0', '1.4.0']);
});
after(() => rmSync(work, { recursive: true, force: true }));

function bundle(version: string): string {
  const b = bundles.get(version);
  assert.ok(b, `bundle ${version}`);
  return b;
}

test('a fresh install unpacks, runs npm ci --omit=dev, installs the units and starts the service', async () => {
  const d = makeDevice(work);
  const r = await runUpdate(bundle('1.0.0'), deviceOptions(d));
  assert.equal(r.ok, true, r.log);
  assert.equal(r.outcome, 'installed');
  assert.equal(r.code, 'OK');
  assert.equal(r.version, '1.0.0');
  assert.equal(r.previous, undefined);
  // Layout: relative links, the release with its node_modules and install order.
  assert.equal(readlinkSync(join(homeagentDir(d), 'current')), 'releases/1.0.0');
  assert.equal(existsSync(join(homeagentDir(d), 'previous')), false);
  const rel = join(homeagentDir(d), 'releases', '1.0.0');
  assert.ok(existsSync(join(rel, 'dist', 'src', 'cli', 'main.js')));
  assert.ok(existsSync(join(rel, 'node_modules', 'better-sqlite3', 'marker')));
  assert.equal(readFileSync(join(rel, '.install-seq'), 'utf8').trim(), '1');
  assert.equal(readlinkSync(join(homeagentDir(d), 'bin', 'node')), process.execPath);
  // npm ci ran once, with --omit=dev, in the staged copy (not yet in releases/).
  const npm = d.npmCalls();
  assert.equal(npm.length, 1);
  assert.match(npm[0] ?? '', /\/opt\/homeagent\/\.staging-[^/ ]+\/homeagent-1\.0\.0 ci --omit=dev/);
  // Units from the release, the user from sysusers.d, the CLI link from tmpfiles.d.
  assert.equal(readFileSync(join(d.root, 'etc/systemd/system/homeagent.service'), 'utf8'), readFileSync(join(rel, 'systemd/homeagent.service'), 'utf8'));
  assert.ok(existsSync(join(d.root, 'etc/sysusers.d/homeagent.conf')));
  assert.ok(existsSync(join(d.root, 'etc/tmpfiles.d/homeagent.conf')));
  assert.match(readFileSync(join(d.root, 'etc/passwd'), 'utf8'), /^homeagent:/m);
  assert.match(readFileSync(join(d.root, 'etc/group'), 'utf8'), /^audio:x:\d+:homeagent$/m);
  assert.equal(readlinkSync(join(d.root, 'usr/local/bin/homeagent')), '/opt/homeagent/current/image/homeagent-cli.sh');
  // systemd: reload, enable, restart without blocking, then polled.
  const calls = d.systemctlCalls();
  assert.ok(calls.includes('daemon-reload'));
  assert.ok(calls.includes('enable homeagent.service'));
  // The WebUI's update helper: both units installed, the .path watched from now on.
  assert.ok(existsSync(join(d.root, 'etc/systemd/system/homeagent-update.path')));
  assert.ok(existsSync(join(d.root, 'etc/systemd/system/homeagent-update.service')));
  assert.ok(calls.includes('enable --now homeagent-update.path'));
  assert.ok(calls.includes('--no-block restart homeagent.service'));
  assert.ok(calls.some((c) => c.startsWith('show ')));
  assert.deepEqual(d.started(), ['1.0.0']);
  // No staging leftovers.
  assert.deepEqual(stagingLeftovers(d), []);
  // The CLI wrapper runs the current release's CLI.
  const cli = spawnSync('sh', [join(homeagentDir(d), 'current', 'image', 'homeagent-cli.sh'), 'status', '--json'], { encoding: 'utf8' });
  assert.equal(cli.status, 0, cli.stderr);
  assert.deepEqual(JSON.parse(cli.stdout), { version: '1.0.0', args: ['status', '--json'] });
});

test('an update switches current, keeps the old release as previous; the same version again is a no-op', async () => {
  const d = makeDevice(work);
  assert.equal((await runUpdate(bundle('1.0.0'), deviceOptions(d))).ok, true);
  const r = await runUpdate(bundle('1.1.0'), deviceOptions(d));
  assert.equal(r.ok, true, r.log);
  assert.equal(r.outcome, 'installed');
  assert.equal(r.version, '1.1.0');
  assert.equal(r.previous, '1.0.0');
  assert.match(r.message, /1\.1\.0 is installed and running/);
  assert.equal(d.current(), '1.1.0');
  assert.equal(d.previous(), '1.0.0');
  assert.deepEqual(releaseDirs(d), ['1.0.0', '1.1.0']);
  assert.deepEqual(d.started(), ['1.0.0', '1.1.0']);

  const again = await runUpdate(bundle('1.1.0'), deviceOptions(d));
  assert.equal(again.ok, true);
  assert.equal(again.outcome, 'already-current');
  assert.deepEqual(d.started(), ['1.0.0', '1.1.0'], 'no restart');
  assert.equal(d.npmCalls().length, 2, 'no npm ci');
});

test('a failing npm ci leaves the running release untouched', async () => {
  const d = makeDevice(work);
  assert.equal((await runUpdate(bundle('1.0.0'), deviceOptions(d))).ok, true);
  const r = await runUpdate(bundle('1.1.0'), deviceOptions(d, { env: { ...d.env, FAKE_NPM_FAIL: '1' } }));
  assert.equal(r.ok, false);
  assert.equal(r.outcome, 'npm-failed');
  assert.equal(r.code, 'NPM_FAILED');
  assert.match(r.log, /npm ERR! gyp: build failed/);
  assert.equal(d.current(), '1.0.0');
  assert.deepEqual(releaseDirs(d), ['1.0.0']);
  assert.deepEqual(d.started(), ['1.0.0']);
});

test('old releases are pruned; current and previous are always kept', async () => {
  const d = makeDevice(work);
  for (const v of ['1.0.0', '1.1.0', '1.2.0', '1.3.0']) {
    assert.equal((await runUpdate(bundle(v), deviceOptions(d, { keepReleases: 3 }))).ok, true);
  }
  assert.deepEqual(releaseDirs(d), ['1.1.0', '1.2.0', '1.3.0']);
  // Roll back to 1.2.0 (previous), then update: 1.4.0 current, 1.2.0 previous, 1.3.0 newest other.
  assert.equal((await runRollback(deviceOptions(d))).ok, true);
  assert.equal((await runUpdate(bundle('1.4.0'), deviceOptions(d, { keepReleases: 2 }))).ok, true);
  assert.equal(d.current(), '1.4.0');
  assert.equal(d.previous(), '1.2.0');
  assert.deepEqual(releaseDirs(d), ['1.2.0', '1.4.0']);
});

test('--no-start (image builds) installs and enables offline without restarting', async () => {
  const d = makeDevice(work);
  const r = await runUpdate(bundle('1.0.0'), deviceOptions(d, { noStart: true }));
  assert.equal(r.ok, true, r.log);
  assert.equal(r.outcome, 'installed');
  assert.equal(d.current(), '1.0.0');
  assert.deepEqual(d.started(), []);
  assert.deepEqual(d.systemctlCalls(), [`--root=${d.root} enable homeagent.service`, `--root=${d.root} enable homeagent-update.path`]);
});

test('runUpdate reports a missing bundle and missing scripts as data, never throwing', async () => {
  const d = makeDevice(work);
  const missing = await runUpdate(join(work, 'nope.tar.gz'), deviceOptions(d));
  assert.equal(missing.ok, false);
  assert.equal(missing.code, 'USAGE');
  assert.match(missing.message, /cannot read bundle/);
  const noScripts = await runUpdate(bundle('1.0.0'), deviceOptions(d, { scriptsDir: join(work, 'no-such-dir') }));
  assert.equal(noScripts.ok, false);
  assert.equal(noScripts.code, 'SPAWN_FAILED');
  assert.match(noScripts.message, /install\.sh does not exist/);
  assert.equal(d.current(), '');
});
