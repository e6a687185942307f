/**
 * The registry against a real Mosquitto loaded with the fixture home by the
 * independent device simulator: every device with its room and topics, the
 * zigbee2mqtt merge, the bridge not a device, removal, malformed/oversized
 * payloads ignored, persistence across a restart.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { HomePlugin } from '../../src/home/index.js';
import { loadHomeFixture } from '../support/device-simulator.js';
import { FakeSdk } from '../support/fake-sdk.js';
import { FIXTURE_ENTITIES, startRig, waitFor, type Rig } from './harness.js';
import { stubMatcher } from './stub-matcher.js';

describe('device registry on a real broker', () => {
  let rig: Rig;
  const logs: Array<{ level: string; obj: unknown; msg?: string }> = [];

  before(async () => {
    rig = await startRig({ sdk: new FakeSdk({ logLines: logs }) });
  });
  after(async () => {
    await rig.close();
  });

  test('every device of home.json is known once, with its room and topics', () => {
    const reg = rig.plugin.registry;
    assert.ok(reg);
    const byName = new Map(reg.entities().map((e) => [e.name, e]));
    assert.equal(reg.entities().length, FIXTURE_ENTITIES);
    const expected: Array<[string, string, string | undefined, string | undefined]> = [
      ['Standing Light', 'light', 'Living Room', 'home/standing_light/set'],
      ['Bed Light', 'light', 'Bedroom', 'home/bed_light/set'],
      ['Kitchen Lights', 'light', 'Kitchen', 'home/kitchen/light/set'],
      ['Office Ceiling', 'light', 'Office', 'zigbee2mqtt/Office Ceiling/set'],
      ['office/desk lamp', 'light', 'Office', 'zigbee2mqtt/office/desk lamp/set'],
      ['客厅灯', 'light', 'Living Room', 'home/living_room/light/set'],
      ['EcoBee', 'climate', 'Living Room', undefined],
      ['Garage Door', 'cover', undefined, 'home/garage/set'],
      ['Sliding Door', 'cover', 'Living Room', 'home/sliding_door/set'],
      ['Front Door', 'lock', undefined, 'home/front_door/set'],
      ['Party Time', 'button', undefined, 'home/party_time/press'],
      ['Mood Lighting', 'scene', undefined, 'home/scenes/mood/set'],
      ['Outdoor Humidity', 'sensor', undefined, undefined],
      ['TV', 'switch', 'Living Room', 'home/tv/set'],
    ];
    for (const [name, component, area, cmd] of expected) {
      const e = byName.get(name);
      assert.ok(e, `${name} is known`);
      assert.equal(e.component, component, name);
      assert.equal(e.area, area, `${name} room`);
      assert.equal(e.config.command_topic, cmd, `${name} command topic`);
    }
    assert.deepEqual(reg.vocabulary().areas, [...loadHomeFixture().areas].sort());
    // `~` expanded at the start of the value.
    assert.equal(byName.get('Kitchen Lights')?.config.state_topic, 'home/kitchen/light/state');
    assert.equal(byName.get('Kitchen Lights')?.availability[0]?.topic, 'home/kitchen/light/availability');
    assert.equal(byName.get('EcoBee')?.config.temperature_command_topic, 'home/ecobee/target/set');
  });

  test('a zigbee2mqtt device announced both ways is one device; the bridge is not a device', () => {
    const reg = rig.plugin.registry;
    assert.ok(reg);
    const zig = reg.entities().filter((e) => e.ieee);
    assert.deepEqual(zig.map((e) => e.ieee).sort(), ['0x00158d0001a2b3c4', '0x00158d0001a2b3c5']);
    assert.ok(zig.every((e) => e.source === 'both'));
    assert.ok(!reg.entities().some((e) => /bridge|coordinator/i.test(e.name)));
    const desk = reg.entities().find((e) => e.ieee === '0x00158d0001a2b3c5');
    assert.ok(desk?.aliases.includes('desk lamp'), 'slash names answer to their last part');
  });

  test('states are tracked from JSON and plain payloads, availability lists with templates', () => {
    const reg = rig.plugin.registry;
    assert.ok(reg);
    assert.equal(reg.view('front_door')?.state.state, 'locked');
    assert.equal(reg.view('ecobee')?.state.current_temperature, 21.5);
    assert.equal(reg.view('ecobee')?.state.target_temperature, 21);
    assert.equal(reg.view('kitchen_light')?.state.state, 'on');
    assert.equal(reg.view('kitchen_light')?.state.brightness, 200);
    assert.deepEqual(reg.view('kitchen_light')?.state.color, { r: 255, g: 255, b: 255 });
    assert.equal(reg.view('outdoor_humidity')?.state.state, '63');
    assert.equal(reg.view('outdoor_humidity')?.state.unit, '%');
    assert.equal(reg.view('garage_door')?.state.state, 'closed');
    assert.equal(reg.view('0x00158d0001a2b3c4_light_zigbee2mqtt')?.state.state, 'on');
    assert.equal(reg.view('0x00158d0001a2b3c4_light_zigbee2mqtt')?.available, true);
  });

  test('an availability change makes a device unavailable and it is not commanded', async () => {
    const reg = rig.plugin.registry;
    assert.ok(reg);
    await rig.sim.publish('home/kitchen/light/availability', 'offline');
    await waitFor(() => reg.view('kitchen_light')?.available === false, 'kitchen light offline');
    rig.sim.clear();
    const turn = await rig.sdk.runInput('turn off kitchen lights');
    assert.match(turn.response ?? '', /unavailable/i);
    const tool = await rig.sdk.callTool('device_control', { device: 'Kitchen Lights', action: 'turn_off' });
    assert.equal((tool.error as { code?: string } | undefined)?.code, 'DEVICE_UNAVAILABLE');
    // zigbee2mqtt bridge offline: both Office lights become unavailable (availability list with a value_json template).
    await rig.sim.publish('zigbee2mqtt/bridge/state', JSON.stringify({ state: 'offline' }));
    await waitFor(() => reg.view('0x00158d0001a2b3c4_light_zigbee2mqtt')?.available === false, 'office ceiling offline');
    const office = await rig.sdk.runInput('turn off the lights in the office');
    assert.match(office.response ?? '', /unavailable/i);
    await new Promise((r) => setTimeout(r, 200));
    assert.deepEqual(rig.sim.commands, [], 'nothing was published to an unavailable device');
    await rig.sim.publish('home/kitchen/light/availability', 'online');
    await rig.sim.publish('zigbee2mqtt/bridge/state', JSON.stringify({ state: 'online' }));
    await waitFor(() => reg.view('kitchen_light')?.available === true && reg.view('0x00158d0001a2b3c4_light_zigbee2mqtt')?.available === true, 'back online');
  });

  test('malformed and oversized discovery payloads are logged and ignored', async () => {
    const reg = rig.plugin.registry;
    assert.ok(reg);
    logs.length = 0;
    await rig.sim.publish('homeassistant/light/broken/config', '{"name": "Broken", "cmd_t": ');
    await rig.sim.publish('homeassistant/light/no_cmd/config', JSON.stringify({ name: 'No Command', uniq_id: 'no_cmd' }));
    await rig.sim.publish('homeassistant/switch/wild/config', JSON.stringify({ name: 'Wild', uniq_id: 'wild', cmd_t: 'home/+/set' }));
    await rig.sim.publish('homeassistant/sensor/huge/config', JSON.stringify({ name: 'Huge', uniq_id: 'huge', stat_t: 'x/y', pad: 'x'.repeat(300_000) }));
    await rig.sim.publish('homeassistant/light/array/config', '[1,2,3]');
    await waitFor(() => logs.filter((l) => l.level === 'warn').length >= 5, 'five warnings');
    const warned = logs.filter((l) => l.level === 'warn').map((l) => JSON.stringify(l.obj) + (l.msg ?? ''));
    for (const t of ['broken', 'no_cmd', 'wild', 'huge', 'array']) assert.ok(warned.some((w) => w.includes(`homeassistant/`) && w.includes(t)), `warned about ${t}`);
    assert.equal(reg.entities().length, FIXTURE_ENTITIES);
    // A valid one after them is still accepted, and its empty retained payload removes it.
    await rig.sim.publish('homeassistant/switch/extra_plug/config', JSON.stringify({ name: 'Extra Plug', uniq_id: 'extra_plug', cmd_t: 'home/extra/set', dev: { ids: ['extra'], sa: 'Garage' } }));
    await waitFor(() => reg.get('extra_plug') !== undefined, 'extra plug');
    assert.ok(reg.vocabulary().areas.includes('Garage'));
    await rig.sim.publish('homeassistant/switch/extra_plug/config', '');
    await waitFor(() => reg.get('extra_plug') === undefined, 'extra plug removed');
    assert.ok(!reg.vocabulary().areas.includes('Garage'));
    for (const t of ['broken', 'no_cmd', 'wild', 'huge', 'array']) await rig.sim.publish(`homeassistant/${t === 'wild' ? 'switch' : t === 'huge' ? 'sensor' : 'light'}/${t}/config`, '');
  });

  test('changes reach the vocabulary on the bus', async () => {
    const reg = rig.plugin.registry;
    assert.ok(reg);
    const vocabNames = (): string[] => {
      const all = rig.sdk.events('plugin.home.vocabulary') as Array<{ vocabulary: { entities: Array<{ name: string }> } }>;
      return all.at(-1)?.vocabulary.entities.map((e) => e.name) ?? [];
    };
    await rig.sim.publish('homeassistant/fan/ceiling_fan/config', JSON.stringify({ name: 'Ceiling Fan', uniq_id: 'ceiling_fan', cmd_t: 'home/fan/set', dev: { ids: ['fan1'], sa: 'Bedroom' } }));
    await waitFor(() => vocabNames().includes('Ceiling Fan'), 'vocabulary rebuilt');
    await rig.sim.publish('homeassistant/fan/ceiling_fan/config', '');
    await waitFor(() => !vocabNames().includes('Ceiling Fan'), 'vocabulary rebuilt after removal');
  });

  test('the registry persists across a restart (even with the broker gone)', async () => {
    const dataDir = rig.sdk.dataDir;
    await rig.plugin.stop();
    await rig.broker.kill();
    const sdk2 = new FakeSdk({ dataDir });
    sdk2.settingsApi.preset('plugin.mqtt.url', rig.broker.url);
    const p2 = new HomePlugin({ matchIntent: stubMatcher, mqtt: { reconnectMinMs: 100 } });
    await p2.start(sdk2);
    try {
      // The restored devices must reach the speech grammar (they raise no change event); the bus keeps
      // this event for subscribers that start later (RETAINED_EVENTS, test/voice/voice-plugin.test.ts).
      const announced = sdk2.events('plugin.home.vocabulary') as Array<{ vocabulary: { entities: unknown[] } }>;
      assert.deepEqual(announced.map((v) => v.vocabulary.entities.length), [FIXTURE_ENTITIES], 'the restored vocabulary is announced at start');
      const reg = p2.registry;
      assert.ok(reg);
      assert.equal(reg.entities().length, FIXTURE_ENTITIES);
      assert.equal(reg.get('bed_light')?.area, 'Bedroom');
      assert.equal(reg.view('front_door')?.state.state, 'locked');
      assert.equal(reg.view('front_door')?.available, false, 'unavailable while the broker is unreachable');
      const r = await sdk2.runInput('is the front door locked');
      assert.match(r.response ?? '', /unavailable/i);
    } finally {
      await p2.stop();
      await rig.broker.start();
    }
  });
});
