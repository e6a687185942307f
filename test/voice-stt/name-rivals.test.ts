/**
 * Near names (src/voice/stt/name-rivals.ts; issue 15 "Names": a name the
 * home does not have is never the nearest device it has): which words are a
 * name word's rivals, how they are aligned, and the verdict (a rival that
 * fits as well asks first). On real pocketsphinx with espeak-ng: a tester's
 * "turn on the den light" switched on the Bed Light.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { NEAR_NAME_WORDS_EN, distinctiveNameWords, firstPronunciations, nameRivals, phoneDistance } from '../../src/voice/stt/name-rivals.js';
import { NAME_RIVAL_MARGIN, oppositeSentences, opposedVerdict, type PocketsphinxDetails } from '../../src/voice/stt/pocketsphinx-judge.js';
import { alignSentences } from '../../src/voice/stt/pocketsphinx-decoder.js';
import { DEFAULT_DECODER_ARGS, DEFAULT_FRONTEND_ARGS, PocketsphinxStt } from '../../src/voice/stt/pocketsphinx.js';
import type { SttResult } from '../../src/voice/stt/types.js';
import { prepareUtterance } from '../../src/voice/stt/audio-prep.js';
import { fixtureVocabulary } from './home-vocab.js';
import { speak } from '../support/espeak.js';
import { mix, noise } from '../voice/helpers.js';

test('phone distance: substitutions, insertions and deletions count one each', () => {
  assert.equal(phoneDistance(['B', 'EH', 'D'], ['B', 'EH', 'D']), 0);
  assert.equal(phoneDistance(['B', 'EH', 'D'], ['HH', 'EH', 'D']), 1);
  assert.equal(phoneDistance(['B', 'EH', 'D'], ['D', 'EH', 'N']), 2);
  assert.equal(phoneDistance(['B', 'EH', 'D'], ['B', 'EH', 'N', 'CH']), 2);
  assert.equal(phoneDistance([], ['A']), 1);
});

test('a name word\'s rivals: near in sound (one phone, or two with the same vowels), never a word of the home\'s names, a kind word, a long word, or a word the name word holds', () => {
  const phones = firstPronunciations(
    ['bed B EH D', 'bed(2) B AE D', 'den D EH N', 'deck D EH K', 'head HH EH D', 'bar B AA R', 'kid K IH D', 'desk D EH S K', 'light L AY T', 'lights L AY T S',
      'standing S T AE N D IH NG', 'bench B EH N CH', 'office AO F AH S'].join('\n'),
  );
  assert.deepEqual(phones.get('bed'), ['B', 'EH', 'D'], 'the first pronunciation');
  const rivals = nameRivals(['bed', 'light', 'standing', 'desk', 'office'], phones, ['den', 'deck', 'head', 'bar', 'kid', 'bench', 'lights', 'bed', 'desk']);
  assert.deepEqual(rivals.bed, ['den', 'deck', 'head', 'bench'], '"bar" and "kid" differ in the vowel; "desk" is a name word of this home');
  assert.deepEqual(rivals.desk, ['den'], '"deck" is "desk" with a phone left out (said fast, "desk" fits it as well): no rival; "den" is two phones off with the same vowel');
  assert.equal(rivals.light, undefined, 'a kind word gets none');
  assert.equal(rivals.standing, undefined, 'a long word gets none');
  assert.ok(NEAR_NAME_WORDS_EN.includes('den') && NEAR_NAME_WORDS_EN.includes('deck'));
});

test('the words that get rivals: the one word of a name that is no kind word ("bed" of "bed light"); none of a name with two ("party time")', () => {
  assert.deepEqual(distinctiveNameWords([['bed', 'light'], ['party', 'time'], ['office'], ['desk', 'lamp'], ['mood', 'lighting'], ['front', 'door'], ['light']]), ['bed', 'office', 'desk', 'front']);
});

test('the sentences aligned for a command: the heard words, and per name word with rivals one sentence with all of them in its place; a question gets none', () => {
  const rivals = { bed: ['den', 'deck'] };
  assert.deepEqual(oppositeSentences('turn on the bed light', { nameRivals: rivals }), [
    ['turn', 'on', 'the', 'bed', 'light'],
    ['turn', 'off', 'the', 'bed', 'light'],
    ['turn', 'on', 'the', ['den', 'deck'], 'light'],
  ]);
  assert.deepEqual(oppositeSentences('is the bed light on', { corrections: false, nameRivals: rivals }), [['is', 'the', 'bed', 'light', 'on']], 'a question changes nothing');
  assert.deepEqual(oppositeSentences('turn off the tv', { nameRivals: rivals }), [['turn', 'off', 'the', 'tv']]);
  assert.deepEqual(oppositeSentences('turn off the constructor light', { nameRivals: { constructor: ['x'] } }).length, 2, 'an own key only');
  assert.deepEqual(oppositeSentences('turn off the toString light', { nameRivals: {} }).length, 1, 'no inherited key is a rival list');
  // Nor of the opposites and numbers: "constructor" was taken for an entry of OPPOSITE_WORDS and NUMBER_RIVALS (a throw).
  assert.deepEqual(oppositeSentences('turn off the constructor light'), [['turn', 'off', 'the', 'constructor', 'light']]);
});

function bedLight(): { result: SttResult; details: PocketsphinxDetails } {
  return {
    // "off": a heard "on" has its own rival too (the particle's, PARTICLE_MARGIN), aligned before the names.
    result: { text: 'turn off the bed light', confidence: 0.9, rejected: false, engine: 'pocketsphinx', intent: { intent: 'HassTurnOff', slots: { name: 'Bed Light', domain: 'light' }, text: 'turn off the bed light', language: 'en' } },
    details: { hypothesis: 'turn off the bed light', grammarMismatch: false, frames: 100 },
  };
}

test('the verdict: a rival that fits the audio better than the heard name word (NAME_RIVAL_MARGIN) makes the command ask first; a clear lead acts as heard', () => {
  const S = oppositeSentences('turn off the bed light', { nameRivals: { bed: ['den', 'deck'] } });
  const rival = (lead: number) => ({ ascr: -1000 - 100 * lead, frames: 100, words: [{ word: 'turn', start: 0, ascr: 0, lscr: 0 }, { word: 'off', start: 10, ascr: 0, lscr: 0 }, { word: 'the', start: 20, ascr: 0, lscr: 0 }, { word: 'deck', start: 30, ascr: 0, lscr: 0 }, { word: 'light', start: 40, ascr: 0, lscr: 0 }], total: 0, lscr: 0 });
  const close = opposedVerdict(bedLight(), S, [{ ascr: -1000, frames: 100 }, rival(NAME_RIVAL_MARGIN - 0.3)]);
  assert.equal(close.result.rejected, false, 'not rejected: it asks');
  assert.deepEqual(close.result.intent?.unsure_between, ['bed', 'deck'], 'the heard word and the rival that fitted best');
  assert.ok(close.details.nameRivalMargin! < NAME_RIVAL_MARGIN);
  const clear = opposedVerdict(bedLight(), S, [{ ascr: -1000, frames: 100 }, rival(NAME_RIVAL_MARGIN + 0.5)]);
  assert.equal(clear.result.intent?.unsure_between, undefined, 'a clear lead acts as heard');
  assert.equal(clear.result.rejected, false);
  // A lock word's opposite rejects as before, and the reply names it, though a near name scored closer.
  const lock = oppositeSentences('unlock the bed light', { nameRivals: { bed: ['den', 'deck'] } });
  const both = opposedVerdict(bedLight(), lock, [{ ascr: -1000, frames: 100 }, { ascr: -1010, frames: 100 }, rival(-2)]);
  assert.equal(both.result.rejected, true);
  assert.deepEqual(both.result.unsure_between, ['unlock', 'lock']);
  const notPlaced = opposedVerdict(bedLight(), S, [{ ascr: -1000, frames: 100 }, undefined]);
  assert.equal(notPlaced.result.intent?.unsure_between, undefined, 'a rival the aligner could not place is none');
});

test('on real pocketsphinx: the built grammar gives "bed" its rivals, the dictionary has them, and alternatives in one place align to the best of them', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ha-rivals-'));
  const engine = new PocketsphinxStt({ workDir: path.join(dir, 'work') });
  try {
    const info = await engine.setVocabulary(fixtureVocabulary());
    assert.deepEqual(info.generated.den, undefined, 'rival words come from the pronouncing dictionary, none generated');
    const dictText = await readFile(path.join(info.dir, 'command.dict'), 'utf8');
    const phones = firstPronunciations(dictText);
    assert.ok(phones.has('den') && phones.has('deck'), 'the rivals are in the dictionary for the alignments');
    const { pcm } = await speak(dir, 'den', 'turn on the den light', { voice: 'en-us', rate: 160 });
    await writeFile(path.join(dir, 'utt.raw'), prepareUtterance(mix(pcm, noise(pcm.length / 32, -50, 7))).pcm);
    const settings = { binary: 'pocketsphinx_batch', hmm: '/usr/share/pocketsphinx/model/en-us/en-us', frontendArgs: DEFAULT_FRONTEND_ARGS, decoderArgs: DEFAULT_DECODER_ARGS, garbageArgs: undefined, compoundArgs: undefined };
    const aligned = await alignSentences(settings, dir, path.join(info.dir, 'command.dict'), [['turn', 'on', 'the', 'bed', 'light'], ['turn', 'on', 'the', ['deck', 'den'], 'light']], () => undefined, 30_000);
    assert.ok(aligned[0] && aligned[1], 'both aligned');
    const chosen = aligned[1]!.words.map((w) => w.word.replace(/\(\d+\)$/, ''));
    assert.ok(chosen.includes('den') || chosen.includes('deck'), `one of the alternatives: ${chosen.join(' ')}`);
  } finally {
    await engine.close();
    await rm(dir, { recursive: true, force: true });
  }
});
