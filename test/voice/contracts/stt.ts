/**
 * SttEngine contract suite (MQTT.js-style abstract tests, as test/hal/contracts
 * has them): one suite, run against every speech-to-text engine
 * (src/voice/stt/types.ts) — pocketsphinx for real, Wyoming ASR against
 * test/support/wyoming-test-server.ts, and the pipeline tests' FakeStt.
 *
 * What every engine promises:
 * - a result has the SttResult shape: `text` normalised (lower case, no
 *   sentence punctuation), `confidence` in 0..1, `rejected` exactly when
 *   `text` is '', `engine` its own name, `finish_ms` (when given) >= 0;
 * - no audio or very short audio is a rejected result, never an error;
 * - after abort() — before end() or while end() runs — end() rejects with
 *   SttAbortedError (code STT_ABORTED); writes after it are ignored and a
 *   second abort() is harmless;
 * - an engine that cannot run rejects end() with a typed HomeAgentError
 *   (its `code` says which), never hangs or throws untyped;
 * - pause()/resume(), where offered, do not change the transcript;
 * - close(), where offered, resolves and settles every open session.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HomeAgentError } from '../../../src/kernel/errors.js';
import type { SttEngine, SttResult } from '../../../src/voice/stt/types.js';

/** A fresh engine of one implementation, with what the suite feeds it. */
export interface SttHarness {
  engine: SttEngine;
  /** 16 kHz mono s16le speech this engine recognises, and the text it must return for it. */
  speech: { pcm: Buffer; text: string };
  /** An engine of the same kind that cannot run (missing binary, nothing listening). */
  broken(): SttEngine;
  /** The `code` of the error the broken engine's end() rejects with. */
  brokenCode: string;
  cleanup(): Promise<void>;
}

/** 100 ms chunks (3200 bytes), as the microphone delivers them. */
function feed(pcm: Buffer, write: (b: Buffer) => void): void {
  for (let o = 0; o < pcm.length; o += 3200) write(pcm.subarray(o, o + 3200));
}

/** Quiet noise (about -60 dBFS), `ms` long, deterministic. */
function quietNoise(ms: number): Buffer {
  const n = ms * 16;
  const b = Buffer.alloc(n * 2);
  let x = 12345;
  for (let i = 0; i < n; i++) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    b.writeInt16LE(Math.round(((x / 0x7fffffff) * 2 - 1) * 33), i * 2);
  }
  return b;
}

const typed = (code: string) => (err: unknown) => err instanceof HomeAgentError && err.code === code;

/** The SttResult shape every engine returns. */
function assertShape(r: SttResult, engine: SttEngine): void {
  assert.equal(typeof r.text, 'string');
  assert.equal(r.text, r.text.toLowerCase(), 'text is lower case');
  assert.doesNotMatch(r.text, /[.,!?;:]$|^\s|\s$/, 'text is normalised: no sentence punctuation, no outer blanks');
  assert.ok(typeof r.confidence === 'number' && r.confidence >= 0 && r.confidence <= 1, `confidence ${r.confidence} in 0..1`);
  assert.equal(typeof r.rejected, 'boolean');
  assert.equal(r.rejected, r.text === '', 'rejected exactly when there is no text');
  assert.equal(r.engine, engine.name);
  if (r.finish_ms !== undefined) assert.ok(r.finish_ms >= 0, 'finish_ms >= 0');
}

/** Register the STT contract for one implementation. */
export function sttContract(name: string, factory: () => Promise<SttHarness>): void {
  describe(`SttEngine contract: ${name}`, () => {
    async function withEngine(fn: (h: SttHarness) => Promise<void>): Promise<void> {
      const h = await factory();
      try {
        await fn(h);
      } finally {
        await h.engine.close?.();
        await h.cleanup();
      }
    }

    it('recognises speech: the transcript, in the SttResult shape', () =>
      withEngine(async (h) => {
        const s = h.engine.start({ language: 'en' });
        feed(h.speech.pcm, (b) => s.write(b));
        const r = await s.end();
        assertShape(r, h.engine);
        assert.equal(r.rejected, false);
        assert.equal(r.text, h.speech.text);
        assert.ok(r.confidence > 0);
      }));

    it('no audio at all: a rejected result, not an error', () =>
      withEngine(async (h) => {
        const r = await h.engine.start().end();
        assertShape(r, h.engine);
        assert.equal(r.rejected, true);
        assert.equal(r.text, '');
      }));

    it('very short audio (60 ms of quiet noise): a well-formed result, not an error', () =>
      withEngine(async (h) => {
        const s = h.engine.start();
        s.write(quietNoise(60));
        const r = await s.end();
        assertShape(r, h.engine);
        assert.equal(r.rejected, true, 'nothing was said');
      }));

    it('abort() before end(): end() rejects with STT_ABORTED; later writes and a second abort are harmless', () =>
      withEngine(async (h) => {
        const s = h.engine.start();
        feed(h.speech.pcm.subarray(0, 16000), (b) => s.write(b));
        s.abort();
        s.write(h.speech.pcm.subarray(16000, 19200));
        s.abort();
        await assert.rejects(s.end(), typed('STT_ABORTED'));
      }));

    it('abort() while end() runs: the utterance is dropped (STT_ABORTED)', () =>
      withEngine(async (h) => {
        const s = h.engine.start();
        feed(h.speech.pcm, (b) => s.write(b));
        const p = s.end();
        s.abort();
        await assert.rejects(p, typed('STT_ABORTED'));
      }));

    it('an aborted session does not disturb the next one', () =>
      withEngine(async (h) => {
        const a = h.engine.start();
        feed(h.speech.pcm.subarray(0, 9600), (b) => a.write(b));
        a.abort();
        await a.end().catch(() => undefined);
        const s = h.engine.start();
        feed(h.speech.pcm, (b) => s.write(b));
        assert.equal((await s.end()).text, h.speech.text);
      }));

    it('an engine that cannot run: end() rejects with a typed error', () =>
      withEngine(async (h) => {
        const broken = h.broken();
        try {
          const s = broken.start();
          feed(h.speech.pcm, (b) => s.write(b));
          await assert.rejects(s.end(), (err: unknown) => {
            assert.ok(err instanceof HomeAgentError, `typed error, got ${String(err)}`);
            assert.equal(err.code, h.brokenCode);
            assert.ok(err.message.length > 0);
            return true;
          });
        } finally {
          await broken.close?.();
        }
      }));

    it('pause() then end() (only silence after the pause): the same transcript as without the hint', () =>
      withEngine(async (h) => {
        const s = h.engine.start();
        if (!s.pause) {
          s.abort();
          return; // the hint is optional; engines without it decode at end()
        }
        feed(h.speech.pcm, (b) => s.write(b));
        s.pause();
        const r = await s.end();
        assertShape(r, h.engine);
        assert.equal(r.text, h.speech.text);
      }));

    it('pause(), more speech, resume(), end(): the whole utterance is decoded', () =>
      withEngine(async (h) => {
        const s = h.engine.start();
        if (!s.pause || !s.resume) {
          s.abort();
          return;
        }
        const half = Math.floor(h.speech.pcm.length / 6400) * 3200;
        feed(h.speech.pcm.subarray(0, half), (b) => s.write(b));
        s.pause();
        s.resume();
        feed(h.speech.pcm.subarray(half), (b) => s.write(b));
        assert.equal((await s.end()).text, h.speech.text);
      }));

    it('close() resolves and settles an open session (end() resolves or rejects with a typed error)', () =>
      withEngine(async (h) => {
        if (!h.engine.close) return; // close is optional
        const s = h.engine.start();
        feed(h.speech.pcm.subarray(0, 9600), (b) => s.write(b));
        await h.engine.close();
        await s.end().then(
          (r) => assertShape(r, h.engine),
          (err: unknown) => assert.ok(err instanceof HomeAgentError, `typed error, got ${String(err)}`),
        );
      }));
  });
}
