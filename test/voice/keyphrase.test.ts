/**
 * The EXPERIMENTAL offline wake phrase (pocketsphinx keyphrase spotting,
 * src/voice/keyphrase.ts), with the real pocketsphinx on real recordings:
 * a phrase needs four or more syllables of dictionary words; the spotter
 * finds "front door" in a real recording that says it and nothing in room
 * noise; through the voice pipeline a spotted phrase starts listening, as
 * a wake word does.
 */
import { afterEach, test } from 'node:test';
import assert from 'node:assert/strict';
import { checkWakePhrase, countSpotted, KeyphraseWake, occurrences, wakePhraseProblem } from '../../src/voice/keyphrase.js';
import { VoicePlugin } from '../../src/voice/pipeline.js';
import { AssistantStatePlugin } from '../../src/voice/assistant-state-plugin.js';
import { experimentalWakePhrase } from '../../src/service/voice-wiring.js';
import { readWakeConfig, wakeReport } from '../../src/service/wake-ways.js';
import { FakeSdk, MemoryLogger } from '../support/fake-sdk.js';
import { FakeMic, FakeSpeaker, FakeStt, FakeTts, heard } from './fakes.js';
import { loadRecording, noise } from './helpers.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const c of cleanups.splice(0).reverse()) await c();
});

test('a wake phrase needs dictionary words and four or more syllables', async () => {
  assert.deepEqual(await checkWakePhrase('  Hey  Home Agent '), { phrase: 'hey home agent', syllables: 4 });
  await assert.rejects(checkWakePhrase('timer'), (e: unknown) => e instanceof Error && 'code' in e && /has 2 syllable\(s\); a wake phrase needs 4 or more/.test(e.message));
  await assert.rejects(checkWakePhrase('hey glorbnak'), /not in the pronouncing dictionary: glorbnak/);
  await assert.rejects(checkWakePhrase(' '), /empty/);
});

test('detections in an output line: one per occurrence of the phrase', () => {
  assert.equal(occurrences('timer timer', 'timer'), 2);
  assert.equal(occurrences('front door front', 'front door'), 1);
  assert.equal(occurrences('', 'front door'), 0);
});

test('the spotter finds "front door" in a real recording that says it, and nothing in a minute of room noise', async () => {
  const rec = Buffer.concat([loadRecording('lock the Front Door.wav'), noise(1000, -50, 3)]);
  assert.ok((await countSpotted(rec, { phrase: 'front door', threshold: 1e-20 })) >= 1);
  assert.equal(await countSpotted(noise(60_000, -50, 11), { phrase: 'hey home agent', threshold: 1e-20 }), 0);
});

test('through the pipeline: the spotted phrase starts listening; the setting is off by default and refuses a short phrase', async () => {
  const sdk = new FakeSdk({ name: 'voice', settings: { 'plugin.voice.no_speech_timeout_ms': 60_000 } });
  const log = new MemoryLogger();
  assert.equal(await experimentalWakePhrase(sdk.settingsApi, log), undefined, 'off by default');
  sdk.settingsApi.set('plugin.voice.wake_phrase', 'timer');
  assert.equal(await experimentalWakePhrase(sdk.settingsApi, log), undefined);
  assert.ok(log.messages('error').includes('plugin.voice.wake_phrase is not used'));
  sdk.settingsApi.set('plugin.voice.wake_phrase', 'lock the front door');
  const wake = await experimentalWakePhrase(sdk.settingsApi, log);
  assert.ok(wake instanceof KeyphraseWake);
  assert.ok(log.messages('warn').some((m) => /^EXPERIMENTAL wake phrase/.test(m)));
  const mic = new FakeMic();
  const states = new AssistantStatePlugin();
  states.start(sdk);
  const voice = new VoicePlugin({ microphone: mic, speaker: new FakeSpeaker(), stt: new FakeStt(() => heard('hello')), tts: new FakeTts(), wake });
  await voice.start(sdk);
  cleanups.push(
    () => voice.stop(),
    () => states.stop(),
    () => sdk.cleanup(),
  );
  await mic.say(Buffer.concat([loadRecording('lock the Front Door.wav'), noise(1500, -50, 3)]));
  await sdk.waitForPublished('assistant_state', (p) => (p as { state: string }).state === 'listening');
  assert.ok(sdk.log.messages('info').includes('voice: wake word'));
  const r = wakeReport({ stopPin: -1, pttPin: -1, oneButton: true, longPressMs: 2000, gpioDriver: 'sim', wakeHost: '', wakePort: 10400, wakeWords: '', wakePhrase: 'lock the front door', language: 'en', asrHost: '' }, true);
  assert.equal(r.ways[0]?.kind, 'wake_phrase');
  assert.match(r.ways[0]?.text ?? '', /EXPERIMENTAL/);
});

test('a wake phrase the start refuses is no way to wake the box in status and doctor (one set through the environment, or stored before the setting checked it)', () => {
  assert.match(wakePhraseProblem('hello') ?? '', /"hello" has 2 syllable\(s\)/);
  assert.equal(wakePhraseProblem('hey home agent'), undefined);
  const settings = (phrase: string) => ({ get: (k: string) => (k === 'plugin.voice.wake_phrase' ? phrase : k === 'plugin.gpio.driver' ? 'sim' : undefined) }) as never;
  assert.equal(readWakeConfig(settings('hello')).wakePhrase, '');
  assert.equal(readWakeConfig(settings('hey home agent')).wakePhrase, 'hey home agent');
  assert.ok(!wakeReport(readWakeConfig(settings('hello')), true).ways.some((w) => w.kind === 'wake_phrase'));
});
