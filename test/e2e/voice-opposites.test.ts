/**
 * A lock word heard for its opposite (issue 15 "Never the wrong action";
 * src/voice/stt/pocketsphinx-judge.ts OPPOSITE_WORDS), through the running
 * service as `homeagent listen` feeds it: espeak-ng (Debian) speaks in the
 * voices of the confusion bench (test/bench/voice-synth.ts) at the bench's
 * own rate and room noise for each sentence (utteranceSeed), and the
 * service's pocketsphinx decodes it with the grammar of the fixture home.
 * en-029 says "unlock the front door" so that the grammar's decoder hears
 * "lock the front door" at a sure score gap (12.0): the two sentences aligned
 * on the audio score within OPPOSITE_MARGIN of each other, so nothing is
 * locked and the box says it could not tell lock from unlock. The same voice's "lock the
 * front door" and en-us's "unlock the front door" (which asks first: a lock
 * is risky) still act.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { encodeWav } from '../../hal/common/wav.js';
import { mix, noise } from '../voice/helpers.js';
import { startE2E, type E2E } from '../support/e2e-home.js';
import { speak } from '../support/espeak.js';
import { utteranceSeed } from '../bench/voice-synth.js';

let box: E2E;
let dir = '';

/** `sentence` in `voice` as the confusion bench makes it (rate and noise from utteranceSeed): a WAV file. */
async function asTheBenchSaysIt(sentence: string, voice: string): Promise<string> {
  const seed = utteranceSeed(voice, sentence);
  const name = `${voice}-${sentence.replace(/\W+/g, '_')}`;
  const { pcm } = await speak(dir, name, sentence, { voice, rate: 145 + (seed % 4) * 15 });
  const file = path.join(dir, `${name}-room.wav`);
  await writeFile(file, encodeWav(mix(pcm, noise(pcm.length / 32, -50, seed)), { sampleRate: 16000, channels: 1 }));
  return file;
}

before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'ha-opposites-'));
  box = await startE2E();
});
after(async () => {
  await box?.close();
  await rm(dir, { recursive: true, force: true });
});

test('"unlock" heard as "lock" (the two sentences score alike on the audio): nothing is locked, and the box says which words it could not tell apart', async () => {
  const o = await box.listen(await asTheBenchSaysIt('unlock the front door', 'en-029'), false, 800);
  const seen = `heard ${JSON.stringify(o.report.transcript)}, replied ${JSON.stringify(o.report.reply)}, sent ${JSON.stringify(o.commands)}`;
  assert.deepEqual(o.commands, [], `no command: ${seen}`);
  assert.equal(o.report.rejected, true, seen);
  assert.equal(o.report.reply, "Sorry, I didn't catch whether to lock or unlock. Please say it again.", seen);
});

test('a lock word the audio clearly holds still acts: "lock" locks, "unlock" asks first', async () => {
  const lock = await box.listen(await asTheBenchSaysIt('lock the front door', 'en-029'), false, 800);
  const seenLock = `heard ${JSON.stringify(lock.report.transcript)}, replied ${JSON.stringify(lock.report.reply)}`;
  assert.deepEqual(lock.commands.map((c) => [c.topic, c.payload]), [['home/front_door/set', 'LOCK']], seenLock);
  const unlock = await box.listen(await asTheBenchSaysIt('unlock the front door', 'en-us'), false, 800);
  const seenUnlock = `heard ${JSON.stringify(unlock.report.transcript)}, replied ${JSON.stringify(unlock.report.reply)}`;
  assert.equal(unlock.report.transcript, 'unlock the front door', seenUnlock);
  assert.deepEqual(unlock.commands, [], `an unlock waits for a yes: ${seenUnlock}`);
  assert.match(unlock.report.reply ?? '', /unlock the front door\?/i, seenUnlock);
});
