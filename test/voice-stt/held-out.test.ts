/**
 * Held-out commands: sentences that are not in the fixture recordings,
 * spoken by espeak-ng (Debian package espeak-ng) in three voices at varied
 * speeds, resampled to 16 kHz with sox, with half a second of room noise
 * (-55 dBFS, as a microphone always has) around and under them, and decoded
 * by the real pocketsphinx with the grammar of the fixture home. They
 * measure that the templates are general families rather than copies of the
 * fixture sentences, and they are a second, larger set on which recogniser
 * settings are compared (the fixture recordings alone are too few). The
 * expected intent is the matcher's reading of the sentence itself.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { PocketsphinxStt } from '../../src/voice/stt/pocketsphinx.js';
import { matchIntent } from '../../src/intents/index.js';
import type { SttResult } from '../../src/voice/stt/types.js';
import { fixtureVocabulary } from './home-vocab.js';
import { feed } from './wav.js';
import { mix, noise } from '../voice/helpers.js';
import { speak } from '../support/espeak.js';

const SENTENCES = [
  'turn on the kitchen lights',
  'set the bed light to twenty percent',
  'unlock the front door',
  'open the garage door',
  'what time is it',
  'set a timer for five minutes',
  'is the sliding door open',
  'activate mood lighting',
  'turn off the tv',
  'cancel the timer',
  'turn off the standing light',
  'set the office lights to seventy percent',
  'close the garage door',
  'what is the temperature',
  'set a timer for two hours and fifteen minutes',
  'turn on the lights in the kitchen',
  'lock the front door',
  'stop the timer',
  'turn off all the lights in the kitchen',
  'set bed light brightness to forty percent',
];
const VOICES = ['en-us', 'en-us+f3', 'en'];

const vocab = fixtureVocabulary();
const engine = new PocketsphinxStt();
const results: Array<{ sentence: string; voice: string; r: SttResult }> = [];
let dir = '';

before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'ha-heldout-'));
  await engine.setVocabulary(vocab);
  let k = 0;
  for (const voice of VOICES) {
    for (const sentence of SENTENCES) {
      k++;
      const { pcm } = await speak(dir, String(k), sentence, { voice, rate: 150 + (k % 4) * 15 });
      const session = engine.start();
      feed(mix(pcm, noise(pcm.length / 32, -55, k)), (b) => session.write(b));
      results.push({ sentence, voice, r: await session.end() });
    }
  }
});

after(async () => {
  await engine.close();
  await rm(dir, { recursive: true, force: true });
});

/** Same meaning: the intent and slots the matcher reads from the sentence ("kitchen light" and "kitchen lights" are the same command). */
function sameMeaning(sentence: string, r: SttResult): boolean {
  const want = matchIntent(sentence, vocab, 'en');
  return want !== null && !r.rejected && r.intent !== undefined && r.intent.intent === want.intent && JSON.stringify(r.intent.slots) === JSON.stringify(want.slots);
}

for (const s of SENTENCES) {
  test(`held-out "${s}" is a command of the templates and was decoded in every voice`, () => {
    assert.ok(matchIntent(s, vocab, 'en'), 'the templates understand it');
    const rs = results.filter((x) => x.sentence === s);
    assert.equal(rs.length, VOICES.length);
    for (const x of rs) assert.equal(x.r.engine, 'pocketsphinx');
  });
}

test('held-out commands are mostly recognised with the right meaning, and a miss is mostly no action', () => {
  // Measured with Debian 12's en-us model: 49 of 60 (53 before the grammar's filler for unknown names, issue 15,
  // which now hears a few names as unknown: "open the …", no action). The misses that would act: "fifteen"
  // heard as "fifty" in every voice, "stop the timer" as "stop the playback" once. Raise as the recogniser improves.
  // 47 since "dining room" and "guest room" stand in the grammar as rooms the home lacks (either one alone does
  // it: a room more shifts every room path's price): en-us+f3's "set bed light brightness to forty percent" is
  // rejected, no action. They keep a tester's "the dining room lights" off the living room's (4 of 16 on the tune
  // voices acted there), so the one rejection is the price (src/intents/builtin-lists.ts COMMON_ROOMS_EN).
  const right = results.filter((x) => sameMeaning(x.sentence, x.r));
  const wrong = results.filter((x) => !sameMeaning(x.sentence, x.r) && !x.r.rejected && x.r.intent !== undefined && x.r.intent.slots.name_unheard === undefined);
  assert.ok(wrong.length <= 4, `misses with another meaning: ${wrong.map((x) => `${x.voice}: ${x.sentence} => ${x.r.text}`).join('; ')}`);
  const report = results
    .filter((x) => !sameMeaning(x.sentence, x.r))
    .map((x) => `${x.voice}: ${x.sentence} => ${x.r.rejected ? 'rejected' : x.r.text}`)
    .join('; ');
  assert.ok(right.length >= 47, `right meaning ${right.length}/${results.length}; misses: ${report}`);
});
