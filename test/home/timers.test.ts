/**
 * The timers plugin with a fake clock: tools, persistence across a restart
 * (SQLite in the data dir), expiry as an L3 interrupt answered locally by the
 * plugin's on_input handler (no LLM).
 */
import { after, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { FakeClock } from '../../src/kernel/clock.js';
import { TimersPlugin, formatDuration, expiryText } from '../../src/plugins/timers/index.js';
import { FakeSdk } from '../support/fake-sdk.js';

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
    const set = await sdk.callTool('timer_set', { seconds: 90, name: 'pasta' }, { channel: 'speaker' });
    assert.equal((set.result as { seconds: number }).seconds, 90);
    await sdk.callTool('timer_set', { seconds: 600 });
    clock.advance(30_000);
    const status = (await sdk.callTool('timer_status', {})).result as { timers: Array<{ name?: string; remaining_s: number }> };
    assert.deepEqual(status.timers.map((t) => [t.name, t.remaining_s]), [['pasta', 60], [undefined, 570]]);
    const cancel = (await sdk.callTool('timer_cancel', { name: 'PASTA' })).result as { cancelled: unknown[] };
    assert.equal(cancel.cancelled.length, 1);
    clock.advance(120_000);
    assert.equal(sdk.interrupts.length, 0, 'a cancelled timer never fires');
    const bad = await sdk.callTool('timer_set', { seconds: 0 });
    assert.equal((bad.error as { code?: string }).code, 'TIMER_INVALID');
    const all = (await sdk.callTool('timer_cancel', { all: true })).result as { cancelled: unknown[] };
    assert.equal(all.cancelled.length, 1);
    plugin.stop();
  });

  test('expiry raises an L3 interrupt on the timer channel, answered without the LLM', async () => {
    const clock = new FakeClock(Date.UTC(2026, 0, 1, 12, 0, 0));
    const sdk = new FakeSdk({ name: 'timers' });
    sdks.push(sdk);
    const plugin = new TimersPlugin({ clock });
    plugin.start(sdk);
    await sdk.callTool('timer_set', { seconds: 30 }, { channel: 'speaker' });
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
    await sdk.callTool('timer_set', { seconds: 60, name: 'tea' }, { channel: 'speaker' });
    await sdk.callTool('timer_set', { seconds: 3600, name: 'bread' }, { channel: 'console' });
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
