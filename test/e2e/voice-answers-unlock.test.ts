/**
 * Answers under the unlock question through the running service (issue 15 "Never the wrong action";
 * src/intents/answers.ts, src/voice/stt/ending.ts): words that sound like a yes, and "yet", "get", "jet" (a stop
 * ends them, no hiss), spoken by espeak-ng (Debian) in the bench's room noise or in harder rooms
 * (test/support/rooms.ts), are no answer: nothing is sent and the box asks for a yes or no again; a "yes" still
 * unlocks the door. (Split from voice-opposites.test.ts: one file must run within the test runner's 180 s.)
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { e2eForFile } from '../support/e2e-home.js';
import { spokenInRoom } from '../support/espeak.js';
import { spokenInHarderRoom } from '../support/rooms.js';

const rig = e2eForFile('ha-answers-unlock-');

/** `sentence` in espeak-ng `voice` at `rate` words a minute after `leadIn` s, with the bench's room noise (seed `seed`) unless `clean`: a WAV file. */
const spoken = (sentence: string, voice: string, rate: number, leadIn: number, clean = false, seed = 5): Promise<string> => spokenInRoom(rig.dir, sentence, { voice, rate, leadIn, clean, seed });

/**
 * Ask "unlock the front door?" and say `traps` ([words, voice, words a minute, noise seed]) two by two under it: each
 * is no answer and sends nothing; a "no" ends each question, `yes` the last, which must unlock. `render` makes the
 * audio of a trap (default: the room noise of spokenInRoom).
 */
async function trapsUnderUnlock(traps: ReadonlyArray<readonly [string, string, number, number]>, yes: string, render = (said: string, voice: string, rate: number, seed: number) => spoken(said, voice, rate, 0.5, false, seed)): Promise<void> {
  for (let q = 0; q < traps.length; q += 2) {
    await rig.box.reportFrontDoor('locked');
    const unlock = await rig.box.listen(await spoken('unlock the front door', 'en-us', 175, 0.5), false, 800);
    assert.match(unlock.report.reply ?? '', /unlock the front door\?/i, JSON.stringify(unlock.report));
    for (const [said, voice, rate, seed] of traps.slice(q, q + 2)) {
      const o = await rig.box.listen(await render(said, voice, rate, seed), false, 800);
      const seen = `"${said}" (${voice} ${rate}): heard ${JSON.stringify(o.report.transcript)}, replied ${JSON.stringify(o.report.reply)}, sent ${JSON.stringify(o.commands)}`;
      assert.deepEqual(o.commands, [], seen);
      assert.equal(o.report.reply, "Sorry, I didn't catch that. Please say yes or no.", seen);
    }
    const last = q + 2 >= traps.length;
    const answer = await rig.box.listen(await spoken(last ? yes : 'no', 'en-us', 160, 0.5), false, 800);
    if (!last) assert.deepEqual(answer.commands, [], JSON.stringify(answer.report));
    else assert.ok(answer.commands.some((c) => c.topic === 'home/front_door/set' && /UNLOCK/.test(c.payload)), `a "${yes}" unlocks: ${JSON.stringify(answer)}`);
  }
}

test('while an unlock waits for a yes, words that sound like one are no answer: a tester\'s "this", "is it", "yesterday" and "yellow" were heard as "yes" or "yeah" and unlocked the door; a "yes" still unlocks it', async () => {
  // Each was heard as a yes before the decoys (src/intents/answers.ts ANSWER_DECOYS_EN): "this" in 16 of 24 tries
  // (4 voices, 3 rates, 2 noise seeds), "is it" 10, "yesterday" 11, "yellow" 4 (as "yeah"); with them none was.
  const traps = [['this', 'en-gb', 200, 37], ['is it', 'en-gb', 200, 5], ['yesterday', 'en-gb-scotland', 200, 5], ['yellow', 'en-gb', 220, 37]] as const;
  await trapsUnderUnlock(traps, 'yes');
});

test('while an unlock waits for a yes, "yet", "get" and "jet" are no yes (a stop ends them, no hiss: src/voice/stt/ending.ts); a "yes" still unlocks', async () => {
  // Before the ending check, in these renderings (4 voices, 3 rates, 2 noise seeds) "yet" was heard as "yes" 24 times of
  // 24, "jet" 14, "get" 4; with it none was, and "yes", "yeah" and "sure" were taken as often as before (24, 24, 16).
  // A "yeah" unlocked here too until a heard "yes" had to end in its hiss: en-us's "yeah" is heard as "yes" with none.
  const traps = [['yet', 'en-us', 160, 5], ['yet', 'en-gb', 200, 37], ['get', 'en-us+f3', 160, 5], ['jet', 'en-us', 200, 5]] as const;
  await trapsUnderUnlock(traps, 'yes');
});

test('while an unlock waits for a yes, a "yet" in pink noise or in an echo is no yes (a tester\'s unlocked the door 15 times of 50 there)', async () => {
  // Each was heard as "yes" and unlocked the door while the ending was measured against a white room's noise: the
  // burst of the /t/ drowned (src/voice/stt/ending.ts measures against the room's own noise now).
  const traps = [['yet', 'en-us', 160, 5], ['yet', 'en-gb-scotland', 190, 5], ['yet', 'en-us', 190, 7], ['yet', 'en-us+f3', 160, 7]] as const;
  await trapsUnderUnlock(traps, 'yes', (said, voice, rate, seed) => spokenInHarderRoom(rig.dir, said, voice, rate, seed === 5 ? 'pink noise at -35 dBFS' : 'echo', seed));
});

test('while an unlock waits for a yes, a question that changes nothing is answered and the question is off; a command that acts is not taken (the real recordings\' "timer status" after such a question was "Please say yes or no.")', async () => {
  // The answer grammar hears no yes or no in either; the same audio is then decoded with the command grammar
  // (src/voice/capture.ts answerOrCommand), whose result counts only when it changes nothing.
  await rig.box.reportFrontDoor('locked');
  const unlock = await rig.box.listen(await spoken('unlock the front door', 'en-us', 175, 0.5), false, 800);
  assert.match(unlock.report.reply ?? '', /unlock the front door\?/i, JSON.stringify(unlock.report));
  const lights = await rig.box.listen(await spoken('turn on the kitchen lights', 'en-us', 160, 0.5), false, 800);
  assert.deepEqual(lights.commands, [], JSON.stringify(lights));
  assert.equal(lights.report.reply, "Sorry, I didn't catch that. Please say yes or no.", JSON.stringify(lights.report));
  const time = await rig.box.listen(await spoken('what time is it', 'en-us', 160, 0.5), false, 800);
  assert.equal(time.report.transcript, 'what time is it', JSON.stringify(time.report));
  assert.match(time.report.reply ?? '', /^It is /, JSON.stringify(time.report));
  // What the box said as it dropped the question is in the report too (`homeagent listen` prints it as "also said").
  assert.ok(time.report.spoken?.some((t) => /did not unlock the Front Door/.test(t)), JSON.stringify(time.report));
  assert.deepEqual(time.commands, [], JSON.stringify(time));
  // The question is off: a "yes" now answers nothing (and is no command), so nothing unlocks; commands act again.
  const yes = await rig.box.listen(await spoken('yes', 'en-us', 160, 0.5), false, 800);
  assert.deepEqual(yes.commands, [], JSON.stringify(yes));
  assert.notEqual(yes.report.reply, "Sorry, I didn't catch that. Please say yes or no.", JSON.stringify(yes.report));
  const on = await rig.box.listen(await spoken('turn on the kitchen lights', 'en-us', 160, 0.5), false, 800);
  assert.ok(on.commands.some((c) => c.topic === 'home/kitchen/light/set' && /ON/.test(c.payload)), JSON.stringify(on));
});
