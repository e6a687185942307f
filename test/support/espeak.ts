/**
 * Synthesised speech for tests and benches: espeak-ng (Debian) speaks a
 * sentence, sox resamples it to 16 kHz mono 16-bit with silence around it
 * (`-R`: sox's dither is repeatable, so the input is the same every run).
 */
import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import { readWavPcm } from '../voice-stt/wav.js';

const exec = promisify(execFile);

/** Options of {@link speak}. */
export interface SpeakOptions {
  /** espeak-ng voice (`en-us`, `en-us+f3`, `en-gb-x-rp`, ...). */
  voice: string;
  /** Words per minute; default 150. */
  rate?: number;
  /** Silence before and after, seconds; default 0.5 and 0.6. */
  padBefore?: number;
  padAfter?: number;
}

/**
 * Speak `sentence` into `dir/<name>.wav` (16 kHz mono s16le); returns the
 * file and its PCM samples. Throws when espeak-ng or sox is missing or fails.
 */
export async function speak(dir: string, name: string, sentence: string, opts: SpeakOptions): Promise<{ wav: string; pcm: Buffer }> {
  const raw = path.join(dir, `${name}-22k.wav`);
  const wav = path.join(dir, `${name}.wav`);
  await exec('espeak-ng', ['-v', opts.voice, '-s', String(opts.rate ?? 150), '-w', raw, sentence]);
  await exec('sox', ['-R', raw, '-r', '16000', '-c', '1', '-b', '16', wav, 'pad', String(opts.padBefore ?? 0.5), String(opts.padAfter ?? 0.6)]);
  return { wav, pcm: readWavPcm(wav) };
}
