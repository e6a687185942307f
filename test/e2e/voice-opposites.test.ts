/**
 * A lock word heard for its opposite (issue 15 "Never the wrong action";
 * src/voice/stt/pocketsphinx-judge.ts OPPOSITE_WORDS, HIDDEN_OPPOSITES),
 * through the running service as `homeagent listen` feeds it: espeak-ng
 * (Debian) speaks in voices of the confusion bench (test/bench/voice-synth.ts),
 * at a given rate and lead-in, with or without the bench's room noise, and the
 * service's pocketsphinx decodes it with the grammar of the fixture home.
 * en-us+m3's "unlock the front door" is heard as "lock the front door" at a sure
 * score gap: the two sentences aligned on the audio score within
 * OPPOSITE_MARGIN of each other, so nothing is locked and the box says it
 * could not tell lock from unlock. The same voice's "lock the front door" and
 * en-us's "unlock the front door" (which asks first: a lock is risky) still
 * act; a command said while the unlock waits for a yes is no answer (the box
 * asks for a yes or no again), nor is a burst of noise (voicing.ts). en-us's clean "turn off the kitchen lights then unlock the front door"
 * is heard as "... then lock ...", the "un" hidden in the N of "then", and
 * the lock asks first; en-029's "turn off all the lights in the kitchen",
 * once heard as "turn on all of the lights ...", switches nothing on; a tester's clean file that locked the demo home's door
 * locks nothing.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import { promisify } from 'node:util';
import path from 'node:path';
import { e2eForFile, VOICE_DIR } from '../support/e2e-home.js';
import { ROOM_NOISE_DB, speak, spokenInRoom } from '../support/espeak.js';
import { readWavPcm } from '../voice-stt/wav.js';
import { mix, noise } from '../voice/helpers.js';
import { encodeWav } from '../../hal/common/wav.js';

const exec = promisify(execFile);

const rig = e2eForFile('ha-opposites-');

/** `sentence` in espeak-ng `voice` at `rate` words a minute after `leadIn` s, with the bench's room noise (seed `seed`) unless `clean`: a WAV file. */
const spoken = (sentence: string, voice: string, rate: number, leadIn: number, clean = false, seed = 5): Promise<string> => spokenInRoom(rig.dir, sentence, { voice, rate, leadIn, clean, seed });

test('"unlock" heard as "lock" (the two sentences score alike on the audio): nothing is locked, and the box says which words it could not tell apart', async () => {
  // en-029 at 190 words a minute was the case here until the not-command openings: its "un" is now heard as "we" (rejected).
  const o = await rig.box.listen(await spoken('unlock the front door', 'en-us+m3', 175, 0.5), false, 800);
  const seen = `heard ${JSON.stringify(o.report.transcript)}, replied ${JSON.stringify(o.report.reply)}, sent ${JSON.stringify(o.commands)}`;
  assert.deepEqual(o.commands, [], `no command: ${seen}`);
  assert.equal(o.report.rejected, true, seen);
  assert.equal(o.report.reply, "Sorry, I didn't catch whether to lock or unlock. Please say it again.", seen);
});

test('a lock word the audio clearly holds still acts: "lock" locks, "unlock" asks first', async () => {
  const lock = await rig.box.listen(await spoken('lock the front door', 'en-029', 175, 0.5), false, 800);
  const seenLock = `heard ${JSON.stringify(lock.report.transcript)}, replied ${JSON.stringify(lock.report.reply)}`;
  assert.deepEqual(lock.commands.map((c) => [c.topic, c.payload]), [['home/front_door/set', 'LOCK']], seenLock);
  const unlock = await rig.box.listen(await spoken('unlock the front door', 'en-us', 175, 0.5), false, 800);
  const seenUnlock = `heard ${JSON.stringify(unlock.report.transcript)}, replied ${JSON.stringify(unlock.report.reply)}`;
  assert.equal(unlock.report.transcript, 'unlock the front door', seenUnlock);
  assert.deepEqual(unlock.commands, [], `an unlock waits for a yes: ${seenUnlock}`);
  assert.match(unlock.report.reply ?? '', /unlock the front door\?/i, seenUnlock);
  // A spoken "no" (the answer grammar, src/intents/answers.ts) drops it.
  // A command while the question waits is no answer: the box says so, and the question stays open.
  const other = await rig.box.listen('turn on Standing Light.wav', false, 800);
  const seenOther = `heard ${JSON.stringify(other.report.transcript)}, replied ${JSON.stringify(other.report.reply)}`;
  assert.deepEqual(other.commands, [], seenOther);
  assert.equal(other.report.reply, "Sorry, I didn't catch that. Please say yes or no.", seenOther);
  const no = await rig.box.listen(await spoken('no', 'en-us', 160, 0.5), false, 800);
  const seenNo = `heard ${JSON.stringify(no.report.transcript)}, replied ${JSON.stringify(no.report.reply)}, sent ${JSON.stringify(no.commands)}`;
  assert.equal(no.report.transcript, 'no', seenNo);
  assert.deepEqual(no.commands, [], seenNo);
  assert.match(no.report.reply ?? '', /did not unlock the Front Door/, seenNo);
});

test('while an unlock waits for a yes, what the answer grammar rejects does nothing: a tester\'s "hold on" and "no I said no", once decoded again as commands, were "turn mood on" and "lower garage door" and acted', async () => {
  const unlock = await rig.box.listen(await spoken('unlock the front door', 'en-us', 175, 0.5), false, 800);
  assert.match(unlock.report.reply ?? '', /unlock the front door\?/i, JSON.stringify(unlock.report));
  for (const [sentence, voice, rate, seed] of [['hold on', 'en-gb-x-rp', 160, 81], ['no I said no', 'en-gb-x-gbclan', 190, 92]] as const) {
    const o = await rig.box.listen(await spoken(sentence, voice, rate, 0.5, false, seed), false, 800);
    assert.deepEqual(o.commands, [], `"${sentence}" (${voice} ${rate}): heard ${JSON.stringify(o.report.transcript)}, replied ${JSON.stringify(o.report.reply)}`);
  }
  const no = await rig.box.listen(await spoken('no', 'en-us', 160, 0.5), false, 800);
  assert.deepEqual(no.commands, [], JSON.stringify(no.report));
});

test('while an unlock waits for a yes, a cough-like burst of noise is no answer: a tester\'s 0.25 s of brown noise was heard as "yeah" and unlocked the door', async () => {
  // The tester's burst and its kin, made with sox: brown, pink or white noise, faded, with 0.5 s before and 0.8 s after,
  // under the room noise. Without the voicing check (MIN_VOICED_MS 0) such bursts were heard as "yeah" (the door
  // unlocked), "nope" or "no". Two bursts per question: the question itself ends after plugin.home.confirm_timeout_ms.
  const bursts = [['brownnoise', 0.25, 0.6], ['brownnoise', 0.15, 0.9], ['pinknoise', 0.25, 0.6], ['pinknoise', 0.25, 0.9], ['whitenoise', 0.15, 0.6], ['whitenoise', 0.25, 0.9]] as const;
  for (let q = 0; q < bursts.length; q += 2) {
    const unlock = await rig.box.listen(await spoken('unlock the front door', 'en-us', 175, 0.5), false, 800);
    assert.match(unlock.report.reply ?? '', /unlock the front door\?/i, JSON.stringify(unlock.report));
    for (const [kind, seconds, vol] of bursts.slice(q, q + 2)) {
      const raw = path.join(rig.dir, `${kind}-${seconds}-${vol}-raw.wav`);
      await exec('sox', ['-R', '-n', '-r', '16000', '-c', '1', '-b', '16', raw, 'synth', String(seconds), kind, 'fade', 'q', '0.01', String(seconds), String(seconds / 2), 'vol', String(vol), 'pad', '0.5', '0.8']);
      const pcm = readWavPcm(raw);
      const burst = path.join(rig.dir, `${kind}-${seconds}-${vol}.wav`);
      await writeFile(burst, encodeWav(mix(pcm, noise(pcm.length / 32, ROOM_NOISE_DB, 70)), { sampleRate: 16000, channels: 1 }));
      const o = await rig.box.listen(burst, false, 800);
      const seen = `${kind} ${seconds} s at ${vol}: heard ${JSON.stringify(o.report.transcript)}, replied ${JSON.stringify(o.report.reply)}, sent ${JSON.stringify(o.commands)}`;
      assert.deepEqual(o.commands, [], seen);
      assert.equal(o.report.reply, "Sorry, I didn't catch that. Please say yes or no.", seen);
    }
    const no = await rig.box.listen(await spoken('no', 'en-us', 160, 0.5), false, 800);
    assert.deepEqual(no.commands, [], JSON.stringify(no.report));
    assert.match(no.report.reply ?? '', /did not unlock the Front Door/, JSON.stringify(no.report));
  }
});

test('"then unlock" heard as "then lock" (the "un" hidden in the N of "then"): the lights go off, the lock asks first', async () => {
  // At 160 words a minute the pair now scores just outside COMPOUND_MARGIN (rejected, nothing acts); at 175 inside it.
  // An unlocked door, so that the misheard "lock" would change it (on a locked one the box says it is already locked).
  await rig.box.reportFrontDoor('unlocked');
  const o = await rig.box.listen(await spoken('turn off the kitchen lights then unlock the front door', 'en-us', 175, 0.5, true), false, 800);
  const seen = `heard ${JSON.stringify(o.report.transcript)}, replied ${JSON.stringify(o.report.reply)}, sent ${JSON.stringify(o.commands)}`;
  assert.equal(o.report.transcript, 'turn off the kitchen lights then lock the front door', `the mishearing this test is about: ${seen}`);
  assert.ok(!o.commands.some((c) => c.topic === 'home/front_door/set'), `nothing sent to the lock: ${seen}`);
  assert.ok(o.commands.length > 0 && o.commands.every((c) => /"state":"OFF"|^OFF$/.test(c.payload)), `the kitchen lights were turned off: ${seen}`);
  assert.match(o.report.reply ?? '', /Do you really want to lock the Front Door\? Please say yes or no\.$/, seen);
  // The person meant unlock: "no", and the door is left as it was.
  const no = await rig.box.listen(await spoken('no thanks', 'en-us', 160, 0.5), false, 800);
  assert.deepEqual(no.commands, [], `heard ${JSON.stringify(no.report.transcript)}, replied ${JSON.stringify(no.report.reply)}`);
  assert.match(no.report.reply ?? '', /did not lock the Front Door/, JSON.stringify(no.report));
});

test('"turn off all the lights" once heard as "turn on all of the lights" (the F of "off" taken for an "of"): nothing is switched on', async () => {
  // Until the not-command openings and the verbless sentences left the speech grammar this audio was heard as "turn on
  // all of the lights in the kitchen" and asked first (HIDDEN_PARTICLE; the rule's own tests: test/voice-stt/opposites.test.ts).
  // Now no voice, rate, lead-in or noise of the confusion bench's is heard so; this one is a question about the lights.
  const o = await rig.box.listen(await spoken('turn off all the lights in the kitchen', 'en-029', 160, 0.05, false, 1), false, 800);
  const seen = `heard ${JSON.stringify(o.report.transcript)}, replied ${JSON.stringify(o.report.reply)}, sent ${JSON.stringify(o.commands)}`;
  assert.ok(!o.commands.some((c) => /"state":"ON"|^ON$/.test(c.payload)), `nothing switched on: ${seen}`);
  assert.ok(!/^turn on/.test(o.report.transcript ?? '') || /Do you really want/.test(o.report.reply ?? ''), seen);
});

test('a tester\'s clean file (en-us at 190 words a minute, speech from the first sample) locks nothing', async () => {
  const { wav } = await speak(rig.dir, 'tester-unlock', 'unlock the front door', { voice: 'en-us', rate: 190, padBefore: 0, padAfter: 0 });
  const o = await rig.box.listen(wav, false, 0);
  const seen = `heard ${JSON.stringify(o.report.transcript)}, replied ${JSON.stringify(o.report.reply)}, sent ${JSON.stringify(o.commands)}`;
  assert.deepEqual(o.commands, [], seen);
  assert.ok(o.report.transcript !== 'lock the front door' || o.report.rejected, seen);
});

test('"nineteen" and "ninety" heard as "twenty" (NUMBER_RIVALS): no 20-minute timer starts', async () => {
  // Before their rivals were aligned, each of these started a 20-minute timer (report voices, room noise).
  for (const [sentence, voice, rate, minutes] of [['set a timer for nineteen minutes', 'en-gb', 150, 19], ['set a timer for ninety minutes', 'en-us+m3', 150, 90]] as const) {
    const o = await rig.box.listen(await spoken(sentence, voice, rate, 0.5, false, rate + minutes), false, 800);
    const seen = `${voice} "${sentence}": heard ${JSON.stringify(o.report.transcript)}, replied ${JSON.stringify(o.report.reply)}, timers ${JSON.stringify(o.timersAdded)}`;
    assert.ok(o.timersAdded.every((s) => s === minutes * 60), `no timer but one of ${minutes} minutes: ${seen}`);
  }
});

test('"thirteen" heard as "thirty" (a "-teen" number and its "-ty" rival, NUMBER_RIVALS): no timer of the wrong length starts', async () => {
  // Before the check this started a 30-minute timer (en-us at 190 words a minute, as a tester's en-us+m3 did for 13 to 19).
  const o = await rig.box.listen(await spoken('set a timer for thirteen minutes', 'en-us', 190, 0.5, false, 190), false, 800);
  const seen = `heard ${JSON.stringify(o.report.transcript)}, replied ${JSON.stringify(o.report.reply)}, timers ${JSON.stringify(o.timersAdded)}`;
  assert.ok(o.timersAdded.every((s) => s === 13 * 60), `no timer but one of 13 minutes: ${seen}`);
  assert.deepEqual(o.commands, [], seen);
});

test('a doubted "lock" after a command whose name was heard in part still asks: a newcomer\'s cut recordings ("turn on standing and lock the front door") locked the door with no question', async () => {
  // The fixture recordings as the newcomer cut them (sox's silence effect at 5 %, both ends), joined by 0.1 s of
  // digital silence. The recogniser doubts the "lock" (HIDDEN_OPPOSITES); the part "turn on standing" names no device
  // by its whole name, so the home plugin matched the text again, and that match had lost the doubt.
  const cut = async (name: string): Promise<string> => {
    const out = path.join(rig.dir, `cut-${name}`);
    await exec('sox', [path.join(VOICE_DIR, name), out, 'silence', '1', '0.05', '5%', 'reverse', 'silence', '1', '0.05', '5%', 'reverse']);
    return out;
  };
  const gap = path.join(rig.dir, 'gap-0.1.wav');
  await exec('sox', ['-n', '-r', '16000', '-c', '1', '-b', '16', gap, 'trim', '0', '0.1']);
  const joined = path.join(rig.dir, 'standing-and-lock.wav');
  await exec('sox', [await cut('turn on Standing Light.wav'), gap, await cut('lock the Front Door.wav'), joined]);
  await rig.box.reportFrontDoor('unlocked');
  const o = await rig.box.listen(joined, false, 1500);
  const seen = `heard ${JSON.stringify(o.report.transcript)}, doubted ${JSON.stringify(o.report.unsure_between)}, replied ${JSON.stringify(o.report.reply)}, sent ${JSON.stringify(o.commands)}`;
  assert.equal(o.report.transcript, 'turn on standing and lock the front door', `the hearing this test is about: ${seen}`);
  assert.deepEqual(o.report.unsure_between, ['lock', 'unlock'], seen);
  assert.ok(!o.commands.some((c) => c.topic === 'home/front_door/set'), `nothing sent to the lock: ${seen}`);
  assert.deepEqual(o.commands.map((c) => c.topic), ['home/standing_light/set'], seen);
  assert.match(o.report.reply ?? '', /Do you really want to lock the Front Door\? Please say yes or no\.$/, seen);
  const no = await rig.box.listen(await spoken('no thanks', 'en-us', 160, 0.5), false, 800);
  assert.deepEqual(no.commands, [], JSON.stringify(no.report));
});

test('"set a timer for 30 seconds" cut 6 ms tighter is no 3-second timer: a unit number is checked against its "-ty" (NUMBER_RIVALS)', async () => {
  // The newcomer's cut: sox's silence effect at 1 %, both ends (2.840 s became 2.834 s). Heard "set a timer for 3
  // second", it started a 3-second timer.
  const out = path.join(rig.dir, 'cut-timer-30.wav');
  await exec('sox', [path.join(VOICE_DIR, 'set a timer for 30 seconds.wav'), out, 'silence', '1', '0.05', '1%', 'reverse', 'silence', '1', '0.05', '1%', 'reverse']);
  const o = await rig.box.listen(out, false, 1500);
  const seen = `heard ${JSON.stringify(o.report.transcript)} (${JSON.stringify(o.report.heard)}), replied ${JSON.stringify(o.report.reply)}, timers ${JSON.stringify(o.timersAdded)}`;
  assert.ok(!o.timersAdded.some((s) => s !== 30), `no timer of another length: ${seen}`);
});

test('"50 percent" said 15 % faster is not set as 2 percent: a heard "two" is checked against every "-ty" (NUMBER_RIVALS)', async () => {
  // The fixture recording at sox tempo 1.15: the "fif" of "fifty" went to the word before, its "-ty" was heard "two",
  // and the Bed Light was set to 2 percent (brightness 5). It did the same padded with near silence.
  const out = path.join(rig.dir, 'fast-50-percent.wav');
  await exec('sox', [path.join(VOICE_DIR, 'set Bed Light brightness to 50 percent.wav'), out, 'tempo', '1.15']);
  const o = await rig.box.listen(out, false, 1500);
  const seen = `heard ${JSON.stringify(o.report.transcript)} (${JSON.stringify(o.report.heard)}), replied ${JSON.stringify(o.report.reply)}, sent ${JSON.stringify(o.commands)}`;
  const brightness = (payload: string): number | undefined => (JSON.parse(payload) as { brightness?: number }).brightness;
  assert.ok(o.commands.every((c) => c.topic === 'home/bed_light/set' && [undefined, 127, 128].includes(brightness(c.payload))), `no command but the Bed Light at 50 percent: ${seen}`);
});
