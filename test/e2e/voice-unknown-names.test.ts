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
 * device it has, in the same voice, still acts.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { startE2E, type E2E } from '../support/e2e-home.js';
import { speak } from '../support/espeak.js';

const VOICE = 'en-us';
let box: E2E;
let dir = '';

async function say(sentence: string): Promise<string> {
  return (await speak(dir, sentence.replace(/\W+/g, '_'), sentence, { voice: VOICE })).wav;
}

before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'ha-unknown-names-'));
  box = await startE2E();
});
after(async () => {
  await box?.close();
  await rm(dir, { recursive: true, force: true });
});

const UNKNOWN = ['turn on the garden sprinkler', 'switch off the pool pump', 'turn on the coffee machine', 'unlock the back door'];

test('spoken names the home lacks are never acted on, and mostly answered as such', async () => {
  let answered = 0;
  const heard: string[] = [];
  for (const s of UNKNOWN) {
    const o = await box.listen(await say(s), false, 800);
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
    const o = await box.listen(await say(s), false, 800);
    heard.push(`${s} -> ${JSON.stringify(o.report.transcript)}: ${o.report.reply}`);
    for (const c of o.commands) assert.match(c.topic, topic, `"${s}" commanded only its own device: ${heard.at(-1)}`);
    if (o.commands.length > 0) right++;
  }
  // Measured with the default filler weights: 3 of 3 in this voice (1 of 3 in en-gb-x-rp) (a short name such as "tv" can be
  // taken for an unknown one: then nothing is done and the box says so).
  assert.ok(right >= 2, `acted ${right} of ${known.length}: ${heard.join('; ')}`);
});
