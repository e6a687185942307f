/**
 * Speech that holds a command but is none (issue 15 "Never the wrong action";
 * a tester's findings): a negation, a report of what someone did, a statement
 * of how a device is. Through the running service as `homeagent listen` feeds
 * it, spoken by espeak-ng (Debian) in voices of the confusion bench
 * (test/bench/voice-synth.ts) with its room noise, and decoded by the service's
 * pocketsphinx with the grammar of the fixture home. Before the not-command
 * openings (src/intents/fsg.ts NOT_COMMAND_LEADS_EN) and with the verbless
 * on/off sentences in the speech grammar, each of these acted: "don't turn on
 * the kitchen lights" was heard as "please turn on the kitchen lights", "I
 * turned off the TV" as "turn off the TV", "the kitchen light is on" as "the
 * kitchen light on". A second tester found the openings missing after
 * "please" and "never", "she" ...: "please do not turn on the standing light"
 * was heard as "please turn on the standing light", and "never turn off the
 * tv" as "dim the lights on office to eighty three". A third tester's
 * corrections ("no the garage door") were heard as commands and acted. Now
 * none sends anything: each is refused, answered as a question, or (a command
 * after a pronoun, pocketsphinx-judge.ts PRONOUN_LEADS_EN) asks for a yes
 * first, and a "no" ends it. A command after "uh" asks too, and a yes acts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { e2eForFile } from '../support/e2e-home.js';
import { spokenInRoom } from '../support/espeak.js';

const rig = e2eForFile('ha-not-command-');

/** `sentence` in espeak-ng `voice` at `rate` words a minute after `leadIn` s, with the bench's room noise unless `clean`: a WAV file. */
const spoken = (sentence: string, voice: string, rate: number, leadIn: number, clean: boolean): Promise<string> => spokenInRoom(rig.dir, sentence, { voice, rate, leadIn, clean });

const CASES: Array<[sentence: string, voice: string, rate: number, leadIn: number, clean?: boolean]> = [
  ["don't turn on the kitchen lights", 'en-us', 140, 0.5],
  ["don't turn on the kitchen lights", 'en-us', 175, 0.05],
  ['i turned off the tv', 'en-us', 175, 0.5],
  ['the kitchen light is on', 'en-us', 140, 0.5],
  ['the kitchen light is on', 'en-gb-scotland', 175, 0.05],
  // A second tester's, clean: with the openings only at the very start, each was heard as "please ..." (or another
  // command) and acted.
  ['please do not turn on the standing light', 'en-us', 200, 0.5, true],
  ["please don't switch on the bed light", 'en-us', 200, 0.5, true],
  ['she switched on the bed light', 'en-us', 130, 0.5, true],
  // The second tester's too: heard whole as another command, "dim the lights on office to eighty three", at a mean
  // score gap the rejection passed; its "to" fits the audio far worse than any phones (MAX_WORD_GAP).
  ['never turn off the tv', 'en-029', 130, 0.5, true],
  // A third tester's corrections, said after the box did something else: heard as "lower the garage door" (closed
  // it), "turn all the office light off", "are all the kitchen light off", the command's verb squeezed into the "no"
  // (pocketsphinx-duration.ts MIN_LEAD_WORD_MS_PER_PHONE; "lower" is no longer spoken grammar).
  ['no the garage door', 'en-us', 150, 0.5],
  ['no the garage door', 'en-us+m3', 150, 0.5],
  ['no the office lights', 'en-us', 175, 0.5],
  ['no the office lights', 'en-us+m3', 150, 0.5],
  ['no the kitchen lights', 'en-gb-scotland', 175, 0.5],
  ['no the sliding door', 'en-us+m3', 175, 0.5],
  // A fourth tester's: a correction right after a command was heard as a setting ("turn all of the office lights to 8",
  // "... to white", "... to 0") and switched the lights on; aligned against the correction in the setting's place
  // (pocketsphinx-judge.ts correctionSentences), none acts.
  ['turn off the office lights no wait', 'en-gb-x-rp', 160, 0.5],
  ['turn off the office lights no wait', 'en-us', 160, 0.5],
  ['turn on the kitchen lights no wait', 'en-us', 130, 0.5],
  ['turn on the kitchen lights no', 'en-gb-x-gbclan', 130, 0.5],
  ['turn on the kitchen lights no', 'en-us', 160, 0.5],
];

for (const [sentence, voice, rate, leadIn, clean = false] of CASES) {
  test(`"${sentence}" (${voice}, ${rate} words a minute, ${leadIn} s lead-in${clean ? ', clean' : ''}) sends nothing`, async () => {
    const o = await rig.box.listen(await spoken(sentence, voice, rate, leadIn, clean), false, 800);
    const seen = `heard ${JSON.stringify(o.report.transcript)}, replied ${JSON.stringify(o.report.reply)}, sent ${JSON.stringify(o.commands)}`;
    assert.deepEqual(o.commands, [], seen);
    // Either it was not understood (the box says so), or it was heard as a question about the device (it answers), or
    // as a command after a pronoun ("i turn off the tv"), which asks for a yes first (PRONOUN_LEADS_EN): a "no" ends it.
    const asked = /^Do you really want to .*\? Please say yes or no\.$/.test(o.report.reply ?? '');
    assert.ok(o.report.rejected || /^(is|are) /.test(o.report.transcript ?? '') || asked, seen);
    if (asked) {
      const no = await rig.box.listen(await spoken('no', 'en-us', 160, 0.5, false), false, 800);
      assert.deepEqual(no.commands, [], `a "no" sends nothing: ${JSON.stringify(no.report)}`);
    }
  });
}
