import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SpeechQueue } from '../../src/voice/speech-queue.js';
import { FakeSpeaker } from './fakes.js';
import type { TtsAudio, TtsEngine, TtsOptions } from '../../src/voice/tts/types.js';
import { VoiceAbortError } from '../../src/voice/errors.js';

/** A TTS whose calls finish when the test says so. */
class ManualTts implements TtsEngine {
  readonly name = 'manual';
  readonly pending = new Map<string, () => void>();
  inFlight = 0;
  maxInFlight = 0;
  async synthesize(text: string, opts: TtsOptions = {}): Promise<TtsAudio> {
    this.inFlight++;
    this.maxInFlight = Math.max(this.maxInFlight, this.inFlight);
    try {
      await new Promise<void>((resolve, reject) => {
        this.pending.set(text, resolve);
        opts.signal?.addEventListener('abort', () => reject(new VoiceAbortError('tts')), { once: true });
      });
    } finally {
      this.inFlight--;
      this.pending.delete(text);
    }
    return { pcm: Buffer.from(text.padEnd(text.length + (text.length % 2))), sampleRate: 22050 };
  }
  async finish(text: string): Promise<void> {
    while (!this.pending.has(text)) await new Promise((r) => setImmediate(r));
    this.pending.get(text)!();
  }
}

test('sentences reach the speaker in order even when a later one is synthesised first; at most 2 ahead', async () => {
  const tts = new ManualTts();
  const speaker = new FakeSpeaker();
  const q = new SpeechQueue({ tts: () => tts, speaker });
  for (const s of ['one.', 'two.', 'three.', 'four.']) void q.say(s);
  await tts.finish('two.');
  await new Promise((r) => setTimeout(r, 5));
  assert.deepEqual(speaker.texts, [], 'two waits for one');
  await tts.finish('one.');
  await tts.finish('three.');
  await tts.finish('four.');
  await q.idle();
  assert.deepEqual(speaker.texts.map((t) => t.trim()), ['one.', 'two.', 'three.', 'four.']);
  assert.equal(tts.maxInFlight, 2);
  assert.equal(q.busy, false);
});

test('cut() aborts pending syntheses, stops the speaker, and nothing queued before it plays afterwards', async () => {
  const tts = new ManualTts();
  const speaker = new FakeSpeaker();
  speaker.hold = true;
  const errors: unknown[] = [];
  const q = new SpeechQueue({ tts: () => tts, speaker, onError: (e) => errors.push(e) });
  void q.say('playing.');
  void q.say('queued.');
  await tts.finish('playing.');
  await speaker.waitForPlays(1);
  await q.cut();
  await q.idle();
  assert.deepEqual(speaker.texts.map((t) => t.trim()), ['playing.']);
  assert.equal(speaker.played[0]!.completed, false);
  assert.equal(errors.length, 0, 'aborts after a cut are not errors');
  speaker.hold = false;
  void q.say('after.');
  await tts.finish('after.');
  await q.idle();
  assert.deepEqual(speaker.texts.map((t) => t.trim()), ['playing.', 'after.']);
});

test('a failed sentence is reported and skipped; the rest is spoken', async () => {
  const speaker = new FakeSpeaker();
  const errors: string[] = [];
  const tts: TtsEngine = {
    name: 'flaky',
    synthesize: async (text) => {
      if (text === 'bad.') throw new Error('boom');
      return { pcm: Buffer.from(text.padEnd(text.length + (text.length % 2))), sampleRate: 16000 };
    },
  };
  const q = new SpeechQueue({ tts: () => tts, speaker, onError: (_e, t) => errors.push(t) });
  for (const s of ['good.', 'bad.', 'fine.']) void q.say(s);
  await q.idle();
  assert.deepEqual(speaker.texts.map((t) => t.trim()), ['good.', 'fine.']);
  assert.deepEqual(errors, ['bad.']);
});

test('a TTS that hangs is stopped after synthTimeoutMs: its sentence fails as TTS_TIMEOUT, and what follows is spoken (a tester\'s hung piper held every reply)', async () => {
  const speaker = new FakeSpeaker();
  const errors: string[] = [];
  let aborted = false;
  const tts: TtsEngine = {
    name: 'hangs',
    synthesize: (text, opts = {}) => {
      if (text !== 'stuck.') return Promise.resolve({ pcm: Buffer.from(text.padEnd(text.length + (text.length % 2))), sampleRate: 16000 });
      // Never answers; only notes the abort.
      opts.signal?.addEventListener('abort', () => (aborted = true), { once: true });
      return new Promise<TtsAudio>(() => undefined);
    },
  };
  const q = new SpeechQueue({ tts: () => tts, speaker, onError: (e, t) => errors.push(`${t} ${(e as { code?: string }).code}`), synthTimeoutMs: (chars) => 5 * chars });
  const outcomes = await Promise.all(['one.', 'stuck.', 'two.'].map((t) => q.say(t)));
  assert.deepEqual(outcomes.map((o) => (typeof o === 'object' ? (o.failed as { code?: string }).code : o)), ['handed', 'TTS_TIMEOUT', 'handed']);
  assert.equal(aborted, true, 'the hung synthesis was aborted');
  await q.idle();
  assert.deepEqual(speaker.texts.map((t) => t.trim()), ['one.', 'two.']);
  assert.deepEqual(errors, ['stuck. TTS_TIMEOUT']);
});

test('onIdle: once when everything queued has played (not between sentences queued together), again after the next busy period, and after a cut', async () => {
  const tts = new ManualTts();
  const speaker = new FakeSpeaker();
  speaker.hold = true;
  let idles = 0;
  const q = new SpeechQueue({ tts: () => tts, speaker, onIdle: () => idles++ });
  void q.say('one.');
  void q.say('two.');
  await tts.finish('one.');
  await speaker.waitForPlays(1);
  speaker.finishNext(); // 'one.' played while 'two.' is still being synthesised: not idle
  await tts.finish('two.');
  await speaker.waitForPlays(2);
  assert.equal(idles, 0);
  speaker.finishNext();
  await q.idle();
  assert.equal(idles, 1);
  void q.say('three.');
  await tts.finish('three.');
  await speaker.waitForPlays(3);
  assert.equal(q.busy, true);
  await q.cut();
  await q.idle();
  assert.equal(idles, 2, 'a cut reply ends the busy period too');
});
