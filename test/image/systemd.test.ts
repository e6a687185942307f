/**
 * systemd/ files checked by systemd's own tools:
 * - `systemd-analyze verify` on homeagent.service (a copy whose ExecStart names
 *   this test's node binary, because verify insists that the executable exists
 *   and /opt/homeagent/bin/node only exists on an installed device);
 * - `systemd-analyze security --offline=true`: overall exposure <= 2.5 (issue 17:
 *   with the namespaces bwrap needs for process plugins opened narrowly);
 * - systemd-sysusers and systemd-tmpfiles applied to a temporary root.
 * All of these work without a running systemd (containers, CI).
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, readlinkSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { repoRoot, tempDir } from './release-fixture.js';

const unitPath = join(repoRoot, 'systemd', 'homeagent.service');
const unit = readFileSync(unitPath, 'utf8');
const dir = tempDir('ha-systemd-');
after(() => rmSync(dir, { recursive: true, force: true }));

/** All values of `Key=` in the unit (comments ignored). */
function values(key: string): string[] {
  return unit
    .split('\n')
    .filter((l) => l.startsWith(`${key}=`))
    .map((l) => l.slice(key.length + 1).trim());
}

test('systemd-analyze verify accepts homeagent.service', () => {
  const execStart = values('ExecStart');
  assert.equal(execStart.length, 1);
  assert.match(execStart[0] ?? '', /^\/opt\/homeagent\/bin\/node \/opt\/homeagent\/current\/dist\/src\/cli\/main\.js run$/);
  const copy = join(dir, 'homeagent.service');
  writeFileSync(copy, unit.replace('ExecStart=/opt/homeagent/bin/node ', `ExecStart=${process.execPath} `));
  const r = spawnSync('systemd-analyze', ['verify', copy], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, `verify failed:\n${r.stdout}${r.stderr}`);
  // verify also exits 0 on unknown or misspelled keys: no message may name our unit.
  const complaints = r.stderr.split('\n').filter((l) => l.includes('homeagent'));
  assert.deepEqual(complaints, []);
});

test('systemd-analyze security --offline=true rates it 2.5 or lower', () => {
  const r = spawnSync('systemd-analyze', ['security', '--offline=true', '--no-pager', unitPath], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  const m = /Overall exposure level for homeagent\.service: (\d+\.\d+)/.exec(r.stdout);
  assert.ok(m, `no overall exposure line in:\n${r.stdout}`);
  const score = Number(m[1]);
  assert.ok(score <= 2.5, `exposure ${score} > 2.5:\n${r.stdout}`);
  // The same limit enforced by systemd itself (--threshold is in tenths).
  const t = spawnSync('systemd-analyze', ['security', '--offline=true', '--threshold=25', '--no-pager', unitPath], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(t.status, 0, t.stdout);
  // The settings the rating rests on are really there.
  const json = spawnSync('systemd-analyze', ['security', '--offline=true', '--json=short', unitPath], { encoding: 'utf8', timeout: 60_000 });
  const checks = JSON.parse(json.stdout) as Array<{ name: string; set: boolean }>;
  const isSet = (name: string): boolean => checks.find((c) => c.name === name)?.set === true;
  for (const name of ['NoNewPrivileges=', 'ProtectSystem=', 'ProtectHome=', 'PrivateTmp=', 'ProtectKernelTunables=',  'SystemCallArchitectures=', 'CapabilityBoundingSet=~CAP_SYS_ADMIN', 'User=/DynamicUser=']) {
    assert.ok(isSet(name), `${name} should be set`);
  }
  // bubblewrap (process plugins) gets exactly user, mnt, pid and net namespaces; the others stay closed.
  for (const ns of ['cgroup', 'ipc', 'uts']) assert.ok(isSet(`RestrictNamespaces=~${ns}`), `${ns} namespaces should stay forbidden`);
  for (const ns of ['user', 'mnt', 'pid', 'net']) assert.equal(isSet(`RestrictNamespaces=~${ns}`), false, `bwrap needs ${ns} namespaces`);
  assert.deepEqual(values('RestrictNamespaces'), ['user mnt pid net']);
  assert.ok(isSet('SystemCallFilter=~@resources'));
  // Only mount, umount2 and pivot_root of @mount (bwrap), on top of @system-service.
  assert.deepEqual(values('SystemCallFilter'), ['@system-service', 'mount umount2 pivot_root', '~@resources']);
  assert.deepEqual(values('KillMode'), ['mixed']);
  // Deliberate exceptions (commented in the unit): V8 needs W+X memory; devices stay visible.
  assert.equal(isSet('MemoryDenyWriteExecute='), false);
  assert.equal(isSet('PrivateDevices='), false);
});

test('the unit is a notify service with watchdog, start limit and a dedicated user', () => {
  assert.deepEqual(values('Type'), ['notify']);
  assert.deepEqual(values('NotifyAccess'), ['all']);
  assert.ok(Number(values('WatchdogSec')[0]) > 0);
  assert.deepEqual(values('Restart'), ['always']);
  assert.ok(Number(values('StartLimitBurst')[0]) > 0);
  assert.ok(Number(values('StartLimitIntervalSec')[0]) > 0);
  assert.ok(Number(values('TimeoutStopSec')[0]) > 0);
  assert.deepEqual(values('User'), ['homeagent']);
  assert.deepEqual(values('SupplementaryGroups')[0]?.split(/\s+/).sort(), ['audio', 'dialout', 'gpio']);
  assert.deepEqual(values('StateDirectory'), ['homeagent']);
  assert.deepEqual(values('RuntimeDirectory'), ['homeagent']);
  assert.deepEqual(values('RuntimeDirectoryMode'), ['0750']);
  assert.deepEqual(values('ProtectSystem'), ['strict']);
  assert.deepEqual(values('DevicePolicy'), ['closed']);
  assert.ok(values('DeviceAllow').includes('char-alsa rw'));
  assert.ok(values('DeviceAllow').includes('char-gpiochip rw'));
  assert.deepEqual(values('MemoryDenyWriteExecute'), [], 'V8 JIT needs W+X memory');
  assert.deepEqual(values('PrivateDevices'), [], 'would hide /dev/snd, GPIO and serial devices');
  // Writable paths: only the GPIO sysfs exceptions (data and runtime dirs come from StateDirectory/RuntimeDirectory).
  assert.deepEqual(values('ReadWritePaths'), ['-/sys/class/gpio -/sys/devices/platform']);
  assert.deepEqual(values('SyslogIdentifier'), ['homeagent']);
  assert.deepEqual(values('SyslogLevelPrefix'), ['yes']);
});

test('sysusers.d creates the homeagent user in the gpio, audio and dialout groups', () => {
  const root = join(dir, 'sysusers-root');
  mkdirSync(join(root, 'etc'), { recursive: true });
  const r = spawnSync('systemd-sysusers', [`--root=${root}`, join(repoRoot, 'systemd', 'homeagent.sysusers')], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  const passwd = readFileSync(join(root, 'etc', 'passwd'), 'utf8');
  assert.match(passwd, /^homeagent:x:\d+:\d+:HomeAgent voice box:\/var\/lib\/homeagent:\/usr\/sbin\/nologin$/m);
  const group = readFileSync(join(root, 'etc', 'group'), 'utf8');
  for (const g of ['gpio', 'audio', 'dialout']) {
    assert.match(group, new RegExp(`^${g}:x:\\d+:homeagent$`, 'm'), `homeagent in ${g}`);
  }
  assert.match(group, /^homeagent:x:\d+:$/m);
  const uid = Number(/^homeagent:x:(\d+):/m.exec(passwd)?.[1]);
  assert.ok(uid > 0 && uid < 1000, `system uid, got ${uid}`);
});

test('tmpfiles.d creates the release layout and the CLI link', () => {
  const root = join(dir, 'tmpfiles-root');
  mkdirSync(join(root, 'etc'), { recursive: true });
  const conf = join(repoRoot, 'systemd', 'homeagent.tmpfiles');
  const r = spawnSync('systemd-tmpfiles', ['--create', `--root=${root}`, conf], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, r.stderr);
  for (const d of ['opt/homeagent', 'opt/homeagent/releases', 'opt/homeagent/bin']) {
    const st = statSync(join(root, d));
    assert.ok(st.isDirectory(), d);
    assert.equal(st.mode & 0o777, 0o755, d);
  }
  assert.equal(readlinkSync(join(root, 'usr/local/bin/homeagent')), '/opt/homeagent/current/image/homeagent-cli.sh');
  // Interrupted installs leave staging directories; they go at boot.
  mkdirSync(join(root, 'opt/homeagent/.staging-abc123/homeagent-9.9.9'), { recursive: true });
  const boot = spawnSync('systemd-tmpfiles', ['--create', '--remove', '--boot', `--root=${root}`, conf], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(boot.status, 0, boot.stderr);
  assert.throws(() => statSync(join(root, 'opt/homeagent/.staging-abc123')));
  assert.ok(statSync(join(root, 'opt/homeagent/releases')).isDirectory());
});

test('the update helper: a .path unit on the spool starts a root oneshot running `homeagent update-spool`; both pass systemd-analyze verify', () => {
  const pathUnit = readFileSync(join(repoRoot, 'systemd', 'homeagent-update.path'), 'utf8');
  const svc = readFileSync(join(repoRoot, 'systemd', 'homeagent-update.service'), 'utf8');
  const val = (text: string, key: string) => text.split('\n').filter((l) => l.startsWith(`${key}=`)).map((l) => l.slice(key.length + 1).trim());
  assert.deepEqual(val(pathUnit, 'PathExists'), ['/var/lib/homeagent/update-spool/request.json']);
  assert.deepEqual(val(pathUnit, 'Unit'), ['homeagent-update.service']);
  assert.deepEqual(val(svc, 'Type'), ['oneshot']);
  assert.deepEqual(val(svc, 'User'), [], 'root: it installs into /opt and /etc');
  assert.deepEqual(val(svc, 'ExecStart'), ['/opt/homeagent/bin/node /opt/homeagent/current/dist/src/cli/main.js update-spool --spool /var/lib/homeagent/update-spool']);
  const vdir = join(dir, 'update-units');
  mkdirSync(vdir, { recursive: true });
  writeFileSync(join(vdir, 'homeagent-update.path'), pathUnit);
  writeFileSync(join(vdir, 'homeagent-update.service'), svc.replace('ExecStart=/opt/homeagent/bin/node ', `ExecStart=${process.execPath} `));
  const r = spawnSync('systemd-analyze', ['verify', join(vdir, 'homeagent-update.path'), join(vdir, 'homeagent-update.service')], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, `verify failed:\n${r.stdout}${r.stderr}`);
  const complaints = r.stderr.split('\n').filter((l) => l.includes('homeagent-update'));
  assert.deepEqual(complaints, []);
});
