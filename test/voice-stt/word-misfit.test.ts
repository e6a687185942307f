/**
 * One word the audio does not hold among several it does (issue 15 "Never
 * the wrong action"; pocketsphinx-judge.ts MAX_WORD_GAP): a word after the
 * first whose own score gap against the free phone loop passes MAX_WORD_GAP
 * rejects the decode, whatever the utterance's mean gap. On audio:
 * test/e2e/voice-not-command.test.ts ("never turn off the tv", en-029).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { MAX_WORD_GAP, NAME_WORD_ASK_GAP, OTHER_NAME, OTHER_WORD, WORD_GAP_MIN_FRAMES, doubtedNameWord, judgeDecode, misfitWord, rejectionReason, type WordGap } from '../../src/voice/stt/pocketsphinx-judge.js';
import type { HypsegUtterance } from '../../src/voice/stt/pocketsphinx-log.js';
import { VOCAB } from '../intents/vocab.js';

const FRAMES = 20;

/**
 * The grammar path of `words` (FRAMES frames each after 10 of silence) and a
 * phone loop over the same frames that scores each word `gaps[word]` per
 * frame better than the path (0 where not given).
 */
function decode(words: string[], gaps: Record<string, number>): { main: HypsegUtterance; garbage: HypsegUtterance } {
  const seg = (score: (w: string) => number) => words.map((word, i) => ({ word, start: 10 + i * FRAMES, ascr: score(word), lscr: 0 }));
  const mainWords = seg((w) => -50 - (gaps[w] ?? 0) * FRAMES);
  const loopWords = seg(() => -50);
  const frames = words.length * FRAMES + 10;
  const sum = (ws: Array<{ ascr: number }>) => ws.reduce((a, w) => a + w.ascr, 0);
  return {
    main: { total: sum(mainWords), ascr: sum(mainWords), lscr: 0, frames, words: mainWords },
    garbage: { total: sum(loopWords), ascr: sum(loopWords), lscr: 0, frames, words: loopWords },
  };
}

function judge(sentence: string, gaps: Record<string, number>) {
  const { main, garbage } = decode(sentence.split(' '), gaps);
  return judgeDecode({ main, mainStderr: '', garbage }, { engine: 'pocketsphinx', vocab: VOCAB, maxScoreGap: 17.5, droppedMs: 0 });
}

const gap = (word: string, g: number, frames = FRAMES): WordGap => ({ word, start: 0, frames, gap: g });

test('misfitWord: a word after the first over MAX_WORD_GAP, long enough to judge; not the first word, not a phone, not a short word', () => {
  assert.equal(misfitWord([gap('dim', 10), gap('the', 5), gap('to', MAX_WORD_GAP + 4)])?.word, 'to');
  assert.equal(misfitWord([gap('turn', MAX_WORD_GAP + 39), gap('on', 16), gap('kitchen', 22)]), undefined, 'the first word is aligned loosely');
  assert.equal(misfitWord([gap('turn', 1), gap('to', MAX_WORD_GAP + 10, WORD_GAP_MIN_FRAMES - 1)]), undefined, 'too short to judge');
  assert.equal(misfitWord([gap('open', 1), gap('ph_aa', MAX_WORD_GAP + 10)]), undefined, 'a phone of a name spelt out');
  assert.equal(misfitWord([gap('turn', 1), gap('on', MAX_WORD_GAP)]), undefined, 'at the limit is still in');
  assert.equal(misfitWord([]), undefined);
});

test('a command with one word the audio does not hold is rejected, though its mean gap is well inside the threshold', () => {
  const j = judge('turn on the kitchen light', { kitchen: MAX_WORD_GAP + 5 });
  assert.ok(j.details.scoreGap !== undefined && j.details.scoreGap < 17.5, `mean gap ${j.details.scoreGap}`);
  assert.equal(j.result.rejected, true);
  assert.equal(j.result.intent, undefined);
  assert.equal(j.details.wordMisfit?.word, 'kitchen');
});

test('the same command with every word within MAX_WORD_GAP acts; so does one whose first word alone misfits', () => {
  for (const gaps of [{ kitchen: MAX_WORD_GAP - 5, on: 30 }, { turn: MAX_WORD_GAP + 30 }]) {
    const j = judge('turn on the kitchen light', gaps);
    assert.equal(j.result.rejected, false, JSON.stringify(gaps));
    assert.equal(j.result.intent?.intent, 'HassTurnOn');
    assert.equal(j.details.wordMisfit, undefined);
  }
});

test("a room command's room word that fits its audio badly asks first, as a device's name word does (a tester's \"set the porch light to fifty percent\" set the Office lights)", () => {
  const asks = judge('turn off the hallway lights', { hallway: NAME_WORD_ASK_GAP + 5 });
  assert.equal(asks.result.rejected, false);
  assert.equal(asks.result.intent?.slots.area, 'Hallway');
  assert.deepEqual(asks.result.intent?.unsure_between, ['hallway', OTHER_NAME]);
  const fits = judge('turn off the hallway lights', { hallway: NAME_WORD_ASK_GAP - 10 });
  assert.equal(fits.result.intent?.unsure_between, undefined);
});

test("a room command's kind word that fits its audio badly asks first: it picks the devices as the room word does (a tester's \"set the garden lights to thirty percent\" set the Office lights)", () => {
  const asks = judge('set the hallway lights to 30 percent', { lights: NAME_WORD_ASK_GAP + 5 });
  assert.equal(asks.result.rejected, false);
  assert.equal(asks.result.intent?.intent, 'HassLightSet');
  assert.deepEqual(asks.result.intent?.unsure_between, ['lights', OTHER_NAME]);
  const fits = judge('set the hallway lights to 30 percent', { lights: NAME_WORD_ASK_GAP - 10 });
  assert.equal(fits.result.intent?.unsure_between, undefined);
  // A named device's kind word is doubted as a name word too (next test); a kind word the name lacks is not.
  const other = judge('turn on the reading lamp', { on: NAME_WORD_ASK_GAP + 10 });
  assert.equal(other.result.intent?.unsure_between, undefined);
  // The rule's own check: kind words only when the caller says they pick the devices.
  assert.equal(doubtedNameWord([gap('set', 1), gap('lights', NAME_WORD_ASK_GAP + 1)], new Set(['hallway', 'lights'])), undefined);
  assert.equal(doubtedNameWord([gap('set', 1), gap('lights', NAME_WORD_ASK_GAP + 1)], new Set(['hallway', 'lights']), NAME_WORD_ASK_GAP, WORD_GAP_MIN_FRAMES, new Set(['lights']))?.word, 'lights');
});

test('an article alone that misfits (MISFIT_ASK_WORDS) makes a command ask first instead of rejecting it; with another word misfit, or in a question, it is still rejected', () => {
  const asks = judge('turn on the kitchen light', { the: MAX_WORD_GAP + 5 });
  assert.equal(asks.result.rejected, false);
  assert.equal(asks.result.intent?.intent, 'HassTurnOn');
  assert.deepEqual(asks.result.intent?.unsure_between, ['the', OTHER_WORD], 'a yes first');
  assert.equal(asks.details.wordMisfit, undefined);
  assert.equal(asks.details.articleMisfit?.word, 'the');
  const both = judge('turn on the kitchen light', { the: MAX_WORD_GAP + 5, kitchen: MAX_WORD_GAP + 5 });
  assert.equal(both.result.rejected, true);
  assert.equal(both.details.wordMisfit?.word, 'the');
  const question = judge('is the kitchen light on', { the: MAX_WORD_GAP + 5 });
  assert.equal(question.result.rejected, true, 'a question is not asked back');
});

test('rejectionReason names the rule that refused a decode (the log line a maintainer reads), and nothing for one that acts', () => {
  const misfit = judge('turn on the kitchen light', { kitchen: MAX_WORD_GAP + 5 });
  assert.equal(rejectionReason(misfit.result, misfit.details), 'word_misfit:kitchen');
  const far = judge('turn on the kitchen light', { turn: 20, on: 20, the: 20, kitchen: 20, light: 20 });
  assert.equal(far.result.rejected, true);
  assert.equal(rejectionReason(far.result, far.details), 'score_gap');
  const ok = judge('turn on the kitchen light', {});
  assert.equal(rejectionReason(ok.result, ok.details), undefined);
  const notCommand = judge("don't turn on the kitchen light", {});
  assert.equal(rejectionReason(notCommand.result, notCommand.details), 'not_command');
  const nothing = { text: '', confidence: 0, rejected: true, engine: 'pocketsphinx' };
  assert.equal(rejectionReason(nothing, { hypothesis: '', grammarMismatch: false, frames: 0 }), 'nothing_decoded', 'not "no speech": a tester\'s clear "yes" with no question open was logged so');
  assert.equal(rejectionReason(nothing, { hypothesis: 'turn on the kitchen light', grammarMismatch: false, frames: 90, durationMisfit: 'too_long' }), 'duration:too_long');
  assert.equal(rejectionReason(nothing, { hypothesis: 'lock the front door', grammarMismatch: false, frames: 90, oppositeClose: true }), 'opposite_close');
});

test('a word of the named device\'s name that fits its audio badly (NAME_WORD_ASK_GAP) makes the command ask first; a well-fitting name, or a misfit word that is no part of the name, does not', () => {
  const doubted = judge('turn on the reading lamp', { reading: NAME_WORD_ASK_GAP + 3 });
  assert.equal(doubted.result.rejected, false);
  assert.equal(doubted.result.intent?.intent, 'HassTurnOn');
  assert.deepEqual(doubted.result.intent?.unsure_between, ['reading', OTHER_NAME], 'asks: a name the home lacks heard as this one fits its word badly');
  assert.equal(doubted.details.doubtedNameWord?.word, 'reading');
  for (const gaps of [{ reading: NAME_WORD_ASK_GAP - 5 }, { lamp: NAME_WORD_ASK_GAP - 5 }, { on: NAME_WORD_ASK_GAP + 10 }]) {
    const j = judge('turn on the reading lamp', gaps);
    assert.equal(j.result.intent?.intent, 'HassTurnOn', JSON.stringify(gaps));
    assert.equal(j.result.intent?.unsure_between, undefined, JSON.stringify(gaps));
  }
  // A question changes nothing: it is answered, not asked about.
  const question = judge('is the reading lamp on', { reading: NAME_WORD_ASK_GAP + 3 });
  assert.equal(question.result.intent?.intent, 'HassGetState');
  assert.equal(question.result.intent?.unsure_between, undefined);
  // Only words of the device the command names: a room word is not doubted by this rule.
  assert.equal(doubtedNameWord([gap('turn', 60), gap('office', NAME_WORD_ASK_GAP + 1)], new Set(['bed', 'light'])), undefined);
  assert.equal(doubtedNameWord([gap('turn', 60), gap('bed', NAME_WORD_ASK_GAP + 1, WORD_GAP_MIN_FRAMES - 1)], new Set(['bed', 'light'])), undefined, 'too short to judge');
  assert.equal(doubtedNameWord([gap('bed', NAME_WORD_ASK_GAP + 20)], new Set(['bed'])), undefined, 'the first word is aligned loosely');
});

test("the kind word of a device's name that fits its audio badly asks first: it tells the device from the room's other kinds (a tester's \"set the kitchen blinds to fifty percent\" set the Kitchen Light)", () => {
  // The tester's decode (demo home, en-gb-x-rp and en-us without room noise): "light" 35 to 48 per frame.
  const asks = judge('set the kitchen light to 50 percent', { light: NAME_WORD_ASK_GAP + 4 });
  assert.equal(asks.result.rejected, false);
  assert.equal(asks.result.intent?.intent, 'HassLightSet');
  assert.equal(asks.result.intent?.slots.name, 'Kitchen Light');
  assert.deepEqual(asks.result.intent?.unsure_between, ['light', OTHER_NAME]);
  // An alias's kind word too ("Book Light" of the Reading Lamp), and the name's own ("lamp").
  assert.deepEqual(judge('turn on the book light', { light: NAME_WORD_ASK_GAP + 4 }).result.intent?.unsure_between, ['light', OTHER_NAME]);
  assert.deepEqual(judge('turn on the reading lamp', { lamp: NAME_WORD_ASK_GAP + 4 }).result.intent?.unsure_between, ['lamp', OTHER_NAME]);
  // Said kind words of names fit within 34 per frame on the tune voices: they act unasked.
  assert.equal(judge('set the kitchen light to 50 percent', { light: NAME_WORD_ASK_GAP - 1 }).result.intent?.unsure_between, undefined);
  // A question changes nothing, and a kind word that is no part of the name ("door" is not a room's kind) is not doubted.
  assert.equal(judge('is the kitchen light on', { light: NAME_WORD_ASK_GAP + 10 }).result.intent?.unsure_between, undefined);
  assert.equal(judge('unlock the back door', { door: NAME_WORD_ASK_GAP + 10 }).result.intent?.unsure_between, undefined);
});
