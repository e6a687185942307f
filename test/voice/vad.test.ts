import { test } from 'node:test';
import assert from 'node:assert/strict';
import { Endpointer, frameFeatures, type EndpointEvent } from '../../src/voice/vad.js';
import { recordings, loadRecording, pad, noise, chunks, tone } from './helpers.js';

type End = Extract<EndpointEvent, { type: 'end' }>;

function run(pcm: Buffer, opts: ConstructorParameters<typeof Endpointer>[0] = {}, chunkBytes = 1024): { events: EndpointEvent[]; end: End } {
  const ep = new Endpointer(opts);
  const events: EndpointEvent[] = [];
  for (const c of chunks(pcm, chunkBytes)) events.push(...ep.push(c));
  const fin = ep.finish('stream_end');
  if (fin) events.push(fin);
  const end = events.find((e): e is End => e.type === 'end');
  assert.ok(end, 'an end event');
  return { events, end };
}

for (const level of [-70, -55]) {
  test(`every recording padded with noise at ${level} dBFS: the end is found in the audio, after speech, before the file ends`, () => {
    for (const name of recordings()) {
      const p = pad(loadRecording(name), 1500, 4000, level);
      const total = p.pcm.length / 32;
      const { events, end } = run(p.pcm, { silenceMs: 800 });
      assert.equal(end.reason, 'silence', name);
      const start = events.find((e) => e.type === 'speech_start');
      assert.ok(start && start.type === 'speech_start', name);
      assert.ok(start.at_ms >= p.speechFromMs - 40, `${name}: speech starts inside the recording (${start.at_ms})`);
      assert.ok(end.speech_end_ms > start.at_ms + 300, `${name}: some speech captured`);
      assert.ok(end.speech_end_ms <= p.speechToMs + 40, `${name}: speech ends inside the recording (${end.speech_end_ms} <= ${p.speechToMs})`);
      assert.ok(end.decided_at_ms < total - 2000, `${name}: decided long before the end of the file (${end.decided_at_ms} of ${total})`);
      assert.equal(end.decided_at_ms - end.speech_end_ms, 800, `${name}: after exactly silence_ms`);
    }
  });
}

test('loud recordings padded with noise at -45 dBFS still end in the audio', () => {
  const loud = recordings().filter((n) => frameFeatures(loadRecording(n)).energyDb > -24);
  assert.ok(loud.length >= 10);
  for (const name of loud) {
    const p = pad(loadRecording(name), 1000, 4000, -45, 3);
    const { end } = run(p.pcm);
    assert.equal(end.reason, 'silence', name);
    assert.ok(end.speech_end_ms <= p.speechToMs + 40 && end.decided_at_ms < p.pcm.length / 32 - 2000, name);
  }
});

test('with vad_min_energy_db at -65, a voice 26 dB quieter (sox vol 0.05: a microphone turned down or across the room) is found whole, as at full level', () => {
  // At the default floor of -50 dBFS its quiet words are cut off ("set a timer for 3 hours and 10 minutes" ended at
  // 3920 instead of 4100 ms and started a timer of 3 h 1 min; three recordings were no speech at all).
  const quieter = (b: Buffer): Buffer => {
    const o = Buffer.alloc(b.length);
    for (let i = 0; i < b.length / 2; i++) o.writeInt16LE(Math.round(b.readInt16LE(i * 2) * 0.05), i * 2);
    return o;
  };
  const speech = (pcm: Buffer): { from: number; to: number; reason: string } => {
    const { events, end } = run(pad(pcm, 1500, 4000, -80).pcm, { silenceMs: 800, minEnergyDb: -65 });
    const start = events.find((e) => e.type === 'speech_start');
    return { from: start && start.type === 'speech_start' ? start.at_ms : -1, to: end.speech_end_ms, reason: end.reason };
  };
  // The commands at ordinary level (oov_3, a long sentence, has words 45 dB under its loudest: some fall under the floor).
  const commands = recordings().filter((n) => !n.startsWith('oov') && frameFeatures(loadRecording(n)).energyDb > -24);
  assert.ok(commands.length >= 10);
  for (const name of commands) {
    const full = speech(loadRecording(name));
    const quiet = speech(quieter(loadRecording(name)));
    assert.equal(quiet.reason, 'silence', name);
    assert.ok(Math.abs(quiet.from - full.from) <= 60 && Math.abs(quiet.to - full.to) <= 60, `${name}: ${quiet.from}-${quiet.to} ms at vol 0.05, ${full.from}-${full.to} at full level`);
  }
});

test('the chunk size does not change the result', () => {
  const p = pad(loadRecording('set a timer for 30 seconds.wav'), 1200, 3000, -55);
  const a = run(p.pcm, {}, 640).end;
  const b = run(p.pcm, {}, 4096).end;
  const c = run(p.pcm, {}, 333 * 2).end;
  assert.deepEqual(a, b);
  assert.deepEqual(a, c);
});

test('silence_ms is configurable: a longer silence decides later, at speech end + silence_ms', () => {
  const p = pad(loadRecording('turn off lights in the Office.wav'), 1000, 5000, -60);
  const short = run(p.pcm, { silenceMs: 400 }).end;
  const long = run(p.pcm, { silenceMs: 2000 }).end;
  assert.equal(short.decided_at_ms - short.speech_end_ms, 400);
  assert.equal(long.decided_at_ms - long.speech_end_ms, 2000);
  assert.ok(long.decided_at_ms > short.decided_at_ms);
});

test('noise only: no speech, gives up at the no-speech timeout instead of listening forever', () => {
  for (const level of [-60, -40, -25]) {
    const { events, end } = run(noise(12000, level, 11), { noSpeechTimeoutMs: 6000 });
    assert.equal(events.some((e) => e.type === 'speech_start'), false, `level ${level}`);
    assert.equal(end.reason, 'no_speech');
    assert.equal(end.decided_at_ms, 6000);
  }
});

test('a steady hum that starts and never stops does not keep the utterance open forever', () => {
  const hum = Buffer.concat([noise(1000, -60, 2), tone(20000, -20, 120)]);
  const { end } = run(hum, { maxUtteranceMs: 15000 });
  assert.ok(end.decided_at_ms <= 1000 + 15000 + 20, `ended at ${end.decided_at_ms}`);
});

test('max utterance length ends continuous speech', () => {
  const names = recordings().filter((n) => !n.startsWith('oov'));
  const speech = Buffer.concat(names.map((n) => loadRecording(n).subarray(0, 1.5 * 32000)));
  const p = pad(speech, 800, 2000, -55);
  const { end } = run(p.pcm, { maxUtteranceMs: 4000, silenceMs: 2000 });
  assert.equal(end.reason, 'max_length');
  assert.ok(end.speech_start_ms !== undefined);
  assert.equal(end.decided_at_ms - end.speech_start_ms, 4000);
});

test('finish() before any speech reports no_speech; after speech it reports the forced end', () => {
  const ep = new Endpointer();
  ep.push(noise(500, -60));
  assert.equal((ep.finish() as End).reason, 'no_speech');
  const ep2 = new Endpointer();
  const rec = pad(loadRecording('pause.wav'), 500, 0, -60).pcm;
  ep2.push(rec.subarray(0, 32 * 1600));
  assert.equal(ep2.inSpeech, true);
  const fin = ep2.finish('forced') as End;
  assert.equal(fin.reason, 'forced');
  assert.deepEqual(ep2.push(rec), []);
  assert.equal(ep2.finish(), undefined);
});

test('frameFeatures: digital silence is -100 dBFS; a full-scale square wave is about 0 dBFS with a high ZCR', () => {
  assert.equal(frameFeatures(Buffer.alloc(640)).energyDb, -100);
  const sq = Buffer.alloc(640);
  for (let i = 0; i < 320; i++) sq.writeInt16LE(i % 2 ? 32767 : -32767, i * 2);
  const f = frameFeatures(sq);
  assert.ok(Math.abs(f.energyDb) < 0.1);
  assert.ok(f.zcr > 0.95);
});

test('pause events: one per gap after pause_ms of silence, resume when speech goes on, none when the pause is off', () => {
  const p = pad(loadRecording('set a timer for 3 hours and 10 minutes.wav'), 1000, 3000, -60);
  const { events, end } = run(p.pcm, { silenceMs: 800, pauseMs: 200 });
  const pauses = events.filter((e) => e.type === 'pause');
  const resumes = events.filter((e) => e.type === 'resume');
  assert.ok(pauses.length >= 1, 'at least the final pause');
  // Every pause but the last is followed by a resume; the last one precedes the end with no resume after it.
  assert.equal(resumes.length, pauses.length - 1);
  const last = pauses[pauses.length - 1]!;
  assert.ok(last.type === 'pause');
  assert.equal(last.speech_end_ms, end.speech_end_ms, 'the last pause is at the final speech end');
  assert.equal(last.decided_at_ms - last.speech_end_ms, 200, 'after exactly pause_ms');
  assert.ok(events.indexOf(last) > events.findLastIndex((e) => e.type === 'resume'));
  // Order: pause and resume alternate, starting with a pause.
  const seq = events.filter((e) => e.type === 'pause' || e.type === 'resume').map((e) => e.type);
  seq.forEach((t, i) => assert.equal(t, i % 2 === 0 ? 'pause' : 'resume'));
  assert.equal(run(p.pcm, { silenceMs: 800, pauseMs: 0 }).events.filter((e) => e.type === 'pause').length, 0);
  assert.equal(run(p.pcm, { silenceMs: 800, pauseMs: 800 }).events.filter((e) => e.type === 'pause').length, 0);
});

test('lull events: the final pass may start after speculate_ms, before the pause; speech after a lull alone is a resume too', () => {
  const p = pad(loadRecording('set a timer for 3 hours and 10 minutes.wav'), 1000, 3000, -60);
  const { events, end } = run(p.pcm, { silenceMs: 800, pauseMs: 400, speculateMs: 160 });
  const gaps = events.filter((e) => e.type === 'lull' || e.type === 'pause' || e.type === 'resume').map((e) => e.type);
  // Every gap opens with a lull; a pause may follow it; a resume closes it unless it is the last.
  assert.equal(gaps[0], 'lull');
  for (let i = 1; i < gaps.length; i++) {
    if (gaps[i] === 'pause') assert.equal(gaps[i - 1], 'lull', `a pause follows its gap's lull: ${gaps.join(' ')}`);
    if (gaps[i] === 'lull') assert.equal(gaps[i - 1], 'resume', `a new gap's lull follows a resume: ${gaps.join(' ')}`);
  }
  const lastLull = events.findLast((e) => e.type === 'lull');
  const lastPause = events.findLast((e) => e.type === 'pause');
  assert.ok(lastLull?.type === 'lull' && lastPause?.type === 'pause');
  assert.equal(lastLull.speech_end_ms, end.speech_end_ms);
  assert.equal(lastLull.decided_at_ms - lastLull.speech_end_ms, 160, 'after exactly speculate_ms');
  assert.equal(lastPause.decided_at_ms - lastPause.speech_end_ms, 400, 'the pause still after pause_ms');
  assert.ok(events.filter((e) => e.type === 'lull').length >= events.filter((e) => e.type === 'pause').length);
  // Off (0, or not below the pause): no lulls, and the pauses are the same as without.
  assert.equal(run(p.pcm, { silenceMs: 800, pauseMs: 400 }).events.filter((e) => e.type === 'lull').length, 0);
  assert.equal(run(p.pcm, { silenceMs: 800, pauseMs: 400, speculateMs: 400 }).events.filter((e) => e.type === 'lull').length, 0);
  const pausesWithout = run(p.pcm, { silenceMs: 800, pauseMs: 400 }).events.filter((e) => e.type === 'pause');
  assert.deepEqual(events.filter((e) => e.type === 'pause'), pausesWithout);
});
