/**
 * Harder rooms than the benches' room noise (white, -50 dBFS), for the
 * spoken answers: pink noise at -35 dBFS, a room's echo (sox's reverb), a
 * speaker 15 dB quieter. A tester's "yet" unlocked the door in these 15
 * times of 50 (test/bench/voice-answers.ts, test/e2e/voice-opposites.test.ts).
 */
import { execFile } from 'node:child_process';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { promisify } from 'node:util';
import { readWavPcm } from '../voice-stt/wav.js';
import { gain, mix, noise, pinkNoise } from '../voice/helpers.js';
import { encodeWav } from '../../hal/common/wav.js';
import { speak } from './espeak.js';

/** Harder rooms than the bench's room noise: how each alters speech (16 kHz mono s16le) before it is heard. */
export const ROOMS: ReadonlyArray<{ name: string; apply: (wav: string, pcm: Buffer, seed: number, dir: string) => Promise<Buffer> }> = [
  { name: 'pink noise at -35 dBFS', apply: async (_wav, pcm, seed) => mix(pcm, pinkNoise(pcm.length / 32, -35, seed)) },
  {
    name: 'echo',
    apply: async (wav, pcm, seed, dir) => {
      const out = path.join(dir, `${path.basename(wav, '.wav')}-echo.wav`);
      await promisify(execFile)('sox', [wav, out, 'reverb', '50', '50', '60']);
      return mix(readWavPcm(out).subarray(0, pcm.length), noise(pcm.length / 32, -50, seed));
    },
  },
  { name: 'speaker 15 dB quieter', apply: async (_wav, pcm, seed) => mix(gain(pcm, -15), noise(pcm.length / 32, -50, seed)) },
];

/** `sentence` spoken by espeak-ng (speak's defaults, `rate` words a minute) in the room named `room` of ROOMS: a 16 kHz WAV file in `dir`. */
export async function spokenInHarderRoom(dir: string, sentence: string, voice: string, rate: number, room: string, seed = 5): Promise<string> {
  const r = ROOMS.find((x) => x.name === room);
  if (!r) throw new Error(`no room "${room}" (rooms: ${ROOMS.map((x) => x.name).join(', ')})`);
  const name = `${voice}-${rate}-${room.replace(/\W+/g, '_')}-${seed}-${sentence.replace(/\W+/g, '_')}`;
  const { wav, pcm } = await speak(dir, name, sentence, { voice, rate });
  const file = path.join(dir, `${name}-heard.wav`);
  await writeFile(file, encodeWav(await r.apply(wav, pcm, seed, dir), { sampleRate: 16000, channels: 1 }));
  return file;
}
