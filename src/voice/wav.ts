/**
 * Minimal RIFF/WAVE reader and writer for the voice path: 16-bit PCM only,
 * which is what espeak-ng `--stdout`, the recordings in fixtures/voice and
 * Wyoming audio use. Tolerates streamed headers whose RIFF and data sizes
 * are placeholders (espeak-ng writes 0x7ffff000 when writing to a pipe).
 */
import { AudioFormatError } from './errors.js';

/** PCM audio: s16le samples, `sampleRate` in Hz, `channels` interleaved. */
export interface PcmAudio {
  pcm: Buffer;
  sampleRate: number;
  channels: number;
}

/**
 * Parse a WAV file (RIFF, WAVE, `fmt ` with format 1 = PCM, 16 bits).
 * When the `data` size runs past the end of the buffer (streamed header), the
 * rest of the buffer is the data.
 * @throws AudioFormatError when the buffer is not 16-bit PCM WAV.
 */
export function parseWav(buf: Buffer): PcmAudio {
  if (buf.length < 12 || buf.toString('ascii', 0, 4) !== 'RIFF' || buf.toString('ascii', 8, 12) !== 'WAVE') {
    throw new AudioFormatError('not a RIFF/WAVE file');
  }
  let off = 12;
  let sampleRate = 0;
  let channels = 0;
  let bits = 0;
  let format = 0;
  while (off + 8 <= buf.length) {
    const id = buf.toString('ascii', off, off + 4);
    const size = buf.readUInt32LE(off + 4);
    const body = off + 8;
    if (id === 'fmt ') {
      format = buf.readUInt16LE(body);
      channels = buf.readUInt16LE(body + 2);
      sampleRate = buf.readUInt32LE(body + 4);
      bits = buf.readUInt16LE(body + 14);
    } else if (id === 'data') {
      if (format !== 1 && format !== 0xfffe) throw new AudioFormatError(`WAV format ${format} is not PCM`);
      if (bits !== 16) throw new AudioFormatError(`WAV has ${bits}-bit samples; only 16-bit PCM is supported`);
      const end = Math.min(buf.length, body + size);
      const frame = 2 * channels;
      const usable = end - body - ((end - body) % frame);
      return { pcm: buf.subarray(body, body + usable), sampleRate, channels };
    }
    off = body + size + (size % 2);
  }
  throw new AudioFormatError('WAV has no data chunk');
}

/** Encode s16le PCM as a 44-byte-header WAV file. */
export function encodeWav(audio: PcmAudio): Buffer {
  const h = Buffer.alloc(44);
  h.write('RIFF', 0, 'ascii');
  h.writeUInt32LE(36 + audio.pcm.length, 4);
  h.write('WAVE', 8, 'ascii');
  h.write('fmt ', 12, 'ascii');
  h.writeUInt32LE(16, 16);
  h.writeUInt16LE(1, 20);
  h.writeUInt16LE(audio.channels, 22);
  h.writeUInt32LE(audio.sampleRate, 24);
  h.writeUInt32LE(audio.sampleRate * audio.channels * 2, 28);
  h.writeUInt16LE(audio.channels * 2, 32);
  h.writeUInt16LE(16, 34);
  h.write('data', 36, 'ascii');
  h.writeUInt32LE(audio.pcm.length, 40);
  return Buffer.concat([h, audio.pcm]);
}

/** Mix interleaved s16le PCM down to mono (average of channels). */
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

/** Duration in ms of s16le PCM: bytes / (2 * channels * sampleRate / 1000). */
export function pcmDurationMs(bytes: number, sampleRate: number, channels = 1): number {
  return (bytes * 1000) / (2 * channels * sampleRate);
}
