/**
 * A command said while a yes/no question waits (src/voice/capture.ts
 * commandInsteadOfAnswer): the command grammar's result runs instead of
 * "Please say yes or no." only when it is a placed command of three words or
 * more, so a short answer the answer grammar missed never acts as "next".
 * The whole path through the running service: test/e2e/voice-opposites.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { commandInsteadOfAnswer, COMMAND_DURING_ANSWER_MIN_WORDS } from '../../src/voice/capture.js';
import type { SttResult } from '../../src/voice/stt/types.js';
import type { IntentMatch } from '../../src/intents/types.js';

const turnOn: IntentMatch = { intent: 'HassTurnOn', slots: { name: 'standing light' } } as IntentMatch;
const result = (text: string, extra: Partial<SttResult> = {}): SttResult => ({ text, confidence: 0.9, rejected: false, engine: 'pocketsphinx', intent: turnOn, ...extra });

test('a placed command of three words or more is run instead of asking again', () => {
  assert.equal(COMMAND_DURING_ANSWER_MIN_WORDS, 3);
  assert.equal(commandInsteadOfAnswer(result('turn on standing light')), true);
  assert.equal(commandInsteadOfAnswer(result('turn on the tv and lock the front door', { intent: undefined, intents: [turnOn, turnOn] })), true);
});

test('rejected, unplaced or short results are no command: the box asks for a yes or no again', () => {
  assert.equal(commandInsteadOfAnswer(result('turn on standing light', { rejected: true })), false);
  assert.equal(commandInsteadOfAnswer(result('turn on standing light', { intent: undefined })), false);
  assert.equal(commandInsteadOfAnswer(result('next', { intent: { intent: 'HassMediaNext', slots: {} } as IntentMatch })), false);
  assert.equal(commandInsteadOfAnswer(result('pause tv')), false);
});
