/**
 * The climate family by voice (issue 15 "Coverage of the standard sentence
 * families"), through the running service as `homeagent listen` feeds it:
 * espeak-ng en-us with the confusion bench's room noise, decoded by the
 * service's pocketsphinx with the fixture home's grammar, acted on the
 * fixture home's thermostat (the EcoBee) over MQTT. Checked by the command
 * that reaches the thermostat, not only the reply.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { e2eForFile } from '../support/e2e-home.js';
import { spokenInRoom } from '../support/espeak.js';

const rig = e2eForFile('ha-climate-');

const CASES: Array<[sentence: string, degrees: string]> = [
  ['set the ecobee to twenty two degrees', '22'],
  ['set the temperature to twenty degrees', '20'],
];

for (const [sentence, degrees] of CASES) {
  test(`"${sentence}" (en-us, 150 words a minute) sets the EcoBee to ${degrees} degrees`, async () => {
    const o = await rig.box.listen(await spokenInRoom(rig.dir, sentence, { voice: 'en-us', rate: 150, leadIn: 0.5 }), false, 800);
    const seen = `heard ${JSON.stringify(o.report.transcript)}, replied ${JSON.stringify(o.report.reply)}, sent ${JSON.stringify(o.commands)}`;
    assert.match(o.report.reply ?? '', new RegExp(`^Set the EcoBee to ${degrees} degrees\\.`), seen);
    assert.deepEqual(o.commands.map((c) => [c.topic, c.payload]), [['home/ecobee/target/set', degrees]], seen);
  });
}
