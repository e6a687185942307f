/**
 * One button does both (issue 15): with the default wiring (one button on
 * GPIO 17, ptt_pin -1) a press while idle listens, a press while listening,
 * thinking or speaking stops (L4), a press while a yes/no question waits is
 * "no" (nothing stopped, the answer capture dropped), a long press (2 s)
 * mutes with one announcement, another unmutes; a separate ptt_pin keeps
 * today's two buttons. The GPIO plugin runs on the simulated driver and the
 * FakeClock, with the real voice pipeline and assistant-state plugin on one
 * fake SDK (fake microphone, speaker, STT, TTS).
 */
import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../src/kernel/clock.js';
import { GpioPlugin, oneButtonPress } from '../../hal/gpio/plugin.js';
import { SimGpioDriver } from '../../hal/gpio/sim-driver.js';
import { VoicePlugin } from '../../src/voice/pipeline.js';
import { AssistantStatePlugin } from '../../src/voice/assistant-state-plugin.js';
import { announceMute, MUTE_ANNOUNCEMENTS } from '../../src/service/voice-wiring.js';
import { FakeSdk } from '../support/fake-sdk.js';
import { FakeMic, FakeSpeaker, FakeStt, FakeTts, heard } from '../voice/fakes.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

/** The box: GPIO (sim, FakeClock) + assistant state + voice pipeline + the mute announcement, on one fake SDK. */
async function box(settings: Record<string, unknown> = {}) {
  const clock = new FakeClock();
  const gpio = new SimGpioDriver({ clock });
  const sdk = new FakeSdk({ name: 'box', settings: { 'plugin.voice.no_speech_timeout_ms': 60_000, 'plugin.voice.followup_ms': 30_000, ...settings } });
  const mic = new FakeMic();
  const speaker = new FakeSpeaker();
  const states = new AssistantStatePlugin();
  states.start(sdk);
  const voice = new VoicePlugin({ microphone: mic, speaker, stt: new FakeStt(() => heard('hello')), tts: new FakeTts(), wake: null });
  await voice.start(sdk);
  const offAnnounce = announceMute(sdk);
  const buttons = new GpioPlugin({ driver: gpio, clock });
  await buttons.start(sdk);
  cleanups.push(
    () => buttons.stop(),
    () => offAnnounce(),
    () => voice.stop(),
    () => states.stop(),
    () => sdk.cleanup(),
  );
  /** Resolves once `state` was published `n` times. */
  const nth = (state: string, n = 1) => sdk.waitForPublished('assistant_state', (p) => (p as { state: string }).state === state, n);
  /** Press (and hold) the button on `pin`: the level, then the debounce. */
  const press = (pin = 17) => {
    gpio.setLevel(pin, 1);
    clock.advance(30);
  };
  const release = (pin = 17) => {
    gpio.setLevel(pin, 0);
    clock.advance(30);
  };
  const does = () => sdk.events('plugin.gpio.button').map((e) => (e as { action: string; does?: string }).does ?? (e as { action: string }).action);
  return { clock, gpio, sdk, mic, speaker, states, voice, buttons, nth, press, release, does };
}

test('what a press of the one button does in each assistant state', () => {
  assert.deepEqual(
    (['idle', 'listening', 'thinking', 'speaking', 'waiting_for_answer', 'muted', 'error'] as const).map((s) => [s, oneButtonPress(s)]),
    [['idle', 'listen'], ['listening', 'stop'], ['thinking', 'stop'], ['speaking', 'stop'], ['waiting_for_answer', 'no'], ['muted', 'none'], ['error', 'listen']],
  );
});

test('one button, idle: a press starts listening (no stop); a press while listening is the stop button', async () => {
  const b = await box();
  b.press();
  await b.nth('listening');
  assert.deepEqual(b.sdk.stops, [], 'a press while idle does not stop anything');
  assert.equal(b.mic.running, true);
  b.release();
  assert.equal(b.states.state, 'listening', 'a tap: the endpointer, not the release, ends the utterance');
  b.press();
  await b.nth('idle');
  assert.deepEqual(b.sdk.stops, ['button']);
  b.release();
  assert.deepEqual(b.does(), ['listen', 'release', 'stop', 'release']);
  assert.equal(b.sdk.inputs.length, 0, 'nothing was handed to the agent');
});

test('one button, busy: a press while speaking stops (L4) and cuts the speech', async () => {
  const b = await box();
  b.speaker.hold = true;
  void b.sdk.sendOutput('speaker', 'Once upon a time there was a long story.');
  await b.nth('speaking');
  await b.speaker.waitForPlays(1);
  b.press();
  await b.nth('idle');
  assert.deepEqual(b.sdk.stops, ['button']);
  assert.ok(b.speaker.stops >= 1, 'the speaker was stopped');
  assert.equal(b.speaker.played[0]!.completed, false);
  assert.deepEqual(b.does(), ['stop']);
  assert.equal(b.mic.starts, 0, 'a stop does not listen');
});

test('one button, waiting for a yes/no: a press is "no": the answer capture is dropped, nothing stopped or handed on', async () => {
  const b = await box();
  await b.sdk.sendOutput('speaker', 'Do you really want to unlock the Front Door?', { confirmation: true });
  await b.nth('waiting_for_answer');
  assert.equal(b.mic.running, true, 'the box listens for the answer');
  b.press();
  await b.sdk.waitForPublished('plugin.voice.activity', (a) => (a as { event: string; next?: string }).event === 'listen_end' && (a as { next?: string }).next === 'nothing');
  await b.nth('idle', 1);
  b.release();
  assert.deepEqual(b.sdk.events('plugin.gpio.button')[0], { button: 'stop', action: 'press', held_ms: 0, does: 'no' });
  assert.deepEqual(b.sdk.stops, [], 'the answer is not a stop');
  assert.equal(b.sdk.inputs.length, 0, 'nothing heard during the question is handed on');
  assert.equal(b.states.state, 'idle');
});

test('one button, long press (2 s): muted with one announcement; another long press unmutes', async () => {
  const b = await box();
  b.press(); // idle: the press listens first, as a tap would
  await b.nth('listening');
  b.clock.advance(1999);
  assert.equal(b.voice.isMuted, false, 'not before 2 s');
  b.clock.advance(1);
  await b.nth('muted');
  assert.equal(b.voice.isMuted, true);
  assert.equal(b.mic.running, false, 'the microphone is off');
  b.release();
  await b.speaker.waitForPlays(1);
  await b.nth('muted', 2); // after the announcement is spoken
  assert.deepEqual(b.speaker.texts, [MUTE_ANNOUNCEMENTS.en.mute], 'announced once');
  // a short press while muted does nothing
  b.press();
  b.release();
  assert.equal(b.mic.starts, 1);
  assert.equal(b.states.state, 'muted');
  // another long press: on again
  b.press();
  b.clock.advance(2000);
  await b.nth('idle', 2);
  assert.equal(b.voice.isMuted, false);
  b.release();
  await b.speaker.waitForPlays(2);
  assert.deepEqual(b.speaker.texts, [MUTE_ANNOUNCEMENTS.en.mute, MUTE_ANNOUNCEMENTS.en.unmute]);
  assert.deepEqual(b.does(), ['listen', 'mute', 'release', 'none', 'release', 'none', 'unmute', 'release']);
  assert.deepEqual(b.sdk.stops, []);
  // and the button talks again
  b.press();
  await b.nth('listening', 2);
});

test('separate pins keep today\'s behaviour: the stop button only stops (no mute), push-to-talk talks', async () => {
  const b = await box({ 'plugin.gpio.ptt_pin': 27 });
  b.press(17);
  assert.deepEqual(b.sdk.stops, ['button'], 'idle or not, the stop button stops');
  b.clock.advance(2000);
  b.release(17);
  assert.equal(b.voice.isMuted, false, 'a long press of the stop button is not a mute');
  assert.deepEqual(b.sdk.events('plugin.gpio.button').map((e) => (e as { does?: string }).does), [undefined, undefined, undefined]);
  b.press(27);
  await b.nth('listening');
  assert.deepEqual(b.sdk.events('plugin.gpio.ptt'), [{ pressed: true }]);
  b.release(27);
  assert.deepEqual(b.sdk.stops, ['button']);
});

test('plugin.gpio.one_button false: the only button stops, as before', async () => {
  const b = await box({ 'plugin.gpio.one_button': false });
  b.press();
  assert.deepEqual(b.sdk.stops, ['button']);
  b.release();
  assert.equal(b.mic.starts, 0);
});
