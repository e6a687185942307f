/**
 * espeak-ng (Debian package espeak-ng): `espeak-ng -v VOICE --stdout` reads
 * text on stdin and writes a 16-bit mono WAV at 22050 Hz to stdout (the
 * header's sizes are placeholders when stdout is a pipe; parseWav copes).
 * Voices: `en-us` for English, `cmn` for Mandarin (`espeak-ng --voices=cmn`).
 */
import type { TtsAudio, TtsEngine, TtsOptions } from './types.js';
import { isMandarin } from './types.js';
import { runTtsProcess } from './process.js';
import { parseWav } from '../../../hal/common/wav.js';
import { toMonoS16 } from '../../../hal/common/pcm.js';
import { TtsError } from '../errors.js';

/** espeak-ng's output sample rate, Hz (fixed by the program). */
export const ESPEAK_SAMPLE_RATE = 22050;

/** Options of EspeakTts. */
export interface EspeakOptions {
  /** Binary (default 'espeak-ng' on PATH). */
  binary?: string;
  /** Voice for English and anything not Mandarin (default 'en-us'). */
  voice?: string;
  /** Voice for Mandarin (default 'cmn'). */
  mandarinVoice?: string;
  /** Speed, words per minute (espeak-ng -s; default 175). */
  wordsPerMinute?: number;
  /** Pitch 0-99 (espeak-ng -p), when set. */
  pitch?: number;
}

/** Pick the espeak-ng voice for a language: `cmn` for zh/cmn, the English voice otherwise. */
export function espeakVoiceFor(language: string | undefined, opts: EspeakOptions = {}): string {
  return isMandarin(language) ? (opts.mandarinVoice ?? 'cmn') : (opts.voice ?? 'en-us');
}

/** TtsEngine running espeak-ng once per call. */
export class EspeakTts implements TtsEngine {
  readonly name = 'espeak-ng';
  constructor(private readonly opts: EspeakOptions = {}) {}

  async synthesize(text: string, opts: TtsOptions = {}): Promise<TtsAudio> {
    const voice = opts.voice ?? espeakVoiceFor(opts.language, this.opts);
    const args = ['-v', voice, '-s', String(this.opts.wordsPerMinute ?? 175), '--stdout'];
    if (this.opts.pitch !== undefined) args.push('-p', String(this.opts.pitch));
    const oneLine = text.replace(/\s+/g, ' ').trim();
    const { stdout } = await runTtsProcess(this.name, this.opts.binary ?? 'espeak-ng', args, oneLine + '\n', opts.signal);
    let wav;
    try {
      wav = parseWav(stdout);
    } catch (err) {
      throw new TtsError(this.name, `unexpected output (${stdout.length} bytes): ${(err as Error).message}`, { cause: err });
    }
    return { pcm: toMonoS16(wav.data, wav.format), sampleRate: wav.format.sampleRate };
  }
}
