import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, writeFileSync, chmodSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { EspeakTts, ESPEAK_SAMPLE_RATE, espeakVoiceFor } from '../../src/voice/tts/espeak.js';
import { PiperTts, piperModelSampleRate } from '../../src/voice/tts/piper.js';
import { frameFeatures } from '../../src/voice/vad.js';
import { HomeAgentError } from '../../src/kernel/errors.js';

const dir = mkdtempSync(path.join(tmpdir(), 'voice-tts-'));
after(() => rmSync(dir, { recursive: true, force: true }));
const code = (c: string) => (err: unknown) => err instanceof HomeAgentError && err.code === c;

test('espeak-ng speaks English at 22050 Hz: about a second of audible PCM', async () => {
  const a = await new EspeakTts().synthesize('The living room light is on.', { language: 'en' });
  assert.equal(a.sampleRate, ESPEAK_SAMPLE_RATE);
  const seconds = a.pcm.length / 2 / a.sampleRate;
  assert.ok(seconds > 0.8 && seconds < 5, `${seconds} s`);
  assert.ok(frameFeatures(a.pcm).energyDb > -40, 'audible');
});

test('espeak-ng speaks Mandarin with the cmn voice; longer text gives longer audio', async () => {
  const tts = new EspeakTts();
  const short = await tts.synthesize('好的。', { language: 'zh' });
  const long = await tts.synthesize('客厅的灯已经打开了，现在温度是二十一度。', { language: 'zh-CN' });
  assert.equal(long.sampleRate, 22050);
  assert.ok(long.pcm.length > short.pcm.length * 2);
  assert.equal(espeakVoiceFor('zh-CN'), 'cmn');
  assert.equal(espeakVoiceFor('en'), 'en-us');
  assert.equal(espeakVoiceFor(undefined, { voice: 'en-gb' }), 'en-gb');
});

test('espeak-ng text starting with a dash is spoken, not taken as an option', async () => {
  const a = await new EspeakTts().synthesize('-v is not a voice option here');
  assert.ok(a.pcm.length > 22050);
});

test('espeak-ng: a missing binary is TTS_FAILED; abort kills it', async () => {
  await assert.rejects(new EspeakTts({ binary: path.join(dir, 'no-such-espeak') }).synthesize('hi'), code('TTS_FAILED'));
  const ac = new AbortController();
  ac.abort();
  await assert.rejects(new EspeakTts().synthesize('hi', { signal: ac.signal }), code('ABORTED'));
  const slow = path.join(dir, 'slow-espeak');
  writeFileSync(slow, '#!/bin/sh\nexec sleep 30\n');
  chmodSync(slow, 0o755);
  const ac2 = new AbortController();
  const p = new EspeakTts({ binary: slow }).synthesize('hi', { signal: ac2.signal });
  ac2.abort(); // the child is already running: synthesize() spawns it before its first await
  await assert.rejects(p, code('ABORTED'));
});

function fakePiper(name: string, body: string): string {
  const file = path.join(dir, name);
  writeFileSync(file, `#!/bin/sh\n${body}\n`);
  chmodSync(file, 0o755);
  return file;
}

test('piper at a configured path: --model, --output_raw, --speaker; raw PCM at the model sample rate', async () => {
  const argsFile = path.join(dir, 'piper-args');
  // emits 100 samples (200 bytes) per character of the input line
  const bin = fakePiper('piper', `echo "$@" > ${argsFile}\nread line\nn=$(printf %s "$line" | wc -c)\nhead -c $((n * 200)) /dev/urandom`);
  const model = path.join(dir, 'en_US-test-medium.onnx');
  writeFileSync(model, 'onnx');
  writeFileSync(`${model}.json`, JSON.stringify({ audio: { sample_rate: 16000 } }));
  assert.equal(piperModelSampleRate(model), 16000);
  const tts = new PiperTts({ binary: bin, model, speaker: '3' });
  const a = await tts.synthesize('Hello\nworld');
  assert.equal(a.sampleRate, 16000);
  assert.equal(a.pcm.length, 'Hello world'.length * 200);
  assert.equal(readFileSync(argsFile, 'utf8').trim(), `--model ${model} --output_raw --speaker 3`);
});

test('piper without a model config defaults to 22050 Hz; failures are TTS_FAILED with stderr', async () => {
  const ok = fakePiper('piper-ok', 'read line\nhead -c 400 /dev/zero');
  const a = await new PiperTts({ binary: ok, model: path.join(dir, 'none.onnx') }).synthesize('x');
  assert.equal(a.sampleRate, 22050);
  const bad = fakePiper('piper-bad', 'echo "Unable to load model" >&2\nexit 1');
  await assert.rejects(new PiperTts({ binary: bad, model: 'm.onnx' }).synthesize('x'), (err: unknown) => code('TTS_FAILED')(err) && /Unable to load model/.test((err as Error).message));
  await assert.rejects(new PiperTts({ binary: path.join(dir, 'missing'), model: 'm.onnx' }).synthesize('x'), code('TTS_FAILED'));
});
