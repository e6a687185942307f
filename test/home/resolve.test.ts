/**
 * The one entity resolver (src/home/resolve.ts) on the shared test home
 * (../shared/fixtures/home, announced on a real Mosquitto by the device
 * simulator): each rule on its own, then the same rules through both users,
 * the local intents (real matcher) and the LLM's device tools. A name that
 * fits several devices asks which and is never widened to all of them; a
 * name that fits nothing is not found, never the nearest other device.
 */
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { resolveTarget, targetsOf, type Resolution } from '../../src/home/resolve.js';
import type { Entity } from '../../src/home/entities.js';
import { matchIntent } from '../../src/intents/index.js';
import { startRig, waitFor, type Rig } from './harness.js';

const OFFICE_CEILING = '0x00158d0001a2b3c4_light_zigbee2mqtt';
const DESK_LAMP = '0x00158d0001a2b3c5_light_zigbee2mqtt';

/** The MQTT commands the plugin published so far (its plugin.home.command events, sent after the broker's acknowledgement). */
function sent(rig: Rig): Array<{ topic: string; payload: string }> {
  return rig.sdk.events('plugin.home.command') as Array<{ topic: string; payload: string }>;
}

/** Ids of what a resolution addresses, or its candidates, sorted. */
function ids(r: Resolution): string[] {
  return (r.kind === 'ambiguous' ? r.candidates : targetsOf(r)).map((e) => e.id).sort();
}

describe('one entity resolver', () => {
  let rig: Rig;
  let entities: () => Entity[];

  before(async () => {
    rig = await startRig({ plugin: { matchIntent } });
    entities = () => rig.plugin.registry?.entities() ?? [];
  });
  after(async () => {
    await rig.close();
  });
  beforeEach(() => rig.sim.clear());

  test('rule 1: an exact name or alias (case and spacing ignored), or the registry id', () => {
    const byName = resolveTarget(entities(), { name: 'kitchen  LIGHTS' });
    assert.equal(byName.kind, 'one');
    assert.deepEqual(ids(byName), ['kitchen_light']);
    assert.equal(byName.kind === 'one' && byName.by, 'name');
    const byId = resolveTarget(entities(), { name: DESK_LAMP });
    assert.equal(byId.kind === 'one' && byId.by, 'id');
    assert.deepEqual(ids(byId), [DESK_LAMP]);
    // A leading "the" is not part of the name.
    assert.deepEqual(ids(resolveTarget(entities(), { name: 'the Standing Light' })), ['standing_light']);
  });

  test('rule 2: a partial name that fits exactly one device is that device; several are ambiguous, never widened', () => {
    const ceiling = resolveTarget(entities(), { name: 'ceiling' });
    assert.equal(ceiling.kind === 'one' && ceiling.by, 'partial');
    assert.deepEqual(ids(ceiling), [OFFICE_CEILING]);
    const lamp = resolveTarget(entities(), { name: 'lamp' });
    assert.deepEqual([lamp.kind, ids(lamp)], ['one', [DESK_LAMP]]);
    // "desk lamp": the last part of the zigbee2mqtt path "office/desk lamp".
    assert.deepEqual(ids(resolveTarget(entities(), { name: 'desk lamp' })), [DESK_LAMP]);
    // "light" is a word of three names (plural "Lights" included): ask which.
    const light = resolveTarget(entities(), { name: 'light' });
    assert.equal(light.kind, 'ambiguous');
    assert.deepEqual(ids(light), ['bed_light', 'kitchen_light', 'standing_light']);
    // Chinese: the characters appear in the name.
    assert.deepEqual(ids(resolveTarget(entities(), { name: '客厅' })), ['living_room_light']);
  });

  test('rule 3: a room addresses its devices (of the domain, when given)', () => {
    const office = resolveTarget(entities(), { name: 'office' });
    assert.equal(office.kind, 'set');
    assert.deepEqual(ids(office), [OFFICE_CEILING, DESK_LAMP].sort());
    const livingLights = resolveTarget(entities(), { area: 'Living Room', domain: 'light' });
    assert.equal(livingLights.kind, 'set');
    assert.deepEqual(ids(livingLights), ['living_room_light', 'standing_light']);
  });

  test('a domain alone addresses the whole home, or the box\'s own room when one is set', () => {
    const all = resolveTarget(entities(), { domain: 'light' });
    assert.equal(all.kind, 'set');
    assert.equal(targetsOf(all).length, 6);
    const own = resolveTarget(entities(), { domain: 'light' }, { ownArea: 'Office' });
    assert.deepEqual([own.kind, ids(own)], ['set', [OFFICE_CEILING, DESK_LAMP].sort()]);
    const none = resolveTarget(entities(), { domain: 'fan' });
    assert.equal(none.kind, 'not_found');
  });

  test('a singular kind word means one device: the one whose name has the word, else the one of its kind there', () => {
    assert.deepEqual(ids(resolveTarget(entities(), { device: 'lamp', domain: 'light' })), [DESK_LAMP]);
    // The only switch of the home (the TV) is "the switch".
    const sw = resolveTarget(entities(), { device: 'switch', domain: 'switch' });
    assert.deepEqual([sw.kind, ids(sw)], ['one', ['tv']]);
    assert.equal(sw.kind === 'one' && sw.by, 'kind');
    // "the light in the kitchen": the one light there.
    assert.deepEqual(ids(resolveTarget(entities(), { device: 'light', domain: 'light', area: 'Kitchen' })), ['kitchen_light']);
    // "the light in the office": the kind's own name with a room said is that room's lights, as the plural
    // (the recogniser hears "lights in the office" as "light in the office"; the room bounds what it reaches).
    const office = resolveTarget(entities(), { device: 'light', domain: 'light', area: 'Office' });
    assert.deepEqual([office.kind, ids(office)], ['set', [OFFICE_CEILING, DESK_LAMP].sort()]);
    // "the light" with no room: one device or ask which, never every light of the home.
    const anyLight = resolveTarget(entities(), { device: 'light', domain: 'light' });
    assert.equal(anyLight.kind, 'ambiguous');
    // Not even when only one of the lights has "light" in its name (a new-user test: "Kitchen Light" next to a lamp).
    const twoLights = entities().filter((e) => e.id === 'kitchen_light' || e.id === DESK_LAMP);
    const lightVsLamp = resolveTarget(twoLights, { device: 'light', domain: 'light' });
    assert.deepEqual([lightVsLamp.kind, ids(lightVsLamp)], ['ambiguous', ['kitchen_light', DESK_LAMP].sort()]);
    // With one light in the home, "the light" is that light.
    assert.deepEqual(ids(resolveTarget(entities().filter((e) => e.id === DESK_LAMP), { device: 'light', domain: 'light' })), [DESK_LAMP]);
    // ...unless the box has a room of its own: then it is that room's lights.
    assert.deepEqual(ids(resolveTarget(entities(), { device: 'light', domain: 'light' }, { ownArea: 'Office' })), [OFFICE_CEILING, DESK_LAMP].sort());
  });

  test('a name that fits nothing is not found, never the nearest other device', () => {
    // Each has a word of some device's name, but no device has all of its words.
    for (const said of ['Jacuzzi', 'Standing Lamp', 'bed lamp', 'kitchen fan']) {
      assert.deepEqual(resolveTarget(entities(), { name: said }), { kind: 'not_found', said }, said);
    }
    // Whereas every word of "garage" is in "Garage Door": a partial name of exactly one device.
    assert.deepEqual(ids(resolveTarget(entities(), { name: 'garage' })), ['garage_door']);
  });

  test('a name said with a room the device is not in is not that device: the kind\'s own word is that room\'s set, another name is none', () => {
    // A breaking tester's light group called "Lights" in the Bedroom took "turn off the lights in the office".
    const lights: Entity = { ...entities().find((e) => e.id === 'kitchen_light')!, id: 'lightsdev', name: 'Lights', aliases: [], area: 'Bedroom' };
    const home = [...entities(), lights];
    const office = resolveTarget(home, { name: 'lights', domain: 'light', area: 'Office' });
    assert.deepEqual([office.kind, ids(office)], ['set', [OFFICE_CEILING, DESK_LAMP].sort()]);
    assert.deepEqual(ids(resolveTarget(home, { name: 'lights', domain: 'light', area: 'Bedroom' })), ['lightsdev'], 'in its own room it is that device');
    assert.deepEqual(ids(resolveTarget(home, { name: 'lights', domain: 'light' })), ['lightsdev'], 'with no room, its name');
    // A group "Lights" with no room (a tester's): "the lights in the office" are still the Office's.
    const roomless = [...entities(), { ...lights, area: undefined }];
    assert.deepEqual(ids(resolveTarget(roomless, { name: 'lights', domain: 'light', area: 'Office' })), [OFFICE_CEILING, DESK_LAMP].sort());
    assert.deepEqual(ids(resolveTarget(roomless, { name: 'lights', domain: 'light' })), ['lightsdev'], 'with no room said, its name');
    // "turn on the bed light in the kitchen": the Bed Light is in the Bedroom.
    const bed = resolveTarget(home, { name: 'bed light', domain: 'light', area: 'Kitchen' });
    assert.equal(bed.kind, 'not_found');
    assert.equal(bed.kind === 'not_found' && bed.said, 'bed light in the Kitchen');
    assert.deepEqual(bed.kind === 'not_found' && bed.elsewhere?.map((e) => [e.name, e.area]), [['Bed Light', 'Bedroom']], 'the device of that name, to say where it is');
  });

  test('local intents: a device called "Lights" elsewhere does not take "turn off the lights in the office"', async () => {
    await rig.sim.publish('homeassistant/light/lightsdev/config', JSON.stringify({ name: 'Lights', uniq_id: 'lightsdev', cmd_t: 't/lightsdev/set', dev: { ids: ['lightsdev'], name: 'Lights', sa: 'Bedroom' } }));
    try {
      await waitFor(() => entities().some((e) => e.id === 'lightsdev'), 'the Lights group announced');
      const r = await rig.sdk.runInput('turn off the lights in the office');
      assert.equal(r.response, 'Turned off the Office Ceiling and the office/desk lamp.');
      const bed = await rig.sdk.runInput('turn on the bed light in the kitchen');
      assert.equal(bed.response, 'The Bed Light is in the Bedroom, not the Kitchen, so I left it alone.');
      await waitFor(() => sent(rig).length >= 2, 'the two office lights');
      assert.ok(sent(rig).every((c) => !c.topic.startsWith('t/lightsdev') && !/bed/.test(c.topic)), JSON.stringify(sent(rig)));
    } finally {
      await rig.sim.publish('homeassistant/light/lightsdev/config', '');
      await waitFor(() => !entities().some((e) => e.id === 'lightsdev'), 'the Lights group removed');
    }
  });

  test('a joint inside a device\'s name is no joint: "turn off the desk lamp and monitor and the tv" is the device so named and the TV (a breaking tester\'s switched off the desk lamp and a "Monitor")', async () => {
    const sw = (id: string, name: string) => rig.sim.publish(`homeassistant/switch/${id}/config`, name ? JSON.stringify({ name, uniq_id: id, cmd_t: `t/${id}/set` }) : '');
    await sw('dlm', 'Desk Lamp and Monitor');
    await sw('monitor', 'Monitor');
    try {
      await waitFor(() => entities().some((e) => e.id === 'dlm') && entities().some((e) => e.id === 'monitor'), 'the two switches announced');
      const before = sent(rig).length;
      const r = await rig.sdk.runInput('turn off the desk lamp and monitor and the tv');
      await waitFor(() => sent(rig).length >= before + 2, 'two commands');
      await new Promise((res) => setTimeout(res, 100));
      const now = sent(rig).slice(before);
      assert.deepEqual(now.map((c) => c.topic).sort(), ['home/tv/set', 't/dlm/set'].sort(), `${r.response} ${JSON.stringify(now)}`);
    } finally {
      await sw('dlm', '');
      await sw('monitor', '');
      await waitFor(() => !entities().some((e) => e.id === 'dlm' || e.id === 'monitor'), 'the switches removed');
    }
  });

  test('a cover\'s kind (HA device_class) keeps only covers of that class: a home with a garage door and no blinds has no blinds', () => {
    assert.deepEqual(resolveTarget(entities(), { domain: 'cover', device_class: 'blind' }), { kind: 'not_found', said: 'blind' });
    assert.deepEqual(ids(resolveTarget(entities(), { domain: 'cover', device_class: 'garage' })), ['garage_door']);
    assert.deepEqual(ids(resolveTarget(entities(), { domain: 'cover' })), ['garage_door', 'sliding_door'], '"the covers": every cover');
  });

  test('local intents: "close the blinds" in a home with no blinds closes nothing (a tester\'s closed the garage and the sliding door)', async () => {
    for (const said of ['close the blinds', 'lower the blinds', 'open the curtains', 'close all the shutters in the living room']) {
      const r = await rig.sdk.runInput(said);
      assert.match(r.response ?? '', /^There are no (blinds|curtains|shutters) in the (home|Living Room)\.$/, `${said}: ${r.response}`);
    }
    const closed = await rig.sdk.runInput('close the covers');
    assert.match(closed.response ?? '', /Closed 2 covers/, closed.response);
    assert.deepEqual((await rig.sim.waitForCommands(2)).map((c) => c.topic).sort(), ['home/garage/set', 'home/sliding_door/set']);
    assert.equal(sent(rig).filter((c) => /garage|sliding/.test(c.topic)).length, 2, 'only "close the covers" sent anything');
  });

  test('local intents: "turn off the lamp" turns off that one lamp, not every light', async () => {
    const r = await rig.sdk.runInput('turn off the lamp');
    assert.equal(r.response, 'Turned off the office/desk lamp.');
    assert.deepEqual(await rig.sim.waitForCommands(1), [{ topic: 'zigbee2mqtt/office/desk lamp/set', payload: JSON.stringify({ state: 'OFF' }) }]);
    // The plural is a domain command, as before: every light in the room.
    rig.sim.clear();
    const lights = await rig.sdk.runInput('turn off the lights in the office');
    assert.match(lights.response ?? '', /Turned off 2 lights in the Office/);
    const cmds = await rig.sim.waitForCommands(2);
    assert.deepEqual(cmds.map((c) => c.topic).sort(), ['zigbee2mqtt/Office Ceiling/set', 'zigbee2mqtt/office/desk lamp/set']);
  });

  test('local intents: "the light" with no room asks which and sends nothing; with a room it is that room\'s lights', async () => {
    const before = sent(rig).length;
    const r = await rig.sdk.runInput('turn on the light');
    assert.match(r.response ?? '', /^Which one do you mean/, r.response);
    assert.equal(sent(rig).length, before, 'nothing sent for an ambiguous "the light"');
    const office = await rig.sdk.runInput('turn off the light in the office');
    assert.match(office.response ?? '', /Turned off 2 lights in the Office/);
    rig.sdk.settingsApi.set('plugin.home.area', 'Office');
    try {
      const own = await rig.sdk.runInput('turn on the light');
      assert.equal(own.response, 'Turned on 2 lights in the Office.', 'the box\'s own room is said');
    } finally {
      rig.sdk.settingsApi.set('plugin.home.area', '');
    }
  });

  test('local intents: "turn on the lights" addresses the whole home, or the box\'s room (plugin.home.area)', async () => {
    const all = await rig.sdk.runInput('turn on the lights');
    assert.equal(all.response, 'Turned on 6 lights.');
    rig.sdk.settingsApi.set('plugin.home.area', 'Office');
    try {
      rig.sim.clear();
      const before = sent(rig).length;
      const own = await rig.sdk.runInput('turn off the lights');
      assert.equal(own.response, 'Turned off 2 lights in the Office.', 'the box\'s own room is said');
      assert.deepEqual(sent(rig).slice(before).map((c) => c.topic).sort(), ['zigbee2mqtt/Office Ceiling/set', 'zigbee2mqtt/office/desk lamp/set']);
    } finally {
      rig.sdk.settingsApi.set('plugin.home.area', '');
    }
  });

  test('LLM tools: a partial name that fits one device is found; one that fits several or nothing is refused with the candidates', async () => {
    const ok = await rig.sdk.callTool('device_control', { device: 'ceiling', action: 'turn_off' });
    assert.equal(ok.error, undefined);
    // The model reads the device's name (issue 19: no registry id or MQTT topic in the prompt); the command shows which one.
    assert.equal((ok.result as { name: string }).name, 'Office Ceiling');
    assert.deepEqual(await rig.sim.waitForCommands(1), [{ topic: 'zigbee2mqtt/Office Ceiling/set', payload: JSON.stringify({ state: 'OFF' }) }]);
    rig.sim.clear();
    const before = sent(rig).length;
    const several = await rig.sdk.callTool('device_control', { device: 'light', action: 'turn_off' });
    assert.equal((several.error as { code?: string }).code, 'BAD_ARGUMENT');
    assert.match(several.error?.message ?? '', /ambiguous.*Bed Light.*Kitchen Lights.*Standing Light/);
    const room = await rig.sdk.callTool('device_state', { device: 'Office' });
    assert.equal((room.error as { code?: string }).code, 'BAD_ARGUMENT');
    assert.match(room.error?.message ?? '', /room with several devices.*Office Ceiling.*desk lamp/);
    const missing = await rig.sdk.callTool('device_control', { device: 'Standing Lamp', action: 'turn_on' });
    assert.equal((missing.error as { code?: string }).code, 'DEVICE_NOT_FOUND');
    assert.equal(sent(rig).length, before, 'nothing was commanded for the refused calls');
  });

  test('with two lamps, "turn off the lamp" asks which (naming both) and commands nothing; the tools refuse "lamp" too', async () => {
    await rig.sim.publish(
      'homeassistant/light/floor_lamp/config',
      JSON.stringify({ name: 'Floor Lamp', uniq_id: 'floor_lamp', cmd_t: 'home/floor_lamp/set', stat_t: 'home/floor_lamp/state', dev: { ids: ['floor_lamp'], name: 'Floor Lamp', sa: 'Bedroom' } }),
    );
    try {
      await waitFor(() => !!rig.plugin.registry?.get('floor_lamp'), 'the second lamp to be discovered');
      const lamps = resolveTarget(entities(), { device: 'lamp', domain: 'light' });
      assert.deepEqual([lamps.kind, ids(lamps)], ['ambiguous', [DESK_LAMP, 'floor_lamp'].sort()]);
      const before = sent(rig).length;
      const r = await rig.sdk.runInput('turn off the lamp');
      assert.equal(r.response, 'Which one do you mean: the Floor Lamp or the office/desk lamp?');
      const tool = await rig.sdk.callTool('device_control', { device: 'lamp', action: 'turn_off' });
      assert.equal((tool.error as { code?: string }).code, 'BAD_ARGUMENT');
      assert.match(tool.error?.message ?? '', /floor_lamp.*desk lamp|desk lamp.*floor_lamp/);
      // A name still picks one: "floor lamp" is exactly one device.
      const floor = await rig.sdk.runInput('turn off the floor lamp');
      assert.equal(floor.response, 'Turned off the Floor Lamp.');
      // The ambiguous command and the refused tool call sent nothing; the named one sent one command.
      assert.deepEqual(sent(rig).slice(before), [{ topic: 'home/floor_lamp/set', payload: 'OFF' }]);
    } finally {
      await rig.sim.publish('homeassistant/light/floor_lamp/config', '');
      await waitFor(() => !rig.plugin.registry?.get('floor_lamp'), 'the second lamp to be removed');
    }
  });
});
