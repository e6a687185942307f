/**
 * Cutting one typed sentence into commands (HomePlugin.compound) costs a
 * bounded number of matcher runs: a breaking tester's 80 "turn on the tv"s
 * joined by "and" (1.5 KB, under the input limit) held the service's thread
 * for 90 s, the stop button and every other command waiting behind it. The
 * matcher is counted, not timed (shared machines are noisy).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { matchIntent } from '../../src/intents/index.js';
import type { IntentMatcher } from '../../src/home/local-intents.js';
import { startRig, type Rig } from './harness.js';

let rig: Rig;
let calls = 0;
const counting: IntentMatcher = (text, vocab, lang) => {
  calls++;
  return matchIntent(text, vocab, lang);
};
before(async () => {
  rig = await startRig({ plugin: { matchIntent: counting } });
});
after(async () => {
  await rig?.close();
});

const joined = (n: number): string => Array.from({ length: n }, () => 'turn on the tv').join(' and ');

test('a sentence with far more joints than commands is not cut at all (the LLM has it whole)', async () => {
  calls = 0;
  const r = await rig.sdk.runInput(joined(80));
  assert.equal(r.response, undefined, 'left to the LLM');
  assert.ok(calls <= 3, `${calls} matcher runs`);
});

test('a sentence cut every way it can be matches each piece once', async () => {
  // Nine parts (eight joints, as many as are tried): more than a sentence may hold, so every cut is tried and fails.
  calls = 0;
  const r = await rig.sdk.runInput(joined(9));
  assert.equal(r.response, undefined, 'more commands than one sentence may hold: the LLM has it');
  // Each distinct piece (a run of parts) is matched once per verb it may borrow (38 runs here; 470 before it had one).
  assert.ok(calls <= 100, `${calls} matcher runs`);
  calls = 0;
  rig.sim.clear();
  assert.equal((await rig.sdk.runInput(joined(4))).response, 'Turned on the TV.', 'the same command four times in a row is done once');
});
