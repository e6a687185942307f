/**
 * Near names (issue 15 "Names": a name the home does not have is never the
 * nearest device it has), through the running service as `homeagent listen`
 * feeds it: espeak-ng renderings with a room's noise floor, decoded by the
 * service's pocketsphinx with the fixture home's grammar. A heard name word
 * whose near-name rivals (src/voice/stt/name-rivals.ts) fit the audio as
 * well asks for a yes before it acts. The rates over many voices are
 * test/bench/voice-synth.ts's; these renderings are ones that acted before.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { e2eForFile } from '../support/e2e-home.js';
import { spokenInRoom } from '../support/espeak.js';

const rig = e2eForFile('ha-near-names-');

test('a near name that fits the audio better than the home\'s name asks before it acts: testers\' "turn on the red light" switched on the Bed Light; "turn on the bed light" acts at once', async () => {
  // Each of these renderings switched on the Bed Light before the name rivals (src/voice/stt/name-rivals.ts).
  const cases = [
    ['turn on the red light', 'en-us', 130, 5],
    ['turn on the red light', 'en-us+m3', 160, 5],
    ['turn on the red light', 'en-us+m3', 130, 5],
  ] as const;
  const no = await spokenInRoom(rig.dir, 'no', { voice: 'en-us', rate: 160, seed: 5 });
  for (const c of cases) {
    const asked = await rig.box.listen(await spokenInRoom(rig.dir, c[0], { voice: c[1], rate: c[2], seed: c[3] }), false, 800);
    const seen = `"${c[0]}" (${c[1]} ${c[2]}): heard ${JSON.stringify(asked.report.transcript)}, replied ${JSON.stringify(asked.report.reply)}, sent ${JSON.stringify(asked.commands)}`;
    assert.deepEqual(asked.commands, [], seen);
    assert.equal(asked.report.reply, 'Do you really want to turn on the Bed Light? Please say yes or no.', seen);
    const answer = await rig.box.listen(no, false, 800);
    assert.deepEqual(answer.commands, []);
    assert.equal(answer.report.reply, 'OK, I did not turn on the Bed Light.');
  }
  // The Bed Light itself, said plainly, acts at once.
  const o = await rig.box.listen(await spokenInRoom(rig.dir, 'turn on the bed light', { voice: 'en-us', rate: 160, seed: 5 }), false, 800);
  assert.match(JSON.stringify(o.commands), /bed_light/, `heard ${JSON.stringify(o.report.transcript)}, replied ${JSON.stringify(o.report.reply)}`);
});
