/**
 * Local intents end to end on a real broker: the spoken commands of
 * fixtures/voice/en/expected.json (their transcripts, through the test's own
 * stub matcher) publish exactly the expected commands and answer with the
 * expected words; Chinese commands; the LLM tools.
 */
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../src/kernel/clock.js';
import { TimersPlugin } from '../../src/plugins/timers/index.js';
import { FakeSdk } from '../support/fake-sdk.js';
import { checkExpectedCommands, startRig, waitFor, type Rig } from './harness.js';

describe('local intents', () => {
  let rig: Rig;
  const clock = new FakeClock(Date.UTC(2026, 10, 29, 12, 0, 0));
  const timers = new TimersPlugin({ clock, dbPath: ':memory:' });
  const timersSdk = new FakeSdk({ name: 'timers' });

  before(async () => {
    await timers.start(timersSdk);
    rig = await startRig({ plugin: { timers, clock }, settings: { 'plugin.home.time_zone': 'UTC' } });
  });
  after(async () => {
    await rig.close();
    timers.stop();
    timersSdk.cleanup();
  });
  beforeEach(() => rig.sim.clear());

  test('every recorded command of expected.json does what it must (English)', async () => {
    await checkExpectedCommands(rig, () => timers.service);
    // Out-of-vocabulary speech is left to the LLM: no short-circuit, no command.
    const oov = await rig.sdk.runInput('tell me a story about dragons');
    assert.equal(oov.response, undefined);
  });

  test('z2m commands carry "ON"/"OFF" strings and brightness on the device scale', async () => {
    await rig.sdk.runInput('turn on office/desk lamp');
    const [c] = await rig.sim.waitForCommands(1);
    assert.equal(c?.topic, 'zigbee2mqtt/office/desk lamp/set');
    assert.deepEqual(JSON.parse(c?.payload ?? '{}'), { state: 'ON' });
    rig.sim.clear();
    await rig.sdk.runInput('set the bed light to red');
    const [red] = await rig.sim.waitForCommands(1);
    assert.deepEqual(JSON.parse(red?.payload ?? '{}'), { state: 'ON', color: { r: 255, g: 0, b: 0 } });
    await waitFor(() => rig.plugin.registry?.view('bed_light')?.state.color?.g === 0, 'simulator state echoed back');
  });

  test('Chinese commands', async () => {
    const on = await rig.sdk.runInput('把客厅灯打开');
    assert.equal(on.response, '已打开客厅灯。');
    const [c] = await rig.sim.waitForCommands(1);
    assert.deepEqual(c, { topic: 'home/living_room/light/set', payload: 'ON' });
    rig.sim.clear();
    const off = await rig.sdk.runInput('把办公室的灯关掉');
    assert.match(off.response ?? '', /已关闭办公室的2个灯/);
    const cmds = await rig.sim.waitForCommands(2);
    assert.deepEqual(cmds.map((x) => x.topic).sort(), ['zigbee2mqtt/Office Ceiling/set', 'zigbee2mqtt/office/desk lamp/set']);
    assert.ok(cmds.every((x) => JSON.parse(x.payload).state === 'OFF'));
    const temp = await rig.sdk.runInput('现在温度是多少');
    assert.equal(temp.response, 'EcoBee现在是21.5度。');
    timers.service?.cancel({ all: true }); // one timer: "取消计时器" means it (with two it asks which: timers-voice.test.ts)
    const timer = await rig.sdk.runInput('设一个30秒的计时器');
    assert.equal(timer.response, '好的，30秒的计时器开始了。');
    assert.ok(timers.service?.status().some((t) => t.duration_s === 30 && t.lang === 'zh'));
    const cancel = await rig.sdk.runInput('取消计时器');
    assert.match(cancel.response ?? '', /^已取消/);
    const time = await rig.sdk.runInput('现在几点');
    assert.equal(time.response, '现在是12点00分。');
    const date = await rig.sdk.runInput('今天几号');
    assert.match(date.response ?? '', /2026年11月29日/);
  });

  test('time, date and timer status in English', async () => {
    assert.equal((await rig.sdk.runInput('what time is it')).response, 'It is 12:00 PM.');
    assert.equal((await rig.sdk.runInput("what's the date")).response, 'Today is Sunday, November 29, 2026.');
    timers.service?.cancel({ all: true });
    assert.equal((await rig.sdk.runInput('timer status')).response, 'No timers are running.');
    await rig.sdk.runInput('set a timer for 2 minutes');
    clock.advance(30_000);
    assert.equal((await rig.sdk.runInput('timer status')).response, 'The timer for 2 minutes has 1 minute and 30 seconds left.');
    timers.service?.cancel({ all: true });
  });

  test('LLM tools: device_state (one device, or a room\'s), device_control', async () => {
    const list = (await rig.sdk.callTool('device_state', { room: 'Office' })).result as { devices: Array<{ name: string; type: string }> };
    assert.deepEqual(list.devices.map((d) => d.name).sort(), ['Office Ceiling', 'office/desk lamp']);
    const state = (await rig.sdk.callTool('device_state', { device: 'EcoBee' })).result as { state: Record<string, unknown>; available: boolean };
    assert.equal(state.state.current_temperature, 21.5);
    assert.equal(state.available, true);
    const r = await rig.sdk.callTool('device_control', { device: 'Kitchen Lights', action: 'turn_on', brightness: 50 });
    assert.equal(r.error, undefined);
    const [c] = await rig.sim.waitForCommands(1);
    assert.equal(c?.topic, 'home/kitchen/light/set');
    assert.deepEqual(JSON.parse(c?.payload ?? ''), { state: 'ON', brightness: 128 });
    rig.sim.clear();
    const pos = await rig.sdk.callTool('device_control', { device: 'Sliding Door', action: 'set_position', position: 40 });
    assert.equal((pos.error as { code?: string }).code, 'UNSUPPORTED_ACTION', 'the sliding door has no set_position_topic');
    const bad = await rig.sdk.callTool('device_control', { device: 'TV', action: 'lock' });
    assert.equal((bad.error as { code?: string }).code, 'UNSUPPORTED_ACTION');
    const missing = await rig.sdk.callTool('device_control', { device: 'Jacuzzi', action: 'turn_on' });
    assert.equal((missing.error as { code?: string }).code, 'DEVICE_NOT_FOUND');
    const temp = await rig.sdk.callTool('device_control', { device: 'ecobee', action: 'set_temperature', temperature: 22.5 });
    assert.equal(temp.error, undefined);
    const cmds = await rig.sim.waitForCommands(1);
    assert.deepEqual(cmds, [{ topic: 'home/ecobee/target/set', payload: '22.5' }]);
    const lock = await rig.sdk.callTool('device_control', { device: 'Front Door', action: 'lock' });
    assert.equal(lock.error, undefined);
    const press = await rig.sdk.callTool('device_control', { device: 'Mood Lighting', action: 'activate' });
    assert.equal(press.error, undefined);
    const all = await rig.sim.waitForCommands(3);
    assert.deepEqual(all.slice(1), [{ topic: 'home/front_door/set', payload: 'LOCK' }, { topic: 'home/scenes/mood/set', payload: 'ON' }]);
  });
});
