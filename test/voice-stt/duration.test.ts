/**
 * Speech whose length does not fit never acts (issue 15): the length check
 * of the pocketsphinx recogniser (src/voice/stt/pocketsphinx-duration.ts),
 * unit by unit and with the real pocketsphinx (Debian 12) on three kinds of
 * trap it must reject:
 * - ten seconds of unrelated speech: espeak-ng reading long sentences in
 *   several voices with room noise (-55 dBFS), the kind that was forced
 *   into "set a timer for 52 hours";
 * - a real command cut off 0.9 s after its speech starts (a fixture
 *   recording sliced, as when the stream stops or push-to-talk is released
 *   mid-word): the audio ends while speech is still going;
 * - a real command said twice in a row.
 * The band was chosen on the synthetic set only (see
 * DEFAULT_DURATION_LIMITS); the real recordings are the report
 * (recordings.test.ts, the voice and voice-stt benches). Measured
 * before/after the check: long speech 4/6 -> 6/6 rejected here (13/15 ->
 * 15/15 over five voices: en-us, en-us+f3, en, en-gb-x-rp, en-us+m7), the
 * ten commands whose speech lasts over 1 s cut at 0.9 s 2/10 -> 10/10 (before,
 * the cut "lock the front door" locked it and the cut weather question was
 * "next"), said twice 0/18 -> 8/18 (the rest come out as a longer sentence of
 * the grammar whose length fits: "lock the front door in the bedroom"). Since
 * the compound grammar's decoder (two commands in one breath), a command said
 * twice that it hears as two is rejected as well ('said_twice', or
 * 'joint_in_pause' when its "and" was made of the pause between the two).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { readdirSync, readFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PocketsphinxStt } from '../../src/voice/stt/pocketsphinx.js';
import { prepareUtterance } from '../../src/voice/stt/audio-prep.js';
import { judgeDecode, type PocketsphinxDetails } from '../../src/voice/stt/pocketsphinx-judge.js';
import {
  DEFAULT_DURATION_LIMITS,
  dictionaryPhoneCounts,
  durationMisfit,
  sentencePhones,
  speechExtent,
  squeezedLead,
  WORD_IN_SILENCE_MS,
  wordsInSilence,
} from '../../src/voice/stt/pocketsphinx-duration.js';
import type { SttResult } from '../../src/voice/stt/types.js';
import { Endpointer } from '../../src/voice/vad.js';
import { fixtureVocabulary, voiceDir } from './home-vocab.js';
import { asThePipelineHearsIt, feed, readWavPcm } from './wav.js';
import { mix, noise, tone } from '../voice/helpers.js';
import { speak } from '../support/espeak.js';


// ---- pure parts ----

test('speechExtent finds speech between room noise, ignores a click, and measures the trailing silence', () => {
  const pcm = Buffer.concat([noise(500, -60, 1), tone(20, -12), noise(300, -60, 2), mix(tone(1000, -20), noise(1000, -60, 3)), noise(400, -60, 4)]);
  const e = speechExtent(pcm);
  assert.equal(e.audioMs, 2220);
  // The 20 ms click is shorter than minRunMs: speech is the 1 s tone.
  assert.ok(Math.abs(e.speechMs - 1000) <= 20, `speech ${e.speechMs} ms`);
  assert.ok(Math.abs(e.trailingSilenceMs - 400) <= 20, `trailing ${e.trailingSilenceMs} ms`);
  const cut = speechExtent(Buffer.concat([noise(500, -60, 1), tone(800, -20)]));
  assert.ok(cut.trailingSilenceMs <= 10, `cut audio ends in speech: ${cut.trailingSilenceMs} ms`);
  assert.deepEqual(speechExtent(noise(800, -60, 5)).speechMs, 0, 'room noise alone is no speech');
  assert.deepEqual(speechExtent(Buffer.alloc(0)), { audioMs: 0, speechMs: 0, trailingSilenceMs: 0, voicedMs: 0 });
});

test('durationMisfit: ms per phone outside the band, or audio that ends in speech', () => {
  const L = DEFAULT_DURATION_LIMITS;
  const fits = { audioMs: 2000, speechMs: 1300, trailingSilenceMs: 400 };
  assert.equal(durationMisfit(fits, 13), undefined, '100 ms per phone fits');
  assert.equal(durationMisfit({ ...fits, speechMs: 9000 }, 38), 'too_long', '237 ms per phone: ten seconds for a timer sentence');
  assert.equal(durationMisfit({ ...fits, speechMs: 130 }, 5), 'too_short');
  assert.equal(durationMisfit({ ...fits, trailingSilenceMs: L.minTrailingSilenceMs - 10 }, 13), 'cut');
  assert.equal(durationMisfit({ ...fits, trailingSilenceMs: 0, silenceConfirmed: true }, 13), undefined, 'the endpointer heard silence after it');
  assert.equal(durationMisfit({ ...fits, trailingSilenceMs: 0, endedByPerson: true }, 13), undefined, 'a push-to-talk release right after the last word is not a cut');
  assert.equal(durationMisfit({ ...fits, speechMs: 13 * (L.maxMsPerPhone + 50), trailingSilenceMs: 0, endedByPerson: true }, 13), 'too_long', 'a released button does not excuse a length that does not fit');
  assert.equal(durationMisfit(fits, 0), undefined, 'no phones: nothing to compare with');
});

test('squeezedLead: the first word (past fillers, name phones and a leading "and") under the least ms per phone', () => {
  const phones = new Map([['turn', 3], ['all', 2], ['the', 2], ['and', 3], ['office', 3]]);
  const skip = (w: string): boolean => w.startsWith('<') || w.startsWith('ph_') || w === 'and';
  // "no the office lights" heard as "turn all the office ...": "turn" in 100 ms (33 ms per phone).
  assert.equal(squeezedLead([{ word: '<sil>', start: 0 }, { word: 'turn', start: 46 }, { word: 'all', start: 56 }, { word: 'the', start: 76 }], 90, phones, skip), 1);
  // "turn" in 250 ms (83 ms per phone): not squeezed, whatever follows.
  assert.equal(squeezedLead([{ word: '<sil>', start: 0 }, { word: 'turn', start: 50 }, { word: 'the', start: 75 }, { word: 'office', start: 77 }], 120, phones, skip), undefined);
  // A leading "and" is passed over: its "turn" is measured.
  assert.equal(squeezedLead([{ word: 'and', start: 0 }, { word: 'turn', start: 5 }, { word: 'the', start: 13 }], 30, phones, skip), 1);
  // A dictionary variant counts as its word; no word with phones: nothing to judge.
  assert.equal(squeezedLead([{ word: 'the(2)', start: 0 }, { word: 'office', start: 4 }], 40, phones, skip), 0);
  assert.equal(squeezedLead([{ word: '<sil>', start: 0 }], 40, phones, skip), undefined);
});

test('wordsInSilence: a word that begins after the last speech frame, or ends before the first, was made from noise', () => {
  // Speech from 330 to 2190 ms of 2700 ms, as in "turn off all of the lights in the Office.wav".
  const extent = { audioMs: 2700, speechMs: 1860, trailingSilenceMs: 510 };
  const w = (start: number, filler = false): { start: number; filler: boolean } => ({ start, filler });
  const said = [w(0, true), w(21), w(47), w(97), w(113), w(151), w(160), w(173), w(225, true)];
  assert.deepEqual(wordsInSilence(said, 270, extent), [], 'every word inside the speech');
  assert.deepEqual(wordsInSilence([...said, w(245), w(259)], 270, extent), [9, 10], '"to two" decoded from the room noise after the last word');
  assert.deepEqual(wordsInSilence([w(0, true), w(21), w(200), w(260, true)], 270, extent), [], 'a word that begins before the last speech frame and runs into the silence is speech');
  assert.deepEqual(wordsInSilence([w(0, true), w(21), w(219 + WORD_IN_SILENCE_MS / 10 - 1)], 270, extent), [], `a word up to ${WORD_IN_SILENCE_MS} ms late is allowed`);
  assert.deepEqual(wordsInSilence([w(0), w(5, true), w(40)], 270, extent), [0], 'a word that ends 280 ms before the first speech frame');
  assert.deepEqual(wordsInSilence([w(0), w(250, true)], 270, { audioMs: 2700, speechMs: 0, trailingSilenceMs: 2700 }), [], 'no speech frame: nothing to place words against');
});

test('dictionaryPhoneCounts reads a CMU dictionary (first pronunciation) and sentencePhones sums it', () => {
  const m = dictionaryPhoneCounts('lock L AA K\nthe DH AH\nthe(2) DH IY\nfront F R AH N T\ndoor D AO R\n\n');
  assert.equal(m.get('the'), 2);
  assert.equal(m.get('front'), 5);
  assert.equal(sentencePhones(['lock', 'the', 'front', 'door'], m), 13);
  assert.equal(sentencePhones(['lock', 'unknown'], m), 3);
});

// ---- real pocketsphinx ----

interface Expected {
  transcript: string | null;
}
const expected = (JSON.parse(readFileSync(path.join(voiceDir, 'expected.json'), 'utf8')) as { expected: Record<string, Expected> }).expected;
const commands = readdirSync(voiceDir)
  .filter((f) => f.endsWith('.wav') && expected[f]?.transcript)
  .sort();

/** The endpointer's speech start and end in a recording (followed by quiet room noise), ms. */
function speechOf(pcm: Buffer): { start: number; end: number } {
  const ev = new Endpointer({ silenceMs: 800, pauseMs: 400 }).push(Buffer.concat([pcm, noise(2000, -65, 3)])).find((e) => e.type === 'end');
  if (!ev || ev.type !== 'end' || ev.speech_start_ms === undefined) throw new Error('no speech in the recording');
  return { start: ev.speech_start_ms, end: ev.speech_end_ms };
}

const LONG = [
  'yesterday afternoon my neighbour told me a long story about the weather in the mountains and how the river flooded the old road near the village last spring',
  'the committee will meet again on thursday to discuss the budget for the new library and the repairs to the swimming pool roof',
  'please remember to bring your passport and a warm jacket because the train leaves very early and the station is cold',
];
const LONG_VOICES = ['en-us', 'en-us+m7'];

const engine = new PocketsphinxStt();
const vocab = fixtureVocabulary();
type Outcome = { name: string; r: SttResult; d: PocketsphinxDetails | undefined };
const longOut: Outcome[] = [];
const cutOut: Outcome[] = [];
const twiceOut: Outcome[] = [];
let dir = '';

async function decode(pcm: Buffer, endedByPerson = false): Promise<{ r: SttResult; d: PocketsphinxDetails | undefined }> {
  const s = engine.start();
  feed(pcm, (b) => s.write(b));
  const r = await s.end(endedByPerson ? { endedByPerson: true } : undefined);
  return { r, d: engine.lastDetails };
}

before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'ha-duration-'));
  await engine.setVocabulary(vocab);
  let k = 0;
  for (const voice of LONG_VOICES) {
    for (const sentence of LONG) {
      k++;
      const { pcm } = await speak(dir, String(k), sentence, { voice, rate: 150 + (k % 4) * 15 });
      longOut.push({ name: `${voice}: ${sentence.slice(0, 30)}...`, ...(await decode(mix(pcm, noise(pcm.length / 32, -55, k)))) });
    }
  }
  for (const f of commands) {
    const pcm = readWavPcm(path.join(voiceDir, f));
    const sp = speechOf(pcm);
    // Cut 0.9 s after speech starts, with the pre-roll before it; only commands whose speech (after the clean-up the recogniser does) lasts over 1 s are cut by that.
    if (speechExtent(prepareUtterance(pcm).pcm).speechMs > 1000) cutOut.push({ name: f, ...(await decode(pcm.subarray(Math.max(0, sp.start - 300) * 32, (sp.start + 900) * 32))) });
    const once = pcm.subarray(Math.max(0, sp.start - 100) * 32, (sp.end + 100) * 32);
    twiceOut.push({ name: f, ...(await decode(asThePipelineHearsIt(Buffer.concat([noise(500, -65, 5), once, noise(300, -65, 6), once])))) });
  }
});

after(async () => {
  await engine.close();
  await rm(dir, { recursive: true, force: true });
});

function report(xs: Outcome[]): string {
  return xs.map((x) => `${x.name} => ${x.r.rejected ? 'rejected' : `"${x.r.text}"`} (${x.d?.msPerPhone?.toFixed(0) ?? '-'} ms/phone, ${x.d?.durationMisfit ?? 'fits'})`).join('; ');
}

test('ten seconds of unrelated speech never acts', () => {
  assert.equal(longOut.length, LONG.length * LONG_VOICES.length);
  for (const x of longOut) assert.ok(x.d && x.d.extent && x.d.extent.speechMs > 5000, `${x.name}: long speech (${x.d?.extent?.speechMs} ms)`);
  const accepted = longOut.filter((x) => !x.r.rejected);
  assert.deepEqual(accepted, [], report(accepted));
  // The length check is what catches the ones the score gap lets through ("a thirty hour thirty one minute ...").
  assert.ok(longOut.some((x) => x.d?.durationMisfit === 'too_long'), report(longOut));
});

test('a real command cut off 0.9 s after it started never acts', () => {
  assert.ok(cutOut.length >= 10, `cut commands: ${cutOut.length}`);
  assert.ok(cutOut.some((x) => x.name === 'lock the Front Door.wav'), 'the example of the issue is among them');
  const accepted = cutOut.filter((x) => !x.r.rejected);
  assert.deepEqual(accepted, [], report(accepted));
  for (const x of cutOut) if (x.d?.durationMisfit) assert.ok(['cut', 'too_short'].includes(x.d.durationMisfit), report([x]));
  // Without the check, most of them acted: "is the front door locked" on 0.9 s of it, "next" for the weather.
  assert.ok(cutOut.filter((x) => x.d?.durationMisfit === 'cut').length >= 6, report(cutOut));
});

test('a push-to-talk release right after the last word is no cut: the command acts', async () => {
  const pcm = readWavPcm(path.join(voiceDir, 'lock the Front Door.wav'));
  const sp = speechOf(pcm);
  // The whole command, ending 20 ms after its last speech frame, as a quick button release leaves it.
  const released = pcm.subarray(Math.max(0, sp.start - 300) * 32, (sp.end + 20) * 32);
  const byPerson = await decode(released, true);
  assert.equal(byPerson.r.rejected, false, report([{ name: 'released', ...byPerson }]));
  assert.equal(byPerson.r.text, 'lock the front door');
  // The same audio from a file or a stream that just stopped is judged cut.
  const ended = await decode(released);
  assert.equal(ended.r.rejected, true, report([{ name: 'stream end', ...ended }]));
});

test('a real command said twice in a row is rejected when its length does not fit the sentence heard', () => {
  assert.equal(twiceOut.length, commands.length);
  for (const x of twiceOut) {
    if (x.r.rejected) continue;
    // What is accepted fits its sentence's length: a longer sentence of the grammar, never the single command stretched.
    assert.ok(x.d?.msPerPhone !== undefined && x.d.msPerPhone <= DEFAULT_DURATION_LIMITS.maxMsPerPhone, report([x]));
  }
  // Measured: 8 of 18 rejected (0 without the check); "is the front door locked" and "what's the weather like
  // in new york" said twice came out as themselves and acted. Raise as the recogniser improves.
  const rejected = twiceOut.filter((x) => x.r.rejected);
  assert.ok(rejected.length >= 8, `rejected ${rejected.length}/${twiceOut.length}: ${report(twiceOut)}`);
  for (const f of ['is the Front Door locked.wav', "what's the weather like in New York.wav"]) {
    const x = twiceOut.find((o) => o.name === f);
    assert.ok(x?.r.rejected, report(x ? [x] : []));
  }
});

test('the grammar carries the phone counts of its dictionary', async () => {
  const info = await engine.setVocabulary(vocab);
  const counts = dictionaryPhoneCounts(await readFile(path.join(info.dir, 'command.dict'), 'utf8'));
  assert.equal(counts.get('door'), 3);
  assert.equal(counts.get('front'), 5);
});

test('a word made from the silence rejects the decode only when the meaning rests on it', () => {
  const vocab = {
    entities: [{ id: 'l1', name: 'Ceiling', domain: 'light', area: 'Office' }],
    areas: ['Office'],
  };
  // Speech from 300 to 1200 ms of 1800 ms; words start every 100 ms from frame 30, the last ones as given.
  const extent = { audioMs: 1800, speechMs: 900, trailingSilenceMs: 600 };
  const judge = (words: Array<[string, number]>) => {
    const main = { total: -1000, ascr: -1000, lscr: 0, frames: 180, words: words.map(([word, start]) => ({ word, start, ascr: -10, lscr: 0 })) };
    return judgeDecode({ main, mainStderr: '', garbage: { ...main, ascr: main.ascr } } as never, { engine: 'pocketsphinx', vocab, maxScoreGap: 17.5, droppedMs: 0, extent, phones: new Map([['resume', 5], ['the', 2], ['turn', 3], ['off', 2], ['lights', 4], ['in', 2], ['office', 4], ['to', 2], ['two', 2]]), durationLimits: { minMsPerPhone: 1, maxMsPerPhone: 1000, minTrailingSilenceMs: 0 } });
  };
  const resume = judge([['<sil>', 0], ['resume', 30], ['the', 140], ['<sil>', 160]]);
  assert.equal(resume.result.rejected, false, '"the" from the noise after "resume" changes nothing');
  assert.ok(resume.result.intent, 'resume is a command');
  const lights = judge([['<sil>', 0], ['turn', 30], ['off', 40], ['the', 50], ['lights', 60], ['in', 80], ['the', 90], ['office', 100], ['to', 140], ['two', 150]]);
  assert.equal(lights.result.rejected, true, '"to two" from the noise would make it a brightness command');
  assert.equal(lights.details.durationMisfit, 'word_in_silence');
});

test('a number word squeezed into less time than it takes to say is not heard: the decode is rejected', async () => {
  const { squeezedNumbers, MIN_NUMBER_WORD_MS_PER_PHONE } = await import('../../src/voice/stt/pocketsphinx-duration.js');
  const { isNumberWord } = await import('../../src/intents/numbers.js');
  const phones = new Map([['set', 3], ['to', 2], ['eighty', 3], ['fifty', 5], ['percent', 6], ['ten', 3]]);
  // The real "set Bed Light brightness to 50 percent" as decoded: "eighty" in 12 frames (40 ms per phone).
  const squeezed = [{ word: 'set', start: 0 }, { word: 'to', start: 143 }, { word: 'eighty', start: 157 }, { word: 'percent', start: 169 }];
  assert.deepEqual(squeezedNumbers(squeezed, 296, phones, isNumberWord), [2]);
  // "ten" in 19 frames (63 ms per phone, as in the real timer recording) is heard; so is a long last word.
  assert.deepEqual(squeezedNumbers([{ word: 'to', start: 0 }, { word: 'ten', start: 10 }, { word: 'percent', start: 29 }], 40, phones, isNumberWord), []);
  assert.equal(MIN_NUMBER_WORD_MS_PER_PHONE, 60);
  // A fast speaker's number keeps the utterance's pace (MIN_NUMBER_PACE_RATIO): en-us+f3's "seventy" at 220 words a
  // minute, 57 ms per phone in an utterance of 61, is heard; the real "eighty" (40 ms per phone, utterance 69) is not.
  const seventy = [{ word: 'to', start: 0 }, { word: 'fifty', start: 10 }, { word: 'percent', start: 39 }];
  assert.deepEqual(squeezedNumbers(seventy, 60, phones, isNumberWord, undefined, 61), []);
  assert.deepEqual(squeezedNumbers(seventy, 60, phones, isNumberWord), [1], 'without the pace, the floor alone');
  assert.deepEqual(squeezedNumbers(squeezed, 296, phones, isNumberWord, undefined, 69), [2]);
  // Other words are not judged by it (a short "to" is normal), nor words missing from the dictionary.
  assert.deepEqual(squeezedNumbers([{ word: 'to', start: 0 }, { word: 'unknown', start: 1 }, { word: 'ten', start: 2 }], 30, phones, isNumberWord), []);
  // Through the judge: the same path is rejected with the reason.
  const vocab = { entities: [{ id: 'b', name: 'Bed Light', domain: 'light' }], areas: [] };
  const main = { total: -1, ascr: -1000, lscr: 0, frames: 296, words: [{ word: 'set', start: 28, ascr: -1, lscr: 0 }, { word: 'bed', start: 60, ascr: -1, lscr: 0 }, { word: 'light', start: 76, ascr: -1, lscr: 0 }, { word: 'brightness', start: 98, ascr: -1, lscr: 0 }, { word: 'to', start: 143, ascr: -1, lscr: 0 }, { word: 'eighty', start: 157, ascr: -1, lscr: 0 }, { word: 'percent', start: 169, ascr: -1, lscr: 0 }] };
  const extent = { audioMs: 2960, speechMs: 2000, trailingSilenceMs: 600 };
  const j = judgeDecode({ main, mainStderr: '', garbage: { ...main } }, { engine: 'pocketsphinx', vocab, maxScoreGap: 17.5, droppedMs: 0, extent, phones: new Map([...phones, ['bed', 3], ['light', 3], ['brightness', 8]]), durationLimits: { minMsPerPhone: 1, maxMsPerPhone: 1000, minTrailingSilenceMs: 0 } });
  assert.equal(j.result.rejected, true);
  assert.equal(j.details.durationMisfit, 'number_squeezed');
});

test('a short number word drawn over the time a longer rival takes ("two" for "twelve") is not heard; a "two" of normal length is', async () => {
  const { stretchedNumbers, MAX_NUMBER_STRETCH } = await import('../../src/voice/stt/pocketsphinx-duration.js');
  const { hasLongerRival } = await import('../../src/voice/stt/pocketsphinx-judge.js');
  const phones = new Map([['for', 2], ['two', 2], ['twelve', 5], ['ten', 3], ['minutes', 6]]);
  const longer = (w: string) => hasLongerRival(w, phones);
  assert.equal(longer('two'), true, '"twelve" sounds like it and is longer');
  assert.equal(longer('twelve'), false, 'no longer rival');
  assert.equal(longer('for'), false, 'no number');
  assert.equal(hasLongerRival('forty', new Map([['forty', 5], ['fourteen', 6]])), false, 'one phone longer is no rival to stretch over');
  // A tune voice's "set a timer for twelve minutes" heard as "... two minutes": "two" took 340 ms at 72 ms per phone.
  const words = (twoFrames: number) => [{ word: 'for', start: 0 }, { word: 'two', start: 17 }, { word: 'minutes', start: 17 + twoFrames }];
  assert.deepEqual(stretchedNumbers(words(34), 17 + 34 + 38, phones, longer, 72), [1]);
  // A "two" said: 1.4 times the utterance's ms per phone.
  assert.deepEqual(stretchedNumbers(words(20), 17 + 20 + 38, phones, longer, 72), []);
  assert.ok(MAX_NUMBER_STRETCH > 2.05 && MAX_NUMBER_STRETCH < 2.34, 'between the tune voices\' right and wrong "two"s');
  // Unknown pace: no verdict.
  assert.deepEqual(stretchedNumbers(words(34), 89, phones, longer, 0), []);
});
