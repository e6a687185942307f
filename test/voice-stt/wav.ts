/** Test helper: PCM of a 16 kHz mono 16-bit WAV file (parsed by the one WAV module, hal/common/wav.ts). */
import { readFileSync } from 'node:fs';
import { parseWav } from '../../hal/common/wav.js';
import { Endpointer } from '../../src/voice/vad.js';
import { VOICE_SETTINGS } from '../../src/voice/settings.js';
import { noise } from '../voice/helpers.js';

/** Samples of `file` as s16le bytes; throws when it is not 16 kHz mono 16-bit PCM. */
export function readWavPcm(file: string): Buffer {
  const { format, data } = parseWav(readFileSync(file));
  if (format.encoding !== 'pcm' || format.channels !== 1 || format.sampleRate !== 16000 || format.bitsPerSample !== 16) {
    throw new Error(`${file}: need 16 kHz mono 16-bit PCM, got ${format.encoding}, ${format.channels} ch, ${format.sampleRate} Hz, ${format.bitsPerSample} bit`);
  }
  return data;
}

/** Feed `pcm` to `write` in chunks of `bytes` (100 ms = 3200 bytes), as a microphone would. */
export function feed(pcm: Buffer, write: (b: Buffer) => void, bytes = 3200): void {
  for (let o = 0; o < pcm.length; o += bytes) write(pcm.subarray(o, o + bytes));
}

/**
 * The audio of a recording as the voice pipeline hands it to the recogniser
 * for its final pass: the recording followed by quiet room noise (a live
 * microphone goes on), endpointed with the default settings, from
 * plugin.voice.preroll_ms before the detected speech start to
 * plugin.voice.pause_ms after the last speech frame (the speculative pass
 * that the end of speech confirms; see Capture and PocketsphinxSession).
 */
export function asThePipelineHearsIt(pcm: Buffer): Buffer {
  const setting = (k: string): number => VOICE_SETTINGS.find((d) => d.key === `plugin.voice.${k}`)!.default as number;
  const padded = Buffer.concat([pcm, noise(2000, -65, 3)]);
  const end = new Endpointer({ silenceMs: setting('silence_ms'), pauseMs: setting('pause_ms') }).push(padded).find((e) => e.type === 'end');
  if (!end || end.type !== 'end' || end.speech_start_ms === undefined) return pcm;
  const from = Math.max(0, end.speech_start_ms - setting('preroll_ms'));
  return padded.subarray(from * 32, (end.speech_end_ms + setting('pause_ms')) * 32);
}
