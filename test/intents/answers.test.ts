/**
 * The answer grammar (src/intents/answers.ts): the yes/no phrases the
 * confirmation gate takes (src/home/confirm.ts parseYesNo) are exactly the
 * ones the recogniser can hear while a question waits, and its FSG holds
 * every phrase and nothing else.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ANSWER_DECOYS_EN, NO_PHRASES_EN, SPOKEN_ANSWERS_EN, YES_PHRASES_EN, answerFsg, answerSentences, answerWords, spokenAnswer } from '../../src/intents/answers.js';
import { parseYesNo } from '../../src/home/confirm.js';
import { parseFsg, standing } from '../../src/voice/stt/fsg-walk.js';

test('every phrase of the answer grammar is a yes or a no to the gate, and to the recogniser\'s judge the same one; a decoy is neither', () => {
  for (const text of SPOKEN_ANSWERS_EN) {
    const gate = parseYesNo(text);
    assert.notEqual(gate, undefined, `the gate takes "${text}"`);
    assert.equal(spokenAnswer(text), gate, `"${text}"`);
  }
  for (const p of YES_PHRASES_EN) assert.equal(parseYesNo(p), true, p);
  for (const p of NO_PHRASES_EN) assert.equal(parseYesNo(p), false, p);
  for (const decoy of ANSWER_DECOYS_EN) {
    assert.equal(spokenAnswer(decoy), undefined, `decoy "${decoy}"`);
    // "sure" typed is a yes; spoken it is a decoy (a tester's "shore", "sir" and "share" were heard as "sure" and unlocked the door).
    assert.equal(parseYesNo(decoy), decoy === 'sure' ? true : undefined, `decoy "${decoy}" typed`);
    assert.ok(answerSentences().some((w) => w.join(' ') === decoy), `"${decoy}" is in the grammar`);
  }
  assert.equal(spokenAnswer('turn on the tv'), undefined);
  assert.equal(spokenAnswer('please'), undefined, 'a bare "please" answers nothing');
  assert.equal(spokenAnswer(''), undefined);
});

test('the answer FSG: each spoken phrase reaches the final state; other words do not', () => {
  const fsg = parseFsg(answerFsg());
  for (const words of answerSentences()) assert.equal(standing(fsg, words).complete, true, words.join(' '));
  assert.equal(standing(fsg, ['no', 'thanks']).complete, true);
  assert.equal(standing(fsg, ['yes', 'please']).complete, false, 'heard for "yesterday": typed only');
  assert.equal(standing(fsg, ['never']).complete, false, 'half a phrase');
  assert.equal(standing(fsg, ['unlock']).complete, false);
  assert.deepEqual(answerWords(), [...new Set(answerSentences().flat())].sort());
  assert.ok(!answerWords().includes('dont'), 'typed spellings are not spoken words');
});
