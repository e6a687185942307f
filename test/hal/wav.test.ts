/**
 * The one WAV module (hal/common/wav.ts) and the PCM mixing the voice path
 * uses with it (hal/common/pcm.ts): round trips, streamed headers, extensible
 * and float formats, and a typed error for every bad header.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HomeAgentError } from '../../src/kernel/errors.js';
import { HalError } from '../../hal/common/errors.js';
import { encodeWav, parseWav, WavError } from '../../hal/common/wav.js';
import { toMono, toMonoS16 } from '../../hal/common/pcm.js';

/** s16le samples. */
function s16(...v: number[]): Buffer {
  const b = Buffer.alloc(v.length * 2);
  v.forEach((x, i) => b.writeInt16LE(x, i * 2));
  return b;
}

/** A WavError with this code (and a HomeAgentError, as every typed error). */
function wavError(code: 'WAV_INVALID' | 'WAV_UNSUPPORTED'): (e: unknown) => boolean {
  return (e) => e instanceof WavError && e instanceof HalError && e instanceof HomeAgentError && e.code === code;
}

/** A `fmt ` chunk body: tag, channels, rate, bits (block align and byte rate derived). */
function fmtBody(tag: number, channels: number, rate: number, bits: number): Buffer {
  const b = Buffer.alloc(16);
  b.writeUInt16LE(tag, 0);
  b.writeUInt16LE(channels, 2);
  b.writeUInt32LE(rate, 4);
  b.writeUInt32LE((rate * channels * bits) / 8, 8);
  b.writeUInt16LE((channels * bits) / 8, 12);
  b.writeUInt16LE(bits, 14);
  return b;
}

/** A RIFF/WAVE file from chunks. */
function riff(...chunks: Array<[string, Buffer]>): Buffer {
  const parts = chunks.map(([id, body]) => {
    const h = Buffer.alloc(8);
    h.write(id, 0, 'ascii');
    h.writeUInt32LE(body.length, 4);
    return Buffer.concat([h, body, body.length % 2 ? Buffer.alloc(1) : Buffer.alloc(0)]);
  });
  const body = Buffer.concat([Buffer.from('WAVE'), ...parts]);
  const h = Buffer.alloc(8);
  h.write('RIFF', 0, 'ascii');
  h.writeUInt32LE(body.length, 4);
  return Buffer.concat([h, body]);
}

describe('WAV', () => {
  it('round trip: encodeWav then parseWav gives the format and the same samples', () => {
    const pcm = s16(1, -1, 32767, -32768, 100, -100);
    const wav = encodeWav(pcm, { sampleRate: 22050, channels: 2 });
    assert.equal(wav.length, 44 + pcm.length);
    const info = parseWav(wav);
    assert.deepEqual(info.format, { encoding: 'pcm', sampleRate: 22050, channels: 2, bitsPerSample: 16, blockAlign: 4 });
    assert.ok(info.data.equals(pcm));
    assert.equal(info.dataOffset, 44);
    assert.equal(info.dataLength, pcm.length);
    assert.deepEqual(info.chunks.map((c) => c.id), ['fmt ', 'data']);
    assert.equal(parseWav(encodeWav(pcm, { sampleRate: 16000 })).format.channels, 1, 'mono by default');
  });

  it('a streamed header (espeak-ng, arecord to a pipe) with placeholder sizes is read to the end of the bytes present', () => {
    const pcm = s16(...Array.from({ length: 50 }, (_, i) => i * 10));
    for (const placeholder of [0x7ffff000, 0xffffffff, 0]) {
      const wav = encodeWav(pcm, { sampleRate: 22050 });
      wav.writeUInt32LE(placeholder, 4);
      wav.writeUInt32LE(placeholder, 40);
      const info = parseWav(wav);
      assert.ok(info.data.equals(pcm), `data size 0x${placeholder.toString(16)}`);
    }
  });

  it('only whole frames are audio: a trailing odd byte is dropped', () => {
    const wav = Buffer.concat([encodeWav(s16(5, 6), { sampleRate: 16000 }), Buffer.from([7])]);
    wav.writeUInt32LE(5, 40);
    assert.ok(parseWav(wav).data.equals(s16(5, 6)));
  });

  it('WAVE_FORMAT_EXTENSIBLE and IEEE float are read; toMonoS16 mixes any format to mono s16', () => {
    const ext = Buffer.alloc(40);
    fmtBody(0xfffe, 1, 16000, 16).copy(ext);
    ext.writeUInt16LE(22, 16);
    ext.writeUInt16LE(1, 24); // SubFormat GUID starts with the PCM tag
    const pcm = s16(1000, -1000);
    const info = parseWav(riff(['fmt ', ext], ['data', pcm]));
    assert.equal(info.format.encoding, 'pcm');
    assert.ok(toMonoS16(info.data, info.format).equals(pcm));

    const floats = Buffer.alloc(8);
    floats.writeFloatLE(0.5, 0);
    floats.writeFloatLE(-0.5, 4);
    const f = parseWav(riff(['fmt ', fmtBody(3, 2, 48000, 32)], ['data', floats]));
    assert.equal(f.format.encoding, 'float');
    assert.ok(toMonoS16(f.data, f.format).equals(s16(0)), 'the two channels average to silence');
  });

  it('toMono averages interleaved s16 channels exactly; mono is returned as is', () => {
    assert.ok(toMono(s16(100, 200, -300, -302), 2).equals(s16(150, -301)));
    const mono = s16(1, 2, 3);
    assert.equal(toMono(mono, 1), mono);
  });

  it('a bad header is a typed WavError: WAV_INVALID or WAV_UNSUPPORTED', () => {
    assert.throws(() => parseWav(Buffer.from('not a wav file at all')), wavError('WAV_INVALID'));
    assert.throws(() => parseWav(Buffer.alloc(0)), wavError('WAV_INVALID'));
    assert.throws(() => parseWav(riff(['data', s16(1)])), wavError('WAV_INVALID'), 'no fmt chunk');
    assert.throws(() => parseWav(riff(['fmt ', fmtBody(1, 1, 16000, 16)])), wavError('WAV_INVALID'), 'no data chunk');
    assert.throws(() => parseWav(riff(['fmt ', Buffer.alloc(10)], ['data', s16(1)])), wavError('WAV_INVALID'), 'short fmt chunk');
    const badAlign = fmtBody(1, 2, 16000, 16);
    badAlign.writeUInt16LE(3, 12);
    assert.throws(() => parseWav(riff(['fmt ', badAlign], ['data', s16(1, 2)])), wavError('WAV_INVALID'), 'block align does not match');
    assert.throws(() => parseWav(riff(['fmt ', fmtBody(6, 1, 8000, 8)], ['data', Buffer.alloc(4)])), wavError('WAV_UNSUPPORTED'), 'A-law');
    assert.throws(() => parseWav(riff(['fmt ', fmtBody(1, 1, 16000, 12)], ['data', Buffer.alloc(4)])), wavError('WAV_UNSUPPORTED'), '12-bit PCM');
    // Headers that claim rates or channel counts no recording has (the attack script's bad WAVs): refused, never converted.
    assert.throws(() => parseWav(riff(['fmt ', fmtBody(1, 1, 1, 16)], ['data', s16(4)])), wavError('WAV_UNSUPPORTED'), '1 Hz');
    assert.throws(() => parseWav(riff(['fmt ', fmtBody(1, 1, 500_000, 16)], ['data', s16(4)])), wavError('WAV_UNSUPPORTED'), '500 kHz');
    assert.throws(() => parseWav(riff(['fmt ', fmtBody(1, 65535, 16000, 8)], ['data', Buffer.alloc(65535)])), wavError('WAV_UNSUPPORTED'), '65,535 channels');
    assert.equal(parseWav(riff(['fmt ', fmtBody(1, 1, 8000, 16)], ['data', s16(4)])).format.sampleRate, 8000, '8 kHz telephone audio is fine');
  });

  it('encodeWav refuses a sample rate or channel count that is not a positive integer', () => {
    assert.throws(() => encodeWav(s16(1), { sampleRate: 0 }), wavError('WAV_INVALID'));
    assert.throws(() => encodeWav(s16(1), { sampleRate: 16000.5 }), wavError('WAV_INVALID'));
    assert.throws(() => encodeWav(s16(1), { sampleRate: 16000, channels: 0 }), wavError('WAV_INVALID'));
  });
});
