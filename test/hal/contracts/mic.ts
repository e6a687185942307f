/**
 * Microphone contract suite: every Microphone (arecord against the null
 * device, the file source, the push source; arecord on a Pi's sound card with
 * HOMEAGENT_HW_TESTS=1) must pass it.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Readable } from 'node:stream';
import type { Microphone } from '../../../hal/mic/types.js';

/** A fresh microphone; `feed` makes audio flow where the source needs help (the push source). */
export interface MicHarness {
  mic: Microphone;
  feed?(): void;
  cleanup(): Promise<void>;
}

/** Resolve with the first chunk of `stream`. */
function firstChunk(stream: Readable, ms = 30_000): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => reject(new Error(`no audio within ${ms} ms`)), ms);
    stream.once('data', (d: Buffer) => {
      clearTimeout(t);
      stream.pause();
      resolve(d);
    });
  });
}

/** Register the microphone contract for one implementation. */
export function micContract(name: string, factory: () => Promise<MicHarness>): void {
  describe(`Microphone contract: ${name}`, () => {
    async function withMic(fn: (h: MicHarness) => Promise<void>): Promise<void> {
      const h = await factory();
      try {
        await fn(h);
      } finally {
        await h.mic.stop();
        await h.cleanup();
      }
    }

    it('delivers 16 kHz mono s16le raw PCM: whole samples, no RIFF header', () =>
      withMic(async (h) => {
        assert.deepEqual(h.mic.format, { sampleRate: 16000, channels: 1, encoding: 's16le' });
        const stream = await h.mic.start();
        assert.equal(h.mic.running, true);
        const got = firstChunk(stream);
        h.feed?.();
        const chunk = await got;
        assert.ok(chunk.length > 0);
        assert.equal(chunk.length % 2, 0);
        assert.notEqual(chunk.subarray(0, 4).toString('latin1'), 'RIFF');
      }));

    it('stop() ends the stream exactly once with no error event', () =>
      withMic(async (h) => {
        const stream = await h.mic.start();
        let ends = 0;
        const errors: unknown[] = [];
        stream.on('end', () => ends++);
        stream.on('error', (e) => errors.push(e));
        h.mic.on('error', (e) => errors.push(e));
        const got = firstChunk(stream);
        h.feed?.();
        await got;
        const ended = new Promise<void>((r) => stream.once('end', () => r()));
        await h.mic.stop();
        await h.mic.stop();
        stream.resume();
        await ended;
        await new Promise((r) => setTimeout(r, 20));
        assert.equal(ends, 1);
        assert.deepEqual(errors, []);
        assert.equal(h.mic.running, false);
      }));

    it('start() while running returns the same stream; start() after stop() gives a new one', () =>
      withMic(async (h) => {
        const a = await h.mic.start();
        assert.equal(await h.mic.start(), a);
        await h.mic.stop();
        const b = await h.mic.start();
        assert.notEqual(b, a);
        const got = firstChunk(b);
        h.feed?.();
        assert.ok((await got).length > 0);
      }));

    it('stop() before start() is harmless', () =>
      withMic(async (h) => {
        await h.mic.stop();
        assert.equal(h.mic.running, false);
      }));
  });
}
