/**
 * Issue 14, "MQTT input is trusted too much": each attack as a test against
 * a real Mosquitto loaded with the fixture home (../shared/fixtures/home).
 * Every check waits for an event: after the bad input, the simulator
 * publishes a marker on the same connection (MQTT keeps one client's QoS 1
 * messages in order), and the test waits until the box has seen the marker,
 * so the bad input was handled before it.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { HomePlugin } from '../../src/home/index.js';
import { describeState } from '../../src/home/replies.js';
import { FakeSdk, type LogLine } from '../support/fake-sdk.js';
import { freePort, startMosquitto, type MosquittoBroker } from '../support/mosquitto.js';
import { DeviceSimulator } from '../support/device-simulator.js';
import { FIXTURE_ENTITIES, startRig, waitFor, type Rig } from './harness.js';
import { stubMatcher } from './stub-matcher.js';

const Z2M_LIGHTS = ['0x00158d0001a2b3c4_light_zigbee2mqtt', '0x00158d0001a2b3c5_light_zigbee2mqtt'];

/** Publish `marker` as the TV's state after the bad input and wait until the box saw it. */
async function settle(rig: Rig, n: number): Promise<void> {
  const state = n % 2 ? 'OFF' : 'ON';
  await rig.sim.publish('home/tv/state', state);
  await waitFor(() => rig.plugin.registry?.view('tv')?.state.state === state.toLowerCase(), `marker ${n}`);
}

function warnings(lines: LogLine[], msg: RegExp): LogLine[] {
  return lines.filter((l) => l.level === 'warn' && msg.test(l.msg ?? ''));
}

describe('availability and values from devices', () => {
  let rig: Rig;
  const logs: LogLine[] = [];
  let marker = 0;

  before(async () => {
    rig = await startRig({ sdk: new FakeSdk({ logLines: logs }) });
  });
  after(async () => {
    await rig.close();
  });

  test('an availability payload that matches neither value is ignored: the last valid one stands', async () => {
    const reg = rig.plugin.registry;
    assert.ok(reg);
    const bad = ['garbage', '[]', 'null', '', 'ONLINE', '{"state":5}', '{"state":"ONLINE"}', '{}'];
    for (const p of bad) {
      await rig.sim.publish('zigbee2mqtt/bridge/state', p);
      await rig.sim.publish('home/kitchen/light/availability', p);
      await settle(rig, ++marker);
      for (const id of [...Z2M_LIGHTS, 'kitchen_light']) assert.equal(reg.view(id)?.available, true, `${id} still available after ${JSON.stringify(p)}`);
    }
    // Logged, once per topic within the window, however many came.
    const lines = warnings(logs, /matches neither payload_available nor payload_not_available/);
    assert.equal(lines.filter((l) => (l.obj as { topic?: string }).topic === 'zigbee2mqtt/bridge/state').length, 1);
    assert.equal(lines.filter((l) => (l.obj as { topic?: string }).topic === 'home/kitchen/light/availability').length, 1);
    // A valid payload still counts both ways.
    await rig.sim.publish('zigbee2mqtt/bridge/state', '{"state":"offline"}');
    await waitFor(() => Z2M_LIGHTS.every((id) => reg.view(id)?.available === false), 'the bridge offline');
    await rig.sim.publish('zigbee2mqtt/bridge/state', 'garbage');
    await settle(rig, ++marker);
    assert.ok(Z2M_LIGHTS.every((id) => reg.view(id)?.available === false), 'junk does not bring it back either');
    await rig.sim.publish('zigbee2mqtt/bridge/state', '{"state":"online"}');
    await waitFor(() => Z2M_LIGHTS.every((id) => reg.view(id)?.available === true), 'the bridge online');
  });

  test('values outside the declared range are logged and ignored, never spoken', async () => {
    const reg = rig.plugin.registry;
    assert.ok(reg);
    await rig.sim.publish('home/kitchen/light/state', '{"state":"ON","brightness":102,"color":{"r":255,"g":0,"b":0}}');
    await waitFor(() => reg.view('kitchen_light')?.state.brightness === 102, 'kitchen at 40 %');
    const attacks: Array<[string, string]> = [
      ['home/kitchen/light/state', '{"state":"ON","brightness":-1e20}'],
      ['home/kitchen/light/state', '{"brightness":256}'],
      ['home/kitchen/light/state', '{"brightness":1e309}'],
      ['home/kitchen/light/state', '{"color":{"r":999,"g":0,"b":0}}'],
      ['zigbee2mqtt/Office Ceiling', '{"brightness":255}'],
      ['zigbee2mqtt/Office Ceiling', '{"color_temp":-5}'],
      ['home/ecobee/target', '1000'],
      ['home/ecobee/target', '-1e20'],
      ['home/ecobee/current_temperature', '1e9'],
      ['home/outdoor/humidity', '150'],
      ['home/outdoor/humidity', 'x'.repeat(5000)],
    ];
    for (const [topic, payload] of attacks) await rig.sim.publish(topic, payload);
    await settle(rig, ++marker);
    const kitchen = reg.view('kitchen_light');
    assert.equal(kitchen?.state.brightness, 102);
    assert.deepEqual(kitchen?.state.color, { r: 255, g: 0, b: 0 });
    assert.equal(reg.view('0x00158d0001a2b3c4_light_zigbee2mqtt')?.state.brightness, 255, 'Office Ceiling keeps 254 of 254 (255 on HA\'s scale)');
    assert.equal(reg.view('0x00158d0001a2b3c4_light_zigbee2mqtt')?.state.color_temp, 370);
    assert.equal(reg.view('ecobee')?.state.target_temperature, 21);
    assert.equal(reg.view('ecobee')?.state.current_temperature, 21.5);
    assert.equal(reg.view('outdoor_humidity')?.state.state, '63');
    const spoken = describeState(kitchen!.entity, kitchen!.state, true, 'en');
    assert.equal(spoken, 'The Kitchen Lights are on at 40 percent.');
    const r = await rig.sdk.runInput("what's the temperature of ecobee");
    assert.doesNotMatch(r.response ?? '', /1000|e\+|1e/);
    const out = warnings(logs, /outside its declared range/);
    assert.ok(out.length >= 4 && out.length <= attacks.length, `one line per topic (${out.length})`);
    assert.ok(out.some((l) => (l.obj as { field?: string }).field === 'brightness' && (l.obj as { value?: number }).value === -1e20));
    // The rejected message is not the topic's last message: a restart rebuilds the last valid state.
    rig.plugin.registry?.flush();
    // Compare the saved messages themselves, not the file's text (its timestamps can contain "999").
    const saved = JSON.parse(readFileSync(path.join(rig.sdk.dataDir, 'home', 'registry.json'), 'utf8')) as { registry: { topics: Record<string, { raw: string }> } };
    const rawSaved = Object.values(saved.registry.topics).map((t) => t.raw);
    for (const [topic, payload] of attacks) {
      if (topic === 'zigbee2mqtt/Office Ceiling' && payload === '{"brightness":255}') continue; // the one valid message of the list
      assert.ok(!rawSaved.includes(payload), `a refused message is not saved as ${topic}'s last: ${payload.slice(0, 40)}`);
    }
  });

  test('a flood of bad messages on one topic gives one warning with a count', async () => {
    const before = logs.length;
    for (let i = 0; i < 150; i++) await rig.sim.publish('home/kitchen/light/availability', `junk ${i}`, false);
    for (let i = 0; i < 150; i++) await rig.sim.publish('homeassistant/light/junk/config', `{not json ${i}`, false);
    await settle(rig, ++marker);
    const fresh = logs.slice(before).filter((l) => l.level === 'warn');
    // Each of these topics already warned in this window (the tests above), or warns once now.
    assert.ok(fresh.length <= 2, `at most one warning per topic, got ${fresh.length}: ${JSON.stringify(fresh.map((l) => l.msg))}`);
    assert.equal(rig.plugin.registry?.view('kitchen_light')?.available, true);
  });
});

describe('a flood of malformed discovery configs', () => {
  let rig: Rig;
  const logs: LogLine[] = [];

  before(async () => {
    rig = await startRig({ sdk: new FakeSdk({ logLines: logs }) });
  });
  after(async () => {
    await rig.close();
  });

  const light = (extra: Record<string, unknown>): string => JSON.stringify({ name: 'Junk', cmd_t: 'junk/set', stat_t: 'junk/state', ...extra });
  const flood: Array<[string, string]> = [
    ['homeassistant/light/proto/config', light({ uniq_id: '__proto__' })],
    ['homeassistant/light/tostring/config', light({ uniq_id: 'toString' })],
    ['homeassistant/light/constructor/config', light({ uniq_id: 'constructor', name: 'Constructor Light' })],
    ['homeassistant/light/empty_id/config', light({ uniq_id: '' })],
    ['homeassistant/light/evil_kitchen/config', light({ uniq_id: 'evil_kitchen', name: 'Kitchen Lights', cmd_t: 'evil/set', dev: { ids: ['evil'], name: 'Kitchen Lights', sa: 'Kitchen' } })],
    ['homeassistant/light/evil_kitchen2/config', light({ uniq_id: 'evil_kitchen2', name: 'kitchen  LIGHTS', cmd_t: 'evil/set' })],
    // The takeover that cost kitchen_light its state: the same unique_id on another topic.
    ['homeassistant/light/evil_same_id/config', light({ uniq_id: 'kitchen_light', name: 'Something Else', cmd_t: 'evil/set' })],
    ['homeassistant/light/long_name/config', light({ uniq_id: 'long_name', name: 'L'.repeat(100_000) })],
    ['homeassistant/light/no_command/config', JSON.stringify({ name: 'No Command', uniq_id: 'no_command', stat_t: 'x/state' })],
    ['homeassistant/light/blank_command/config', light({ uniq_id: 'blank_command', name: 'Blank', cmd_t: '   ' })],
    ['homeassistant/light/wild/config', light({ uniq_id: 'wild', name: 'Wild', cmd_t: 'a/+/set' })],
    ['homeassistant/light/wild_state/config', light({ uniq_id: 'wild_state', name: 'Wild State', stat_t: 'a/#' })],
    ['homeassistant/light/ctrl/config', light({ uniq_id: 'ctrl', name: 'Bad\u0000Name' })],
    ['homeassistant/light/polluter/config', `{"name":"Polluter","uniq_id":"polluter","cmd_t":"p/set","__proto__":{"cmd_t":"evil/set","polluted":true}}`],
    ['homeassistant/light/polluter2/config', `{"name":"Polluter Two","uniq_id":"polluter2","cmd_t":"p/set","dev":{"ids":["p"],"constructor":{"prototype":{"polluted":true}}}}`],
    // Written as text: a `__proto__` key in a JS object literal would set the prototype, not a key.
    ['homeassistant/device/multi/config', '{"dev":{"ids":["multi"],"name":"Multi"},"o":{"name":"x"},"cmps":{"__proto__":{"p":"light","cmd_t":"m/set"}}}'],
    ['homeassistant/device/multi2/config', JSON.stringify({ dev: { ids: ['multi2'], name: 'Multi Two' }, o: { name: 'x' }, cmps: { 'bad id!': { p: 'light', cmd_t: 'm/set' } } })],
    ['homeassistant/sensor/no_state/config', JSON.stringify({ name: 'No State', uniq_id: 'no_state' })],
    ['homeassistant/light/area_long/config', light({ uniq_id: 'area_long', name: 'Area Long', dev: { ids: ['al'], sa: 'A'.repeat(5000) } })],
    ['homeassistant/light/many_ids/config', light({ uniq_id: 'many_ids', name: 'Many Ids', dev: { ids: Array.from({ length: 1000 }, (_, i) => `id${i}`) } })],
    ['homeassistant/light/ok_name_bad_scale/config', light({ uniq_id: 'bad_scale', name: 'Bad Scale', bri_scl: -1 })],
  ];

  test('invalid configs are refused and logged; no device takes another one\'s name or id; nothing junk is saved', async () => {
    const reg = rig.plugin.registry;
    assert.ok(reg);
    for (const [topic, payload] of flood) await rig.sim.publish(topic, payload);
    // A valid new device after the flood: once it is known, the flood has been handled.
    await rig.sim.publish('homeassistant/light/pantry/config', light({ uniq_id: 'pantry', name: 'Pantry Light', cmd_t: 'home/pantry/set', stat_t: 'home/pantry/state' }));
    await waitFor(() => !!reg.get('pantry'), 'the valid device after the flood');
    assert.equal(reg.entities().length, FIXTURE_ENTITIES + 1, reg.entities().map((e) => e.id).join(', '));
    assert.equal(({} as Record<string, unknown>).polluted, undefined, 'Object.prototype is not polluted');
    for (const e of reg.entities()) {
      assert.ok(e.name.length <= 100 && e.name.trim() !== '', `name of ${e.id}`);
      assert.notEqual(e.config.command_topic, 'evil/set', `${e.id} commands evil/set`);
      if (e.component === 'light') assert.equal(typeof e.config.command_topic, 'string', `${e.id} has a command topic`);
    }
    // Kitchen Lights is still the one kitchen light, with its state and availability.
    const kitchen = reg.entities().filter((e) => e.name.toLowerCase().replace(/\s+/g, ' ') === 'kitchen lights');
    assert.deepEqual(kitchen.map((e) => e.id), ['kitchen_light']);
    assert.equal(reg.get('kitchen_light')?.config.command_topic, 'home/kitchen/light/set');
    assert.equal(reg.view('kitchen_light')?.state.state, 'on');
    assert.equal(reg.view('kitchen_light')?.available, true);
    rig.sim.clear();
    const r = await rig.sdk.runInput('turn off kitchen lights');
    assert.equal(r.response, 'Turned off the Kitchen Lights.');
    assert.deepEqual((await rig.sim.waitForCommands(1)).map((c) => c.topic), ['home/kitchen/light/set']);
    // Every refusal was logged, with its reason.
    const refused = logs.filter((l) => l.level === 'warn' && /malformed discovery payload|discovery config refused/.test(l.msg ?? ''));
    const topics = new Set(refused.map((l) => (l.obj as { topic?: string }).topic));
    for (const [topic] of flood) assert.ok(topics.has(topic), `${topic} refused and logged`);
    assert.ok(refused.some((l) => /unique_id "kitchen_light" is already announced/.test(String((l.obj as { reason?: string }).reason))));
    assert.ok(refused.some((l) => /name "Kitchen Lights" already belongs to kitchen_light/.test(String((l.obj as { reason?: string }).reason))));
    // home/registry.json holds the home, not the flood.
    reg.flush();
    const file = path.join(rig.sdk.dataDir, 'home', 'registry.json');
    const saved = readFileSync(file, 'utf8');
    assert.ok(saved.length < 20_000, `registry.json is ${saved.length} bytes`);
    for (const [topic] of flood) assert.ok(!saved.includes(topic), `${topic} not saved`);
    assert.doesNotMatch(saved, /evil\/set/);
  });

  test('after a restart the home comes back without the flood, and the first owner keeps its name', async () => {
    const dataDir = rig.sdk.dataDir;
    await rig.plugin.stop();
    await rig.broker.kill();
    const sdk2 = new FakeSdk({ dataDir });
    sdk2.settingsApi.preset('plugin.mqtt.url', rig.broker.url);
    const p2 = new HomePlugin({ matchIntent: stubMatcher, mqtt: { reconnectMinMs: 100 } });
    await p2.start(sdk2);
    try {
      const reg = p2.registry;
      assert.ok(reg);
      assert.equal(reg.entities().length, FIXTURE_ENTITIES + 1);
      assert.equal(reg.get('kitchen_light')?.config.command_topic, 'home/kitchen/light/set');
      assert.equal(reg.view('kitchen_light')?.state.state, 'off');
    } finally {
      await p2.stop();
      await rig.broker.start();
      // rig.close() stops rig.plugin again: a second stop is harmless.
    }
  });
});

describe('broker outages', () => {
  let broker: MosquittoBroker;
  let rig: Rig;

  before(async () => {
    broker = await startMosquitto({ persistence: true });
    rig = await startRig({ broker, sim: { clientId: 'hardening-sim', clean: false }, plugin: { mqtt: {} } });
  });
  after(async () => {
    await rig.close();
    await broker.stop();
  });

  test('the back-off is capped at 2 s with jitter, and the box is back after the broker returns', async (t) => {
    const client = rig.plugin.mqtt;
    assert.ok(client);
    await broker.kill();
    await waitFor(() => !rig.plugin.connected, 'the box to notice the outage');
    const seen = client.reconnectDelays.length;
    // Enough failed attempts for the back-off to reach its cap (500, 1000, 2000, 2000 ...).
    await waitFor(() => client.reconnectDelays.length >= seen + 4, 'four reconnect attempts', 30_000);
    const delays = client.reconnectDelays.slice(seen);
    assert.ok(delays.every((d) => d > 0 && d <= 2000), `every pause <= 2000 ms: ${delays.join(', ')}`);
    const capped = delays.slice(2);
    assert.ok(capped.every((d) => d >= 1000), `at the cap a pause lies in [1000, 2000] ms: ${capped.join(', ')}`);
    const back = Date.now();
    await broker.start();
    await waitFor(() => rig.plugin.connected, 'reconnected');
    // Informational: the bound is the cap (the pause already running when the broker came back).
    const took = Date.now() - back;
    t.diagnostic(`reconnect_ms ${took}`);
    assert.ok(took < 30_000, `reconnected ${took} ms after the broker returned`);
  });

  test('a command refused during an outage says what it was', async () => {
    await waitFor(() => rig.plugin.connected, 'connected');
    rig.sdk.settingsApi.set('plugin.mqtt.command_timeout_ms', 800);
    // The waiting path, however long the five commands take: failing at once is outage.test.ts's.
    rig.sdk.settingsApi.set('plugin.mqtt.broker_down_fail_ms', 120_000);
    await broker.kill();
    await waitFor(() => !rig.plugin.connected, 'the box to notice the outage');
    try {
      const r = await rig.sdk.runInput('set bed light brightness to 40 percent');
      assert.equal(r.response, 'I could not set the Bed Light to 40 percent: the MQTT broker did not confirm the command.');
      const c = await rig.sdk.runInput('set kitchen lights to red');
      assert.equal(c.response, 'I could not set the Kitchen Lights to red: the MQTT broker did not confirm the command.');
      const t = await rig.sdk.runInput('set ecobee to 22 degrees');
      assert.equal(t.response, 'I could not set the EcoBee to 22 degrees: the MQTT broker did not confirm the command.');
      const o = await rig.sdk.runInput('turn on standing light');
      assert.equal(o.response, 'I could not turn on the Standing Light: the MQTT broker did not confirm the command.');
      // The LLM path: the tool error names the command too.
      const tool = await rig.sdk.callTool('device_control', { device: 'Bed Light', action: 'turn_on', brightness: 40 });
      const err = tool.error as { code?: string; message?: string };
      assert.equal(err.code, 'COMMAND_TIMEOUT');
      assert.match(err.message ?? '', /^could not set the Bed Light to 40 percent: the broker did not acknowledge/);
    } finally {
      rig.sdk.settingsApi.set('plugin.mqtt.command_timeout_ms', 10_000);
      await broker.start();
      await waitFor(() => rig.plugin.connected, 'reconnected');
    }
  });
});

describe('start-up', () => {
  test('a command sent as soon as the plugin started on a fresh data directory waits for the retained home', async () => {
    const broker = await startMosquitto();
    const sim = new DeviceSimulator(broker.url);
    await sim.start();
    const sdk = new FakeSdk();
    sdk.settingsApi.preset('plugin.mqtt.url', broker.url);
    const plugin = new HomePlugin({ matchIntent: stubMatcher, mqtt: { reconnectMinMs: 100 } });
    try {
      assert.ok(!existsSync(path.join(sdk.dataDir, 'home', 'registry.json')), 'a fresh data directory');
      await plugin.start(sdk);
      assert.equal(plugin.registry?.entities().length, 0, 'start() does not wait for the broker');
      const r = await sdk.runInput('turn on standing light');
      assert.equal(r.response, 'Turned on the Standing Light.');
      assert.equal(plugin.homeRead, true);
      assert.deepEqual(await sim.waitForCommands(1), [{ topic: 'home/standing_light/set', payload: 'ON' }]);
      // The LLM path waits the same way (device tools): here the home is read already.
      const list = await sdk.callTool('device_state', {});
      assert.equal(list.error, undefined);
    } finally {
      await plugin.stop();
      await sim.stop();
      await broker.stop();
      sdk.cleanup();
    }
  });

  test('a broker that is down does not hold the start or a command back, and is reported', async () => {
    const logs: LogLine[] = [];
    const sdk = new FakeSdk({ logLines: logs });
    sdk.settingsApi.preset('plugin.mqtt.url', `mqtt://127.0.0.1:${await freePort()}`);
    // A wait longer than any test: a command answers only because the broker is known to be down.
    const plugin = new HomePlugin({ matchIntent: stubMatcher, mqtt: { reconnectMinMs: 100 }, startup: { maxWaitMs: 3_600_000 } });
    try {
      await plugin.start(sdk);
      assert.equal(plugin.connected, false);
      const r = await sdk.runInput('turn on standing light');
      assert.ok(r.response === undefined || !/Turned on/.test(r.response), `no device is known: ${r.response}`);
      assert.equal(plugin.homeRead, false);
      await waitFor(() => logs.some((l) => l.level === 'warn' && /MQTT broker unreachable/.test(l.msg ?? '')), 'the outage logged');
    } finally {
      await plugin.stop();
      sdk.cleanup();
    }
  });
});
