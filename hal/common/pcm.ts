/**
 * PCM helpers: decode any WAV sample format to float, mix to mono, resample,
 * encode s16le, software volume and tone generation (earcons).
 * The house format everywhere in the voice path is 16 kHz, mono, s16le.
 */
import type { WavFormat } from './wav.js';

/** The voice pipeline's PCM format: 16000 Hz, 1 channel, signed 16-bit little-endian. */
export const VOICE_FORMAT = { sampleRate: 16000, channels: 1, encoding: 's16le' } as const;

/** A raw PCM format description (sampleRate in Hz). */
export interface PcmFormat {
  sampleRate: number;
  channels: number;
  encoding: 's16le';
}

/** Bytes per millisecond of s16le PCM at `sampleRate` Hz and `channels`. */
export function bytesPerMs(sampleRate: number, channels = 1): number {
  return (sampleRate * channels * 2) / 1000;
}

/** Duration in ms of `bytes` of s16le PCM. */
export function pcmDurationMs(bytes: number, sampleRate: number, channels = 1): number {
  return bytes / bytesPerMs(sampleRate, channels);
}

/** Mix interleaved s16le PCM of `channels` channels down to mono (integer average of the channels; mono is returned as is). */
export function toMono(pcm: Buffer, channels: number): Buffer {
  if (channels === 1) return pcm;
  const frames = Math.floor(pcm.length / (2 * channels));
  const out = Buffer.alloc(frames * 2);
  for (let f = 0; f < frames; f++) {
    let acc = 0;
    for (let c = 0; c < channels; c++) acc += pcm.readInt16LE((f * channels + c) * 2);
    out.writeInt16LE(Math.round(acc / channels), f * 2);
  }
  return out;
}

/**
 * Mono s16le at the file's own sample rate from the `data` bytes of a WAV in
 * format `fmt`: 16-bit PCM is mixed exactly (`toMono`), any other sample
 * format is decoded through float.
 */
export function toMonoS16(data: Buffer, fmt: WavFormat): Buffer {
  if (fmt.encoding === 'pcm' && fmt.bitsPerSample === 16) return toMono(data, fmt.channels);
  return floatToS16(decodeToMonoFloat(data, fmt));
}

/** Decode interleaved samples of any supported WAV format and mix all channels to one mono float track in [-1, 1]. */
export function decodeToMonoFloat(data: Buffer, fmt: WavFormat): Float32Array {
  const bytes = fmt.bitsPerSample / 8;
  const frames = Math.floor(data.length / fmt.blockAlign);
  const out = new Float32Array(frames);
  for (let f = 0; f < frames; f++) {
    let acc = 0;
    for (let c = 0; c < fmt.channels; c++) {
      const o = f * fmt.blockAlign + c * bytes;
      acc += readSample(data, o, fmt);
    }
    out[f] = acc / fmt.channels;
  }
  return out;
}

function readSample(b: Buffer, o: number, fmt: WavFormat): number {
  if (fmt.encoding === 'float') return fmt.bitsPerSample === 32 ? b.readFloatLE(o) : b.readDoubleLE(o);
  switch (fmt.bitsPerSample) {
    case 8:
      return (b.readUInt8(o) - 128) / 128; // 8-bit WAV is unsigned
    case 16:
      return b.readInt16LE(o) / 32768;
    case 24:
      return b.readIntLE(o, 3) / 8388608;
    default:
      return b.readInt32LE(o) / 2147483648;
  }
}

/**
 * Resample a mono float track from `fromHz` to `toHz`: when downsampling a
 * box low-pass over the decimation width first (keeps aliasing down), then
 * linear interpolation. Good enough for speech recognition input; not hi-fi.
 */
export function resampleFloat(input: Float32Array, fromHz: number, toHz: number): Float32Array {
  if (fromHz === toHz) return input;
  let src = input;
  const ratio = fromHz / toHz;
  if (ratio > 1) {
    const w = Math.max(1, Math.round(ratio));
    if (w > 1) {
      src = new Float32Array(input.length);
      let acc = 0;
      for (let i = 0; i < input.length; i++) {
        acc += input[i]!;
        if (i >= w) acc -= input[i - w]!;
        src[i] = acc / Math.min(i + 1, w);
      }
    }
  }
  const outLen = Math.floor((src.length * toHz) / fromHz);
  const out = new Float32Array(outLen);
  for (let i = 0; i < outLen; i++) {
    const pos = i * ratio;
    const i0 = Math.floor(pos);
    const frac = pos - i0;
    const a = src[i0] ?? 0;
    const b = src[Math.min(i0 + 1, src.length - 1)] ?? a;
    out[i] = a + (b - a) * frac;
  }
  return out;
}

/** Encode a float track in [-1, 1] as s16le (clipped). */
export function floatToS16(samples: Float32Array): Buffer {
  const out = Buffer.alloc(samples.length * 2);
  for (let i = 0; i < samples.length; i++) {
    const v = Math.max(-1, Math.min(1, samples[i]!));
    out.writeInt16LE(Math.round(v < 0 ? v * 32768 : v * 32767), i * 2);
  }
  return out;
}

/** Convert the `data` bytes of a WAV in format `fmt` to 16 kHz mono s16le (a copy is made only when needed). */
export function toVoicePcm(data: Buffer, fmt: WavFormat): Buffer {
  if (fmt.encoding === 'pcm' && fmt.bitsPerSample === 16 && fmt.channels === 1 && fmt.sampleRate === VOICE_FORMAT.sampleRate) {
    return data;
  }
  return floatToS16(resampleFloat(decodeToMonoFloat(data, fmt), fmt.sampleRate, VOICE_FORMAT.sampleRate));
}

/**
 * Software volume: scale s16le samples by a perceptual gain ((volume/100)^2,
 * roughly loudness-linear). `volume` 0..100; 100 returns the input unchanged.
 */
export function applyVolume(pcm: Buffer, volume: number): Buffer {
  if (volume >= 100) return pcm;
  const gain = (Math.max(0, volume) / 100) ** 2;
  const n = pcm.length >> 1;
  const out = Buffer.alloc(n * 2);
  // Typed arrays on little-endian hosts (every Pi and x86): one multiply per sample, no per-sample bounds checks.
  const src = pcm.byteOffset % 2 === 0 ? new Int16Array(pcm.buffer, pcm.byteOffset, n) : new Int16Array(Uint8Array.prototype.slice.call(pcm, 0, n * 2).buffer);
  const dst = new Int16Array(out.buffer, out.byteOffset, n);
  for (let i = 0; i < n; i++) dst[i] = Math.round(src[i]! * gain);
  return out;
}

/** One tone segment of an earcon: frequency (Hz) and duration (ms). */
export interface ToneStep {
  freqHz: number;
  durationMs: number;
}

/**
 * Generate s16le mono PCM for a sequence of sine tones with a 5 ms raised-cosine
 * fade at each end of each step (no clicks). `amplitude` 0..1 (default 0.3).
 */
export function generateTones(steps: readonly ToneStep[], sampleRate: number, amplitude = 0.3): Buffer {
  const parts: Buffer[] = [];
  for (const step of steps) {
    const n = Math.round((sampleRate * step.durationMs) / 1000);
    const fade = Math.min(Math.round(sampleRate * 0.005), Math.floor(n / 2));
    const s = new Float32Array(n);
    for (let i = 0; i < n; i++) {
      let env = 1;
      if (i < fade) env = 0.5 - 0.5 * Math.cos((Math.PI * i) / fade);
      else if (i >= n - fade) env = 0.5 - 0.5 * Math.cos((Math.PI * (n - 1 - i)) / fade);
      s[i] = step.freqHz > 0 ? amplitude * env * Math.sin((2 * Math.PI * step.freqHz * i) / sampleRate) : 0;
    }
    parts.push(floatToS16(s));
  }
  return Buffer.concat(parts);
}

/** Earcons the speaker knows: a rising two-tone "listening" chirp, a falling "done", a low "error". */
export const EARCONS: Record<'listening' | 'done' | 'error', readonly ToneStep[]> = {
  listening: [
    { freqHz: 660, durationMs: 70 },
    { freqHz: 990, durationMs: 90 },
  ],
  done: [
    { freqHz: 990, durationMs: 70 },
    { freqHz: 660, durationMs: 90 },
  ],
  error: [
    { freqHz: 330, durationMs: 120 },
    { freqHz: 0, durationMs: 40 },
    { freqHz: 330, durationMs: 120 },
  ],
};

/** Name of a built-in earcon. */
export type EarconName = keyof typeof EARCONS;
