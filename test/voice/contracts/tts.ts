/**
 * TtsEngine contract suite (MQTT.js-style abstract tests, as test/hal/contracts
 * has them): one suite, run against every text-to-speech engine
 * (src/voice/tts/types.ts) — espeak-ng for real, Wyoming TTS against
 * test/support/wyoming-test-server.ts, piper through a stand-in binary
 * (the real piper and its voices are not installed here), and the pipeline
 * tests' FakeTts.
 *
 * What every engine promises:
 * - a sentence gives mono s16le PCM (`pcm` a whole number of samples) at
 *   the engine's `sampleRate` in Hz, audible and under 10 s;
 *   longer text gives longer audio; a Mandarin sentence with its language
 *   tag is spoken too;
 * - an already aborted signal rejects with VoiceAbortError (code ABORTED);
 *   aborting while the engine works rejects the same way, at once;
 * - an engine that cannot run rejects with a typed HomeAgentError (its
 *   `code` says which), never hangs or throws untyped;
 * - blank text resolves with well-formed audio or rejects with a typed error;
 * - close(), where offered, resolves.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HomeAgentError } from '../../../src/kernel/errors.js';
import type { TtsAudio, TtsEngine } from '../../../src/voice/tts/types.js';

/** A fresh engine of one implementation, with its broken and stuck variants. */
export interface TtsHarness {
  engine: TtsEngine;
  /**
   * An engine whose synthesis does not finish on its own, and a promise that
   * resolves once a synthesize() call on it is under way (the process runs,
   * the service has the request), so the suite aborts mid-work without sleeping.
   */
  stuck(): { engine: TtsEngine; working(): Promise<void> };
  /** An engine of the same kind that cannot run (missing binary, nothing listening). */
  broken(): TtsEngine;
  /** The `code` of the error the broken engine rejects with. */
  brokenCode: string;
  cleanup(): Promise<void>;
}

const typed = (code: string) => (err: unknown) => err instanceof HomeAgentError && err.code === code;

/** Root mean square of s16le PCM, in dBFS. */
function rmsDb(pcm: Buffer): number {
  let sum = 0;
  const n = Math.floor(pcm.length / 2);
  for (let i = 0; i < n; i++) sum += pcm.readInt16LE(i * 2) ** 2;
  return 20 * Math.log10(Math.sqrt(sum / Math.max(1, n)) / 32768 + 1e-12);
}

/** The TtsAudio shape every engine returns. */
function assertAudio(a: TtsAudio): void {
  assert.ok(Buffer.isBuffer(a.pcm), 'pcm is a Buffer');
  assert.equal(a.pcm.length % 2, 0, 'whole 16-bit samples');
  assert.ok(Number.isInteger(a.sampleRate) && a.sampleRate >= 8000 && a.sampleRate <= 48000, `sample rate ${a.sampleRate} Hz`);
}

const seconds = (a: TtsAudio): number => a.pcm.length / 2 / a.sampleRate;

/** Register the TTS contract for one implementation. */
export function ttsContract(name: string, factory: () => Promise<TtsHarness>): void {
  describe(`TtsEngine contract: ${name}`, () => {
    async function withEngine(fn: (h: TtsHarness) => Promise<void>): Promise<void> {
      const h = await factory();
      try {
        await fn(h);
      } finally {
        await h.engine.close?.();
        await h.cleanup();
      }
    }

    it('a sentence: mono s16le PCM at the engine rate, audible, under 10 s', () =>
      withEngine(async (h) => {
        const a = await h.engine.synthesize('The living room light is on.', { language: 'en' });
        assertAudio(a);
        const s = seconds(a);
        assert.ok(s > 0 && s < 10, `${s} s`);
        assert.ok(rmsDb(a.pcm) > -50, `audible: ${rmsDb(a.pcm).toFixed(1)} dBFS`);
      }));

    it('longer text gives longer audio', () =>
      withEngine(async (h) => {
        const short = await h.engine.synthesize('Okay.', { language: 'en' });
        const long = await h.engine.synthesize('The kitchen light is on and the front door is locked for the night.', { language: 'en' });
        assertAudio(short);
        assertAudio(long);
        assert.ok(seconds(long) > seconds(short) * 1.5, `${seconds(long)} s vs ${seconds(short)} s`);
      }));

    it('a Mandarin sentence with its language tag is spoken', () =>
      withEngine(async (h) => {
        const a = await h.engine.synthesize('客厅的灯已经打开了。', { language: 'zh-CN' });
        assertAudio(a);
        assert.ok(a.pcm.length > 0);
      }));

    it('an already aborted signal: rejects with ABORTED', () =>
      withEngine(async (h) => {
        const ac = new AbortController();
        ac.abort();
        await assert.rejects(h.engine.synthesize('Hello there.', { signal: ac.signal }), typed('ABORTED'));
      }));

    it('abort while the engine works: rejects with ABORTED', () =>
      withEngine(async (h) => {
        const { engine, working } = h.stuck();
        try {
          const ac = new AbortController();
          const p = engine.synthesize('This takes forever.', { signal: ac.signal });
          p.catch(() => undefined);
          await working();
          ac.abort();
          await assert.rejects(p, typed('ABORTED'));
        } finally {
          await engine.close?.();
        }
      }));

    it('an engine that cannot run: rejects with a typed error', () =>
      withEngine(async (h) => {
        const broken = h.broken();
        try {
          await assert.rejects(broken.synthesize('Hello.'), (err: unknown) => {
            assert.ok(err instanceof HomeAgentError, `typed error, got ${String(err)}`);
            assert.equal(err.code, h.brokenCode);
            assert.ok(err.message.length > 0);
            return true;
          });
        } finally {
          await broken.close?.();
        }
      }));

    it('blank text: well-formed audio or a typed error', () =>
      withEngine(async (h) => {
        await h.engine.synthesize('  ', { language: 'en' }).then(assertAudio, (err: unknown) => assert.ok(err instanceof HomeAgentError, `typed error, got ${String(err)}`));
      }));

    it('the engine keeps working after an aborted call', () =>
      withEngine(async (h) => {
        const ac = new AbortController();
        ac.abort();
        await h.engine.synthesize('Gone.', { signal: ac.signal }).catch(() => undefined);
        assertAudio(await h.engine.synthesize('Still here.', { language: 'en' }));
      }));
  });
}
