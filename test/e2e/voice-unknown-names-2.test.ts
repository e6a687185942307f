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
import { spokenInRoom } from '../support/espeak.js';
import { OTHER_NAME } from '../../src/voice/stt/pocketsphinx-judge.js';
import { utteranceCondition, utteranceSeed } from '../bench/voice-synth.js';

const rig = e2eForFile('ha-unknown-names-2-');

/** `sentence` in `voice` with a room's noise floor under it (ROOM_NOISE_DB, as the confusion bench mixes it): a WAV file. */
const sayInRoom = (sentence: string, voice: string): Promise<string> => spokenInRoom(rig.dir, sentence, { voice });

/** `sentence` in `voice` as the confusion bench says it (test/bench/voice-synth.ts: its rate, lead-in and room noise): a WAV file. */
async function asTheBenchSaysIt(sentence: string, voice: string): Promise<string> {
  const seed = utteranceSeed(voice, sentence);
  const { rate, leadIn } = utteranceCondition(seed);
  return spokenInRoom(rig.dir, sentence, { voice, rate, leadIn, seed });
}

test('a name the home has, after a verb its kind cannot take, is said so and never reaches another device: "close the front door" (a lock) was heard as "close the garage door"', async () => {
  for (const [sentence, verb] of [['close the front door', 'closed'], ['open the front door', 'opened']] as const) {
    for (const voice of ['en-us', 'en-us+m3']) {
      const o = await rig.box.listen(await sayInRoom(sentence, voice), false, 800);
      const seen = `${voice} "${sentence}": heard ${JSON.stringify(o.report.transcript)}, replied ${JSON.stringify(o.report.reply)}, sent ${JSON.stringify(o.commands)}`;
      assert.deepEqual(o.commands, [], seen);
      assert.equal(o.report.reply, `The Front Door is a lock, so it can't be ${verb}.`, seen);
    }
  }
});

test('a name the home lacks heard as a device whose name word fits its audio badly asks first (pocketsphinx-judge.ts NAME_WORD_ASK_GAP), and a spoken no leaves everything as it was: a tester\'s "turn on the shed light" switched on the Kitchen Lights', async () => {
  // en-us+f3 at 150 words a minute: the decoder puts a home device's name where "shed" was; its name word fits
  // that stretch of audio 40 or more per frame worse than a free phone loop does (a right name fits within 20).
  const o = await rig.box.listen(await spokenInRoom(rig.dir, 'turn on the shed light', { voice: 'en-us+f3', rate: 150 }), false, 800);
  const seen = `heard ${JSON.stringify(o.report.transcript)}, replied ${JSON.stringify(o.report.reply)}, unsure between ${JSON.stringify(o.report.unsure_between)}, sent ${JSON.stringify(o.commands)}`;
  assert.deepEqual(o.commands, [], `nothing switched on before a yes: ${seen}`);
  assert.equal(o.report.unsure_between?.[1], OTHER_NAME, `the doubt is the name word's: ${seen}`);
  assert.match(o.report.reply ?? '', /^Do you really want to turn on the .+\? Please say yes or no\.$/, seen);
  const no = await rig.box.listen(await spokenInRoom(rig.dir, 'no', { voice: 'en-us+f3', rate: 150 }), false, 800);
  const seenNo = `heard ${JSON.stringify(no.report.transcript)}, replied ${JSON.stringify(no.report.reply)}, sent ${JSON.stringify(no.commands)}`;
  assert.deepEqual(no.commands, [], `the no sends nothing: ${seenNo}`);
  assert.match(no.report.reply ?? '', /^OK, I did not turn on the /, seenNo);
});

test('a name of the home lost to the filler, whose words fit the audio nearly as well as the phones, asks "did you mean it?" before it acts (pocketsphinx-judge.ts UNHEARD_NAME_MARGIN); a yes then acts, a no leaves it', async () => {
  // en-gb-x-gbclan's "close the garage door" as the confusion bench says it (160 words a minute, its room noise):
  // the decoder spells "garage door" in phones (the filler), and the box answered that it knows no such device.
  const sentence = 'close the garage door';
  const voice = 'en-gb-x-gbclan';
  // The garage door is open (a closed one is said so, not asked).
  const garage = (): string | undefined => rig.box.app.home.registry?.view('garage_door')?.state.state;
  const open = async (): Promise<void> => {
    await rig.box.sim.publish('home/garage/state', 'open');
    for (const by = Date.now() + 10_000; garage() !== 'open'; await new Promise((r) => setTimeout(r, 20))) if (Date.now() > by) throw new Error(`the garage door did not report open (${garage()})`);
  };
  await open();
  const o = await rig.box.listen(await asTheBenchSaysIt(sentence, voice), false, 800);
  const seen = `heard ${JSON.stringify(o.report.transcript)}, replied ${JSON.stringify(o.report.reply)}, unsure between ${JSON.stringify(o.report.unsure_between)}, sent ${JSON.stringify(o.commands)}`;
  assert.deepEqual(o.commands, [], `nothing closed before a yes: ${seen}`);
  assert.deepEqual(o.report.unsure_between, ['…', 'garage door'], seen);
  assert.match(o.report.reply ?? '', /^Do you really want to close the Garage Door\? Please say yes or no\.$/, seen);
  const no = await rig.box.listen(await spokenInRoom(rig.dir, 'no', { voice: 'en-us', rate: 150 }), false, 800);
  assert.deepEqual(no.commands, [], `the no sends nothing: ${JSON.stringify(no.report)}`);
  // Asked again, a yes closes it.
  await open();
  await rig.box.listen(await asTheBenchSaysIt(sentence, voice), false, 800);
  const yes = await rig.box.listen(await spokenInRoom(rig.dir, 'yes', { voice: 'en-us', rate: 150 }), false, 800);
  assert.equal(yes.commands.length, 1, `the yes closes the garage door: ${JSON.stringify(yes.report)} ${JSON.stringify(yes.commands)}`);
  assert.match(yes.commands[0]!.topic, /garage/i);
  assert.match(yes.commands[0]!.payload, /CLOSE/i);
});

test('a room word or kind word that fits its audio badly makes a room command ask first, as a device name word does: testers\' "set the porch light to fifty percent" and "set the garden lights to thirty percent" set the Office lights', async () => {
  // As the confusion bench says them: en-gb's decoded "set the office light to fifty percent", "office" 38 to 40 per
  // frame worse than a free phone loop (right "office"s fit within 26 on the same voices); en-gb-x-gbclan's "set light
  // on the office to thirty percent", "light" 46 per frame (said kind words of room commands fit within 33).
  const cases = [
    ['set the porch light to fifty percent', 'en-gb', 'office'],
    ['set the garden lights to thirty percent', 'en-gb-x-gbclan', 'light'],
  ] as const;
  for (const [sentence, voice, doubted] of cases) {
    const o = await rig.box.listen(await asTheBenchSaysIt(sentence, voice), false, 800);
    const seen = `${voice} "${sentence}": heard ${JSON.stringify(o.report.transcript)}, replied ${JSON.stringify(o.report.reply)}, unsure between ${JSON.stringify(o.report.unsure_between)}, sent ${JSON.stringify(o.commands)}`;
    assert.deepEqual(o.commands, [], `no light set before a yes: ${seen}`);
    assert.deepEqual(o.report.unsure_between, [doubted, OTHER_NAME], seen);
    assert.match(o.report.reply ?? '', /^Do you really want to /, seen);
    const no = await rig.box.listen(await spokenInRoom(rig.dir, 'no', { voice: 'en-us', rate: 150 }), false, 800);
    assert.deepEqual(no.commands, [], `the no sends nothing: ${JSON.stringify(no.report)}`);
  }
});

test('blinds the home lacks, set by the room, are answered as such: a tester\'s "set the living room blinds to fifty percent" was heard as "... lights ..." and set the lights', async () => {
  for (const voice of ['en-us+m3', 'en-gb-x-gbclan']) {
    const o = await rig.box.listen(await asTheBenchSaysIt('set the living room blinds to fifty percent', voice), false, 800);
    const seen = `${voice}: heard ${JSON.stringify(o.report.transcript)}, replied ${JSON.stringify(o.report.reply)}, sent ${JSON.stringify(o.commands)}`;
    assert.deepEqual(o.commands, [], seen);
    assert.equal(o.report.reply, 'There are no blinds in the Living Room.', seen);
  }
});
