/**
 * How speech ends (src/voice/stt/ending.ts) and the yes rule built on it
 * (pocketsphinx-judge.ts yesEndingMisfits): on built signals (a vowel-like
 * hum, a hiss, a stop's closure and burst, in a low noise floor) and on
 * espeak-ng's "yes", "yeah", "yet" and "get" (Debian) through the service's
 * audio preparation and speech extent.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { speechEnding } from '../../src/voice/stt/ending.js';
import { speechExtent } from '../../src/voice/stt/pocketsphinx-duration.js';
import { prepareUtterance } from '../../src/voice/stt/audio-prep.js';
import { YES_MAX_GAP_MS, YES_MIN_HISS_MS, yesEndingMisfits } from '../../src/voice/stt/pocketsphinx-judge.js';
import { mix, noise, pinkNoise } from '../voice/helpers.js';
import { speak } from '../support/espeak.js';

/** `ms` of a vowel-like hum (150 Hz and its harmonics, falling in level), at about -12 dBFS. */
function hum(ms: number): Buffer {
  const n = 16 * ms;
  const out = Buffer.alloc(n * 2);
  for (let i = 0; i < n; i++) {
    let s = 0;
    for (let h = 1; h <= 5; h++) s += Math.sin((2 * Math.PI * 150 * h * i) / 16000) / h;
    out.writeInt16LE(Math.round(s * 5000), i * 2);
  }
  return out;
}

/** Silence, then `parts` one after another, then silence; a -60 dBFS noise floor under all of it. */
function utterance(...parts: Buffer[]): { pcm: Buffer; endMs: number } {
  const speech = Buffer.concat([Buffer.alloc(16 * 300 * 2), ...parts]);
  const pcm = Buffer.concat([speech, Buffer.alloc(16 * 400 * 2)]);
  return { pcm: mix(pcm, noise(pcm.length / 32, -60, 7)), endMs: speech.length / 32 };
}

test('a hum ends in no hiss; a hum then 120 ms of hiss ends in a hiss, no release; a hum, 40 ms of closure and a 50 ms burst is a release', () => {
  const vowel = utterance(hum(300));
  assert.deepEqual(speechEnding(vowel.pcm, vowel.endMs), { hissMs: 0, release: false });
  const s = utterance(hum(300), noise(120, -30, 3));
  const sEnd = speechEnding(s.pcm, s.endMs);
  assert.ok(sEnd.hissMs >= 110 && sEnd.hissMs <= 130, JSON.stringify(sEnd));
  assert.equal(sEnd.release, false);
  const t = utterance(hum(300), Buffer.alloc(16 * 40 * 2), noise(50, -30, 4));
  const tEnd = speechEnding(t.pcm, t.endMs);
  assert.equal(tEnd.release, true, JSON.stringify(tEnd));
  // A burst too soft to count as speech (its end not in endMs) is still found after the closure.
  assert.equal(speechEnding(t.pcm, t.endMs - 90).release, true);
});

test('the yes rule: a heard "yes" needs its long hiss; "yeah" or "sure" may end in none, but not in a release or a burst', () => {
  assert.equal(yesEndingMisfits({ hissMs: 40, release: true }, 'yes'), true);
  assert.equal(yesEndingMisfits({ hissMs: 40, release: false }, 'yes'), true);
  assert.equal(yesEndingMisfits({ hissMs: YES_MIN_HISS_MS, release: false }, 'yes'), false);
  // A "yes" with no hiss at all: a "yet" in pink noise or an echo (its burst lost), or a "yeah" heard as "yes"; asked again.
  assert.equal(yesEndingMisfits({ hissMs: 0, release: false }, 'yes'), true);
  assert.equal(yesEndingMisfits({ hissMs: 0, release: false }, 'yeah'), false);
  // One frame of breath after a vowel is no burst.
  assert.equal(yesEndingMisfits({ hissMs: 10, release: false }, 'yeah'), false);
  assert.equal(yesEndingMisfits({ hissMs: 30, release: false }, 'yeah'), true);
  assert.equal(yesEndingMisfits({ hissMs: 40, release: true }, 'sure'), true);
  assert.equal(yesEndingMisfits(undefined, 'yes'), false, 'not measured: no verdict');
});

test('a hiss that follows a vowel at once is a yes\'s /s/; one after a pause (a breath after "yet") is not', () => {
  const s = utterance(hum(300), noise(120, -30, 3));
  const sEnd = speechEnding(s.pcm, s.endMs);
  assert.ok((sEnd.gapMs ?? 0) <= 10, JSON.stringify(sEnd));
  assert.equal(yesEndingMisfits(sEnd, 'yes'), false);
  // A tester's "yet" and a soft breath 40 ms after it (180 ms of noise at -40 dBFS) unlocked the door 5 times of 8.
  const b = utterance(hum(300), Buffer.alloc(16 * 40 * 2), noise(180, -40, 5));
  const bEnd = speechEnding(b.pcm, b.endMs);
  assert.ok(bEnd.hissMs >= YES_MIN_HISS_MS && (bEnd.gapMs ?? 0) >= YES_MAX_GAP_MS, JSON.stringify(bEnd));
  assert.equal(yesEndingMisfits(bEnd, 'yes'), true);
});

test('the ending is measured against the room\'s own noise: a hiss over pink noise, none in the noise alone, white or pink', () => {
  const speech = Buffer.concat([Buffer.alloc(16 * 300 * 2), hum(300), noise(120, -35, 3)]);
  const pcm = Buffer.concat([speech, Buffer.alloc(16 * 400 * 2)]);
  const loud = mix(pcm, pinkNoise(pcm.length / 32, -35, 11));
  const e = speechEnding(loud, speech.length / 32);
  assert.ok(e.hissMs >= 100, `a hiss over low noise ${JSON.stringify(e)}`);
  for (const room of [pinkNoise(1000, -35, 12), noise(1000, -35, 13)]) assert.deepEqual(speechEnding(room, 700), { hissMs: 0, release: false });
});

test('espeak-ng: "yes" ends in a long hiss, "yeah" in none, "yet" and "get" in a stop (a tester\'s "yet" unlocked the door as "yes")', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ha-ending-'));
  try {
    for (const [voice, rate] of [['en-us', 160], ['en-gb-scotland', 200], ['en-029', 130]] as const) {
      const ending = async (word: string) => {
        const { pcm } = await speak(dir, `${word}-${voice}`, word, { voice, rate });
        return speechExtent(prepareUtterance(mix(pcm, noise(pcm.length / 32, -50, rate))).pcm).ending!;
      };
      const yes = await ending('yes');
      assert.equal(yesEndingMisfits(yes, 'yes'), false, `yes ${voice} ${JSON.stringify(yes)}`);
      assert.ok(yes.hissMs >= YES_MIN_HISS_MS, `yes ${voice} ${JSON.stringify(yes)}`);
      const yeah = await ending('yeah');
      assert.equal(yesEndingMisfits(yeah, 'yeah'), false, `yeah ${voice} ${JSON.stringify(yeah)}`);
      for (const word of ['yet', 'get']) {
        const e = await ending(word);
        assert.equal(yesEndingMisfits(e, 'yes'), true, `${word} ${voice} ${JSON.stringify(e)}`);
      }
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
