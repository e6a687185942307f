/**
 * piper (github.com/rhasspy/piper) at a configured binary path. Debian's
 * package named `piper` is an unrelated program, so there is no default on
 * PATH. Invocation: `PIPER --model MODEL.onnx --output_raw [--speaker N]`,
 * one line of text on stdin, raw mono s16le PCM on stdout at the voice's
 * sample rate, which piper voices declare in MODEL.onnx.json
 * (`audio.sample_rate`, usually 22050 Hz).
 */
import { readFileSync } from 'node:fs';
import type { TtsAudio, TtsEngine, TtsOptions } from './types.js';
import { runTtsProcess } from './process.js';
import { TtsError } from '../errors.js';

/** Options of PiperTts. */
export interface PiperOptions {
  /** Absolute path of the piper binary. */
  binary: string;
  /** Voice model (.onnx). */
  model: string;
  /** Sample rate of the model, Hz; default read from `${model}.json` (audio.sample_rate), else 22050. */
  sampleRate?: number;
  /** Multi-speaker voices: speaker id (piper --speaker). */
  speaker?: string;
  /** Extra arguments (e.g. ['--length_scale', '0.9']). */
  extraArgs?: string[];
}

/** Read `audio.sample_rate` from a piper voice's config; undefined when absent or unreadable. */
export function piperModelSampleRate(modelPath: string): number | undefined {
  try {
    const cfg: unknown = JSON.parse(readFileSync(`${modelPath}.json`, 'utf8'));
    if (typeof cfg === 'object' && cfg !== null && 'audio' in cfg) {
      const audio = (cfg as { audio: unknown }).audio;
      if (typeof audio === 'object' && audio !== null && 'sample_rate' in audio) {
        const r = (audio as { sample_rate: unknown }).sample_rate;
        if (typeof r === 'number' && r > 0) return r;
      }
    }
  } catch {
    return undefined;
  }
  return undefined;
}

/** TtsEngine running piper once per call with --output_raw. */
export class PiperTts implements TtsEngine {
  readonly name = 'piper';
  private readonly sampleRate: number;
  constructor(private readonly opts: PiperOptions) {
    this.sampleRate = opts.sampleRate ?? piperModelSampleRate(opts.model) ?? 22050;
  }

  async synthesize(text: string, opts: TtsOptions = {}): Promise<TtsAudio> {
    const args = ['--model', this.opts.model, '--output_raw'];
    const speaker = opts.voice ?? this.opts.speaker;
    if (speaker) args.push('--speaker', speaker);
    if (this.opts.extraArgs) args.push(...this.opts.extraArgs);
    const { stdout } = await runTtsProcess(this.name, this.opts.binary, args, text.replace(/\s+/g, ' ').trim() + '\n', opts.signal);
    if (stdout.length % 2 !== 0) throw new TtsError(this.name, `odd number of output bytes (${stdout.length}); is --output_raw supported?`);
    return { pcm: stdout, sampleRate: this.sampleRate };
  }
}
