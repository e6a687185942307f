/**
 * The one RIFF/WAVE reader and writer of the program (HAL microphone and
 * speaker, voice TTS engines, tests). Walks the chunk list properly
 * (Microsoft RIFF spec / "Multimedia Programming Interface and Data
 * Specifications 1.0"): every chunk is id(4) + size(u32 LE) + body, padded to
 * an even length; only the `data` chunk is audio; `fmt ` says how to read it;
 * LIST/fact/cue and any other chunk before or after `data` is skipped. Never
 * assumes a 44-byte header. Streamed headers whose sizes are placeholders
 * (espeak-ng and arecord writing to a pipe) are clamped to the bytes present.
 * Sample conversion (to mono, to 16 kHz) lives in ./pcm.ts.
 */
import { HalError } from './errors.js';

/** A malformed or unsupported WAV file (code WAV_INVALID / WAV_UNSUPPORTED). */
export class WavError extends HalError {}

/** Lowest and highest sample rate (Hz) a WAV may have: telephone-band 4 kHz audio up to 384 kHz studio files. */
export const MIN_SAMPLE_RATE = 4000;
export const MAX_SAMPLE_RATE = 384_000;
/** Most channels a WAV may have (beyond any microphone array or surround file). */
export const MAX_CHANNELS = 32;

/** Sample encodings we decode: integer PCM (8/16/24/32 bit) and IEEE float (32/64 bit). */
export type WavEncoding = 'pcm' | 'float';

/** The `fmt ` chunk, decoded. `blockAlign` = bytes per frame (all channels). */
export interface WavFormat {
  encoding: WavEncoding;
  /** Hz */
  sampleRate: number;
  channels: number;
  bitsPerSample: number;
  /** bytes per frame */
  blockAlign: number;
}

/** One chunk as found in the file: id, body offset (bytes from file start) and body size (bytes). */
export interface WavChunk {
  id: string;
  offset: number;
  size: number;
}

/**
 * A parsed WAV: format, the audio bytes (`data`, a view into the parsed
 * buffer, whole frames only), where they are (`dataOffset`, `dataLength` in
 * bytes) and every chunk seen.
 */
export interface WavInfo {
  format: WavFormat;
  data: Buffer;
  dataOffset: number;
  dataLength: number;
  chunks: WavChunk[];
}

const WAVE_FORMAT_PCM = 0x0001;
const WAVE_FORMAT_IEEE_FLOAT = 0x0003;
const WAVE_FORMAT_EXTENSIBLE = 0xfffe;

/**
 * Parse a whole WAV file held in memory.
 * A `data` size of 0 or larger than the file (streamed WAVs from arecord write
 * 0x7fffffff / 0xffffffff) is clamped to the bytes present.
 * Throws `WavError` (WAV_INVALID: not RIFF/WAVE, no fmt or data chunk;
 * WAV_UNSUPPORTED: compressed formats such as A-law, ADPCM, MP3).
 */
export function parseWav(buf: Buffer): WavInfo {
  if (buf.length < 12 || buf.toString('ascii', 0, 4) !== 'RIFF' || buf.toString('ascii', 8, 12) !== 'WAVE') {
    throw new WavError('WAV_INVALID', 'not a WAV file: it does not start with a RIFF/WAVE header');
  }
  const chunks: WavChunk[] = [];
  let format: WavFormat | undefined;
  let data: WavChunk | undefined;
  let pos = 12;
  while (pos + 8 <= buf.length) {
    const id = buf.toString('ascii', pos, pos + 4);
    let size = buf.readUInt32LE(pos + 4);
    const offset = pos + 8;
    if (id === 'data' && (size === 0 || offset + size > buf.length)) size = buf.length - offset;
    if (offset + size > buf.length) size = buf.length - offset;
    const chunk = { id, offset, size };
    chunks.push(chunk);
    if (id === 'fmt ') format = parseFmt(buf.subarray(offset, offset + size));
    else if (id === 'data' && !data) data = chunk;
    pos = offset + size + (size % 2);
  }
  if (!format) throw new WavError('WAV_INVALID', 'WAV file has no "fmt " chunk');
  if (!data) throw new WavError('WAV_INVALID', 'WAV file has no "data" chunk');
  const length = data.size - (data.size % format.blockAlign);
  return { format, data: buf.subarray(data.offset, data.offset + length), dataOffset: data.offset, dataLength: length, chunks };
}

function parseFmt(b: Buffer): WavFormat {
  if (b.length < 16) throw new WavError('WAV_INVALID', `"fmt " chunk is ${b.length} bytes, expected at least 16`);
  let tag = b.readUInt16LE(0);
  const channels = b.readUInt16LE(2);
  const sampleRate = b.readUInt32LE(4);
  const blockAlign = b.readUInt16LE(12);
  const bitsPerSample = b.readUInt16LE(14);
  if (tag === WAVE_FORMAT_EXTENSIBLE) {
    if (b.length < 40) throw new WavError('WAV_INVALID', 'WAVE_FORMAT_EXTENSIBLE "fmt " chunk is shorter than 40 bytes');
    tag = b.readUInt16LE(24); // first two bytes of the SubFormat GUID
  }
  let encoding: WavEncoding;
  if (tag === WAVE_FORMAT_PCM && [8, 16, 24, 32].includes(bitsPerSample)) encoding = 'pcm';
  else if (tag === WAVE_FORMAT_IEEE_FLOAT && (bitsPerSample === 32 || bitsPerSample === 64)) encoding = 'float';
  else throw new WavError('WAV_UNSUPPORTED', `WAV format tag 0x${tag.toString(16)} with ${bitsPerSample} bits is not supported (use PCM or float)`);
  if (channels < 1 || sampleRate < 1 || blockAlign !== channels * (bitsPerSample / 8)) {
    throw new WavError('WAV_INVALID', `inconsistent "fmt " chunk: ${channels} channels, ${sampleRate} Hz, block align ${blockAlign}`);
  }
  // A header can claim any rate or channel count; converting 1 Hz or 65,535 channels to 16 kHz mono would
  // cost gigabytes, so what no microphone or sound file uses is refused here (issue 14, bad WAVs).
  if (sampleRate < MIN_SAMPLE_RATE || sampleRate > MAX_SAMPLE_RATE) {
    throw new WavError('WAV_UNSUPPORTED', `WAV sample rate ${sampleRate} Hz is outside ${MIN_SAMPLE_RATE}-${MAX_SAMPLE_RATE} Hz`);
  }
  if (channels > MAX_CHANNELS) throw new WavError('WAV_UNSUPPORTED', `WAV with ${channels} channels is not supported (at most ${MAX_CHANNELS})`);
  return { encoding, sampleRate, channels, bitsPerSample, blockAlign };
}

/** Options of `encodeWav`: the PCM's sample rate (Hz) and channel count; samples are s16le. */
export interface EncodeWavOptions {
  sampleRate: number;
  channels?: number;
}

/**
 * Wrap s16le PCM (interleaved when `channels` > 1) in a canonical 44-byte
 * RIFF/WAVE header. Throws `WavError` WAV_INVALID when the sample rate or
 * channel count is not a positive integer.
 */
export function encodeWav(pcm: Buffer, opts: EncodeWavOptions): Buffer {
  const channels = opts.channels ?? 1;
  if (!Number.isInteger(opts.sampleRate) || opts.sampleRate < 1 || !Number.isInteger(channels) || channels < 1) {
    throw new WavError('WAV_INVALID', `cannot write a WAV at ${opts.sampleRate} Hz with ${channels} channels`);
  }
  const h = Buffer.alloc(44);
  h.write('RIFF', 0, 'ascii');
  h.writeUInt32LE(36 + pcm.length, 4);
  h.write('WAVE', 8, 'ascii');
  h.write('fmt ', 12, 'ascii');
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(WAVE_FORMAT_PCM, 20);
  h.writeUInt16LE(channels, 22);
  h.writeUInt32LE(opts.sampleRate, 24);
  h.writeUInt32LE(opts.sampleRate * channels * 2, 28);
  h.writeUInt16LE(channels * 2, 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36, 'ascii');
  h.writeUInt32LE(pcm.length, 40);
  return Buffer.concat([h, pcm]);
}
