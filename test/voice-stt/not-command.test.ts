/**
 * The not-command openings in the recogniser's verdict (issue 15 "Never the
 * wrong action"; src/intents/fsg.ts NOT_COMMAND_LEADS_EN): a decode that opens
 * with "don't", "do not" or "never" is rejected whatever follows; one that opens
 * with a pronoun ("I", "we", "you", ...; pocketsphinx-judge.ts PRONOUN_LEADS_EN)
 * before one command asks for a yes before it acts; an answer's "don't" (the
 * answer grammar's no) is still a no. On audio: test/e2e/voice-not-command.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { judgeDecode, opensNotCommand, startShapedOperation } from '../../src/voice/stt/pocketsphinx-judge.js';
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

test('a decode that opens with a negation is rejected, with its reason in the details; the same command without it acts', () => {
  for (const s of ["don't turn on the kitchen light", 'do not unlock the back door', "please don't turn on the kitchen light", 'please do not lock the back door', 'never turn off the kitchen light']) {
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

test('a pronoun before one command that changes something ("i turn off ...": a report, a question without its "did", or an "uh" before a command) keeps the command, which asks for a yes first; before a question, two commands, a lock word (a negation lost before it flips it), a name the filler took or a name not the home\'s own ("the garage door" of a Garage), or nothing, it is rejected', () => {
  for (const [s, intent, pronoun] of [['i turn off the kitchen light', 'HassTurnOff', 'i'], ['you open the garage', 'HassTurnOn', 'you'], ['she turn on the kitchen light', 'HassTurnOn', 'she'], ['they turn off the kitchen light', 'HassTurnOff', 'they'], ['we set a timer for five minutes', 'HassStartTimer', 'we']] as const) {
    const j = judge(s);
    assert.equal(j.result.rejected, false, s);
    assert.equal(j.result.text, s.split(' ').slice(1).join(' ').replace('five', '5'), `${s}: the text is the command's`);
    assert.equal(j.result.intent?.intent, intent, s);
    assert.deepEqual(j.result.intent?.unsure_between, [pronoun, 'another word'], `${s}: it asks first`);
    assert.equal(j.details.pronounLead, pronoun, s);
    assert.equal(j.details.notCommand, undefined, s);
  }
  for (const s of ['i is the kitchen light on', 'you what time is it', 'i open the ph_p ph_ey', 'they open the garage door', 'you lock the back door', 'we unlock the back door', 'you please unlock the back door', 'i turn on the kitchen light and lock the back door', 'i', 'we please']) {
    const j = judge(s);
    assert.equal(j.result.rejected, true, s);
    assert.equal(j.result.intent, undefined, s);
    assert.equal(j.details.pronounLead, undefined, s);
  }
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

test('an operation on a timer named by its length has a start\'s shape ("so, set a timer for five minutes" was heard "hold the timer for five minutes" and paused the running one): it asks for a yes first', () => {
  assert.equal(startShapedOperation(['hold', 'the', 'timer', 'for', 'five', 'minutes']), 'hold');
  assert.equal(startShapedOperation(['please', 'stop', 'timer', 'for', 'two', 'hours']), 'stop');
  assert.equal(startShapedOperation(['we', 'cancel', 'my', 'timer', 'for', 'thirty', 'seconds']), 'cancel');
  assert.equal(startShapedOperation(['hold', 'the', 'five', 'minutes', 'timer']), 'hold', 'a tester\'s "so, set a five minute timer"');
  assert.equal(startShapedOperation(['stop', 'the', 'ten', 'minute', 'timer']), 'stop');
  for (const w of [['pause', 'the', 'pasta', 'timer'], ['cancel', 'the', 'timer'], ['cancel', 'the', 'timer', 'for', 'pasta'], ['set', 'a', 'timer', 'for', 'five', 'minutes'], ['add', 'five', 'minutes', 'to', 'the', 'timer', 'for', 'ten', 'minutes']]) {
    assert.equal(startShapedOperation(w), undefined, w.join(' '));
  }
  for (const [s, intent, verb] of [['hold the timer for five minutes', 'HassPauseTimer', 'hold'], ['stop the timer for five minutes', 'HassCancelTimer', 'stop'], ['hold the five minute timer', 'HassPauseTimer', 'hold'], ['resume the timer for ten minutes', 'HassUnpauseTimer', 'resume']] as const) {
    const j = judge(s);
    assert.equal(j.result.rejected, false, s);
    assert.equal(j.result.intent?.intent, intent, s);
    assert.deepEqual(j.result.intent?.unsure_between, [verb, 'set'], `${s}: asks first`);
  }
  for (const s of ['pause the timer', 'cancel the timer', 'set a timer for five minutes']) assert.equal(judge(s).result.intent?.unsure_between, undefined, `${s}: acts as heard`);
});
