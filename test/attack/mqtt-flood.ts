/**
 * Attack: a flood of bad MQTT input on the fixture home (issue 14 "MQTT input
 * is trusted too much"): 2,000 malformed discovery configs (40 kinds, 50
 * rounds, retained, as a broken or hostile publisher leaves them: not JSON,
 * prototype keys as ids, an empty id, a second "Kitchen Lights" commanding
 * `evil/set`, another config claiming kitchen_light's unique_id, a
 * 100,000-character name, lights without a command topic, wildcard and
 * non-string topics, ...), garbage on availability topics (`garbage`, `[]`,
 * `null`, empty, `ONLINE`, `{"state":5}`) including zigbee2mqtt/bridge/state,
 * and out-of-range values (brightness -1e20, a target temperature of 1e300,
 * ...). A valid marker config published last tells when the service has read
 * everything (one publisher, one subscriber: order is kept).
 *
 * Figures:
 *  mqtt_flood_devices_lost    fixture devices missing, unavailable, renamed or
 *                             with a changed state afterwards, or that a command
 *                             no longer reaches (pass 0)
 *  junk_devices_kept          devices that are not the fixture's, after the flood
 *                             and after a restart of the service (pass 0)
 *  out_of_range_values_taken  attacked fields whose last valid value did not
 *                             stand in `devices` (changed or dropped), and spoken
 *                             answers that read out an absurd number (pass 0)
 *  mqtt_flood_warnings        warning and error lines logged for the flood's
 *                             messages (pass: at least one, at most one per 10
 *                             messages: invalid input is logged, rate-limited)
 */
import mqtt from 'mqtt';
import { statSync } from 'node:fs';
import path from 'node:path';
import { startBox, type Box } from './box.js';
import { exactly, within, type Figure } from './report.js';
import { devices, FIXTURE_DEVICES, stateOf, startWorld, waitForDevices, type DeviceView, type Scope } from './world.js';

interface Msg {
  topic: string;
  payload: string;
  retain: boolean;
}

const EVIL = 'evil/set';

/** The 40 malformed discovery configs; `r` (the round) varies the payloads a little. */
function malformedConfigs(r: number): Msg[] {
  const cfg = (component: string, node: string, payload: unknown): Msg => ({
    topic: `homeassistant/${component}/${node}/config`,
    payload: typeof payload === 'string' ? payload : JSON.stringify(payload),
    retain: true,
  });
  const light = (id: string, extra: Record<string, unknown> = {}) => ({ name: `Junk ${id} ${r}`, uniq_id: id, cmd_t: `junk/${id}/set`, stat_t: `junk/${id}/state`, ...extra });
  let deep = '';
  for (let i = 0; i < 5000; i++) deep += '[';
  const manyKeys: Record<string, unknown> = { name: 'Many Keys', uniq_id: 'junk_many_keys', cmd_t: 'junk/many/set' };
  for (let i = 0; i < 5000; i++) manyKeys[`k${i}`] = i;
  return [
    cfg('light', 'junk_not_json', `{not json ${r}`),
    cfg('light', 'junk_array', '[]'),
    cfg('light', 'junk_null', 'null'),
    cfg('light', 'junk_number', String(r)),
    cfg('light', 'junk_string', JSON.stringify(`light ${r}`)),
    cfg('light', '__proto__', light('__proto__')),
    cfg('light', 'toString', light('toString')),
    cfg('switch', 'constructor', { ...light('constructor'), name: 'Constructor' }),
    cfg('light', 'hasOwnProperty', light('hasOwnProperty')),
    cfg('light', 'junk_empty_id', light('')),
    // A second "Kitchen Lights" that commands evil/set, and a config claiming kitchen_light's unique_id from another topic.
    cfg('light', 'kitchen_light_2', { name: 'Kitchen Lights', uniq_id: `kitchen_light_${r % 2 ? 'b' : 'c'}`, cmd_t: EVIL, stat_t: 'evil/state', schema: 'json', brightness: true }),
    cfg('light', 'evil_kitchen', { name: 'Kitchen Lights', uniq_id: 'kitchen_light', cmd_t: EVIL, stat_t: 'evil/state' }),
    cfg('light', 'junk_long_name', light('junk_long_name', { name: 'N'.repeat(100_000) })),
    cfg('light', 'junk_no_cmd', { name: `No Command ${r}`, uniq_id: 'junk_no_cmd', stat_t: 'junk/no_cmd/state' }),
    cfg('switch', 'junk_no_cmd', { name: `No Command Switch ${r}`, uniq_id: 'junk_switch_no_cmd', stat_t: 'junk/no_cmd_sw/state' }),
    cfg('lock', 'junk_no_cmd', { name: `No Command Lock ${r}`, uniq_id: 'junk_lock_no_cmd', stat_t: 'junk/no_cmd_lock/state' }),
    cfg('button', 'junk_no_cmd', { name: `No Command Button ${r}`, uniq_id: 'junk_button_no_cmd' }),
    cfg('light', 'junk_wildcard', light('junk_wildcard', { cmd_t: 'junk/#' })),
    cfg('light', 'junk_plus', light('junk_plus', { cmd_t: 'junk/+/set' })),
    cfg('light', 'junk_cmd_number', light('junk_cmd_number', { cmd_t: 5 })),
    cfg('light', 'junk_cmd_object', light('junk_cmd_object', { cmd_t: { topic: EVIL } })),
    cfg('light', 'junk_cmd_empty', light('junk_cmd_empty', { cmd_t: '' })),
    cfg('light', 'junk_cmd_long', light('junk_cmd_long', { cmd_t: `junk/${'t'.repeat(100_000)}` })),
    cfg('light', 'junk_cmd_nul', light('junk_cmd_nul', { cmd_t: 'junk/\u0000/set' })),
    cfg('nonsense', 'junk_component', light('junk_component')),
    cfg('light', 'junk_tilde', light('junk_tilde', { '~': 5, cmd_t: '~/set' })),
    cfg('light', 'junk_tilde_wild', light('junk_tilde_wild', { '~': 'junk/#', cmd_t: '~/set' })),
    cfg('light', 'junk_dev', light('junk_dev', { dev: 'x' })),
    cfg('light', 'junk_dev_ids', light('junk_dev_ids', { dev: { ids: 5, name: 123 } })),
    cfg('light', 'junk_avty', light('junk_avty', { avty: [5, null, {}], avty_t: 7 })),
    cfg('light', 'junk_bri_scale', light('junk_bri_scale', { schema: 'json', brightness: true, brightness_scale: r % 2 ? 0 : -1e20 })),
    cfg('climate', 'junk_climate', { name: `Junk Climate ${r}`, uniq_id: 'junk_climate', min_temp: 'cold', max_temp: -1e300 }),
    cfg('cover', 'junk_cover', { name: `Junk Cover ${r}`, uniq_id: 'junk_cover', pos_open: 'x', pos_clsd: {}, stat_t: 'junk/cover/state' }),
    cfg('light', 'junk_deep', deep),
    cfg('light', 'junk_many_keys', manyKeys),
    cfg('light', 'junk_control_chars', light('junk_control_chars', { name: '\u0000\u202e\u0007Kitchen\u0000' })),
    cfg('light', 'junk_path', light('../../etc/passwd')),
    cfg('light', 'junk_proto_payload', `{"__proto__": {"cmd_t": "${EVIL}", "command_topic": "${EVIL}"}, "name": "Proto ${r}", "uniq_id": "junk_proto_payload"}`),
    cfg('light', 'junk_name_object', light('junk_name_object', { name: { en: 'x' } })),
    cfg('light', 'junk_template', light('junk_template', { schema: 'template' })),
  ];
}

const AVAILABILITY_GARBAGE = ['garbage', '[]', 'null', '', 'ONLINE', '{"state":5}'];

/** Garbage on availability topics (not retained: the broker keeps the devices' real retained values). */
function availabilityGarbage(): Msg[] {
  const out: Msg[] = [];
  for (const topic of ['home/kitchen/light/availability', 'zigbee2mqtt/bridge/state']) for (const payload of AVAILABILITY_GARBAGE) out.push({ topic, payload, retain: false });
  return out;
}

/** Values outside the entities' declared ranges, and the fields they target. */
const OUT_OF_RANGE: Array<{ id: string; field: string; topic: string; payloads: string[] }> = [
  { id: 'kitchen_light', field: 'brightness', topic: 'home/kitchen/light/state', payloads: ['{"state":"ON","brightness":-1e20}', '{"state":"ON","brightness":1e20}', '{"state":"ON","brightness":256}', '{"state":"ON","brightness":-1}', '{"state":"ON","brightness":"bright"}'] },
  { id: 'bed_light', field: 'brightness', topic: 'home/bed_light/state', payloads: ['{"state":"OFF","brightness":999}', '{"state":"OFF","brightness":-5}'] },
  { id: '0x00158d0001a2b3c4_light_zigbee2mqtt', field: 'brightness', topic: 'zigbee2mqtt/Office Ceiling', payloads: ['{"state":"ON","brightness":1e20,"color_temp":370}', '{"state":"ON","brightness":-3,"color_temp":370}'] },
  { id: 'ecobee', field: 'target_temperature', topic: 'home/ecobee/target', payloads: ['1e300', '-273.16', '5000', 'NaN'] },
  { id: 'ecobee', field: 'current_temperature', topic: 'home/ecobee/current_temperature', payloads: ['-1e20', '1e20', 'Infinity'] },
];

/** Spoken answers must not read out a number like these (more than 4 digits before the point, exponents, NaN). */
const ABSURD = /\d{5,}|e[+-]?\d|NaN|Infinity|-\d+ percent/i;

async function publishAll(client: mqtt.MqttClient, msgs: Msg[]): Promise<void> {
  for (let i = 0; i < msgs.length; i += 100) {
    await Promise.all(msgs.slice(i, i + 100).map((m) => client.publishAsync(m.topic, m.payload, { qos: 1, retain: m.retain })));
  }
}

/** Devices in `after` that the fixture does not have (the marker excepted). */
function junkOf(baseline: DeviceView[], after: DeviceView[]): string[] {
  const known = new Set(baseline.map((d) => d.id));
  return after.filter((d) => !known.has(d.id) && d.id !== 'attack_marker').map((d) => `${JSON.stringify(d.id.slice(0, 40))} (${JSON.stringify(d.name.slice(0, 40))})`);
}

/**
 * The fixture home once the service has read it whole: every device that has
 * a state topic shows a state (12 of the 14: the scene and the button have
 * none), and the list is the same twice 500 ms apart (failure deadline 30 s;
 * past it the attack goes on with what it has and says so).
 */
async function settledHome(box: Box, note: (s: string) => void): Promise<DeviceView[]> {
  const end = Date.now() + 30_000;
  let prev = '';
  for (;;) {
    const list = await devices(box);
    const withState = list.filter((d) => Object.keys(stateOf(d)).length > 0).length;
    const key = JSON.stringify(list.map((d) => [d.id, d.name, d.available, stateOf(d)]));
    if (withState >= FIXTURE_DEVICES - 2 && key === prev) return list;
    if (Date.now() > end) {
      note(`the fixture home did not settle in 30 s (${withState} devices with a state); the baseline is what the service shows now`);
      return list;
    }
    prev = key;
    await new Promise((r) => setTimeout(r, 500));
  }
}

/** Run the attack. */
export async function run(scope: Scope, note: (s: string) => void): Promise<Figure[]> {
  // The broker queues the whole flood for the service instead of dropping what does not fit its default
  // queue (1000 messages): the figures are about what the service does with every message.
  const world = await startWorld(scope, { mosquittoConfig: ['max_queued_messages 0', 'max_queued_bytes 0'] });
  const { box, broker, sim } = world;
  const baseline = await settledHome(box, note);
  const client = await mqtt.connectAsync(broker.url, { clientId: `attack-flood-${process.pid}`, reconnectPeriod: 0 });
  scope.defer(() => client.endAsync(true));
  // Commands the box sends where no real device listens (the hostile configs' topics).
  const hijacked: string[] = [];
  client.on('message', (topic) => void hijacked.push(topic));
  await client.subscribeAsync(['evil/#', 'junk/#'], { qos: 0 });

  const msgs: Msg[] = [];
  for (let r = 0; r < 50; r++) {
    msgs.push(...malformedConfigs(r));
    if (r % 3 === 0) msgs.push(...availabilityGarbage());
    if (r % 5 === 0) for (const o of OUT_OF_RANGE) for (const p of o.payloads) msgs.push({ topic: o.topic, payload: p, retain: false });
  }
  const configs = msgs.filter((m) => m.topic.startsWith('homeassistant/')).length;
  const logsBefore = box.logs().length;
  const t0 = Date.now();
  await publishAll(client, msgs);
  // The marker: a valid config published last; once it is known, the service has read the whole flood.
  const marker = JSON.stringify({ name: 'Attack Marker', uniq_id: 'attack_marker', cmd_t: 'attack/marker/set', stat_t: 'attack/marker/state' });
  await client.publishAsync('homeassistant/switch/attack_marker/config', marker, { qos: 1, retain: true });
  const end = Date.now() + 60_000;
  let after: DeviceView[] = [];
  for (let i = 1; ; i++) {
    // Published again every 5 s, in case a copy was lost on the way (the figures count what the service kept).
    if (i % 50 === 0) await client.publishAsync('homeassistant/switch/attack_marker/config', marker, { qos: 1, retain: true });
    if (!box.alive()) throw new Error(`the service died during the flood (${JSON.stringify(box.exit())})`);
    after = await devices(box);
    if (after.some((d) => d.id === 'attack_marker')) break;
    if (Date.now() > end) {
      const st = await box.status();
      const tail = box.logs().slice(-3).map((l) => `${l.ns ?? ''} ${String(l.msg ?? '').slice(0, 200)}`).join(' | ');
      throw new Error(`the marker config published after the flood never became a device (60 s; broker connected: ${st.broker.connected}; ${st.devices} devices: ${after.map((d) => d.id.slice(0, 30)).join(', ')}; last log lines: ${tail})`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const floodLines = box.logs().slice(logsBefore).filter((l) => l.level >= 40);
  note(`flood: ${msgs.length} messages (${configs} discovery configs) read in ${Date.now() - t0} ms; ${floodLines.length} warning/error lines`);

  // Out-of-range values: in `devices`, and in what the box says.
  const targeted = new Set(OUT_OF_RANGE.map((o) => o.id));
  const kept: string[] = [];
  for (const o of OUT_OF_RANGE) {
    const b = baseline.find((d) => d.id === o.id);
    const a = after.find((d) => d.id === o.id);
    if (a && JSON.stringify(a.state[o.field]) !== JSON.stringify(b?.state[o.field])) kept.push(`${o.id}.${o.field} = ${JSON.stringify(a.state[o.field])} (was ${JSON.stringify(b?.state[o.field])})`);
  }
  for (const q of ['is the kitchen light on', 'what is the temperature of the ecobee', 'is the office ceiling on']) {
    const r = (await box.call('ask', { text: q })) as { reply: string };
    if (ABSURD.test(r.reply)) kept.push(`"${q}" -> ${JSON.stringify(r.reply.slice(0, 120))}`);
  }

  // Fixture devices lost: missing, unavailable, renamed, state changed (targeted fields aside), or unreachable by command.
  const lost = new Map<string, string>();
  for (const b of baseline) {
    const a = after.find((d) => d.id === b.id);
    if (!a) lost.set(b.id, 'missing');
    else if (b.available && !a.available) lost.set(b.id, 'unavailable');
    else if (a.name !== b.name) lost.set(b.id, `renamed ${JSON.stringify(a.name.slice(0, 40))}`);
    else if (!targeted.has(b.id) && JSON.stringify(stateOf(a)) !== JSON.stringify(stateOf(b))) lost.set(b.id, `state ${JSON.stringify(stateOf(a))} (was ${JSON.stringify(stateOf(b))})`);
    else if (targeted.has(b.id) && a.state.state !== b.state.state) lost.set(b.id, `state ${JSON.stringify(a.state.state)} (was ${JSON.stringify(b.state.state)})`);
  }
  sim!.clear();
  const cmd = (await box.call('ask', { text: 'turn off the kitchen light' })) as { reply: string };
  const reached = await sim!.waitForCommands(1, 10_000).then(
    (c) => c.some((x) => x.topic === 'home/kitchen/light/set'),
    () => false,
  );
  const evil = hijacked.length;
  if (!reached || evil) lost.set('kitchen_light', `${lost.has('kitchen_light') ? `${lost.get('kitchen_light')}; ` : ''}"turn off the kitchen light" -> ${JSON.stringify(cmd.reply)}; reached its command topic: ${reached}; commands on evil/# or junk/#: ${evil}`);

  // Junk, now and after a restart (what was saved comes back).
  const junkNow = junkOf(baseline, after);
  const dataDir = box.dataDir;
  await box.stop();
  const box2 = await startBox({ env: world.env, dataDir });
  scope.defer(() => box2.stop());
  await waitForDevices(box2, FIXTURE_DEVICES, 60_000);
  // Quiet period: the retained configs arrive in a burst; wait until the count holds for 1.5 s (failure deadline 30 s).
  let last = -1;
  let stableSince = Date.now();
  const quietEnd = Date.now() + 30_000;
  while (Date.now() - stableSince < 1500 && Date.now() < quietEnd) {
    const n = (await devices(box2)).length;
    if (n !== last) {
      last = n;
      stableSince = Date.now();
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  const junkAfterRestart = junkOf(baseline, await devices(box2));
  let registryKb = 0;
  try {
    registryKb = Math.round(statSync(path.join(dataDir, 'home', 'registry.json')).size / 1024);
  } catch {
    /* none */
  }
  const junk = junkNow.length >= junkAfterRestart.length ? junkNow : junkAfterRestart;
  const warningsOk = floodLines.length >= 1 && floodLines.length <= msgs.length / 10;
  return [
    exactly('mqtt_flood_devices_lost', lost.size, 'devices', 0, lost.size ? [...lost].map(([id, why]) => `${id}: ${why}`).join('\n') : undefined),
    exactly(
      'junk_devices_kept',
      junk.length,
      'devices',
      0,
      junk.length ? `after the flood ${junkNow.length}, after a restart ${junkAfterRestart.length} (home/registry.json ${registryKb} KB): ${junk.slice(0, 12).join(', ')}${junk.length > 12 ? ', ...' : ''}` : undefined,
    ),
    exactly('out_of_range_values_taken', kept.length, 'values', 0, kept.length ? kept.join('\n') : undefined),
    { ...within('mqtt_flood_warnings', floodLines.length, `lines for ${msgs.length} messages`, 1, Math.floor(msgs.length / 10)), ok: warningsOk },
  ];
}
