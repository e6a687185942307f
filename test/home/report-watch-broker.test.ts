/**
 * Over a real broker: a command the broker took but no device reported back
 * on is said so where it came from (src/home/report-watch.ts). A tester's
 * command during a broker restart was answered "Turned on ..." and lost: the
 * new broker took it before the device had subscribed again. Timing: each
 * test waits for the box's event, never for wall-clock time.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { startRig, waitFor, type Rig } from './harness.js';

interface Unreported {
  ids: string[];
  channel: string;
  text: string;
}

describe('devices that do not report back after a command', () => {
  let rig: Rig;
  const unreported = (): Unreported[] => rig.sdk.events('plugin.home.unreported') as Unreported[];

  before(async () => {
    rig = await startRig({ settings: { 'plugin.home.report_timeout_ms': 300 } });
  });
  after(async () => {
    await rig.close();
  });

  test('a device that stays silent: the reply as before, then the notice on the command\'s channel, said as it is; one that reports: nothing', async () => {
    rig.sim.mute.add('home/tv/set');
    try {
      // The standing light reports; its watch starts first, so it has been checked by the time the TV's notice comes.
      assert.equal((await rig.sdk.runInput('turn on the standing light')).response, 'Turned on the Standing Light.');
      assert.equal((await rig.sdk.runInput('turn off the tv')).response, 'Turned off the TV.');
      await rig.sdk.waitForPublished('plugin.home.unreported');
      assert.deepEqual(unreported().map((u) => u.ids), [['tv']], 'the standing light reported, the TV did not');
      assert.equal(unreported()[0]?.channel, 'console');
      const text = 'I asked to turn off the TV, but it has not reported back, so it may not have happened.';
      assert.equal(unreported()[0]?.text, text);
      const notice = () => rig.sdk.inputs.find((i) => i.opts?.meta?.device_unreported === true);
      await waitFor(() => notice()?.response !== undefined, 'the notice to be said');
      const said = notice();
      assert.equal(said?.channel, 'console');
      assert.equal(said?.response, text, 'said as it is: not a command, not to the LLM');
      assert.equal(said?.opts?.announcement, true);
      assert.equal(said?.level, 0, 'queued after the reply under way, not an interrupt of it (a tester\'s long LLM answer was cut)');
      assert.equal(rig.sdk.interrupts.length, 0);
    } finally {
      rig.sim.mute.delete('home/tv/set');
    }
  });

  test('the LLM\'s device_control tool is watched the same way; the stop button drops every watch without a word', async () => {
    const before = unreported().length;
    rig.sim.mute.add('home/tv/set');
    rig.sim.mute.add('home/standing_light/set');
    try {
      assert.equal((await rig.sdk.callTool('device_control', { device: 'TV', action: 'turn_on' })).error, undefined);
      rig.sdk.stop('button');
      assert.equal((await rig.sdk.callTool('device_control', { device: 'Standing Light', action: 'turn_off' })).error, undefined);
      await rig.sdk.waitForPublished('plugin.home.unreported', () => true, before + 1);
      assert.deepEqual(unreported().slice(before).map((u) => u.ids), [['standing_light']], 'the TV\'s watch was dropped by the stop');
    } finally {
      rig.sim.mute.delete('home/tv/set');
      rig.sim.mute.delete('home/standing_light/set');
    }
  });

  test('a notice that falls due while a yes/no question is open waits until the question is settled (spoken over it, the question ran out and the "no" said next was taken for a command)', async () => {
    const before = unreported().length;
    const interrupts = (): number => rig.sdk.inputs.filter((i) => i.opts?.meta?.device_unreported === true).length;
    const said = interrupts();
    await rig.sdk.runInput('lock the front door');
    rig.sim.mute.add('home/tv/set');
    try {
      assert.equal((await rig.sdk.runInput('turn on the tv')).response, 'Turned on the TV.');
      assert.match((await rig.sdk.runInput('unlock the front door')).response ?? '', /^Do you really want to unlock the Front Door\?/);
      await rig.sdk.waitForPublished('plugin.home.unreported', () => true, before + 1);
      assert.equal(interrupts(), said, 'held while the question is open');
      assert.match((await rig.sdk.runInput('no')).response ?? '', /^OK, I did not unlock the Front Door/);
      await waitFor(() => interrupts() === said + 1, 'the held notice once the question was settled');
    } finally {
      rig.sim.mute.delete('home/tv/set');
    }
  });

  test('a notice queued before a question opened and run while it waits is held again until the question is settled (a breaking tester\'s notice was the last thing said before the "yes" that unlocked the door)', async () => {
    // The Front Door is locked (the test before): unlocking it asks.
    assert.match((await rig.sdk.runInput('unlock the front door')).response ?? '', /^Do you really want to unlock the Front Door\?/);
    const text = 'I asked to turn on the TV, but it has not reported back, so it may not have happened.';
    const meta = { device_unreported: true, spoken: text };
    const count = (): number => rig.sdk.inputs.filter((i) => i.opts?.meta?.device_unreported === true && i.response === text).length;
    const said = count();
    await rig.sdk.injectInput('console', text, { announcement: true, meta });
    assert.equal(count(), said, 'not said while the question waits');
    assert.match((await rig.sdk.runInput('no')).response ?? '', /^OK, I did not unlock the Front Door/);
    await waitFor(() => count() === said + 1, 'the notice once the question was settled');
  });

  test('the tester\'s case: no device subscribed (the broker restarted and the device has not come back): the broker acknowledges, nothing arrives, and the box says so', async () => {
    const before = unreported().length;
    await rig.sim.stop();
    try {
      assert.equal((await rig.sdk.runInput('turn on the tv')).response, 'Turned on the TV.', 'the broker took it');
      await rig.sdk.waitForPublished('plugin.home.unreported', () => true, before + 1);
      assert.deepEqual(unreported().at(-1)?.ids, ['tv']);
    } finally {
      await rig.sim.start();
    }
  });
});
