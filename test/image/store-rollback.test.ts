/**
 * `homeagent rollback` after a migrating update (issue 13 "Versioned stores"):
 * the copies kept before the newer release migrated the stores are put back so
 * the old release starts on the stores it left, the stores the newer release
 * wrote are kept in a dated folder (nothing deleted), and the result says so.
 * Runs image/rollback.sh and image/install.sh (via runRollback/runUpdate) in
 * a temporary root with the fake systemctl of release-fixture.ts; the data
 * directory starts with the stores of the release at e216bba
 * (test/fixtures/stores-e216bba) and the newer release's migration is done by
 * today's code (or, where the fake systemd starts a release, by a hook).
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { ConfigRegistry } from '../../src/config/registry.js';
import { registerCoreSettings } from '../../src/kernel/core-settings.js';
import { FakeClock } from '../../src/kernel/clock.js';
import { SqliteRunLog } from '../../src/kernel/run-log.js';
import { openMemoryDb } from '../../src/memory/db.js';
import { DeviceRegistry } from '../../src/home/registry.js';
import { TIMERS_STORE, TimerService } from '../../src/plugins/timers/timer-service.js';
import { MEMORY_STORE } from '../../src/memory/db.js';
import { VOICE_SETTINGS } from '../../src/voice/settings.js';
import { runRollback, runUpdate } from '../../src/service/update.js';
import { chooseCopies } from '../../image/restore-stores.mjs';
import { silentLogger } from '../support/quiet.js';
import { deviceOptions, makeBundles, makeDevice, repoRoot, tempDir, type FakeDevice } from './release-fixture.js';

const FIXTURE = join(repoRoot, 'test', 'fixtures', 'stores-e216bba', 'data');
const SQLITE_STORES = ['memory.db', 'settings.db', 'runlog.db', 'timers.db'];
/** The version a store has once this release opened it (timers.db: paused timers; memory.db: people, versions, forgetting). */
const current = (f: string): number => (f === 'timers.db' ? TIMERS_STORE.version : f === 'memory.db' ? MEMORY_STORE.version : 1);

const work = tempDir('ha-store-rollback-');
let bundles = new Map<string, string>();
before(async () => {
  bundles = await makeBundles(work, ['1.0.0', '1.1.0']);
});
after(() => rmSync(work, { recursive: true, force: true }));

function bundle(version: string): string {
  const b = bundles.get(version);
  assert.ok(b, `bundle ${version}`);
  return b;
}

/** A fake device whose data directory (<root>/var/lib/homeagent, the default) holds the e216bba stores. */
function deviceWithOldStores(): { d: FakeDevice; dataDir: string } {
  const d = makeDevice(work);
  const dataDir = join(d.root, 'var', 'lib', 'homeagent');
  mkdirSync(dataDir, { recursive: true });
  cpSync(FIXTURE, dataDir, { recursive: true });
  return { d, dataDir };
}

/** user_version from the header (4 bytes big-endian at offset 60), without opening the database. */
const userVersion = (file: string): number => readFileSync(file).readUInt32BE(60);

/** What the newer release does at its first start: open (and so migrate) every store, then write to them. */
function startNewerRelease(dataDir: string): void {
  const settings = new ConfigRegistry(join(dataDir, 'settings.db'), { env: {} });
  registerCoreSettings(settings);
  for (const d of VOICE_SETTINGS) settings.register(d);
  settings.set('plugin.voice.language', 'en');
  settings.close();
  openMemoryDb(dataDir).close();
  new SqliteRunLog(join(dataDir, 'runlog.db')).close();
  const timers = new TimerService({ dbPath: join(dataDir, 'timers.db'), dataDir, clock: new FakeClock(Date.UTC(2026, 10, 30, 13)), log: silentLogger, onExpire: () => {} });
  timers.start();
  timers.stop();
  const registry = new DeviceRegistry({ storePath: join(dataDir, 'home', 'registry.json'), dataDir, log: silentLogger });
  registry.load();
  registry.handleMessage('homeassistant/switch/kettle/config', JSON.stringify({ name: 'Kettle', unique_id: 'kettle', command_topic: 'k/set', state_topic: 'k/state' }));
  registry.flush();
  for (const f of SQLITE_STORES) assert.equal(userVersion(join(dataDir, f)), current(f), `${f} migrated`);
}

/** A fake systemd start hook standing in for a release that migrates home/registry.json when it starts. */
function migrateRegistryOnStart(d: FakeDevice, dataDir: string, version: string): void {
  writeFileSync(
    join(d.env.FAKE_SYSTEMD_DIR!, 'on-start'),
    `#!/usr/bin/env bash
[ "$1" = ${version} ] || exit 0
f="${dataDir}/home/registry.json"
grep -q schema_version "$f" && exit 0
copy="${dataDir}/backups/pre-migration/home-registry-v0-$(date -u +%Y%m%dT%H%M%S%3NZ)"
mkdir -p "$copy/home" && cp "$f" "$copy/home/registry.json"
printf '{"schema_version":1,"registry":{"discovery":{},"topics":{}},"by":"${version}"}' >"$f"
`,
    { mode: 0o755 },
  );
}

test('rollback after a migrating update puts the pre-update stores back and keeps the newer ones aside', async () => {
  const { d, dataDir } = deviceWithOldStores();
  assert.equal((await runUpdate(bundle('1.0.0'), deviceOptions(d))).ok, true);
  assert.equal((await runUpdate(bundle('1.1.0'), deviceOptions(d))).ok, true);
  assert.match(readFileSync(join(d.root, 'opt', 'homeagent', 'releases', '1.1.0', '.current-since'), 'utf8'), /^\d{8}T\d{9}Z\n$/);
  startNewerRelease(dataDir);

  const r = await runRollback(deviceOptions(d));
  assert.equal(r.ok, true, r.log);
  assert.equal(r.version, '1.0.0');
  assert.deepEqual(r.storesRestored?.slice().sort(), ['home-registry:v0', 'memory:v0', 'runlog:v0', 'settings:v0', 'timers:v0']);
  const aside = r.storesAside ?? '';
  assert.match(aside, /backups\/rolled-back\/\d{8}T\d{6}Z-from-1\.1\.0$/);
  assert.equal(resolve(aside, '..', '..', '..'), resolve(dataDir));
  assert.match(r.message, /^rolled back: homeagent 1\.0\.0 is running \(was 1\.1\.0\); the stores 1\.1\.0 had migrated were put back as they were before \(.*settings:v0.*\), and the stores it wrote are kept in .*-from-1\.1\.0 \(nothing was deleted\)$/);
  // The service was stopped before the files changed, then 1.0.0 started.
  const calls = d.systemctlCalls();
  const stop = calls.lastIndexOf('stop homeagent.service');
  assert.ok(stop >= 0 && stop < calls.lastIndexOf('--no-block restart homeagent.service'), calls.join('\n'));
  assert.equal(d.current(), '1.0.0');

  // The old release's stores, byte for byte as it left them.
  for (const f of SQLITE_STORES) assert.equal(userVersion(join(dataDir, f)), 0, `${f} is back at version 0`);
  const settings = new Database(join(dataDir, 'settings.db'), { readonly: true });
  assert.equal((settings.prepare(`SELECT value FROM settings WHERE key = 'plugin.voice.language'`).get() as { value: string }).value, '"zh"');
  settings.close();
  assert.equal(readFileSync(join(dataDir, 'home', 'registry.json'), 'utf8'), readFileSync(join(FIXTURE, 'home', 'registry.json'), 'utf8'));

  // The newer stores, kept: what 1.1.0 wrote is all there.
  for (const f of SQLITE_STORES) assert.equal(userVersion(join(aside, f)), current(f), `${f} kept at the version it was migrated to`);
  const kept = new Database(join(aside, 'settings.db'), { readonly: true });
  assert.equal((kept.prepare(`SELECT value FROM settings WHERE key = 'plugin.voice.language'`).get() as { value: string }).value, '"en"');
  kept.close();
  const keptRegistry = JSON.parse(readFileSync(join(aside, 'home', 'registry.json'), 'utf8')) as { schema_version: number; registry: { discovery: Record<string, string> } };
  assert.equal(keptRegistry.schema_version, 1);
  assert.ok('homeassistant/switch/kettle/config' in keptRegistry.registry.discovery);
  assert.match(readFileSync(join(aside, 'README.txt'), 'utf8'), /the stores 1\.1\.0 had written/);
  // Nothing deleted: the pre-migration copies are still there.
  assert.equal(readdirSync(join(dataDir, 'backups', 'pre-migration')).length, 5);

  // Going forward again: 1.0.0 migrated nothing, so the stores stay (1.1.0 migrates them again when it starts).
  const again = await runRollback(deviceOptions(d));
  assert.equal(again.ok, true, again.log);
  assert.equal(again.version, '1.1.0');
  assert.equal(again.storesRestored, undefined);
  assert.doesNotMatch(again.message, /stores/);
  assert.match(again.log, /no store was migrated by 1\.0\.0; the stores stay as they are/);
  assert.equal(userVersion(join(dataDir, 'settings.db')), 0);
});

test('an update that migrates and then does not become ready is rolled back with the stores it migrated', async () => {
  const { d, dataDir } = deviceWithOldStores();
  assert.equal((await runUpdate(bundle('1.0.0'), deviceOptions(d))).ok, true);
  migrateRegistryOnStart(d, dataDir, '1.1.0');
  d.markBad('1.1.0');
  const r = await runUpdate(bundle('1.1.0'), deviceOptions(d));
  assert.equal(r.code, 'ROLLED_BACK', r.log);
  assert.equal(r.version, '1.0.0');
  assert.equal(r.failed, '1.1.0');
  assert.deepEqual(r.storesRestored, ['home-registry:v0']);
  assert.match(r.message, /1\.1\.0 did not become ready; rolled back to 1\.0\.0, which is running; the stores 1\.1\.0 had migrated were put back/);
  assert.equal(readFileSync(join(dataDir, 'home', 'registry.json'), 'utf8'), readFileSync(join(FIXTURE, 'home', 'registry.json'), 'utf8'));
  assert.match(readFileSync(join(r.storesAside ?? '', 'home', 'registry.json'), 'utf8'), /"by":"1\.1\.0"/);
});

test('a rollback whose target does not start puts the newer stores back in place', async () => {
  const { d, dataDir } = deviceWithOldStores();
  migrateRegistryOnStart(d, dataDir, '1.1.0');
  assert.equal((await runUpdate(bundle('1.0.0'), deviceOptions(d))).ok, true);
  assert.equal((await runUpdate(bundle('1.1.0'), deviceOptions(d))).ok, true);
  const written = readFileSync(join(dataDir, 'home', 'registry.json'), 'utf8');
  assert.match(written, /"by":"1\.1\.0"/);
  d.markBad('1.0.0');
  const r = await runRollback(deviceOptions(d));
  assert.equal(r.code, 'ROLLED_BACK', r.log);
  assert.equal(r.version, '1.1.0');
  assert.equal(r.failed, '1.0.0');
  assert.equal(r.storesRestored, undefined);
  assert.match(r.log, /are back in/);
  assert.equal(readFileSync(join(dataDir, 'home', 'registry.json'), 'utf8'), written);
  assert.equal(d.current(), '1.1.0');
});

test('restore-stores picks, per store, the earliest copy made since the release became current', () => {
  const dataDir = tempDir('ha-restore-choose-');
  try {
    const copy = (name: string, rel: string): void => {
      mkdirSync(join(dataDir, 'backups', 'pre-migration', name, rel, '..'), { recursive: true });
      writeFileSync(join(dataDir, 'backups', 'pre-migration', name, rel), name);
    };
    copy('settings-v0-20261130T115959Z', 'settings.db'); // before: another release's migration
    copy('settings-v1-20261130T120500Z', 'settings.db');
    copy('settings-v0-20261130T120000Z', 'settings.db');
    copy('settings-v0-20261130T120000Z-2', 'settings.db');
    copy('memory-v0-20261130T115959999Z', 'memory.db'); // one ms before
    copy('home-registry-v0-20261130T120001Z', 'home/registry.json');
    writeFileSync(join(dataDir, 'backups', 'pre-migration', 'notes.txt'), 'not a copy');
    const chosen = chooseCopies(dataDir, '20261130T120000000Z');
    assert.deepEqual(
      chosen.map((c) => [c.store, c.version, c.stamp, c.files]),
      [
        ['home-registry', 0, '20261130T120001000Z', [join('home', 'registry.json')]],
        ['settings', 0, '20261130T120000000Z', ['settings.db']],
      ],
    );
    assert.ok(chosen[1]!.copy.endsWith('settings-v0-20261130T120000Z'));
    assert.equal(existsSync(join(dataDir, 'backups', 'rolled-back')), false);
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
});
