/**
 * The timers plugin with a fake clock: tools, persistence across a restart
 * (SQLite in the data dir), expiry as an L3 interrupt answered locally by the
 * plugin's on_input handler (no LLM).
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { FakeClock } from '../../src/kernel/clock.js';
import { TimersPlugin, TimerService, TimerError, TimerAmbiguousError, formatDuration, expiryText } from '../../src/plugins/timers/index.js';
import { TIMERS_STORE } from '../../src/plugins/timers/timer-service.js';
import { FakeSdk } from '../support/fake-sdk.js';
import { silentLogger } from '../support/quiet.js';

describe('timers plugin', () => {
  const sdks: FakeSdk[] = [];
  after(() => {
    for (const s of sdks) s.cleanup();
  });

  test('durations are spoken in both languages', () => {
    assert.equal(formatDuration(11400, 'en'), '3 hours and 10 minutes');
    assert.equal(formatDuration(30, 'en'), '30 seconds');
    assert.equal(formatDuration(3661, 'en'), '1 hour, 1 minute and 1 second');
    assert.equal(formatDuration(11400, 'zh'), '3小时10分钟');
    assert.equal(expiryText({ id: 'x', duration_s: 30, started_at: 0, ends_at: 0, channel: 'speaker', lang: 'zh', state: 'fired' }), '30秒的计时器时间到了。');
  });

  test('set, status, cancel through the tools', async () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 1, 12, 0, 0));
    const sdk = new FakeSdk({ name: 'timers' });
    sdks.push(sdk);
    const plugin = new TimersPlugin({ clock });
    plugin.start(sdk);
    const set = await sdk.callTool('timer', { action: 'set', seconds: 90, name: 'pasta' }, { channel: 'speaker' });
    assert.equal((set.result as { seconds: number }).seconds, 90);
    await sdk.callTool('timer', { action: 'set', seconds: 600 });
    clock.advance(30_000);
    const status = (await sdk.callTool('timer', { action: 'status' })).result as { timers: Array<{ name?: string; remaining_s: number }> };
    assert.deepEqual(status.timers.map((t) => [t.name, t.remaining_s]), [['pasta', 60], [undefined, 570]]);
    const cancel = (await sdk.callTool('timer', { action: 'cancel', name: 'PASTA' })).result as { cancelled: unknown[] };
    assert.equal(cancel.cancelled.length, 1);
    clock.advance(120_000);
    assert.equal(sdk.interrupts.length, 0, 'a cancelled timer never fires');
    const bad = await sdk.callTool('timer', { action: 'set', seconds: 0 });
    assert.equal((bad.error as { code?: string }).code, 'TIMER_INVALID');
    const noLength = await sdk.callTool('timer', { action: 'set', name: 'tea' });
    assert.match(String((noLength.error as { message?: string }).message), /set needs seconds/);
    const all = (await sdk.callTool('timer', { action: 'cancel', all: true })).result as { cancelled: unknown[] };
    assert.equal(all.cancelled.length, 1);
    plugin.stop();
  });

  test('expiry raises an L3 interrupt on the timer channel, answered without the LLM', async () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 1, 12, 0, 0));
    const sdk = new FakeSdk({ name: 'timers' });
    sdks.push(sdk);
    const plugin = new TimersPlugin({ clock });
    plugin.start(sdk);
    await sdk.callTool('timer', { action: 'set', seconds: 30 }, { channel: 'speaker' });
    clock.advance(29_999);
    assert.equal(sdk.interrupts.length, 0);
    clock.advance(1);
    assert.equal(sdk.interrupts.length, 1);
    const irq = sdk.interrupts[0];
    assert.equal(irq?.level, 3);
    assert.equal(irq?.channel, 'speaker');
    assert.equal(irq?.opts?.meta?.timer_expired, true);
    await new Promise((r) => setImmediate(r));
    assert.equal(irq?.response, 'Your timer for 30 seconds is done.', 'the on_input handler short-circuits with the spoken text');
    assert.equal(plugin.service?.status().length, 0);
    plugin.stop();
  });

  test('timers survive a restart; one that fell due while off fires at start', async () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 1, 12, 0, 0));
    const sdk = new FakeSdk({ name: 'timers' });
    sdks.push(sdk);
    const dbPath = path.join(sdk.dataDir, 'timers.db');
    const first = new TimersPlugin({ clock, dbPath });
    first.start(sdk);
    await sdk.callTool('timer', { action: 'set', seconds: 60, name: 'tea' }, { channel: 'speaker' });
    await sdk.callTool('timer', { action: 'set', seconds: 3600, name: 'bread' }, { channel: 'console' });
    first.stop();
    clock.advance(120_000);
    assert.equal(sdk.interrupts.length, 0, 'a stopped plugin fires nothing');

    const sdk2 = new FakeSdk({ name: 'timers', dataDir: sdk.dataDir });
    const second = new TimersPlugin({ clock });
    second.start(sdk2);
    assert.deepEqual(second.service?.status().map((t) => t.name).sort(), ['bread', 'tea']);
    clock.advance(0);
    assert.equal(sdk2.interrupts.length, 1);
    assert.equal(sdk2.interrupts[0]?.text, 'Your tea timer is done.');
    assert.equal(sdk2.interrupts[0]?.channel, 'speaker');
    assert.deepEqual(second.service?.status().map((t) => [t.name, t.remaining_s]), [['bread', 3480]]);
    clock.advance(3_480_000);
    assert.equal(sdk2.interrupts.length, 2);
    assert.equal(sdk2.interrupts[1]?.channel, 'console');
    second.stop();
  });
});

describe('a timer whose channel is gone rings on the box', () => {
  test("a console timer that fell due while the box was off rings on the speaker when it starts with no console (a newcomer's --no-console)", async () => {
    const { mkdtempSync, rmSync } = await import('node:fs');
    const os = await import('node:os');
    const { ConfigRegistry } = await import('../../src/config/registry.js');
    const { Kernel } = await import('../../src/kernel/kernel.js');
    const { Cap } = await import('../../src/kernel/output-types.js');
    const { FakeProvider } = await import('../support/fake-provider.js');
    const dir = mkdtempSync(path.join(os.tmpdir(), 'timers-gone-'));
    const clock = new FakeClock(Date.UTC(2026, 0, 1, 12, 0, 0));
    const dbPath = path.join(dir, 'timers.db');
    const before = new TimerService({ dbPath, clock, log: silentLogger, onExpire: () => undefined });
    before.start();
    before.set({ seconds: 60, name: 'tea', channel: 'console' });
    before.stop();
    clock.advance(120_000);
    const settings = new ConfigRegistry(':memory:', { env: {} });
    const provider = new FakeProvider([]);
    const kernel = new Kernel({ settings, dataDir: dir, provider, clock, log: silentLogger });
    const said: Array<[string, string]> = [];
    kernel.registerOutputChannel('_test_', 'speaker', Cap.Text, 'the box speaker', (m) => void said.push(['speaker', m.content]));
    kernel.use(new TimersPlugin({ clock, dbPath }));
    try {
      await kernel.start();
      clock.advance(0);
      const deadline = Date.now() + 10_000;
      while (!said.length && Date.now() < deadline) await new Promise((r) => setTimeout(r, 5));
      assert.deepEqual(said, [['speaker', 'Your tea timer is done.']]);
      assert.equal(provider.requests.length, 0, 'the ring is said, not asked of the LLM');
      // plugin.timers.channel naming no channel (a tester's "nosuch") rings on the speaker too, not nowhere.
      settings.set('plugin.timers.channel', 'nosuch');
      const timers = kernel.host.get('timers') as unknown as { service: TimerService };
      timers.service.set({ seconds: 5, name: 'egg', channel: 'nosuch' });
      clock.advance(5_000);
      const until = Date.now() + 10_000;
      while (said.length < 2 && Date.now() < until) await new Promise((r) => setTimeout(r, 5));
      assert.deepEqual(said[1], ['speaker', 'Your egg timer is done.']);
    } finally {
      await kernel.stop();
      settings.close();
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('timer service: pause, resume, add and take off time, which timer', () => {
  const log = silentLogger;

  test('pause keeps what is left (also across a restart); resume counts down from there', async () => {
    const { mkdtempSync, rmSync } = await import('node:fs');
    const os = await import('node:os');
    const dir = mkdtempSync(path.join(os.tmpdir(), 'timers-pause-'));
    const clock = new FakeClock(Date.UTC(2026, 0, 1, 12, 0, 0));
    const fired: string[] = [];
    const open = (): TimerService => {
      const s = new TimerService({ dbPath: path.join(dir, 'timers.db'), clock, log, onExpire: (t) => fired.push(t.name ?? t.id) });
      s.start();
      return s;
    };
    let svc = open();
    svc.set({ seconds: 600, name: 'pasta', channel: 'speaker' });
    clock.advance(100_000);
    const p = svc.pause({ name: 'pasta' });
    assert.equal(p?.state, 'paused');
    assert.equal(p?.paused_remaining_ms, 500_000);
    clock.advance(3_600_000);
    assert.deepEqual(fired, [], 'a paused timer does not fire');
    assert.deepEqual(svc.status().map((t) => [t.name, t.state, t.remaining_s]), [['pasta', 'paused', 500]]);
    assert.equal(svc.pause({ name: 'pasta' }), undefined, 'only a running timer can be paused');
    svc.stop();
    svc = open();
    assert.deepEqual(svc.status().map((t) => [t.state, t.remaining_s]), [['paused', 500]], 'still paused after a restart');
    clock.advance(60_000);
    const r = svc.resume({});
    assert.equal(r?.remaining_s, 500);
    clock.advance(499_999);
    assert.deepEqual(fired, []);
    clock.advance(1);
    assert.deepEqual(fired, ['pasta']);
    svc.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('add and take off time move the end (running or paused); never below 1 second', () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 1, 12, 0, 0));
    const fired: string[] = [];
    const svc = new TimerService({ dbPath: ':memory:', clock, log, onExpire: (t) => fired.push(t.name ?? t.id) });
    svc.start();
    svc.set({ seconds: 300, name: 'tea', channel: 'speaker' });
    assert.equal(svc.adjust({ name: 'tea' }, 120)?.remaining_s, 420);
    clock.advance(300_000);
    assert.deepEqual(fired, [], 'the old end passed: not due any more');
    assert.equal(svc.adjust({}, -60)?.remaining_s, 60);
    assert.throws(() => svc.adjust({}, -60), (e: unknown) => e instanceof TimerError, 'taking off all that is left is refused');
    assert.equal(svc.status()[0]?.remaining_s, 60, 'and nothing changed');
    svc.pause({});
    assert.equal(svc.adjust({}, 30)?.remaining_s, 90);
    svc.resume({});
    clock.advance(89_999);
    assert.deepEqual(fired, []);
    clock.advance(1);
    assert.deepEqual(fired, ['tea']);
    svc.stop();
  });

  test('"the timer" with two timers is never one of them: TimerAmbiguousError, nothing changed', () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 1, 12, 0, 0));
    const svc = new TimerService({ dbPath: ':memory:', clock, log, onExpire: () => {} });
    svc.start();
    svc.set({ seconds: 600, name: 'pasta', channel: 'speaker' });
    svc.set({ seconds: 300, channel: 'speaker' });
    for (const op of [() => svc.cancel({}), () => svc.pause({}), () => svc.adjust({}, 60)]) {
      assert.throws(op, (e: unknown) => e instanceof TimerAmbiguousError && e.candidates.length === 2);
    }
    assert.deepEqual(svc.status().map((t) => [t.state, t.remaining_s]), [['running', 300], ['running', 600]]);
    assert.equal(svc.cancel({ seconds: 300 })[0]?.duration_s, 300, 'by the length it was set for');
    assert.equal(svc.cancel({ name: 'Pasta Timer' })[0]?.name, 'pasta', 'by name, case and a trailing "timer" ignored');
    svc.stop();
  });

  test('a version 1 store (before paused timers) is migrated to version 2 and its timers kept', async () => {
    const { mkdtempSync, rmSync } = await import('node:fs');
    const os = await import('node:os');
    const Database = (await import('better-sqlite3')).default;
    const dir = mkdtempSync(path.join(os.tmpdir(), 'timers-v1-'));
    const file = path.join(dir, 'timers.db');
    const db = new Database(file);
    db.exec(`CREATE TABLE timers (id TEXT PRIMARY KEY, name TEXT, duration_s REAL NOT NULL, started_at INTEGER NOT NULL,
      ends_at INTEGER NOT NULL, channel TEXT NOT NULL, lang TEXT NOT NULL DEFAULT 'en', state TEXT NOT NULL)`);
    const t0 = Date.UTC(2026, 0, 1, 12, 0, 0);
    db.prepare(`INSERT INTO timers VALUES ('a', 'bread', 3600, ?, ?, 'speaker', 'en', 'running')`).run(t0, t0 + 3_600_000);
    db.pragma('user_version = 1');
    db.close();
    const svc = new TimerService({ dbPath: file, dataDir: dir, clock: new FakeClock(t0 + 600_000), log, onExpire: () => {} });
    svc.start();
    assert.deepEqual(svc.status().map((t) => [t.name, t.remaining_s]), [['bread', 3000]]);
    assert.equal(svc.pause({})?.paused_remaining_ms, 3_000_000);
    svc.stop();
    const check = new Database(file, { readonly: true });
    assert.equal(check.pragma('user_version', { simple: true }), TIMERS_STORE.version);
    check.close();
    rmSync(dir, { recursive: true, force: true });
  });

  test('the timer tool pauses, resumes and changes the length; an ambiguous call fails and changes nothing', async () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 1, 12, 0, 0));
    const sdk = new FakeSdk({ name: 'timers' });
    const plugin = new TimersPlugin({ clock, dbPath: ':memory:' });
    plugin.start(sdk);
    await sdk.callTool('timer', { action: 'set', seconds: 600, name: 'pasta' });
    await sdk.callTool('timer', { action: 'set', seconds: 300 });
    const amb = await sdk.callTool('timer', { action: 'pause' });
    assert.equal((amb.error as { code?: string }).code, 'TIMER_AMBIGUOUS');
    assert.ok(plugin.service?.status().every((t) => t.state === 'running'));
    const paused = (await sdk.callTool('timer', { action: 'pause', name: 'pasta' })).result as { state: string };
    assert.equal(paused.state, 'paused');
    const added = (await sdk.callTool('timer', { action: 'add_time', name: 'pasta', seconds: 60 })).result as { remaining_s: number };
    assert.equal(added.remaining_s, 660);
    const status = (await sdk.callTool('timer', { action: 'status' })).result as { timers: Array<{ name?: string; state: string }> };
    assert.deepEqual(status.timers.map((t) => [t.name, t.state]), [[undefined, 'running'], ['pasta', 'paused']]);
    plugin.stop();
    sdk.cleanup();
  });
});
