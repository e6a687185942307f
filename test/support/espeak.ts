/**
 * Synthesised speech for tests and benches: espeak-ng (Debian) speaks a
 * sentence, sox resamples it to 16 kHz mono 16-bit with silence around it
 * (`-R`: sox's dither is repeatable, so the input is the same every run).
 */
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { readWavPcm } from '../voice-stt/wav.js';
import { encodeWav } from '../../hal/common/wav.js';
import { mix, noise } from '../voice/helpers.js';

/** Room noise under and around every utterance of the confusion bench (test/bench/voice-synth.ts) and the e2e voice tests, dBFS RMS. */
export const ROOM_NOISE_DB = -50;

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

/** How {@link spokenInRoom} speaks. */
export interface RoomOptions {
  voice: string;
  /** Words per minute; default 150. */
  rate?: number;
  /** Silence before the speech, s; default 0.5. */
  leadIn?: number;
  /** No room noise (espeak-ng's exact digital silence around the speech). */
  clean?: boolean;
  /** Seed of the room noise; default 5. */
  seed?: number;
}

/**
 * `sentence` spoken by espeak-ng as {@link speak} does, with the room noise
 * (ROOM_NOISE_DB, seeded) under and around it unless `clean`: a 16 kHz mono
 * WAV file in `dir`, named after the sentence and the options.
 */
export async function spokenInRoom(dir: string, sentence: string, o: RoomOptions): Promise<string> {
  const rate = o.rate ?? 150;
  const leadIn = o.leadIn ?? 0.5;
  const seed = o.seed ?? 5;
  const name = `${o.voice}-${rate}-${leadIn}-${o.clean ? 'clean' : `room${seed}`}-${sentence.replace(/\W+/g, '_')}`;
  const { pcm } = await speak(dir, name, sentence, { voice: o.voice, rate, padBefore: leadIn });
  const file = path.join(dir, `${name}-heard.wav`);
  await writeFile(file, encodeWav(o.clean ? pcm : mix(pcm, noise(pcm.length / 32, ROOM_NOISE_DB, seed)), { sampleRate: 16000, channels: 1 }));
  return file;
}
