/**
 * Shared helpers of the voice tests: fixture paths, deterministic noise,
 * padding of the real recordings.
 */
import { readFileSync, readdirSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseWav } from '../../hal/common/wav.js';
import { prng } from '../support/prng.js';
export { prng };

export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const fixturesDir = path.resolve(repoRoot, '../shared/fixtures/voice/en');

/** The recordings (file names), sorted. */
export function recordings(): string[] {
  return readdirSync(fixturesDir).filter((f) => f.endsWith('.wav')).sort();
}

/** 16 kHz mono s16le PCM of one recording. */
export function loadRecording(name: string): Buffer {
  const { format, data } = parseWav(readFileSync(path.join(fixturesDir, name)));
  if (format.encoding !== 'pcm' || format.bitsPerSample !== 16 || format.sampleRate !== 16000 || format.channels !== 1) throw new Error(`${name}: expected 16 kHz mono 16-bit PCM`);
  return Buffer.from(data);
}


/** White noise at `levelDb` dBFS RMS, `ms` long (16 kHz s16le). levelDb -Infinity: digital silence. */
export function noise(ms: number, levelDb: number, seed = 1): Buffer {
  const n = Math.round(16 * ms);
  const out = Buffer.alloc(n * 2);
  if (!Number.isFinite(levelDb)) return out;
  const rnd = prng(seed);
  const rms = 32768 * 10 ** (levelDb / 20);
  const amp = rms * Math.sqrt(3); // uniform noise: rms = amp / sqrt(3)
  for (let i = 0; i < n; i++) out.writeInt16LE(Math.max(-32768, Math.min(32767, Math.round((rnd() * 2 - 1) * amp))), i * 2);
  return out;
}

/** Pink noise (white noise through Paul Kellet's filter) at `levelDb` dBFS RMS, `ms` long (16 kHz s16le). */
export function pinkNoise(ms: number, levelDb: number, seed: number): Buffer {
  const white = noise(ms, -20, seed);
  const n = white.length / 2;
  const y = new Float64Array(n);
  const b = [0, 0, 0, 0, 0, 0, 0];
  for (let i = 0; i < n; i++) {
    const x = white.readInt16LE(i * 2) / 32768;
    b[0] = 0.99886 * b[0]! + x * 0.0555179;
    b[1] = 0.99332 * b[1]! + x * 0.0750759;
    b[2] = 0.969 * b[2]! + x * 0.153852;
    b[3] = 0.8665 * b[3]! + x * 0.3104856;
    b[4] = 0.55 * b[4]! + x * 0.5329522;
    b[5] = -0.7616 * b[5]! - x * 0.016898;
    y[i] = b[0]! + b[1]! + b[2]! + b[3]! + b[4]! + b[5]! + b[6]! + x * 0.5362;
    b[6] = x * 0.115926;
  }
  const rms = Math.sqrt(y.reduce((a, v) => a + v * v, 0) / Math.max(1, n)) || 1;
  const out = Buffer.alloc(n * 2);
  const g = (32768 * 10 ** (levelDb / 20)) / rms;
  for (let i = 0; i < n; i++) out.writeInt16LE(Math.max(-32768, Math.min(32767, Math.round(y[i]! * g))), i * 2);
  return out;
}

/** `pcm` scaled by `db` dB. */
export function gain(pcm: Buffer, db: number): Buffer {
  const out = Buffer.alloc(pcm.length);
  const g = 10 ** (db / 20);
  for (let i = 0; i < pcm.length / 2; i++) out.writeInt16LE(Math.max(-32768, Math.min(32767, Math.round(pcm.readInt16LE(i * 2) * g))), i * 2);
  return out;
}

/** Add `b` onto `a` sample by sample (clipped), from offset 0; result has a's length. */
export function mix(a: Buffer, b: Buffer): Buffer {
  const out = Buffer.from(a);
  const n = Math.min(a.length, b.length) / 2;
  for (let i = 0; i < n; i++) {
    const s = a.readInt16LE(i * 2) + b.readInt16LE(i * 2);
    out.writeInt16LE(Math.max(-32768, Math.min(32767, s)), i * 2);
  }
  return out;
}

/** `speech` with `beforeMs` and `afterMs` of noise at `levelDb` around it, and the same noise under it. */
export function pad(speech: Buffer, beforeMs: number, afterMs: number, levelDb: number, seed = 7): { pcm: Buffer; speechFromMs: number; speechToMs: number } {
  const before = noise(beforeMs, levelDb, seed);
  const under = noise(speech.length / 32, levelDb, seed + 1);
  const after = noise(afterMs, levelDb, seed + 2);
  const pcm = Buffer.concat([before, mix(speech, under), after]);
  return { pcm, speechFromMs: beforeMs, speechToMs: beforeMs + speech.length / 32 };
}

/** A 440 Hz tone, `ms` long, at `levelDb` dBFS peak. */
export function tone(ms: number, levelDb = -12, hz = 440): Buffer {
  const n = Math.round(16 * ms);
  const out = Buffer.alloc(n * 2);
  const amp = 32767 * 10 ** (levelDb / 20);
  for (let i = 0; i < n; i++) out.writeInt16LE(Math.round(amp * Math.sin((2 * Math.PI * hz * i) / 16000)), i * 2);
  return out;
}

/** Split a buffer into chunks of `bytes` (the last may be shorter). */
export function chunks(buf: Buffer, bytes: number): Buffer[] {
  const out: Buffer[] = [];
  for (let o = 0; o < buf.length; o += bytes) out.push(buf.subarray(o, Math.min(buf.length, o + bytes)));
  return out;
}
