/**
 * One button, a real yes/no question (issue 15): the home plugin on a real
 * Mosquitto with the fixture home asks before unlocking the front door; the
 * voice pipeline speaks the question and listens for the answer (state
 * waiting_for_answer); a press of the one button is "no": the gate's
 * decision is a denial by the button, the lock gets no command, nothing is
 * stopped and nothing heard is handed on. GPIO on the simulated driver and
 * the FakeClock.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../src/kernel/clock.js';
import { GpioPlugin } from '../../hal/gpio/plugin.js';
import { SimGpioDriver } from '../../hal/gpio/sim-driver.js';
import { VoicePlugin } from '../../src/voice/pipeline.js';
import { AssistantStatePlugin } from '../../src/voice/assistant-state-plugin.js';
import { startRig, type Rig } from '../home/harness.js';
import { FakeMic, FakeSpeaker, FakeStt, FakeTts, heard } from '../voice/fakes.js';

let rig: Rig;
const stops: Array<() => Promise<void> | void> = [];
before(async () => {
  rig = await startRig({ settings: { 'plugin.home.confirm_timeout_ms': 60_000, 'plugin.voice.followup_ms': 30_000 } });
});
after(async () => {
  for (const s of stops.splice(0).reverse()) await s();
  await rig.close();
});

test('one button while the box waits for a yes/no: the press is "no" and the door stays locked', async () => {
  const sdk = rig.sdk;
  const clock = new FakeClock();
  const gpio = new SimGpioDriver({ clock });
  const states = new AssistantStatePlugin();
  states.start(sdk);
  const speaker = new FakeSpeaker();
  // Whatever the microphone hears during the question would be a "yes": the press must win.
  const voice = new VoicePlugin({ microphone: new FakeMic(), speaker, stt: new FakeStt(() => heard('yes')), tts: new FakeTts(), wake: null });
  await voice.start(sdk);
  const buttons = new GpioPlugin({ driver: gpio, clock });
  await buttons.start(sdk);
  stops.push(() => states.stop(), () => voice.stop(), () => buttons.stop());
  const inputsBefore = sdk.inputs.length;

  const call = sdk.callTool('device_control', { device: 'Front Door', action: 'unlock' }, { channel: 'speaker', text: 'let my friend in' });
  await sdk.waitForPublished('assistant_state', (p) => (p as { state: string }).state === 'waiting_for_answer');
  assert.match(speaker.texts.join(' '), /really want to unlock the Front Door/);
  assert.equal(rig.plugin.gate?.pending, true);

  gpio.setLevel(17, 1);
  clock.advance(30);
  const r = await call;
  gpio.setLevel(17, 0);
  clock.advance(30);

  assert.equal(r.denied, true, 'the unlock was not done');
  const d = rig.plugin.gate?.decisions.at(-1);
  assert.equal(d?.decision, 'denied');
  assert.equal(d?.by, 'button');
  assert.deepEqual(sdk.stops, [], 'the answer is not a stop');
  await sdk.waitForPublished('plugin.voice.activity', (a) => (a as { event: string; next?: string }).event === 'listen_end' && (a as { next?: string }).next === 'nothing');
  assert.equal(sdk.inputs.length, inputsBefore, 'nothing heard during the question was handed on');
  assert.deepEqual(rig.sim.commands, [], 'the lock got no command');
  assert.equal(rig.plugin.registry?.view('front_door')?.state.state, 'locked', 'the lock still reports locked');
});
