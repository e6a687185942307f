/**
 * Automatic rollback by image/install.sh and `homeagent rollback`
 * (image/rollback.sh via runRollback) in a temporary root with a fake
 * systemctl that can be told a release never reaches READY.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runRollback, runUpdate } from '../../src/service/update.js';
import { deviceOptions, homeagentDir, makeBundles, makeDevice, tempDir } from './release-fixture.js';

const work = tempDir('ha-rollback-');
let bundles: Map<string, string> = new Map<string, string>();
before(async () => {
  bundles = await makeBundles(work, ['1.0.0', '1.1.0', '1.2.0']);
});
after(() => rmSync(work, { recursive: true, force: true }));

function bundle(version: string): string {
  const b = bundles.get(version);
  assert.ok(b, `bundle ${version}`);
  return b;
}

test('a release that never reaches READY is rolled back automatically', async () => {
  const d = makeDevice(work);
  assert.equal((await runUpdate(bundle('1.0.0'), deviceOptions(d))).ok, true);
  assert.equal((await runUpdate(bundle('1.1.0'), deviceOptions(d))).ok, true);
  d.markBad('1.2.0');
  const r = await runUpdate(bundle('1.2.0'), deviceOptions(d));
  assert.equal(r.ok, false);
  assert.equal(r.outcome, 'rolled-back');
  assert.equal(r.code, 'ROLLED_BACK');
  assert.equal(r.exitCode, 4);
  assert.equal(r.version, '1.1.0');
  assert.equal(r.failed, '1.2.0');
  assert.match(r.message, /1\.2\.0 did not become ready; rolled back to 1\.1\.0/);
  assert.match(r.log, /not ready after 1s \(state activating\/auto-restart\)/);
  // Back where it was: current 1.1.0, previous 1.0.0, 1.1.0 restarted after the failed start.
  assert.equal(d.current(), '1.1.0');
  assert.equal(d.previous(), '1.0.0');
  assert.deepEqual(d.started(), ['1.0.0', '1.1.0', '1.2.0', '1.1.0']);
  // The failed release stays for inspection, marked.
  assert.ok(existsSync(join(homeagentDir(d), 'releases', '1.2.0', '.failed')));
  // The unit installed in /etc is the running release's again.
  const unit = readFileSync(join(d.root, 'etc/systemd/system/homeagent.service'), 'utf8');
  assert.equal(unit, readFileSync(join(homeagentDir(d), 'releases', '1.1.0', 'systemd/homeagent.service'), 'utf8'));
});

test('a first install that never becomes ready has nothing to fall back to', async () => {
  const d = makeDevice(work);
  d.markBad('1.0.0');
  const r = await runUpdate(bundle('1.0.0'), deviceOptions(d));
  assert.equal(r.ok, false);
  assert.equal(r.outcome, 'failed');
  assert.equal(r.code, 'NOT_RUNNING');
  assert.equal(r.exitCode, 5);
  assert.match(r.log, /no earlier release to roll back to/);
});

test('homeagent rollback switches to the previous release and back again', async () => {
  const d = makeDevice(work);
  assert.equal((await runUpdate(bundle('1.0.0'), deviceOptions(d))).ok, true);
  assert.equal((await runUpdate(bundle('1.1.0'), deviceOptions(d))).ok, true);
  const r = await runRollback(deviceOptions(d));
  assert.equal(r.ok, true, r.log);
  assert.equal(r.outcome, 'rolled-back');
  assert.equal(r.version, '1.0.0');
  assert.equal(r.previous, '1.1.0');
  assert.equal(d.current(), '1.0.0');
  assert.equal(d.previous(), '1.1.0');
  assert.deepEqual(d.started(), ['1.0.0', '1.1.0', '1.0.0']);
  const back = await runRollback(deviceOptions(d));
  assert.equal(back.ok, true);
  assert.equal(d.current(), '1.1.0');
  assert.equal(d.previous(), '1.0.0');
  // A named release; an unknown one is refused without touching anything.
  const unknown = await runRollback({ ...deviceOptions(d), version: '0.9.0' });
  assert.equal(unknown.ok, false);
  assert.equal(unknown.code, 'USAGE');
  assert.match(unknown.message, /release 0\.9\.0 is not installed/);
  assert.equal(d.current(), '1.1.0');
  const named = await runRollback({ ...deviceOptions(d), version: '1.0.0' });
  assert.equal(named.ok, true);
  assert.equal(d.current(), '1.0.0');
});

test('a rollback whose target does not start restores the running release', async () => {
  const d = makeDevice(work);
  assert.equal((await runUpdate(bundle('1.0.0'), deviceOptions(d))).ok, true);
  assert.equal((await runUpdate(bundle('1.1.0'), deviceOptions(d))).ok, true);
  d.markBad('1.0.0');
  const r = await runRollback(deviceOptions(d));
  assert.equal(r.ok, false);
  assert.equal(r.code, 'ROLLED_BACK');
  assert.equal(r.version, '1.1.0');
  assert.equal(r.failed, '1.0.0');
  assert.equal(d.current(), '1.1.0');
  assert.equal(d.previous(), '1.0.0');
});

test('rollback without a previous release is refused', async () => {
  const d = makeDevice(work);
  assert.equal((await runUpdate(bundle('1.0.0'), deviceOptions(d))).ok, true);
  const r = await runRollback(deviceOptions(d));
  assert.equal(r.ok, false);
  assert.equal(r.code, 'USAGE');
  assert.match(r.message, /no previous release/);
  assert.equal(d.current(), '1.0.0');
});

test('a release that crashes right after READY counts as failed', async () => {
  const d = makeDevice(work);
  assert.equal((await runUpdate(bundle('1.0.0'), deviceOptions(d))).ok, true);
  // Wrap the fake systemctl: after the restart of 1.1.0 the first show says
  // active/running, every later one shows a new invocation (it restarted).
  const wrapper = join(d.dir, 'bin', 'systemctl-flaky');
  writeFileSync(
    wrapper,
    `#!/usr/bin/env bash
if [ "$1" = show ] && [ "$(cat "$FAKE_SYSTEMD_DIR/running" 2>/dev/null)" = 1.1.0 ]; then
  n=$(( $(cat "$FAKE_SYSTEMD_DIR/flaky" 2>/dev/null || echo 0) + 1 )); echo "$n" >"$FAKE_SYSTEMD_DIR/flaky"
  printf 'ActiveState=active\\nSubState=running\\nInvocationID=flaky%s\\nMainPID=%s\\n' "$n" "$((7000 + n))"
  exit 0
fi
exec "${d.systemctl}" "$@"
`,
    { mode: 0o755 },
  );
  const r = await runUpdate(bundle('1.1.0'), deviceOptions(d, { systemctl: wrapper, settleSec: 1 }));
  assert.equal(r.code, 'ROLLED_BACK', r.log);
  assert.match(r.log, /did not stay up after READY/);
  assert.equal(d.current(), '1.0.0');
});
