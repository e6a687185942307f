/**
 * Pure parts of the home: HA discovery expansion (abbreviations, `~`),
 * value templates, zigbee2mqtt bridge/devices, state payloads, availability
 * modes, and the exact command payloads of every component.
 */
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  buildCommands, DeviceRegistry, expandDiscoveryPayload, parseBridgeDevices, parseDiscoveryMessage, renderTemplate, type Entity,
} from '../../src/home/index.js';
import type { Logger } from '../../src/kernel/log-types.js';

const log: Logger = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined, child: () => log };

function entity(topic: string, payload: Record<string, unknown>): Entity {
  const r = parseDiscoveryMessage(topic, JSON.stringify(payload), 'homeassistant');
  assert.equal(r.kind, 'config', JSON.stringify(r));
  if (r.kind !== 'config') throw new Error('unreachable');
  return r.entities[0] as Entity;
}

function cmds(e: Entity, a: Parameters<typeof buildCommands>[1], state = {}): Array<[string, string]> {
  return buildCommands(e, a, state).map((c) => [c.topic, c.payload]);
}

describe('discovery payloads', () => {
  test('abbreviations and ~ at the start or end of topic values, in availability lists too', () => {
    const out = expandDiscoveryPayload({
      '~': 'base/dev', cmd_t: '~/set', stat_t: 'prefix/~', json_attr_t: 'plain/topic', name: '~ not a topic',
      avty: [{ t: '~/avail', pl_avail: 'up' }], dev: { ids: ['x'], sa: 'Hall', mf: 'Acme', mdl: 'M1' },
    });
    assert.equal(out.command_topic, 'base/dev/set');
    assert.equal(out.state_topic, 'prefix/base/dev');
    assert.equal(out.json_attributes_topic, 'plain/topic');
    assert.equal(out.name, '~ not a topic', 'only *_topic values are expanded');
    assert.deepEqual(out.availability, [{ topic: 'base/dev/avail', payload_available: 'up' }]);
    assert.deepEqual(out.device, { identifiers: ['x'], suggested_area: 'Hall', manufacturer: 'Acme', model: 'M1' });
    assert.ok(!('~' in out));
  });

  test('topics with and without node_id; unsupported components and bad topics are ignored', () => {
    assert.equal(parseDiscoveryMessage('homeassistant/switch/node1/plug/config', JSON.stringify({ cmd_t: 'a/b' }), 'homeassistant').kind, 'config');
    assert.equal(parseDiscoveryMessage('homeassistant/vacuum/robo/config', JSON.stringify({ cmd_t: 'a/b' }), 'homeassistant').kind, 'ignore');
    assert.equal(parseDiscoveryMessage('homeassistant/switch/a/b/c/config', '{}', 'homeassistant').kind, 'ignore');
    assert.equal(parseDiscoveryMessage('homeassistant/switch/plug/config', '', 'homeassistant').kind, 'remove');
    const e = entity('homeassistant/switch/node1/plug/config', { cmd_t: 'a/b' });
    assert.equal(e.id, 'switch.node1_plug');
    assert.equal(e.name, 'plug');
  });

  test('device-based discovery (components map) gives one entity per component', () => {
    const r = parseDiscoveryMessage('homeassistant/device/multi/config', JSON.stringify({
      dev: { ids: ['multi1'], name: 'Multi', sa: 'Hall' }, o: { name: 'fw' }, stat_t: 'multi/state',
      cmps: { t: { p: 'sensor', uniq_id: 'multi_t', name: 'Temperature', dev_cla: 'temperature', val_tpl: '{{ value_json.t }}' }, r: { p: 'switch', uniq_id: 'multi_r', cmd_t: 'multi/set' } },
    }), 'homeassistant');
    assert.equal(r.kind, 'config');
    if (r.kind === 'config') {
      assert.deepEqual(r.entities.map((e) => [e.id, e.component, e.area]), [['multi_t', 'sensor', 'Hall'], ['multi_r', 'switch', 'Hall']]);
      assert.equal(r.entities[0]?.config.state_topic, 'multi/state');
    }
  });
});

describe('templates', () => {
  test('value_json paths, filters, defaults and unsupported forms', () => {
    assert.deepEqual(renderTemplate('{{ value_json.state }}', '{"state":"online"}'), { ok: true, value: 'online' });
    assert.deepEqual(renderTemplate("{{ value_json['a'].b[1] }}", '{"a":{"b":[1,2]}}'), { ok: true, value: '2' });
    assert.deepEqual(renderTemplate('{{ value_json.t | float | round(1) }}', '{"t":"21.54"}'), { ok: true, value: '21.5' });
    assert.deepEqual(renderTemplate('{{ value_json.x | default("none") }}', '{}'), { ok: true, value: 'none' });
    assert.deepEqual(renderTemplate('{{ value_json.x }}', '{}'), { ok: false, reason: 'missing' });
    assert.deepEqual(renderTemplate('{{ value_json.x }}', 'online'), { ok: false, reason: 'not_json' });
    assert.deepEqual(renderTemplate('{{ value | upper }}', 'on'), { ok: true, value: 'ON' });
    assert.equal(renderTemplate('{% if value %}x{% endif %}', '1').ok, false);
    assert.equal(renderTemplate('{{ states("sensor.x") }}', '1').ok, false);
  });
});

describe('zigbee2mqtt bridge/devices', () => {
  test('coordinator and bridge are not devices; names with slashes and spaces keep their topics', () => {
    const devices = parseBridgeDevices(JSON.stringify([
      { ieee_address: '0x0000000000000001', type: 'Coordinator', friendly_name: 'Coordinator' },
      { ieee_address: '0x00158d0001a2b3c5', type: 'Router', friendly_name: 'office/desk lamp', definition: { vendor: 'SONOFF', model: 'ZBMINI', exposes: [{ type: 'light', features: [{ type: 'binary', name: 'state', property: 'state' }, { type: 'numeric', name: 'brightness', property: 'brightness', value_max: 254 }] }] } },
      { ieee_address: '0x00158d0001a2b3c6', type: 'EndDevice', friendly_name: 'Hall Sensor', definition: { exposes: [{ type: 'numeric', name: 'temperature', property: 'temperature', unit: '°C', access: 1 }, { type: 'numeric', name: 'linkquality', property: 'linkquality', access: 1 }] } },
      { ieee_address: '0x00158d0001a2b3c7', type: 'Router', friendly_name: 'Front Lock', definition: { exposes: [{ type: 'lock', features: [{ type: 'binary', name: 'state', property: 'state' }] }] } },
    ]), 'zigbee2mqtt');
    assert.ok(Array.isArray(devices));
    if (!Array.isArray(devices)) return;
    assert.deepEqual(devices.map((d) => d.friendly_name), ['office/desk lamp', 'Hall Sensor', 'Front Lock']);
    const lamp = devices[0]?.entities[0] as Entity;
    assert.equal(lamp.config.command_topic, 'zigbee2mqtt/office/desk lamp/set');
    assert.equal(lamp.config.state_topic, 'zigbee2mqtt/office/desk lamp');
    assert.deepEqual(lamp.availability.map((a) => a.topic), ['zigbee2mqtt/bridge/state', 'zigbee2mqtt/office/desk lamp/availability']);
    assert.deepEqual(cmds(lamp, { action: 'turn_on', brightness_pct: 100 }), [['zigbee2mqtt/office/desk lamp/set', '{"state":"ON","brightness":254}']]);
    assert.deepEqual(devices[1]?.entities.map((e) => [e.component, e.device_class]), [['sensor', 'temperature']]);
    assert.deepEqual(cmds(devices[2]?.entities[0] as Entity, { action: 'unlock' }), [['zigbee2mqtt/Front Lock/set', '{"state": "UNLOCK"}']]);
    assert.equal(typeof parseBridgeDevices('{"not":"a list"}', 'zigbee2mqtt'), 'string');
  });

  test('a zigbee2mqtt-only device is commanded with JSON strings, never booleans', () => {
    const reg = new DeviceRegistry({ log });
    reg.handleMessage('zigbee2mqtt/bridge/devices', JSON.stringify([
      { ieee_address: '0x00158d0001a2b3c9', type: 'Router', friendly_name: 'Plug/Kettle', definition: { exposes: [{ type: 'switch', features: [{ type: 'binary', name: 'state', property: 'state', value_on: 'ON', value_off: 'OFF' }] }] } },
    ]));
    const e = reg.entities()[0] as Entity;
    assert.equal(e.name, 'Plug/Kettle');
    assert.ok(e.aliases.includes('Kettle'));
    assert.deepEqual(cmds(e, { action: 'turn_on' }), [['zigbee2mqtt/Plug/Kettle/set', '{"state": "ON"}']]);
    reg.handleMessage('zigbee2mqtt/bridge/state', '{"state":"online"}');
    reg.handleMessage('zigbee2mqtt/Plug/Kettle', '{"state":"ON","power":5}');
    assert.equal(reg.view(e.id)?.state.state, 'on');
    assert.equal(reg.view(e.id)?.available, true);
    reg.handleMessage('zigbee2mqtt/Plug/Kettle/availability', '{"state":"offline"}');
    assert.equal(reg.view(e.id)?.available, false);
    reg.handleMessage('zigbee2mqtt/Plug/Kettle/availability', 'online');
    assert.equal(reg.view(e.id)?.available, true, 'legacy plain availability payloads work too');
  });
});

describe('availability modes (HA availability_mode)', () => {
  test('all, any, latest', () => {
    for (const [mode, expectAfter] of [['all', false], ['any', true], ['latest', false]] as const) {
      const reg = new DeviceRegistry({ log });
      reg.handleMessage('homeassistant/switch/p/config', JSON.stringify({ uniq_id: 'p', cmd_t: 'p/set', avty_mode: mode, avty: [{ t: 'a1' }, { t: 'a2', val_tpl: '{{ value_json.s }}', pl_avail: 'up', pl_not_avail: 'down' }] }));
      reg.handleMessage('a1', 'online');
      reg.handleMessage('a2', '{"s":"up"}');
      assert.equal(reg.view('p')?.available, true, mode);
      reg.handleMessage('a2', '{"s":"down"}');
      assert.equal(reg.view('p')?.available, expectAfter, `${mode} after one source went down`);
    }
  });
});

describe('command payloads per component', () => {
  test('light default schema: payload_on/off, brightness topic with scale, rgb topic', () => {
    const e = entity('homeassistant/light/l/config', { uniq_id: 'l', cmd_t: 'l/set', pl_on: 'on!', pl_off: 'off!', bri_cmd_t: 'l/bri', bri_scl: 100, rgb_cmd_t: 'l/rgb' });
    assert.deepEqual(cmds(e, { action: 'turn_off' }), [['l/set', 'off!']]);
    assert.deepEqual(cmds(e, { action: 'turn_on', brightness_pct: 40, color: { r: 1, g: 2, b: 3 } }), [['l/bri', '40'], ['l/rgb', '1,2,3'], ['l/set', 'on!']]);
    assert.deepEqual(cmds(e, { action: 'toggle' }, { state: 'on' }), [['l/set', 'off!']]);
    // Brightness 0 is off, as in the json schema (a tester's "set the lamp to 0 percent" sent brightness 0, then "on").
    assert.deepEqual(cmds(e, { action: 'turn_on', brightness_pct: 0 }), [['l/set', 'off!']]);
    assert.deepEqual(cmds(e, { action: 'turn_on', brightness_pct: 0.4 }), [['l/bri', '1'], ['l/set', 'on!']], 'not 0: at least 1 on the light\'s scale, as Home Assistant keeps it');
    assert.deepEqual(cmds(e, { action: 'turn_on', brightness_pct: 1 }), [['l/bri', '1'], ['l/set', 'on!']]);
    const coarse = entity('homeassistant/light/c/config', { uniq_id: 'c', cmd_t: 'c/set', bri_cmd_t: 'c/bri', bri_scl: 10 });
    assert.deepEqual(cmds(coarse, { action: 'turn_on', brightness_pct: 4 }), [['c/bri', '1'], ['c/set', 'ON']], 'a breaking tester\'s 4 % of a scale of 10 switched the light off');
  });
  test('light json schema: state strings, brightness, colour by supported mode', () => {
    const e = entity('homeassistant/light/j/config', { uniq_id: 'j', schema: 'json', cmd_t: 'j/set', brightness: true, sup_clrm: ['xy', 'color_temp'] });
    assert.deepEqual(JSON.parse(cmds(e, { action: 'turn_on', brightness_pct: 50 })[0]?.[1] ?? ''), { state: 'ON', brightness: 128 });
    assert.deepEqual(JSON.parse(cmds(e, { action: 'turn_on', color: { r: 255, g: 0, b: 0 } })[0]?.[1] ?? ''), { state: 'ON', color: { x: 0.64, y: 0.33 } });
    assert.deepEqual(JSON.parse(cmds(e, { action: 'turn_off' })[0]?.[1] ?? ''), { state: 'OFF' });
    assert.deepEqual(JSON.parse(cmds(e, { action: 'turn_on', brightness_pct: 0 })[0]?.[1] ?? ''), { state: 'OFF' }, 'brightness 0 is off, as in the default schema');
    const plain = entity('homeassistant/light/k/config', { uniq_id: 'k', schema: 'json', cmd_t: 'k/set' });
    assert.throws(() => buildCommands(plain, { action: 'turn_on', brightness_pct: 10 }), { code: 'UNSUPPORTED_ACTION' });
  });
  test('cover, lock, climate, fan, scene, button, command templates', () => {
    const cover = entity('homeassistant/cover/c/config', { uniq_id: 'c', cmd_t: 'c/set', set_pos_t: 'c/pos', pos_open: 255, pos_clsd: 0, pl_stop: null });
    assert.deepEqual(cmds(cover, { action: 'open' }), [['c/set', 'OPEN']]);
    assert.deepEqual(cmds(cover, { action: 'turn_off' }), [['c/set', 'CLOSE']]);
    assert.deepEqual(cmds(cover, { action: 'set_position', position: 50 }), [['c/pos', '128']]);
    assert.throws(() => buildCommands(cover, { action: 'stop' }), { code: 'UNSUPPORTED_ACTION' });
    const lock = entity('homeassistant/lock/d/config', { uniq_id: 'd', cmd_t: 'd/set', cmd_tpl: '{"action":"{{ value }}"}' });
    assert.deepEqual(cmds(lock, { action: 'turn_on' }), [['d/set', '{"action":"LOCK"}']]);
    assert.deepEqual(cmds(lock, { action: 'unlock' }), [['d/set', '{"action":"UNLOCK"}']]);
    const clim = entity('homeassistant/climate/t/config', { uniq_id: 't', temp_cmd_t: 't/temp', mode_cmd_t: 't/mode', modes: ['off', 'heat'] });
    assert.deepEqual(cmds(clim, { action: 'set_temperature', temperature: 21.25 }), [['t/temp', '21.3']]);
    assert.deepEqual(cmds(clim, { action: 'turn_off' }), [['t/mode', 'off']]);
    assert.throws(() => buildCommands(clim, { action: 'set_mode', mode: 'cool' }), { code: 'BAD_ARGUMENT' });
    assert.throws(() => buildCommands(clim, { action: 'set_temperature', temperature: 80 }), { code: 'BAD_ARGUMENT' });
    const fan = entity('homeassistant/fan/f/config', { uniq_id: 'f', cmd_t: 'f/set', pct_cmd_t: 'f/pct' });
    assert.deepEqual(cmds(fan, { action: 'set_percentage', percentage: 33 }), [['f/pct', '33']]);
    const scene = entity('homeassistant/scene/s/config', { uniq_id: 's', cmd_t: 's/set' });
    assert.deepEqual(cmds(scene, { action: 'turn_on' }), [['s/set', 'ON']]);
    const button = entity('homeassistant/button/b/config', { uniq_id: 'b', cmd_t: 'b/press' });
    assert.deepEqual(cmds(button, { action: 'turn_on' }), [['b/press', 'PRESS']]);
    assert.equal(buildCommands(button, { action: 'press' })[0]?.qos, 1, 'commands are QoS 1');
    const sensor = entity('homeassistant/sensor/x/config', { uniq_id: 'x', stat_t: 'x/s' });
    assert.throws(() => buildCommands(sensor, { action: 'turn_on' }), { code: 'UNSUPPORTED_ACTION' });
  });
});
