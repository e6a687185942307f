/**
 * The not-command openings in the recogniser's verdict (issue 15 "Never the
 * wrong action"; src/intents/fsg.ts NOT_COMMAND_LEADS_EN): a decode that opens
 * with "don't", "do not", "I", "we" or "you" is rejected whatever follows, and
 * an answer's "don't" (the answer grammar's no) is still a no. On audio:
 * test/e2e/voice-not-command.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { judgeDecode, opensNotCommand } from '../../src/voice/stt/pocketsphinx-judge.js';
import type { HypsegUtterance } from '../../src/voice/stt/pocketsphinx-log.js';
import { VOCAB } from '../intents/vocab.js';

/** A grammar path of `words`, 20 frames each, scored as well as the phone loop. */
function path(words: string[]): HypsegUtterance {
  return { total: -1000, ascr: -1000, lscr: 0, frames: words.length * 20 + 20, words: words.map((word, i) => ({ word, start: 10 + i * 20, ascr: -50, lscr: 0 })) };
}

function judge(sentence: string, answers = false) {
  const main = path(sentence.split(' '));
  return judgeDecode({ main, mainStderr: '', garbage: { ...main } }, { engine: 'pocketsphinx', vocab: VOCAB, maxScoreGap: 17.5, droppedMs: 0, answers });
}

test('opensNotCommand: the openings, whole words only, pronunciation variants too', () => {
  assert.equal(opensNotCommand(["don't", 'turn', 'on', 'the', 'kitchen', 'light']), true);
  assert.equal(opensNotCommand(['do', 'not', 'unlock', 'the', 'back', 'door']), true);
  assert.equal(opensNotCommand(['i(2)', 'turn', 'off']), true);
  assert.equal(opensNotCommand(['we', 'lock', 'the', 'back', 'door']), true);
  assert.equal(opensNotCommand(['do', 'you', 'know', 'what', 'time', 'it', 'is']), false, '"do" alone opens a question');
  assert.equal(opensNotCommand(['turn', 'on', 'the', 'kitchen', 'light']), false);
  assert.equal(opensNotCommand(['is', 'the', 'back', 'door', 'locked']), false);
  assert.equal(opensNotCommand([]), false);
});

test('a decode that opens with a not-command opening is rejected, with its reason in the details; the same command without it acts', () => {
  for (const s of ["don't turn on the kitchen light", 'do not unlock the back door', "please don't turn on the kitchen light", 'please do not lock the back door', 'never turn off the kitchen light', 'i turn off the kitchen light', 'you lock the back door', 'she turn on the kitchen light']) {
    const j = judge(s);
    assert.equal(j.result.rejected, true, s);
    assert.equal(j.result.intent, undefined, s);
    assert.equal(j.details.notCommand, true, s);
  }
  const ok = judge('turn on the kitchen light');
  assert.equal(ok.result.rejected, false);
  assert.equal(ok.result.intent?.intent, 'HassTurnOn');
  assert.equal(ok.details.notCommand, undefined);
});

test('"never mind" opens with "never" but is a sentence of its own: not rejected', () => {
  const j = judge('never mind');
  assert.equal(j.result.rejected, false);
  assert.equal(j.result.intent?.intent, 'HassNevermind');
  assert.equal(j.details.notCommand, undefined);
});

test('while a question waits, a spoken "don\'t" is the answer no, not a not-command opening', () => {
  const j = judge("don't", true);
  assert.equal(j.result.rejected, false);
  assert.equal(j.result.text, "don't");
  assert.equal(j.details.notCommand, undefined);
});
