/**
 * A command the broker acknowledged but the device never reported back on is
 * said so (src/home/report-watch.ts): a tester's command during a broker
 * restart was answered "Turned on ..." and lost. Unit tests on a real
 * registry and the fake clock; the whole path over a real broker is in
 * test/home/report-watch-broker.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../src/kernel/clock.js';
import { DeviceRegistry } from '../../src/home/registry.js';
import { ReportWatch, type MissingReport } from '../../src/home/report-watch.js';
import { actionPhrase, unreportedText } from '../../src/home/replies.js';
import type { Entity } from '../../src/home/entities.js';

const log = { debug() {}, info() {}, warn() {}, error() {}, child() { return log; } } as never;

function home(): { reg: DeviceRegistry; e: (id: string) => Entity } {
  const reg = new DeviceRegistry({ log });
  const config = (id: string, extra: Record<string, unknown>) => reg.handleMessage(`homeassistant/light/${id}/config`, JSON.stringify({ name: id.replace('_', ' '), unique_id: id, command_topic: `home/${id}/set`, ...extra }), true);
  config('kitchen_light', { state_topic: 'home/kitchen_light/state' });
  config('desk_lamp', { state_topic: 'home/desk_lamp/state' });
  config('hall_light', {});
  config('porch_light', { state_topic: 'home/porch_light/state', optimistic: true });
  reg.handleMessage('homeassistant/scene/party/config', JSON.stringify({ name: 'Party', unique_id: 'party', command_topic: 'home/party/set' }), true);
  return { reg, e: (id) => reg.get(id) as Entity };
}

function rig(timeoutMs = 8000) {
  const { reg, e } = home();
  const clock = new FakeClock();
  const missing: MissingReport[] = [];
  const watch = new ReportWatch({ registry: reg, clock, timeoutMs: () => timeoutMs, onMissing: (m) => missing.push(m) });
  const notice = { phrase: (x: Entity) => actionPhrase(x, 'turn_on', { action: 'turn_on' } as never, 'en'), lang: 'en' as const };
  return { reg, e, clock, missing, watch, notice };
}

test('a device with a state topic that stays silent after a command is said so once the timeout passes, on the command\'s channel', () => {
  const { e, clock, missing, watch, notice } = rig();
  watch.expect([e('kitchen_light')], notice, 'speaker');
  clock.advance(7999);
  assert.equal(missing.length, 0, 'not before the timeout');
  clock.advance(1);
  assert.equal(missing.length, 1);
  assert.equal(missing[0]?.channel, 'speaker');
  assert.deepEqual(missing[0]?.entities.map((x) => x.id), ['kitchen_light']);
  assert.equal(missing[0]?.text, 'I asked to turn on the kitchen light, but it has not reported back, so it may not have happened.');
  assert.equal(watch.pending, 0);
});

test('a live report in time settles it; a retained copy (sent at subscribe time, as after a broker restart) or an availability message does not', () => {
  const { reg, e, clock, missing, watch, notice } = rig();
  watch.expect([e('kitchen_light'), e('desk_lamp')], notice, 'console');
  reg.handleMessage('home/kitchen_light/state', 'ON');
  reg.handleMessage('home/desk_lamp/state', 'ON', true);
  clock.advance(8000);
  assert.equal(missing.length, 1);
  assert.deepEqual(missing[0]?.entities.map((x) => x.id), ['desk_lamp'], 'only the silent one is named');
  // Several silent: one notice naming each.
  watch.expect([e('kitchen_light'), e('desk_lamp')], notice, 'console');
  clock.advance(8000);
  assert.equal(missing.at(-1)?.text, 'I asked to turn on the kitchen light and turn on the desk lamp, but they have not reported back, so it may not have happened.');
});

test('not watched: a device with no state topic, an optimistic one, a scene; the watch off (0); a stop drops every watch without a word', () => {
  const { e, clock, missing, watch, notice } = rig();
  watch.expect([e('hall_light'), e('porch_light'), e('party')], notice, 'speaker');
  assert.equal(watch.pending, 0, 'nothing to wait for');
  watch.expect([e('kitchen_light')], notice, 'speaker');
  assert.equal(watch.pending, 1);
  watch.clear();
  clock.advance(60_000);
  assert.equal(missing.length, 0, 'nothing said after a stop');
  const off = rig(0);
  off.watch.expect([off.e('kitchen_light')], off.notice, 'speaker');
  off.clock.advance(60_000);
  assert.equal(off.missing.length, 0);
});

test('the notice in Chinese, and with a setting', () => {
  const lamp = { name: '客厅灯' };
  const notice = (e: { name: string }, a: Parameters<typeof actionPhrase>[2], lang: 'en' | 'zh') => unreportedText([{ name: e.name, phrase: actionPhrase(e as Entity, 'turn_on', a, lang) }], lang);
  assert.equal(notice(lamp, {}, 'zh'), '客厅灯没有回报状态，可能没有收到“打开客厅灯”的指令。');
  assert.equal(notice({ name: 'Bed Light' }, { brightness_pct: 40 }, 'en'), 'I asked to set the Bed Light to 40 percent, but it has not reported back, so it may not have happened.');
});

test('a report that comes before the broker\'s acknowledgement counts (the count is taken before sending): a quick device is not said to be silent', () => {
  const { reg, e, clock, missing, watch, notice } = rig();
  const since = watch.before([e('kitchen_light'), e('desk_lamp')]);
  // The devices answer before the PUBACK reaches the box; expect() is called after it.
  reg.handleMessage('home/kitchen_light/state', 'ON');
  reg.handleMessage('home/desk_lamp/state', 'ON');
  watch.expect([e('kitchen_light'), e('desk_lamp')], notice, 'speaker', since);
  clock.advance(8000);
  assert.deepEqual(missing, [], 'both reported');
  // Without the count from before, both would have been said silent (an e2e "turn off the lights" named six).
  watch.expect([e('kitchen_light')], notice, 'speaker');
  clock.advance(8000);
  assert.equal(missing.length, 1);
});

test('a report is any live message on a state topic, changed or not (a light told to turn off that was off reports OFF again); a thermostat\'s own current temperature is none', () => {
  const { reg, e, clock, missing, watch, notice } = rig();
  reg.handleMessage('home/kitchen_light/state', 'OFF');
  const since = watch.before([e('kitchen_light')]);
  reg.handleMessage('home/kitchen_light/state', 'OFF');
  watch.expect([e('kitchen_light')], notice, 'speaker', since);
  clock.advance(8000);
  assert.deepEqual(missing, [], 'the same state again is a report');
  reg.handleMessage('homeassistant/climate/nest/config', JSON.stringify({ name: 'Nest', unique_id: 'nest', temperature_command_topic: 'nest/target/set', temperature_state_topic: 'nest/target', current_temperature_topic: 'nest/current' }), true);
  reg.handleMessage('homeassistant/climate/bare/config', JSON.stringify({ name: 'Bare', unique_id: 'bare', temperature_command_topic: 'bare/target/set', current_temperature_topic: 'bare/current' }), true);
  assert.equal(reg.reportsState('nest'), true);
  assert.equal(reg.reportsState('bare'), false, 'only its current temperature: nothing to report a command with');
  const before = watch.before([e('nest')]);
  reg.handleMessage('nest/current', '19.5');
  watch.expect([e('nest')], notice, 'speaker', before);
  clock.advance(8000);
  assert.deepEqual(missing.map((m) => m.entities.map((x) => x.id)), [['nest']], 'a current temperature is no report of a new set-point');
});

test('commands on one channel whose watches end within NOTICE_GROUP_MS share one notice (a tester\'s three commands to a dead device were three notices); another channel, or a later one, has its own', () => {
  const { reg, e, clock, missing, watch, notice } = rig();
  const lock = { phrase: (x: Entity) => actionPhrase(x, 'lock', { action: 'lock' } as never, 'en'), lang: 'en' as const };
  watch.expect([e('kitchen_light')], notice, 'speaker');
  clock.advance(1000);
  watch.expect([e('desk_lamp')], notice, 'speaker');
  clock.advance(1000);
  watch.expect([e('kitchen_light')], lock, 'console');
  watch.expect([e('desk_lamp')], notice, 'speaker');
  clock.advance(6000);
  assert.equal(missing.length, 0, 'the first watch ended, but the others on its channel end soon: held');
  clock.advance(2001);
  assert.equal(missing.length, 2);
  const speaker = missing.find((m) => m.channel === 'speaker');
  assert.deepEqual(speaker?.entities.map((x) => x.id), ['kitchen_light', 'desk_lamp'], 'a device commanded twice is named once');
  assert.match(speaker?.text ?? '', /^I asked to turn on the kitchen light and turn on the desk lamp, but they have not reported back/);
  assert.deepEqual(missing.find((m) => m.channel === 'console')?.entities.map((x) => x.id), ['kitchen_light']);
  // A command whose device reports is left out of the shared notice; one that ends later than the window is its own.
  missing.length = 0;
  watch.expect([e('kitchen_light')], notice, 'speaker');
  clock.advance(1000);
  watch.expect([e('desk_lamp')], notice, 'speaker');
  reg.handleMessage('home/desk_lamp/state', 'ON');
  clock.advance(8000);
  assert.deepEqual(missing.map((m) => m.entities.map((x) => x.id)), [['kitchen_light']]);
  watch.expect([e('kitchen_light')], notice, 'speaker');
  clock.advance(6000);
  watch.expect([e('desk_lamp')], notice, 'speaker');
  clock.advance(2000);
  assert.equal(missing.length, 2, 'the next one ends 6 s later: not waited for');
  clock.advance(6000);
  assert.equal(missing.length, 3);
  // A stop drops what is held too.
  watch.expect([e('kitchen_light')], notice, 'speaker');
  clock.advance(1000);
  watch.expect([e('desk_lamp')], notice, 'speaker');
  clock.advance(7000);
  watch.clear();
  clock.advance(60_000);
  assert.equal(missing.length, 3, 'nothing said after a stop');
});

test('a shared notice waits at most NOTICE_GROUP_MS after the first was held (commands every few seconds put a tester\'s off for 35 s); a device is named with its latest command; one language per notice', () => {
  const { e, clock, missing, watch, notice } = rig();
  const off = { phrase: (x: Entity) => actionPhrase(x, 'turn_off', { action: 'turn_off' } as never, 'en'), lang: 'en' as const };
  // Nine commands 3.5 s apart to one silent light.
  for (let i = 0; i < 9; i++) {
    watch.expect([e('kitchen_light')], i % 2 ? off : notice, 'speaker');
    clock.advance(3500);
  }
  clock.advance(8000);
  assert.ok(missing.length >= 2, `said while the commands went on, not once at the end (${missing.length})`);
  assert.ok(missing.every((m) => m.entities.length === 1), 'one device, named once in each');
  assert.match(missing.at(-1)?.text ?? '', /^I asked to turn on the kitchen light, but it has not reported back/, 'with its latest command');
  // Chinese and English on one channel: two notices, each in its language.
  missing.length = 0;
  const zh = { phrase: (x: Entity) => actionPhrase(x, 'turn_off', { action: 'turn_off' } as never, 'zh'), lang: 'zh' as const };
  watch.expect([e('kitchen_light')], notice, 'speaker');
  clock.advance(1000);
  watch.expect([e('desk_lamp')], zh, 'speaker');
  clock.advance(8000);
  assert.equal(missing.length, 2);
  assert.match(missing[0]?.text ?? '', /^I asked to turn on the kitchen light/);
  assert.match(missing[1]?.text ?? '', /没有回报状态/);
});
