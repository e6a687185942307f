/**
 * Speaker contract suite: the simulator and the real aplay/sox driver (here
 * against `aplay -D null`, which needs no sound card) must both pass it.
 */
import assert from 'node:assert/strict';
import { once } from 'node:events';
import { describe, it } from 'node:test';
import { generateTones } from '../../../hal/common/pcm.js';
import { SpeakerError, type Speaker } from '../../../hal/speaker/types.js';

/** A fresh speaker and how to clean up after it. */
export interface SpeakerHarness {
  speaker: Speaker;
  cleanup(): Promise<void>;
}

const RATE = 16000;
/** 100 ms of a 440 Hz tone at 16 kHz. */
const beep = () => generateTones([{ freqHz: 440, durationMs: 100 }], RATE);

/** Register the speaker contract for one implementation. */
export function speakerContract(name: string, factory: () => Promise<SpeakerHarness>): void {
  describe(`Speaker contract: ${name}`, () => {
    async function withSpeaker(fn: (s: Speaker) => Promise<void>): Promise<void> {
      const h = await factory();
      try {
        await fn(h.speaker);
      } finally {
        await h.speaker.close();
        await h.cleanup();
      }
    }

    it('plays an utterance to the end: completed, start then end events, idle after', () =>
      withSpeaker(async (s) => {
        const events: string[] = [];
        s.on('start', (e) => events.push(`start:${e.id}`));
        s.on('end', (e) => events.push(`end:${e.id}:${e.completed}`));
        const r = await s.play(beep(), { sampleRate: RATE, id: 'hello' });
        assert.deepEqual(r, { id: 'hello', completed: true });
        assert.deepEqual(events, ['start:hello', 'end:hello:true']);
        assert.equal(s.isPlaying, false);
      }));

    it('queues utterances and plays them in order', () =>
      withSpeaker(async (s) => {
        const started: string[] = [];
        s.on('start', (e) => started.push(e.id));
        const results = await Promise.all([
          s.play(beep(), { sampleRate: RATE, id: 'a' }),
          s.play(beep(), { sampleRate: 22050, id: 'b' }),
          s.play(Buffer.concat([beep(), beep()]), { sampleRate: RATE, channels: 2, id: 'c' }),
        ]);
        assert.deepEqual(started, ['a', 'b', 'c']);
        assert.deepEqual(results.map((r) => r.completed), [true, true, true]);
      }));

    it('streams an utterance a sentence at a time', () =>
      withSpeaker(async (s) => {
        const stream = s.openStream({ sampleRate: RATE, id: 'streamed', text: 'One. Two.' });
        assert.equal(stream.write(beep()), true);
        await new Promise((r) => setTimeout(r, 10));
        assert.equal(stream.write(beep()), true);
        stream.end();
        assert.equal(stream.write(beep()), false);
        assert.deepEqual(await stream.done, { id: 'streamed', completed: true });
      }));

    it('stop() cuts the current utterance, drops the queue, and resolves once the player exited', () =>
      withSpeaker(async (s) => {
        const started = once(s, 'start');
        const current = s.openStream({ sampleRate: RATE, id: 'long' });
        current.write(beep());
        await started;
        const queued1 = s.play(beep(), { sampleRate: RATE, id: 'q1' });
        const queued2 = s.play(beep(), { sampleRate: RATE, id: 'q2' });
        assert.equal(s.isPlaying, true);
        assert.equal(s.queued, 2);
        const stopped = once(s, 'stopped');
        const report = await s.stop();
        assert.equal(report.cut, true);
        assert.equal(report.dropped, 2);
        assert.ok(report.exitedAt >= report.requestedAt);
        assert.equal(report.exitMs, report.exitedAt - report.requestedAt);
        assert.deepEqual((await stopped)[0], report);
        assert.equal(s.isPlaying, false);
        assert.equal(s.queued, 0);
        assert.deepEqual(await current.done, { id: 'long', completed: false });
        assert.deepEqual(await queued1, { id: 'q1', completed: false });
        assert.deepEqual(await queued2, { id: 'q2', completed: false });
        assert.equal(current.write(beep()), false);
        const after = await s.play(beep(), { sampleRate: RATE, id: 'after' });
        assert.equal(after.completed, true);
      }));

    it('stop() when idle resolves at once with nothing cut', () =>
      withSpeaker(async (s) => {
        const report = await s.stop();
        assert.equal(report.cut, false);
        assert.equal(report.dropped, 0);
      }));

    it('volume is 0..100; other values are a typed error', () =>
      withSpeaker(async (s) => {
        s.setVolume(35);
        assert.equal(s.volume, 35);
        assert.throws(() => s.setVolume(101), (e: unknown) => e instanceof SpeakerError && e.code === 'SPEAKER_BAD_VOLUME');
        assert.throws(() => s.setVolume(-1), (e: unknown) => e instanceof SpeakerError && e.code === 'SPEAKER_BAD_VOLUME');
        assert.equal(s.volume, 35);
        assert.equal((await s.play(beep(), { sampleRate: RATE })).completed, true);
      }));

    it('rejects bad formats with a typed error', () =>
      withSpeaker(async (s) => {
        await assert.rejects(s.play(beep(), { sampleRate: 0 }), (e: unknown) => e instanceof SpeakerError && e.code === 'SPEAKER_BAD_FORMAT');
        await assert.rejects(s.play(Buffer.alloc(3), { sampleRate: RATE }), (e: unknown) => e instanceof SpeakerError && e.code === 'SPEAKER_BAD_FORMAT');
        assert.equal(s.isPlaying, false);
      }));

    it('plays the listening earcon', () =>
      withSpeaker(async (s) => {
        const ids: Array<string | undefined> = [];
        s.on('start', (e) => ids.push(e.text));
        assert.equal((await s.playEarcon('listening')).completed, true);
        assert.deepEqual(ids, ['earcon:listening']);
      }));

    it('refuses to play after close()', () =>
      withSpeaker(async (s) => {
        await s.close();
        await assert.rejects(s.play(beep(), { sampleRate: RATE }), (e: unknown) => e instanceof SpeakerError && e.code === 'SPEAKER_CLOSED');
      }));
  });
}
