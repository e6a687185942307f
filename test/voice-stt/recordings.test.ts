/**
 * Every recording of ../shared/fixtures/voice/en through the real
 * pocketsphinx (Debian 12: pocketsphinx_batch 0.8+5prealpha, model
 * pocketsphinx-en-us) with the grammar built from the fixture home, cut as
 * the voice pipeline cuts it (asThePipelineHearsIt). The
 * expected intent of a file is what the matcher makes of its expected
 * transcript (expected.json), so nothing here is keyed on file names.
 *
 * Per file: oov_* must be rejected; a command must either be recognised with
 * the right intent or rejected (a rejected command goes to dictation in the
 * engine chain) — a command must never come out as a different intent. The
 * share recognised exactly is measured by test/bench/voice-stt.ts; this test
 * holds it at the level the Debian model reaches today (see the report in
 * the bench), so a regression in the templates, grammar or decoder settings
 * shows up here.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { PocketsphinxStt } from '../../src/voice/stt/pocketsphinx.js';
import { matchIntent } from '../../src/intents/index.js';
import type { SttResult } from '../../src/voice/stt/types.js';
import { fixtureVocabulary, voiceDir } from './home-vocab.js';
import { asThePipelineHearsIt, feed, readWavPcm } from './wav.js';
import { KNOWN_MISHEARD } from '../support/known-misheard.js';

interface Expected {
  transcript: string | null;
}

const expected = (JSON.parse(readFileSync(path.join(voiceDir, 'expected.json'), 'utf8')) as { expected: Record<string, Expected> }).expected;
const files = readdirSync(voiceDir).filter((f) => f.endsWith('.wav')).sort();
const vocab = fixtureVocabulary();
const engine = new PocketsphinxStt();
const results = new Map<string, SttResult>();

before(async () => {
  await engine.setVocabulary(vocab);
  // Two at a time (the CI machine has 2 cores); each session runs two decoders.
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < files.length) {
      const f = files[next++]!;
      const s = engine.start();
      feed(asThePipelineHearsIt(readWavPcm(path.join(voiceDir, f))), (b) => s.write(b));
      results.set(f, await s.end());
    }
  };
  await Promise.all([worker(), worker()]);
});

after(async () => {
  await engine.close();
});

test('every fixture recording has an entry in expected.json', () => {
  assert.equal(files.length, 20);
  for (const f of files) assert.ok(f in expected, f);
});

for (const f of files) {
  test(`recording "${f}"`, KNOWN_MISHEARD[f] ? { todo: KNOWN_MISHEARD[f] } : {}, () => {
    const r = results.get(f);
    assert.ok(r, 'decoded');
    assert.equal(r.engine, 'pocketsphinx');
    const want = expected[f]!.transcript;
    if (want === null) {
      assert.equal(r.rejected, true, `out-of-grammar speech must be rejected, got "${r.text}"`);
      assert.equal(r.intent, undefined);
      return;
    }
    const wantIntent = matchIntent(want, vocab, 'en');
    assert.ok(wantIntent, `the templates understand "${want}"`);
    if (r.rejected) {
      assert.equal(r.text, '');
      return;
    }
    assert.ok(r.intent, `accepted result "${r.text}" carries an intent`);
    assert.equal(r.intent.intent, wantIntent.intent, `"${r.text}" should be ${wantIntent.intent} like "${want}"`);
  });
}

test('no real recording is heard as another command: a miss is a rejection or a question first, never another intent or value that acts', () => {
  // Unlike the per-recording tests, known misrecognitions are not excused here: "turn off all of the lights in
  // the Office" once became a brightness command, and "set Bed Light brightness to 50 percent" set it to 80 %
  // (issue 15: a wrong action is worse than "I didn't catch that"; the squeezed "eighty" is now rejected). A
  // command marked unsure between two opposites asks for a yes before it acts ("turn on all of lights in the
  // office" for the Office recording at pause_ms 300; pocketsphinx-judge.ts HIDDEN_PARTICLE): it acts on nothing.
  const other = files.filter((f) => {
    const r = results.get(f);
    const want = expected[f]!.transcript;
    if (!r || r.rejected || r.intent?.unsure_between) return false;
    const wantIntent = want === null ? null : matchIntent(want, vocab, 'en');
    return r.intent?.intent !== wantIntent?.intent || JSON.stringify(r.intent?.slots) !== JSON.stringify(wantIntent?.slots);
  });
  assert.deepEqual(other.map((f) => `${f} => ${results.get(f)!.text}`), []);
});

test('padded with digital silence (sox pad 0.5 1, as `listen` once advised), no recording is heard as another command', async () => {
  // A newcomer padded "set a timer for 3 hours and 10 minutes" so: "... 3 hours and a minute" started, and "set Bed
  // Light brightness to 50 percent" came out "... to 2 percent". The padding is now filled with the recording's own
  // room noise (audio-prep.ts), so one utterance does not hold two noise levels.
  const zeros = (ms: number): Buffer => Buffer.alloc(ms * 32);
  const padded = new Map<string, SttResult>();
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < files.length) {
      const f = files[next++]!;
      const s = engine.start();
      feed(asThePipelineHearsIt(Buffer.concat([zeros(500), readWavPcm(path.join(voiceDir, f)), zeros(1000)])), (b) => s.write(b));
      padded.set(f, await s.end());
    }
  };
  await Promise.all([worker(), worker()]);
  const other = files.filter((f) => {
    const r = padded.get(f)!;
    const want = expected[f]!.transcript;
    if (r.rejected || r.intent?.unsure_between) return false;
    const wantIntent = want === null ? null : matchIntent(want, vocab, 'en');
    return r.intent?.intent !== wantIntent?.intent || JSON.stringify(r.intent?.slots) !== JSON.stringify(wantIntent?.slots);
  });
  assert.deepEqual(other.map((f) => `${f} => ${padded.get(f)!.text}`), []);
  const right = files.filter((f) => expected[f]!.transcript !== null && padded.get(f)!.intent !== undefined && !padded.get(f)!.rejected);
  // Measured: 13 of 18 commands understood padded (15 unpadded), 3 before the fill.
  assert.ok(right.length >= 12, `understood padded: ${right.length} (${right.join(', ')})`);
});

test('share of commands recognised stays at the measured level', () => {
  const commands = files.filter((f) => expected[f]!.transcript !== null);
  const exact = commands.filter((f) => results.get(f)?.text === expected[f]!.transcript);
  const sameIntent = commands.filter((f) => {
    const r = results.get(f);
    const want = matchIntent(expected[f]!.transcript!, vocab, 'en');
    return r?.intent !== undefined && want !== null && r.intent.intent === want.intent && JSON.stringify(r.intent.slots) === JSON.stringify(want.slots);
  });
  // Measured with Debian 12's en-us model (test/bench/voice-stt.ts): 13 exact, 15 with the right intent and
  // slots out of 18. Raise as the recogniser improves.
  assert.ok(exact.length >= 13, `exact transcripts: ${exact.length}/${commands.length} (${exact.join(', ')})`);
  assert.ok(sameIntent.length >= 15, `right intent and slots: ${sameIntent.length}/${commands.length} (${sameIntent.join(', ')})`);
  assert.ok(sameIntent.length >= exact.length, 'an exact transcript gives the same intent and slots');
});
