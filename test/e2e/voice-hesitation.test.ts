/**
 * Commands after a hesitation, negations after a pronoun, and timer starts
 * heard as operations on a running timer (issue 15 "Never the wrong action";
 * breaking testers' findings), through the running service as `homeagent
 * listen` feeds them, spoken by espeak-ng with the confusion bench's room
 * noise. A pronoun before a command ("uh, turn off the tv" heard "i turn off
 * the tv") asks for a yes first (pocketsphinx-judge.ts PRONOUN_LEADS_EN); a
 * pronoun before a negation and a lock word is refused; an operation on a
 * timer named by its length asks first (startShapedOperation). Own file:
 * each e2e file must finish within the runner's 180 s per file.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { e2eForFile } from '../support/e2e-home.js';
import { spokenInRoom } from '../support/espeak.js';

const rig = e2eForFile('ha-hesitation-');

/** `sentence` in espeak-ng `voice` at `rate` words a minute after `leadIn` s, with the bench's room noise unless `clean`: a WAV file. */
const spoken = (sentence: string, voice: string, rate: number, leadIn: number, clean = false): Promise<string> => spokenInRoom(rig.dir, sentence, { voice, rate, leadIn, clean });

const NEGATIONS: Array<[sentence: string, voice: string, rate: number, leadIn: number]> = [
  // A breaking tester's, a pronoun before a negation: with the pronoun's question (PRONOUN_LEADS_EN) and no path for the
  // negation after it, they were heard "you unlock the front door" and "i unlock ..." and asked about the unlock.
  ['you never lock the front door', 'en-us', 160, 0.5],
  ['you never lock the front door', 'en-us+f3', 160, 0.5],
  ['i do not unlock the front door', 'en-us+f3', 160, 0.5],
  // Another tester's: "please" hid the lock word from the check, and a yes unlocked.
  ['you never please unlock the front door', 'en-us', 160, 0.5],
];

for (const [sentence, voice, rate, leadIn] of NEGATIONS) {
  test(`"${sentence}" (${voice}, ${rate} words a minute) sends nothing and asks nothing`, async () => {
    const o = await rig.box.listen(await spoken(sentence, voice, rate, leadIn), false, 800);
    const seen = `heard ${JSON.stringify(o.report.transcript)}, replied ${JSON.stringify(o.report.reply)}, sent ${JSON.stringify(o.commands)}`;
    assert.deepEqual(o.commands, [], seen);
    assert.equal(o.report.rejected, true, seen);
  });
}

// A hesitation before a command ("uh, ..." or "okay, ...") came out with a pronoun the not-command openings hold ("i turn
// off the tv", "we lock the front door"), and the command was refused. It asks for a yes now: the yes acts, a no does not.
const HESITATIONS: Array<[sentence: string, voice: string, rate: number, heard: RegExp, answer: 'yes' | 'no', topic: RegExp, payload: RegExp]> = [
  ['uh, turn off the tv', 'en-us+f3', 150, /turn off the TV\?/, 'yes', /\/tv\//, /OFF/],
  ['uh, turn on the bed light', 'en-us+f3', 160, /turn on the Bed Light\?/, 'no', /bed/, /./],
];

for (const [sentence, voice, rate, question, answer, topic, payload] of HESITATIONS) {
  test(`"${sentence}" (${voice}, ${rate} words a minute) asks for a yes first; a "${answer}" ${answer === 'yes' ? 'acts' : 'sends nothing'}`, async () => {
    const o = await rig.box.listen(await spoken(sentence, voice, rate, 0.5), false, 800);
    const seen = `heard ${JSON.stringify(o.report.transcript)}, replied ${JSON.stringify(o.report.reply)}, sent ${JSON.stringify(o.commands)}`;
    assert.deepEqual(o.commands, [], `nothing before the answer: ${seen}`);
    assert.match(o.report.reply ?? '', question, seen);
    const a = await rig.box.listen(await spoken(answer, 'en-us', 160, 0.5), false, 800);
    const after = JSON.stringify({ reply: a.report.reply, commands: a.commands });
    if (answer === 'no') assert.deepEqual(a.commands, [], after);
    else assert.ok(a.commands.length === 1 && topic.test(a.commands[0]!.topic) && payload.test(a.commands[0]!.payload), after);
  });
}

// Through this service before the rule: en-gb-x-gbclan's "so, set a timer for five minutes" at 170 words a minute was
// heard "hold the timer for 5 minutes" and paused the running one; en-gb's "start a timer for five minutes" at 140 was
// heard "stop the timer for 5 minutes" (pocketsphinx-judge.ts startShapedOperation). Now each asks first: a "no" keeps it.
const START_HEARD_AS_OPERATION: Array<[sentence: string, voice: string, rate: number, question: RegExp]> = [
  ['so, set a timer for five minutes', 'en-gb-x-gbclan', 170, /^Do you really want to hold the timer for 5 minutes\? Please say yes or no\.$/],
  ['start a timer for five minutes', 'en-gb', 140, /^Do you really want to stop the timer for 5 minutes\? Please say yes or no\.$/],
  // A second tester's, with the length before "timer": heard "hold the 5 minutes timer", it paused the running one.
  ['so, set a five minute timer', 'en-gb-x-gbclan', 170, /^Do you really want to hold the 5 minutes? timer\? Please say yes or no\.$/],
];

for (const [sentence, voice, rate, question] of START_HEARD_AS_OPERATION) {
  test(`"${sentence}" (${voice}, ${rate}) heard as an operation on the running 5-minute timer asks first; a "no" changes no timer`, async () => {
    const start = await rig.box.listen(await spoken('set a timer for five minutes', 'en-us', 150, 0.5), false, 800);
    assert.equal(start.report.reply, 'Timer set for 5 minutes.', JSON.stringify(start.report));
    const o = await rig.box.listen(await spoken(sentence, voice, rate, 0.5), false, 800);
    const seen = `heard ${JSON.stringify(o.report.transcript)}, replied ${JSON.stringify(o.report.reply)}, actions ${JSON.stringify(o.report.actions)}`;
    assert.match(o.report.reply ?? '', question, seen);
    assert.deepEqual(o.report.actions, [], seen);
    const no = await rig.box.listen(await spoken('no', 'en-us', 160, 0.5), false, 800);
    assert.deepEqual(no.report.actions, [], JSON.stringify(no.report));
    const cancel = await rig.box.listen(await spoken('cancel the timer', 'en-us', 150, 0.5), false, 800);
    assert.match(cancel.report.reply ?? '', /^Cancelled the timer for 5 minutes\./, `the timer ran on until cancelled: ${JSON.stringify(cancel.report)}`);
  });
}
