/**
 * A WAV file streamed as if it were the microphone: the RIFF chunks are
 * parsed properly (only `data` is audio), the audio is converted to 16 kHz
 * mono s16le when the file differs, and 20 ms chunks are emitted at real-time
 * pace (or `speed` times faster, or as fast as the consumer reads). The stream
 * ends after the file (plus optional trailing silence) or on stop().
 */
import { EventEmitter } from 'node:events';
import { readFile } from 'node:fs/promises';
import type { Readable } from 'node:stream';
import { systemClock, type Clock, type TimerHandle } from '../../src/kernel/clock.js';
import { bytesPerMs, toVoicePcm, VOICE_FORMAT, type PcmFormat } from '../common/pcm.js';
import { parseWav, WavError } from '../common/wav.js';
import { PcmOutput } from './pcm-stream.js';
import { MicError, type MicEvents, type Microphone } from './types.js';

/** Read a WAV (bytes) and return its audio as 16 kHz mono s16le. Throws MicError WAV_INVALID / WAV_UNSUPPORTED. */
export function wavToVoicePcm(wav: Buffer): Buffer {
  try {
    const info = parseWav(wav);
    return toVoicePcm(info.data, info.format);
  } catch (err) {
    if (err instanceof WavError) throw new MicError(err.code, err.message, { cause: err });
    throw err;
  }
}

/** Pace: 'realtime' (1x), 'fast' (as fast as the consumer reads) or a speed factor (2 = twice real time). */
export type FilePace = 'realtime' | 'fast' | number;

/** Options: the WAV path (or its bytes), pace, chunk length (ms, default 20), trailing silence (ms), clock. */
export interface FileMicOptions {
  path?: string;
  wav?: Buffer;
  pace?: FilePace;
  chunkMs?: number;
  trailingSilenceMs?: number;
  clock?: Clock;
}

/** Microphone reading a WAV file. */
export class FileMicrophone extends EventEmitter<MicEvents> implements Microphone {
  readonly kind = 'file' as const;
  readonly format: PcmFormat = { ...VOICE_FORMAT };
  private out: PcmOutput | undefined;
  private timer: TimerHandle | undefined;
  private readonly clock: Clock;

  constructor(private readonly opts: FileMicOptions) {
    super();
    if (!opts.path && !opts.wav) throw new MicError('MIC_BAD_CONFIG', 'a file microphone needs a WAV path or bytes');
    this.clock = opts.clock ?? systemClock;
  }

  get running(): boolean {
    return this.out !== undefined && !this.out.isEnded;
  }

  private async load(): Promise<Buffer> {
    if (this.opts.wav) return wavToVoicePcm(this.opts.wav);
    let bytes: Buffer;
    try {
      bytes = await readFile(this.opts.path!);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'ENOENT' : 'MIC_FAILED';
      throw new MicError(code, `cannot read ${this.opts.path}: ${(err as Error).message}`, { cause: err });
    }
    return wavToVoicePcm(bytes);
  }

  async start(): Promise<Readable> {
    if (this.out && !this.out.isEnded) return this.out.stream;
    const pcm = await this.load();
    const silence = Buffer.alloc(Math.round((this.opts.trailingSilenceMs ?? 0) * bytesPerMs(16000)) & ~1);
    const audio = silence.length ? Buffer.concat([pcm, silence]) : pcm;
    const out = new PcmOutput();
    this.out = out;
    const chunkMs = this.opts.chunkMs ?? 20;
    const chunkBytes = Math.max(2, Math.round(chunkMs * bytesPerMs(16000)) & ~1);
    const pace = this.opts.pace ?? 'realtime';
    if (pace === 'fast') void this.pumpFast(out, audio, chunkBytes);
    else this.pumpTimed(out, audio, chunkBytes, chunkMs / (pace === 'realtime' ? 1 : pace));
    return out.stream;
  }

  private pumpTimed(out: PcmOutput, audio: Buffer, chunkBytes: number, periodMs: number): void {
    const t0 = this.clock.monotonic();
    let k = 0;
    const step = () => {
      this.timer = undefined;
      if (out.isEnded) return;
      // Like a live mic, chunk k is delivered once it has been "recorded", at t0 + (k+1) * period;
      // every chunk due by now goes out (catches up after a late timer).
      const due = Math.floor((this.clock.monotonic() - t0) / periodMs);
      while (k < due && k * chunkBytes < audio.length) {
        out.write(audio.subarray(k * chunkBytes, (k + 1) * chunkBytes));
        k++;
      }
      if (k * chunkBytes >= audio.length) {
        this.finish(out);
        return;
      }
      this.timer = this.clock.setTimeout(step, Math.max(0, t0 + (k + 1) * periodMs - this.clock.monotonic()), { keepAlive: true });
    };
    this.timer = this.clock.setTimeout(step, periodMs, { keepAlive: true });
  }

  private async pumpFast(out: PcmOutput, audio: Buffer, chunkBytes: number): Promise<void> {
    for (let o = 0; o < audio.length && !out.isEnded; o += chunkBytes) {
      if (!out.write(audio.subarray(o, o + chunkBytes))) await out.drained();
    }
    this.finish(out);
  }

  private finish(out: PcmOutput): void {
    if (out.isEnded) return;
    out.finish();
    if (this.out === out) this.out = undefined;
    this.emit('end');
  }

  async stop(): Promise<void> {
    this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    const out = this.out;
    this.out = undefined;
    if (out) this.finish(out);
  }
}
