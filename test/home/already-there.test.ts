/**
 * A risky action on a device whose last report already puts it where the
 * action would leave it (src/home/local-intents.ts STATE_AFTER): the box says
 * so, asks nothing and sends nothing. A newcomer's "unlock the front door" on
 * an unlocked door asked for a yes and sent UNLOCK. A cover counts as open
 * only fully open: a gate half open is still opened (after its question).
 * (The device simulator answers only the fixture home's devices; the gate's
 * command is read from the plugin's command events.)
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { lockFrontDoor, reportState, startRig, waitFor, type Rig } from './harness.js';

describe('a risky action on a device already there', () => {
  let rig: Rig;
  const said = async (text: string): Promise<string | undefined> => (await rig.sdk.runInput(text)).response;

  before(async () => {
    rig = await startRig({ plugin: { matchIntent: undefined } });
    // A gate that reports its position (the fixture home's covers report only open/closed).
    await rig.sim.publish('homeassistant/cover/side_gate/config', JSON.stringify({ uniq_id: 'side_gate', name: 'Side Gate', cmd_t: 'home/side_gate/set', stat_t: 'home/side_gate/state', pos_t: 'home/side_gate/position', dev_cla: 'gate' }));
    await rig.sim.publish('home/side_gate/state', 'open');
    await rig.sim.publish('home/side_gate/position', '40');
    await waitFor(() => rig.plugin.registry?.view('side_gate')?.state.position === 40, 'the side gate at 40');
  });
  after(async () => {
    await rig.close();
  });

  test('an unlocked door, an open garage door: said so, not asked, nothing sent; locked again, it asks', async () => {
    await reportState(rig, 'front_door', 'unlocked');
    assert.equal(await said('unlock the front door'), 'The Front Door is already unlocked.');
    assert.equal(await said('把Front Door解锁'), 'Front Door已经解锁了。');
    await reportState(rig, 'garage_door', 'open');
    assert.equal(await said('open the garage door'), 'The Garage Door is already open.');
    assert.equal(await said('unlock the front door and open the garage door'), 'The Front Door is already unlocked. The Garage Door is already open.');
    await new Promise((res) => setTimeout(res, 150));
    assert.deepEqual(rig.sim.commands, [], 'nothing sent');
    assert.equal(rig.plugin.gate?.decisions.length ?? 0, 0, 'nothing asked');
    await lockFrontDoor(rig);
    assert.match((await said('unlock the front door')) ?? '', /^Do you really want to unlock the Front Door\?/);
    assert.match((await said('no')) ?? '', /did not unlock/);
  });

  test('a gate half open (position 40) is opened after its question, not "already open"', async () => {
    assert.equal(rig.plugin.registry?.view('side_gate')?.state.state, 'open');
    assert.match((await said('open the side gate')) ?? '', /^Do you really want to open the Side Gate\?/);
    const before = rig.sdk.events('plugin.home.command').length;
    assert.equal(await said('yes'), 'Opened the Side Gate.');
    assert.deepEqual(rig.sdk.events('plugin.home.command').slice(before), [{ topic: 'home/side_gate/set', payload: 'OPEN' }]);
  });
});
