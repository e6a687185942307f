/**
 * Muting the microphone (`plugin.voice.mute`): the voice pipeline stops
 * listening (button, wake word, follow-up), messages are still spoken, and
 * the assistant state rests in `muted` instead of `idle` until unmuted.
 */
import { test, afterEach } from 'node:test';
import assert from 'node:assert/strict';
import { VoicePlugin } from '../../src/voice/pipeline.js';
import { AssistantStatePlugin } from '../../src/voice/assistant-state-plugin.js';
import { FakeSdk } from '../support/fake-sdk.js';
import { FakeMic, FakeSpeaker, FakeStt, FakeTts, heard } from './fakes.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

async function setup() {
  const sdk = new FakeSdk({ name: 'voice', settings: { 'plugin.voice.no_speech_timeout_ms': 3000 } });
  const mic = new FakeMic();
  const speaker = new FakeSpeaker();
  const states = new AssistantStatePlugin();
  states.start(sdk);
  const plugin = new VoicePlugin({ microphone: mic, speaker, stt: new FakeStt(() => heard('hello')), tts: new FakeTts(), wake: null });
  await plugin.start(sdk);
  cleanups.push(
    () => plugin.stop(),
    () => states.stop(),
    () => sdk.cleanup(),
  );
  const nth = (state: string, n = 1) => sdk.waitForPublished('assistant_state', (p) => (p as { state: string }).state === state, n);
  return { sdk, mic, speaker, states, plugin, nth };
}

test('muted: the push-to-talk button does not listen, a message is still spoken, and the box rests in muted until unmuted', async () => {
  const { sdk, mic, speaker, states, plugin, nth } = await setup();
  sdk.publish('plugin.voice.mute', { muted: true });
  await nth('muted');
  assert.equal(plugin.isMuted, true);
  sdk.publish('plugin.gpio.ptt', { pressed: true });
  sdk.publish('plugin.gpio.ptt', { pressed: false, held_ms: 300 });
  assert.equal(mic.starts, 0, 'the microphone stays off');
  await assert.rejects(plugin.listenOnce(), /muted/);
  await sdk.sendOutput('speaker', 'Your tea is ready.');
  await nth('speaking');
  await nth('muted', 2);
  assert.deepEqual(speaker.texts, ['Your tea is ready.']);
  assert.equal(states.state, 'muted');
  sdk.publish('plugin.voice.mute', {}); // no `muted`: a toggle (as a long-press action publishes it)
  await nth('idle');
  assert.equal(plugin.isMuted, false);
  sdk.publish('plugin.gpio.ptt', { pressed: true });
  await nth('listening');
  assert.equal(mic.starts, 1);
  assert.deepEqual(sdk.states, ['muted', 'speaking', 'muted', 'idle', 'listening']);
});

test('muting while listening drops the utterance and closes the microphone', async () => {
  const { sdk, mic, states, plugin, nth } = await setup();
  const outcome = plugin.listenOnce();
  await nth('listening');
  assert.equal(mic.running, true);
  sdk.publish('plugin.voice.mute', { muted: true });
  const o = await outcome;
  assert.equal(o.status, 'cancelled');
  assert.equal(mic.running, false);
  assert.equal(states.state, 'muted');
  assert.equal(sdk.inputs.length, 0);
});

test('a question spoken while muted is not followed by listening, then or with the next reply after unmuting', async () => {
  const { sdk, mic, nth } = await setup();
  sdk.publish('plugin.voice.mute', { muted: true });
  await sdk.sendOutput('speaker', 'Shall I turn on the heating?', { expects_reply: true });
  await nth('muted', 2);
  sdk.publish('plugin.voice.mute', { muted: false });
  await nth('idle');
  await sdk.sendOutput('speaker', 'Your tea is ready.');
  await nth('idle', 2); // a follow-up due would have kept it speaking, then listening
  assert.deepEqual(sdk.states, ['muted', 'speaking', 'muted', 'idle', 'speaking', 'idle']);
  assert.equal(mic.starts, 0);
});
