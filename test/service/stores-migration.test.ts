/**
 * Versioned stores (issue 13): the stores written by the release at commit
 * e216bba (test/fixtures/stores-e216bba, made by its make.sh with that
 * release's code) open with today's code, every memory, setting, device and
 * timer is found, each store is at its current version afterwards, a copy of
 * the old file is kept in backups/pre-migration, and a store written by a
 * newer release is refused with an error naming the versions.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, existsSync, mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import { ConfigRegistry, SETTINGS_STORE } from '../../src/config/registry.js';
import { registerCoreSettings } from '../../src/kernel/core-settings.js';
import { FakeClock } from '../../src/kernel/clock.js';
import { RUN_LOG_STORE, SqliteRunLog } from '../../src/kernel/run-log.js';
import { StoreMigrationError, StoreTooNewError, migrateSqlite, readVersionedJson, type SqliteStoreSpec } from '../../src/kernel/store-version.js';
import { MEMORY_STORE, openMemoryDb } from '../../src/memory/db.js';
import { MemorySystem } from '../../src/memory/index.js';
import { registerProviderSettings } from '../../src/providers/manager.js';
import { registerServiceSettings } from '../../src/service/settings.js';
import { HOME_SETTINGS } from '../../src/home/index.js';
import { DeviceRegistry, REGISTRY_STORE } from '../../src/home/registry.js';
import { VOICE_SETTINGS } from '../../src/voice/settings.js';
import { TIMERS_STORE, TimerService } from '../../src/plugins/timers/timer-service.js';
import { silentLogger } from '../support/quiet.js';
import { scrubBackups } from '../../src/service/forgetting.js';

const FIXTURE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'stores-e216bba');
/** The fixture's clocks started here (generate.ts T0). */
const T0 = Date.UTC(2026, 10, 30, 12, 0, 0);
/** Copy names use this wall time. */
const NOW = Date.UTC(2026, 11, 1, 3, 4, 5);

function fixtureCopy(): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'ha-stores-'));
  cpSync(path.join(FIXTURE, 'data'), dir, { recursive: true });
  return dir;
}

function userVersion(file: string): number {
  const db = new Database(file, { readonly: true, fileMustExist: true });
  try {
    return db.pragma('user_version', { simple: true }) as number;
  } finally {
    db.close();
  }
}

function openSettings(dataDir: string): ConfigRegistry {
  const s = new ConfigRegistry(path.join(dataDir, 'settings.db'), { env: {}, now: () => NOW });
  registerCoreSettings(s);
  registerServiceSettings(s);
  registerProviderSettings(s);
  for (const d of HOME_SETTINGS) s.register(d);
  for (const d of VOICE_SETTINGS) s.register(d);
  return s;
}

/** The single copy of `store` at `version` under backups/pre-migration, with the path inside it. */
function preMigrationCopy(dataDir: string, store: string, version: number, rel: string, stamp = '20261201T030405000Z'): string {
  const root = path.join(dataDir, 'backups', 'pre-migration');
  const dirs = readdirSync(root).filter((d) => d.startsWith(`${store}-v${version}-`));
  assert.equal(dirs.length, 1, `one copy of ${store} in ${readdirSync(root).join(', ')}`);
  assert.match(dirs[0]!, new RegExp(`^${store}-v${version}-${stamp}$`));
  const file = path.join(root, dirs[0]!, rel);
  assert.ok(existsSync(file), file);
  return file;
}

test('the fixture records the commit that wrote it', () => {
  assert.equal(readFileSync(path.join(FIXTURE, 'COMMIT'), 'utf8').trim(), 'e216bbaa1bcbe15229c53e6f3d02ba252c06d5ae');
  // Read the header (user_version: 4 bytes big-endian at offset 60): opening the WAL files would add -wal/-shm files to the fixture.
  for (const f of ['memory.db', 'settings.db', 'runlog.db', 'timers.db']) assert.equal(readFileSync(path.join(FIXTURE, 'data', f)).readUInt32BE(60), 0, `${f} is unversioned`);
  assert.equal('schema_version' in JSON.parse(readFileSync(path.join(FIXTURE, 'data', 'home', 'registry.json'), 'utf8')), false);
});

test('e216bba stores open with today\'s code: every setting, memory, run event, timer and device is found', async (t) => {
  const dir = fixtureCopy();
  t.after(() => rmSync(dir, { recursive: true, force: true }));

  // settings.db
  const settings = openSettings(dir);
  assert.equal(settings.get('core.llm.sources.ollama.model'), 'qwen2.5:7b');
  assert.equal(settings.get('core.llm.sources.ollama.base_url'), 'http://192.168.1.20:11434');
  assert.equal(settings.get('plugin.voice.language'), 'zh');
  assert.equal(settings.get('plugin.voice.silence_ms'), 650);
  assert.deepEqual(settings.get('plugin.home.risky_devices'), ['lock.front_door']);
  assert.equal(settings.list('core.llm.sources.ollama.model')[0]?.source, 'stored');

  // memory.db: the window, the documents and the graph
  const memory = new MemorySystem({ dataDir: dir, settings, log: silentLogger, clock: { now: () => T0 + 3_600_000 }, knowledgeSeedDir: path.join(dir, 'no-seeds') });
  const ids = memory.timeline(1_000_000).map((e) => e.id);
  assert.deepEqual(ids, ['m1-u', 'm1-a', 'm2-u', 'm2-a', 'm3-u', 'm3-a', 'm4-u', 'm4-a']);
  const piano = memory.timeline(1_000_000).find((e) => e.id === 'm1-u');
  assert.equal(piano?.input, '我女儿小雨每周三下午去学钢琴');
  assert.equal(piano?.speaker, 'Anna');
  assert.ok(memory.search('牛奶什么时候过期', 5).some((h) => h.event_id === 'm3-u' || h.event_id === 'm3-a'), 'Chinese recall finds the milk');
  assert.ok(memory.search('when is the boiler service due', 5).some((h) => h.kind === 'document' && h.text.includes('Heatwise')));
  assert.ok(memory.search('奶奶的生日', 5).some((h) => h.kind === 'document' && h.text.includes('桂花糕')));
  const stats = memory.introspect();
  assert.equal(stats.documents, 2);
  const recalled = await memory.api().recall('小雨', 5);
  assert.ok(recalled.some((m) => m.kind === 'relation' && m.text === '小雨 学习 钢琴'), JSON.stringify(recalled));
  const biscuit = await memory.api().recall('Biscuit', 5);
  assert.ok(biscuit.some((m) => m.kind === 'relation' && m.text === 'Biscuit allergic_to chicken'), JSON.stringify(biscuit));
  memory.close();
  settings.close();

  // runlog.db
  const runLog = new SqliteRunLog(path.join(dir, 'runlog.db'), { now: () => NOW });
  const turn = runLog.turn('turn-1');
  assert.deepEqual(turn.map((e) => e.type), ['turn.started', 'context.projected', 'llm.requested', 'tool.executed', 'output', 'turn.finished']);
  const finished = turn.at(-1);
  assert.ok(finished?.type === 'turn.finished' && finished.reply === '好的，厨房灯已打开。');
  runLog.close();

  // timers.db: the pending timer is armed again, the cancelled one is not
  const clock = new FakeClock(T0 + 3_600_000);
  const fired: string[] = [];
  const timers = new TimerService({ dbPath: path.join(dir, 'timers.db'), clock, log: silentLogger, onExpire: (x) => fired.push(x.name ?? x.id) });
  timers.start();
  const running = timers.status();
  assert.deepEqual(running.map((x) => x.name), ['pasta']);
  assert.equal(running[0]?.ends_at, T0 + 6 * 24 * 3600 * 1000);
  assert.equal(running[0]?.remaining_s, 6 * 24 * 3600 - 3600);
  clock.advance(6 * 24 * 3600 * 1000);
  assert.deepEqual(fired, ['pasta']);
  timers.stop();

  // home/registry.json
  const registry = new DeviceRegistry({ storePath: path.join(dir, 'home', 'registry.json'), dataDir: dir, log: silentLogger });
  registry.load();
  const views = new Map(registry.views().map((v) => [v.entity.id, v]));
  assert.deepEqual([...views.keys()].sort(), ['front_door', 'kitchen_light']);
  assert.equal(views.get('kitchen_light')?.entity.name, 'Kitchen Light');
  assert.equal(views.get('kitchen_light')?.entity.area, 'Kitchen');
  assert.equal(views.get('kitchen_light')?.state.state, 'on');
  assert.equal(views.get('kitchen_light')?.state.brightness, 128);
  assert.equal(views.get('front_door')?.entity.component, 'lock');
  assert.equal(views.get('front_door')?.state.state, 'locked');
  registry.flush();

  // Versions after opening.
  assert.equal(userVersion(path.join(dir, 'settings.db')), SETTINGS_STORE.version);
  assert.equal(userVersion(path.join(dir, 'memory.db')), MEMORY_STORE.version);
  assert.equal(userVersion(path.join(dir, 'runlog.db')), RUN_LOG_STORE.version);
  assert.equal(userVersion(path.join(dir, 'timers.db')), TIMERS_STORE.version);
  const reg = JSON.parse(readFileSync(path.join(dir, 'home', 'registry.json'), 'utf8')) as { schema_version: number; registry: { discovery: Record<string, string> } };
  assert.equal(reg.schema_version, REGISTRY_STORE.version);
  assert.deepEqual(Object.keys(reg.registry.discovery).sort(), ['homeassistant/light/kitchen_light/config', 'homeassistant/lock/front_door/config']);
});

test('opening an older store keeps a copy of it first, and only once', async (t) => {
  const dir = fixtureCopy();
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const settings = openSettings(dir);
  settings.set('plugin.voice.language', 'en'); // a change after the migration does not reach the copy
  settings.close();
  const copy = preMigrationCopy(dir, 'settings', 0, 'settings.db');
  assert.equal(userVersion(copy), 0);
  const db = new Database(copy, { readonly: true });
  assert.equal((db.prepare(`SELECT value FROM settings WHERE key = 'plugin.voice.language'`).get() as { value: string }).value, '"zh"');
  db.close();

  // The registry's copy is named with the wall time (Date.now), like every store's in the service.
  const registry = new DeviceRegistry({ storePath: path.join(dir, 'home', 'registry.json'), dataDir: dir, log: silentLogger });
  registry.load();
  const regCopy = preMigrationCopy(dir, 'home-registry', 0, path.join('home', 'registry.json'), '\\d{8}T\\d{9}Z');
  assert.equal(readFileSync(regCopy, 'utf8'), readFileSync(path.join(FIXTURE, 'data', 'home', 'registry.json'), 'utf8'));

  openMemoryDb(dir, 'memory.db', { now: () => NOW }).close();
  preMigrationCopy(dir, 'memory', 0, 'memory.db');

  // At the current version: nothing more is copied.
  openSettings(dir).close();
  openMemoryDb(dir, 'memory.db', { now: () => NOW + 5000 }).close();
  new DeviceRegistry({ storePath: path.join(dir, 'home', 'registry.json'), dataDir: dir, log: silentLogger }).load();
  const copies = readdirSync(path.join(dir, 'backups', 'pre-migration')).sort();
  assert.equal(copies.length, 3, copies.join(', '));
  assert.match(copies[0]!, /^home-registry-v0-\d{8}T\d{9}Z$/);
  assert.deepEqual(copies.slice(1), ['memory-v0-20261201T030405000Z', 'settings-v0-20261201T030405000Z']);
});

test('a store written by a newer release is refused, naming the store and both versions, and left untouched', async (t) => {
  const dir = fixtureCopy();
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  for (const f of ['settings.db', 'memory.db', 'runlog.db', 'timers.db']) {
    const db = new Database(path.join(dir, f));
    db.pragma('user_version = 7');
    db.close();
  }
  const tooNew = (store: string, file: string, supported = 1) => (err: unknown) => {
    assert.ok(err instanceof StoreTooNewError, String(err));
    assert.equal(err.code, 'STORE_TOO_NEW');
    assert.equal(err.store, store);
    assert.equal(err.found, 7);
    assert.equal(err.supported, supported);
    assert.equal(err.file, file);
    assert.match(err.message, new RegExp(`the ${store} store .* has schema version 7, but this release supports version ${supported} at most`));
    return true;
  };
  assert.throws(() => new ConfigRegistry(path.join(dir, 'settings.db'), { env: {} }), tooNew('settings', path.join(dir, 'settings.db')));
  assert.throws(() => openMemoryDb(dir), tooNew('memory', path.join(dir, 'memory.db'), MEMORY_STORE.version));
  assert.throws(() => new SqliteRunLog(path.join(dir, 'runlog.db')), tooNew('runlog', path.join(dir, 'runlog.db')));
  const timers = new TimerService({ dbPath: path.join(dir, 'timers.db'), clock: new FakeClock(T0), log: silentLogger, onExpire: () => {} });
  assert.throws(() => timers.start(), tooNew('timers', path.join(dir, 'timers.db'), TIMERS_STORE.version));
  for (const f of ['settings.db', 'memory.db', 'runlog.db', 'timers.db']) assert.equal(userVersion(path.join(dir, f)), 7);

  const regFile = path.join(dir, 'home', 'registry.json');
  const newer = JSON.stringify({ schema_version: 3, registry: { discovery: {}, topics: {} } });
  writeFileSync(regFile, newer);
  const registry = new DeviceRegistry({ storePath: regFile, dataDir: dir, log: silentLogger });
  assert.throws(() => registry.load(), (err: unknown) => err instanceof StoreTooNewError && err.store === 'home-registry' && err.found === 3 && err.supported === 1);
  registry.flush();
  assert.equal(readFileSync(regFile, 'utf8'), newer);
  assert.equal(existsSync(path.join(dir, 'backups')), false, 'no copies of refused stores');
});

test('a failing migration step leaves the store as it was; the copy stays', (t) => {
  const dir = mkdtempSync(path.join(tmpdir(), 'ha-stores-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, 'things.db');
  const v1: SqliteStoreSpec = { store: 'things', version: 1, create: (db) => db.exec('CREATE TABLE things(name TEXT)'), migrations: [{ to: 1, description: 'create', up: (db) => db.exec('CREATE TABLE things(name TEXT)') }] };
  const db = new Database(file);
  assert.deepEqual(migrateSqlite(db, v1, { file }), { store: 'things', file, from: 0, to: 1, created: true });
  db.prepare(`INSERT INTO things VALUES ('小雨')`).run();
  db.close();
  const v3: SqliteStoreSpec = {
    ...v1,
    version: 3,
    migrations: [
      ...v1.migrations,
      { to: 2, description: 'add a column', up: (d) => d.exec('ALTER TABLE things ADD COLUMN area TEXT') },
      { to: 3, description: 'broken', up: () => { throw new Error('step 3 broke'); } },
    ],
  };
  const again = new Database(file);
  assert.throws(() => migrateSqlite(again, v3, { file }, { now: () => NOW }), (err: unknown) => {
    assert.ok(err instanceof StoreMigrationError);
    assert.match(err.message, /migrating from version 1 to 3 failed: step 3 broke; the store was not changed/);
    assert.ok(err.backup?.endsWith(path.join('pre-migration', 'things-v1-20261201T030405000Z')));
    return true;
  });
  assert.equal(again.pragma('user_version', { simple: true }), 1);
  assert.deepEqual(again.prepare('SELECT * FROM things').all(), [{ name: '小雨' }], 'the column added by step 2 was rolled back');
  again.close();

  // A spec with a gap is a programmer error.
  assert.throws(() => migrateSqlite(new Database(':memory:'), { ...v1, version: 2 }, { file: ':memory:' }), /needs exactly one migration to version 2/);
  // JSON: a bad version field is refused, not guessed.
  assert.throws(() => readVersionedJson('{"schema_version":"1"}', REGISTRY_STORE, { file: 'x.json' }), StoreMigrationError);
});

const FIXTURE_V2 = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', 'fixtures', 'memory-v2-d2797a3');

test('a version-2 memory store (d2797a3) opens at the current version (4): everything found, versions, candidates and forgetting work on it, its copy is scrubbed too', (t) => {
  assert.equal(readFileSync(path.join(FIXTURE_V2, 'COMMIT'), 'utf8').trim(), 'd2797a387d66fabe4a6cc5257a2cb83dcf6fb0f3');
  assert.equal(readFileSync(path.join(FIXTURE_V2, 'data', 'memory.db')).readUInt32BE(60), 2, 'the fixture is at version 2');
  const dir = mkdtempSync(path.join(tmpdir(), 'ha-stores-v2-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  cpSync(path.join(FIXTURE_V2, 'data'), dir, { recursive: true });
  let report: { from: number; to: number; backup?: string } | undefined;
  openMemoryDb(dir, 'memory.db', { now: () => NOW, onMigrated: (r) => (report = r) }).close();
  assert.deepEqual([report?.from, report?.to], [2, MEMORY_STORE.version]);
  const copy = preMigrationCopy(dir, 'memory', 2, 'memory.db');
  assert.equal(userVersion(copy), 2);
  assert.equal(userVersion(path.join(dir, 'memory.db')), MEMORY_STORE.version);
  const memory = new MemorySystem({ dataDir: dir, settings: openSettings(dir), log: silentLogger, clock: { now: () => T0 + 3_600_000 }, knowledgeSeedDir: path.join(dir, 'no-seeds') });
  try {
    // Everything the version-2 release stored is found.
    assert.deepEqual(memory.timeline(1_000_000).map((e) => e.id), ['t4:user', 't4:agent', 't5:user', 't5:agent']);
    assert.ok(memory.search('vacuum cleaner Miso', 5).some((h) => h.kind === 'document' && h.speaker === 'Ben'));
    const facts = (memory.db.prepare('SELECT id FROM relations').pluck().all() as number[]).map((id) => memory.graph.relation(id)!).map((r) => `${r.source_name} ${r.relation_type} ${r.target_name} (${r.owner})`);
    assert.deepEqual(facts.sort(), ['Anna favourite colour teal (Anna)', 'Anna gym locker code plovrastic (Anna)', 'Anna lives_in Lisbon (Anna)', 'Ben likes sailing (Ben)']);
    assert.deepEqual(memory.social.list().map((p) => p.name).sort(), ['Anna', 'Ben']);
    // The version-3 tables work: a trait set again keeps the old value; a sensitive find waits.
    memory.social.setTrait('Anna', 'favourite colour', 'amber');
    assert.deepEqual(memory.graph.versionsFrom(memory.graph.resolve('Anna')!.id).map((v) => v.target_name), ['teal']);
    assert.deepEqual(memory.holdSensitive([{ subject: 'Ben', relation: 'takes', object: 'insulin', owner: 'Ben' }], 'rules'), []);
    assert.equal(memory.candidates('Ben').length, 1);
    // Forgetting on the migrated store, and in the copy kept before the migration.
    assert.ok(readFileSync(copy).toString('latin1').includes('plovrastic'));
    const r = memory.forget({ about: 'gym locker code' });
    assert.deepEqual([r.documents, r.relations], [2, 1], 'the turn (what Anna said and the reply) and the fact');
    assert.ok(r.rareWords.includes('plovrastic'), r.rareWords.join(','));
    assert.deepEqual(scrubBackups(dir, r.rareWords), { scrubbed: 1, removed: 0 });
    for (const f of readdirSync(dir).filter((x) => x.startsWith('memory.db'))) assert.ok(!readFileSync(path.join(dir, f)).toString('latin1').includes('plovrastic'), f);
    assert.ok(!readFileSync(copy).toString('latin1').includes('plovrastic'), 'the pre-migration copy no longer holds it');
    const old = new Database(copy, { readonly: true });
    try {
      assert.equal(old.pragma('integrity_check', { simple: true }), 'ok');
      assert.equal(old.prepare("SELECT count(*) FROM docs WHERE input LIKE '%Lisbon%'").pluck().get(), 1, 'the rest of the copy is kept');
    } finally {
      old.close();
    }
  } finally {
    memory.close();
  }
});
