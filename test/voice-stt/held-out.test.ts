/**
 * Held-out commands: sentences that are not in the fixture recordings,
 * spoken by espeak-ng (Debian package espeak-ng), resampled to 16 kHz with
 * sox, and decoded by the real pocketsphinx with the grammar of the fixture
 * home. They measure that the templates are general families rather than
 * copies of the fixture sentences. The expected intent is the matcher's
 * reading of the sentence itself.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { PocketsphinxStt } from '../../src/voice/stt/pocketsphinx.js';
import { matchIntent } from '../../src/intents/index.js';
import type { SttResult } from '../../src/voice/stt/types.js';
import { fixtureVocabulary } from './home-vocab.js';
import { feed, readWavPcm } from './wav.js';

const run = promisify(execFile);
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
];

const vocab = fixtureVocabulary();
const engine = new PocketsphinxStt();
const results = new Map<string, SttResult>();
let dir = '';

before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'ha-heldout-'));
  await engine.setVocabulary(vocab);
  for (const [i, s] of SENTENCES.entries()) {
    const raw = path.join(dir, `${i}-22k.wav`);
    const wav = path.join(dir, `${i}.wav`);
    await run('espeak-ng', ['-v', 'en-us', '-w', raw, s]);
    // Half a second of silence either side, as an endpointer leaves it; -R: sox's dither is repeatable, so the input is the same every run.
    await run('sox', ['-R', raw, '-r', '16000', '-c', '1', '-b', '16', wav, 'pad', '0.5', '0.5']);
    const session = engine.start();
    feed(readWavPcm(wav), (b) => session.write(b));
    results.set(s, await session.end());
  }
});

after(async () => {
  await engine.close();
  await rm(dir, { recursive: true, force: true });
});

/** Same meaning: the intent and slots the matcher reads from the sentence ("kitchen light" and "kitchen lights" are the same command). */
function sameMeaning(s: string): boolean {
  const want = matchIntent(s, vocab, 'en');
  const r = results.get(s);
  return want !== null && r !== undefined && !r.rejected && r.intent !== undefined && r.intent.intent === want.intent && JSON.stringify(r.intent.slots) === JSON.stringify(want.slots);
}

for (const s of SENTENCES) {
  test(`held-out "${s}" is a command of the templates and was decoded`, () => {
    assert.ok(matchIntent(s, vocab, 'en'), 'the templates understand it');
    const r = results.get(s);
    assert.ok(r, 'decoded');
    assert.equal(r.engine, 'pocketsphinx');
  });
}

test('held-out commands are mostly recognised with the right meaning', () => {
  // Measured with Debian 12's en-us model on these espeak-ng voices: 8 of 10 with the matcher's intent and
  // slots. "turn on the kitchen lights" is heard as "... kitchen light" (the same intent, but area Kitchen +
  // domain light instead of the entity named "Kitchen Lights"); "unlock the front door" as "lock the front
  // door" (espeak's short "un" after silence goes to the silence model). Raise as the recogniser improves.
  const right = SENTENCES.filter(sameMeaning);
  const report = SENTENCES.map((s) => `${s} => ${results.get(s)?.rejected ? 'rejected' : results.get(s)?.text}`).join('; ');
  assert.ok(right.length >= 8, `right meaning ${right.length}/${SENTENCES.length}: ${report}`);
});
