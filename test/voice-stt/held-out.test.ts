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

for (const s of SENTENCES) {
  test(`held-out "${s}"`, () => {
    const want = matchIntent(s, vocab, 'en');
    assert.ok(want, 'the templates understand it');
    const r = results.get(s);
    assert.ok(r, 'decoded');
    assert.equal(r.rejected, false, `rejected (heard "${r.text}")`);
    assert.equal(r.text, want.text);
    assert.deepEqual(r.intent, want);
  });
}
