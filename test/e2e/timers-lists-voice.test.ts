/**
 * Timers and lists spoken, through the running service: espeak-ng (voice
 * en-us) says each command, sox resamples it to 16 kHz, room noise (-55 dBFS)
 * goes under and around it, and the WAV is fed through `homeagent listen`
 * (endpointing, pocketsphinx with the grammar built from the discovered home,
 * the local intents) into a service against the fixture home. One utterance
 * per family: a named timer, a second timer, "cancel the timer" (asks which),
 * the answer "the pasta one", add time, take off time, pause, resume, status,
 * cancel all; shopping list add, read back, remove; to-do add, complete. Each
 * is checked by its effect on the timers and lists, not only the reply.
 * With espeak-ng's en-us voice every one is recognised; with en-us+f3
 * "pause the timer" is heard as "pause the playback" and "add five minutes"
 * as "add nine minutes" (measured with PocketsphinxStt, see the report of
 * issue 15): the tests use en-us and no threshold was changed.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { request } from '../../src/cli/client.js';
import type { ListenReport } from '../../src/service/voice-wiring.js';
import { encodeWav } from '../../hal/common/wav.js';
import { startE2E, type E2E } from '../support/e2e-home.js';
import { mix, noise } from '../voice/helpers.js';
import { speak as synthesise } from '../support/espeak.js';


describe('timers and lists by voice through the running service (espeak-ng en-us)', () => {
  let box: E2E;
  let dir = '';
  let k = 0;

  before(async () => {
    box = await startE2E();
    dir = mkdtempSync(path.join(os.tmpdir(), 'ha-timer-voice-'));
  });
  after(async () => {
    await box?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** Speak `sentence` with espeak-ng and feed it through `homeagent listen`. */
  async function speak(sentence: string, voice = 'en-us', rate = 160): Promise<ListenReport> {
    k++;
    const { pcm } = await synthesise(dir, String(k), sentence, { voice, rate, padAfter: 0.8 });
    const data = encodeWav(mix(pcm, noise(pcm.length / 32, -55, k)), { sampleRate: 16000, channels: 1 });
    const res = (await request(box.app.socketPath, 'listen', { files: [{ name: `${k}.wav`, data_b64: data.toString('base64') }], realtime: false })) as { utterances: ListenReport[] };
    return res.utterances[0]!;
  }
  const timers = (): Array<[string | undefined, number, string]> => (box.app.timers.service?.status() ?? []).map((t) => [t.name, t.duration_s, t.state]);
  const shopping = (): string[] => box.app.lists.service?.items('shopping').map((i) => i.text) ?? [];

  test('start a named timer and a plain one; "cancel the timer" asks which; "the pasta one" cancels only it', async () => {
    box.app.timers.service?.cancel({ all: true });
    let u = await speak('set a pasta timer for ten minutes');
    assert.equal(u.rejected, false, u.transcript);
    assert.deepEqual(timers(), [['pasta', 600, 'running']], `heard ${u.transcript}`);
    u = await speak('set a timer for four minutes');
    assert.deepEqual(timers().map((t) => t[1]).sort(), [240, 600], `heard ${u.transcript}`);
    u = await speak('cancel the timer');
    assert.match(u.reply, /^Which timer do you mean: the timer for 4 minutes or the pasta timer\?/, `heard ${u.transcript}`);
    assert.equal(timers().length, 2, 'nothing cancelled while asking');
    u = await speak('the pasta one');
    assert.equal(u.reply, 'Cancelled the pasta timer.', `heard ${u.transcript}`);
    assert.deepEqual(timers(), [[undefined, 240, 'running']]);
  });

  test('"set a timer" with no length asks for how long and starts nothing (a tester\'s was heard as "set a hour timer" and a 6-hour one)', async () => {
    const before = timers().length;
    const u = await speak('set a timer');
    assert.equal(u.reply, 'For how long?', `heard ${u.transcript}`);
    assert.equal(timers().length, before, 'no timer started');
  });

  test('add time, take off time, pause, resume, status, cancel all', async () => {
    const left = (): number => box.app.timers.service?.status()[0]?.remaining_s ?? 0;
    let u = await speak('add five minutes to the timer');
    assert.match(u.reply, /^Added 5 minutes to the timer for 4 minutes/, `heard ${u.transcript}`);
    assert.ok(left() > 500 && left() <= 540, `left ${left()}`);
    u = await speak('take two minutes off the timer');
    assert.match(u.reply, /^Took 2 minutes off the timer for 4 minutes/, `heard ${u.transcript}`);
    assert.ok(left() > 380 && left() <= 420, `left ${left()}`);
    u = await speak('pause the timer');
    assert.match(u.reply, /^Paused the timer for 4 minutes/, `heard ${u.transcript}`);
    assert.deepEqual(timers().map((t) => t[2]), ['paused']);
    u = await speak('resume the timer');
    assert.match(u.reply, /^Resumed the timer for 4 minutes/, `heard ${u.transcript}`);
    assert.deepEqual(timers().map((t) => t[2]), ['running']);
    u = await speak('how much time is left');
    assert.match(u.reply, /^The timer for 4 minutes has \d+ minutes?( and \d+ seconds?)? left\.$/, `heard ${u.transcript}`);
    await speak('set a timer for two minutes');
    u = await speak('cancel all timers');
    assert.equal(u.reply, 'Cancelled 2 timers.', `heard ${u.transcript}`);
    assert.deepEqual(timers(), []);
  });

  test('the answer to "For how long?": "for five minutes" starts a 5-minute timer; "never mind" starts none', async () => {
    box.app.timers.service?.cancel({ all: true });
    let u = await speak('set a timer');
    assert.equal(u.reply, 'For how long?', `heard ${u.transcript}`);
    // Spoken, the length alone is no sentence of the grammar (src/intents/templates-en.ts TimerDuration): heard in it,
    // "never mind" started a 1-minute timer in 8 of 24 tune-voice utterances.
    u = await speak('for five minutes');
    assert.equal(u.reply, 'Timer set for 5 minutes.', `heard ${u.transcript}`);
    assert.deepEqual(timers(), [[undefined, 300, 'running']]);
    box.app.timers.service?.cancel({ all: true });
    // The voices that heard "never mind" as "timer 1 minute" / "timer an minute" (the next test): with the
    // question open, a length heard in it would start a timer.
    for (const [said, voice, rate] of [['never mind', 'en-gb-x-gbclan', 130], ['nevermind', 'en-us+f3', 130], ['never mind', 'en-gb-scotland', 160]] as const) {
      u = await speak('set a timer');
      assert.equal(u.reply, 'For how long?', `heard ${u.transcript}`);
      u = await speak(said, voice, rate);
      assert.deepEqual(timers(), [], `"${said}" (${voice} ${rate}) heard as ${u.transcript}`);
    }
  });

  test('"two and a half minutes" starts a 150-second timer; "never mind" starts none', async () => {
    box.app.timers.service?.cancel({ all: true });
    // A tester's "two and a half minutes" had no sentence and was heard as "2 hour and 5 minutes".
    let u = await speak('set a timer for two and a half minutes');
    assert.deepEqual(timers(), [[undefined, 150, 'running']], `heard ${u.transcript}`);
    box.app.timers.service?.cancel({ all: true });
    // Spoken "timer <duration>" took these as "timer 1 minute" / "timer an minute" (a tester's en-gb-x-gbclan at
    // 130 words a minute, the tune voice en-us+f3 at 130), and a timer started.
    for (const [said, voice] of [['never mind', 'en-gb-x-gbclan'], ['nevermind', 'en-us+f3']] as const) {
      u = await speak(said, voice, 130);
      assert.deepEqual(timers(), [], `"${said}" (${voice}) heard as ${u.transcript}`);
    }
  });

  test('"twelve minutes" heard as "two minutes" (the "two" drawn over the time "twelve" takes) starts no 2-minute timer; "two minutes" still starts one', async () => {
    box.app.timers.service?.cancel({ all: true });
    // A tester's en-gb at 220 words a minute; the tune voices en-us at 220 and en-gb-scotland at 190 likewise
    // (src/voice/stt/pocketsphinx-duration.ts MAX_NUMBER_STRETCH).
    for (const [voice, rate] of [['en-gb', 220], ['en-us', 220], ['en-gb-scotland', 190]] as const) {
      const u = await speak('set a timer for twelve minutes', voice, rate);
      const started = timers().map((t) => t[1]);
      assert.ok(started.every((s) => s === 720), `${voice} ${rate}: heard ${u.transcript}, started ${JSON.stringify(started)}`);
      box.app.timers.service?.cancel({ all: true });
    }
    const u = await speak('set a timer for two minutes', 'en-us', 190);
    assert.deepEqual(timers(), [[undefined, 120, 'running']], `heard ${u.transcript}`);
    box.app.timers.service?.cancel({ all: true });
  });

  test('shopping list: add, read back, remove; to-do: add, complete', async () => {
    for (const i of shopping()) box.app.lists.service?.remove('shopping', { text: i });
    let u = await speak('add milk to the shopping list');
    assert.equal(u.reply, 'Added milk to your shopping list.', `heard ${u.transcript}`);
    await speak('add bread to the shopping list');
    assert.deepEqual(shopping(), ['milk', 'bread']);
    u = await speak("what's on my shopping list");
    assert.equal(u.reply, 'Your shopping list has 2 items: milk and bread.', `heard ${u.transcript}`);
    u = await speak('take milk off the shopping list');
    // pocketsphinx may hear "take" as "tick": ticked off or removed, milk is no longer on the list either way.
    assert.match(u.reply, /^(Removed milk from|Ticked off milk on) your shopping list\.$/, `heard ${u.transcript}`);
    assert.deepEqual(shopping(), ['bread']);
    // A to-do heard by voice is added after a yes: the grammar's items are groceries (pocketsphinx-judge.ts todoAsks).
    u = await speak('add coffee to my to do list');
    assert.equal(u.reply, 'Do you really want to add coffee to your to-do list? Please say yes or no.', `heard ${u.transcript}`);
    assert.deepEqual(box.app.lists.service?.items('todo').map((i) => i.text), [], 'nothing before the yes');
    u = await speak('yes');
    assert.equal(u.reply, 'Added coffee to your to-do list.', `heard ${u.transcript}`);
    u = await speak('mark coffee as done');
    assert.equal(u.reply, 'Do you really want to tick off coffee on your to-do list? Please say yes or no.', `heard ${u.transcript}`);
    u = await speak('yes');
    assert.equal(u.reply, 'Ticked off coffee on your to-do list.', `heard ${u.transcript}`);
    assert.deepEqual(box.app.lists.service?.items('todo', { done: true }).map((i) => [i.text, i.done]), [['coffee', true]]);
    assert.deepEqual(box.sim.commands, [], 'no device was commanded');
  });

  test('a to-do the grammar cannot hold is never added unasked: a tester\'s "add call mom to my to do list" added "salt"; a spoken no adds nothing', async () => {
    const todo = (): string[] => box.app.lists.service?.items('todo').map((i) => i.text) ?? [];
    const before = todo();
    for (const [voice, rate] of [['en-us+f3', 130], ['en-us+f3', 190], ['en-us', 160]] as const) {
      const u = await speak('add call mom to my to do list', voice, rate);
      assert.deepEqual(todo(), before, `${voice} ${rate}: heard ${JSON.stringify(u.transcript)}, replied ${JSON.stringify(u.reply)}`);
      if (/^Do you really want to add /.test(u.reply)) {
        // A spoken no in room noise is sometimes not caught: the box asks again ("Please say yes or no."), and nothing is added meanwhile.
        let no = await speak('no');
        for (let i = 0; i < 2 && /Please say yes or no/.test(no.reply); i++) {
          assert.deepEqual(todo(), before, 'nothing added while the question waits');
          no = await speak('no', 'en-us', 140 + 20 * i);
        }
        assert.match(no.reply, /^OK, I did not add /, `heard ${no.transcript}`);
      }
      assert.deepEqual(todo(), before, `${voice} ${rate}: nothing added`);
    }
    // Ticking off by voice: a tester's "mark call mom as done" ticked off "oil", then "salt", with no question.
    box.app.lists.service?.add('todo', 'oil');
    box.app.lists.service?.add('todo', 'salt');
    const ticked = (): string[] => (box.app.lists.service?.items('todo', { done: true }) ?? []).filter((i) => i.done).map((i) => i.text);
    const tickedBefore = ticked();
    for (const [voice, rate] of [['en-us', 160], ['en-us', 140]] as const) {
      const u = await speak('mark call mom as done', voice, rate);
      if (/^Do you really want to /.test(u.reply)) {
        let no = await speak('no');
        for (let i = 0; i < 2 && /Please say yes or no/.test(no.reply); i++) no = await speak('no', 'en-us', 140 + 20 * i);
      }
      assert.deepEqual(ticked(), tickedBefore, `${voice} ${rate}: heard ${JSON.stringify(u.transcript)}, replied ${JSON.stringify(u.reply)}: nothing ticked off`);
    }
  });
});
