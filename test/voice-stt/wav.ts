/** Test helper: PCM of a 16 kHz mono 16-bit WAV file (RIFF chunks walked, not a fixed 44-byte header). */
import { readFileSync } from 'node:fs';

/** Samples of `file` as s16le bytes; throws when it is not 16 kHz mono 16-bit PCM. */
export function readWavPcm(file: string): Buffer {
  const buf = readFileSync(file);
  if (buf.toString('ascii', 0, 4) !== 'RIFF' || buf.toString('ascii', 8, 12) !== 'WAVE') throw new Error(`${file}: not a WAV file`);
  let pos = 12;
  let fmtOk = false;
  while (pos + 8 <= buf.length) {
    const id = buf.toString('ascii', pos, pos + 4);
    const size = buf.readUInt32LE(pos + 4);
    const body = pos + 8;
    if (id === 'fmt ') {
      const format = buf.readUInt16LE(body);
      const channels = buf.readUInt16LE(body + 2);
      const rate = buf.readUInt32LE(body + 4);
      const bits = buf.readUInt16LE(body + 14);
      fmtOk = format === 1 && channels === 1 && rate === 16000 && bits === 16;
      if (!fmtOk) throw new Error(`${file}: need 16 kHz mono 16-bit PCM, got format ${format}, ${channels} ch, ${rate} Hz, ${bits} bit`);
    } else if (id === 'data') {
      if (!fmtOk) throw new Error(`${file}: data before fmt`);
      return buf.subarray(body, Math.min(buf.length, body + size));
    }
    pos = body + size + (size % 2);
  }
  throw new Error(`${file}: no data chunk`);
}

/** Feed `pcm` to `write` in chunks of `bytes` (100 ms = 3200 bytes), as a microphone would. */
export function feed(pcm: Buffer, write: (b: Buffer) => void, bytes = 3200): void {
  for (let o = 0; o < pcm.length; o += bytes) write(pcm.subarray(o, o + bytes));
}
