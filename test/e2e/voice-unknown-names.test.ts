/**
 * Names the home does not have, spoken (issue 15 "Names"), through the
 * running service as `homeagent listen` feeds it: espeak-ng (Debian) speaks
 * the commands in en-us, one of the voices the filler weights were chosen on
 * (this test shows the behaviour; the rates on voices nobody tuned for are
 * test/bench/voice-synth.ts's REPORT_VOICES figures), sox resamples them to 16 kHz,
 * and the service's pocketsphinx decodes them with the grammar of the fixture
 * home, whose filler path (src/intents/filler.ts) takes a name it lacks. The
 * box never acts on them; it says it knows no such device (or that it did
 * not catch it), never the nearest device's command. A command naming a
 * device it has, in the same voice, still acts. A part of a name that fits
 * one device is that device; two commands in one breath both act, in order
 * (the compound grammar's decoder), never a blend of the two.
 *
 * Split over two files (this and voice-unknown-names-2.test.ts), each under
 * the runner's per-file time limit (scripts/run-tests.mjs, 180 s) on 2 cores.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { e2eForFile } from '../support/e2e-home.js';
import { speak, spokenInRoom } from '../support/espeak.js';

const VOICE = 'en-us';
/**
 * The voice the parts of names are spoken in, with a room's noise floor under the speech as the confusion
 * bench has it: over espeak-ng's digital silence the decoder hears "turn off the standing" as "unlock the
 * standing" (nothing done, but nothing shown either).
 */
const PARTS_VOICE = 'en-us';
const rig = e2eForFile('ha-unknown-names-');

async function say(sentence: string, voice = VOICE): Promise<string> {
  return (await speak(rig.dir, `${voice}-${sentence.replace(/\W+/g, '_')}`, sentence, { voice })).wav;
}

/** `sentence` in `voice` with a room's noise floor under it (ROOM_NOISE_DB, as the confusion bench mixes it): a WAV file. */
const sayInRoom = (sentence: string, voice: string): Promise<string> => spokenInRoom(rig.dir, sentence, { voice });

const UNKNOWN = ['turn on the garden sprinkler', 'switch off the pool pump', 'turn on the coffee machine', 'unlock the back door'];

test('spoken names the home lacks are never acted on, and mostly answered as such', async () => {
  let answered = 0;
  const heard: string[] = [];
  for (const s of UNKNOWN) {
    const o = await rig.box.listen(await say(s), false, 800);
    heard.push(`${s} -> ${JSON.stringify(o.report.transcript)}: ${JSON.stringify(o.report.reply)}`);
    assert.deepEqual(o.commands, [], `"${s}" sent no command (heard ${JSON.stringify(o.report.transcript)})`);
    assert.deepEqual(o.timersAdded, []);
    if (o.report.reply === "I don't know a device by that name.") answered++;
    else assert.match(o.report.reply, /didn't catch|did not catch|not sure|sorry/i, `"${s}": no action, and an honest reply: ${o.report.reply}`);
  }
  // The confusion bench gives the rate over many voices.
  assert.ok(answered >= 3, `answered as an unknown name ${answered} of ${UNKNOWN.length}: ${heard.join('; ')}`);
});

test('known names in the same voice still act, and never as another device', async () => {
  const known: Array<[string, RegExp]> = [
    ['turn off the tv', /tv/i],
    ['lock the front door', /front_door/i],
    ['turn on the kitchen lights', /kitchen/i],
  ];
  let right = 0;
  const heard: string[] = [];
  for (const [s, topic] of known) {
    const o = await rig.box.listen(await say(s), false, 800);
    heard.push(`${s} -> ${JSON.stringify(o.report.transcript)}: ${o.report.reply}`);
    for (const c of o.commands) assert.match(c.topic, topic, `"${s}" commanded only its own device: ${heard.at(-1)}`);
    if (o.commands.length > 0) right++;
  }
  // Measured with the default filler weights: 3 of 3 in this voice (1 of 3 in en-gb-x-rp) (a short name such as "tv" can be
  // taken for an unknown one: then nothing is done and the box says so).
  assert.ok(right >= 2, `acted ${right} of ${known.length}: ${heard.join('; ')}`);
});

test('a part of a name that fits one device is that device; it never reaches another', async () => {
  const parts: Array<[string, RegExp]> = [
    ['turn off the standing', /standing_light/],
    ['open the sliding', /sliding_door/],
    ['lock the front', /front_door/],
  ];
  let right = 0;
  const heard: string[] = [];
  for (const [s, topic] of parts) {
    const o = await rig.box.listen(await sayInRoom(s, PARTS_VOICE), false, 800);
    heard.push(`${s} -> ${JSON.stringify(o.report.transcript)}: ${o.report.reply}`);
    for (const c of o.commands) assert.match(c.topic, topic, `"${s}" commanded only the device it fits: ${heard.at(-1)}`);
    assert.deepEqual(o.timersAdded, []);
    // A lock asks first (a risky device): the question is the action's first step.
    if (o.commands.length > 0 || /front door/i.test(o.report.reply ?? '')) right++;
  }
  // Measured in this voice: 3 of 3 (test/bench/voice-synth.ts: voice.synth_partial_name_right over the report voices).
  assert.ok(right >= 2, `placed ${right} of ${parts.length}: ${heard.join('; ')}`);
});

test('two commands in one breath: both act, in the order said, and no blend of the two acts (a "lock" after "and" on a yes)', async () => {
  // en-us: its pair scores 5.2 behind the phone loop per frame, well inside COMPOUND_MARGIN's bar (17.5 - 3). In
  // en-gb the same pair scores 15.8: past that bar, and then neither acts (below); the report voices' rate is
  // voice.synth_two_commands_right. A "lock" right after "and" may be an "unlock" whose "un" hid in the N of "and"
  // (pocketsphinx-judge.ts HIDDEN_OPPOSITES): it asks first, and a spoken yes locks. An unlocked door, so that the
  // lock changes it (on a locked one the box says it is already locked, and asks nothing).
  await rig.box.reportFrontDoor('unlocked');
  const o = await rig.box.listen(await sayInRoom('turn on the kitchen lights and lock the front door', 'en-us'), false, 800);
  const seen = `heard ${JSON.stringify(o.report.transcript)}, replied ${JSON.stringify(o.report.reply)}, sent ${JSON.stringify(o.commands)}`;
  assert.equal(o.report.transcript, 'turn on the kitchen lights and lock the front door', seen);
  assert.deepEqual(o.commands.map((c) => c.topic), ['home/kitchen/light/set'], `the kitchen lights first; nothing else yet: ${seen}`);
  assert.match(o.commands[0]!.payload, /ON/);
  assert.match(o.report.reply ?? '', /^Turned on the Kitchen Lights\. Do you really want to lock the Front Door\? Please say yes or no\.$/, seen);
  assert.deepEqual(o.report.unsure_between, ['lock', 'unlock'], `the listen report names the doubt of the second command: ${seen}`);
  const yes = await rig.box.listen(await sayInRoom('yes', 'en-us'), false, 800);
  const seenYes = `heard ${JSON.stringify(yes.report.transcript)}, replied ${JSON.stringify(yes.report.reply)}, sent ${JSON.stringify(yes.commands)}`;
  assert.deepEqual(yes.commands.map((c) => [c.topic, c.payload]), [['home/front_door/set', 'LOCK']], `the yes locks it: ${seenYes}`);
});

test('two commands in one breath that are not sure enough: neither acts, and no blend of the two either', async () => {
  const o = await rig.box.listen(await sayInRoom('turn on the kitchen lights and lock the front door', 'en-gb'), false, 800);
  const topics = o.commands.map((c) => c.topic);
  const seen = `heard ${JSON.stringify(o.report.transcript)}, replied ${JSON.stringify(o.report.reply)}, sent ${JSON.stringify(o.commands)}`;
  assert.ok(topics.length === 0 || JSON.stringify(topics) === JSON.stringify(['home/kitchen/light/set', 'home/front_door/set']), `both or nothing: ${seen}`);
  assert.deepEqual(o.timersAdded, []);
});

/** A reply that says the name is not the home's, or that the speech was not caught. */
const NOT_PLACED = /don't know|didn't catch|did not catch|sorry/i;

/** Each case (sentence, voice, words a minute, room-noise seed) played through the box sends nothing; with `reply`, its reply matches. */
async function sendsNothing(cases: ReadonlyArray<readonly [string, string, number, number]>, reply?: RegExp): Promise<void> {
  for (const [sentence, voice, rate, seed] of cases) {
    const o = await rig.box.listen(await spokenInRoom(rig.dir, sentence, { voice, rate, seed }), false, 800);
    const seen = `"${sentence}" (${voice} ${rate}): heard ${JSON.stringify(o.report.transcript)}, replied ${JSON.stringify(o.report.reply)}, sent ${JSON.stringify(o.commands)}`;
    assert.deepEqual(o.commands, [], seen);
    if (reply) assert.match(o.report.reply ?? '', reply, seen);
  }
}

test('a room the home lacks is no room it has: a tester\'s "turn on the bathroom light" was heard as "turn on the bedroom light" and switched on the Bed Light, "the kids room light" likewise, "the dining room lights" as the living room\'s, "the guest room light" as the bedroom\'s', async () => {
  const cases = [
    ['turn on the bathroom light', 'en-us', 130, 7],
    ['turn on the bathroom light', 'en-us+m3', 220, 7],
    ['turn off the bathroom lights', 'en-us', 130, 5],
    ['turn on the kids room light', 'en-us', 220, 22],
    ['turn on the dining room lights', 'en-us', 160, 5],
    ['turn off the guest room light', 'en-us', 190, 5],
  ] as const;
  await sendsNothing(cases, NOT_PLACED);
});

test('a device the home lacks is no device it has: a tester\'s "turn on the bath light" switched on the Bed Light, "the stereo" a lamp; "the ceiling fan" is answered as a device the home lacks', async () => {
  // Before the common devices the home lacks stood in the grammar (src/intents/builtin-lists.ts COMMON_DEVICES_EN) the
  // first three acted so; "the ceiling fan" was heard as "turn office ceiling cyan" ("The Office Ceiling can't do that").
  const cases = [
    ['turn on the bath light', 'en-us', 175, 5],
    ['turn on the bath light', 'en-us+m3', 130, 5],
    ['turn on the stereo', 'en-gb-x-rp', 220, 5],
    ['turn on the ceiling fan', 'en-us', 175, 5],
    ['turn on the ceiling fan', 'en-us+m3', 130, 5],
  ] as const;
  await sendsNothing(cases, NOT_PLACED);
});

test('near names the home lacks are no device it has: a tester\'s "turn on the porch" pressed Party Time, "the closet light" switched on the Office lights, "the attic light" the Bed Light', async () => {
  // Each of these renderings acted so before these names stood in the grammar beside the home's (COMMON_DEVICES_EN).
  const cases = [
    ['turn on the porch', 'en-us', 160, 5],
    ['turn on the closet light', 'en-us', 190, 5],
    ['turn on the attic light', 'en-us', 160, 5],
  ] as const;
  await sendsNothing(cases, NOT_PLACED);
});

test('two commands in one breath where the second names what the home lacks: neither acts (a tester\'s second half was heard as a question, "is the bedroom lights off", and the first acted alone)', async () => {
  const cases = [
    ['turn on the kitchen lights and the bathroom lights', 'en-us', 130, 7],
    ['turn on the kitchen lights and the bathroom lights', 'en-us+m3', 220, 7],
    ['turn on the kitchen lights and the bathroom lights', 'en-us+f3', 190, 6],
    ['lock the front door and the back door', 'en-us+m3', 220, 5],
  ] as const;
  await sendsNothing(cases);
});
