/**
 * A microphone whose PCM is written by code: the CLI `listen` command and the
 * WebUI feed uploaded audio through it into the same voice pipeline as the
 * real mic. Raw 16 kHz mono s16le goes through `write`; a whole WAV of any
 * PCM format through `writeWav` (converted). `end()` ends the utterance like
 * the end of a file; `stop()` does the same.
 */
import { EventEmitter } from 'node:events';
import type { Readable } from 'node:stream';
import { VOICE_FORMAT, type PcmFormat } from '../common/pcm.js';
import { wavToVoicePcm } from './file-mic.js';
import { PcmOutput } from './pcm-stream.js';
import { MicError, type MicEvents, type Microphone } from './types.js';

/** Push-fed microphone. */
export class PushMicrophone extends EventEmitter<MicEvents> implements Microphone {
  readonly kind = 'push' as const;
  readonly format: PcmFormat = { ...VOICE_FORMAT };
  private out: PcmOutput | undefined;

  get running(): boolean {
    return this.out !== undefined && !this.out.isEnded;
  }

  async start(): Promise<Readable> {
    if (this.out && !this.out.isEnded) return this.out.stream;
    this.out = new PcmOutput();
    return this.out.stream;
  }

  private current(): PcmOutput {
    if (!this.out || this.out.isEnded) throw new MicError('MIC_NOT_STARTED', 'the push microphone is not started: call start() first');
    return this.out;
  }

  /** Write raw 16 kHz mono s16le bytes. Returns false when the consumer is behind (wait for `drained()`). Throws MIC_NOT_STARTED. */
  write(pcm: Buffer): boolean {
    return this.current().write(pcm);
  }

  /** Write a WAV file's audio (any PCM/float format, converted to 16 kHz mono). Throws MicError WAV_INVALID / WAV_UNSUPPORTED / MIC_NOT_STARTED. */
  writeWav(wav: Buffer): boolean {
    const out = this.current();
    return out.write(wavToVoicePcm(wav));
  }

  /** Resolves when the consumer has caught up. */
  drained(): Promise<void> {
    return this.out ? this.out.drained() : Promise.resolve();
  }

  /** End of the pushed audio: the stream ends (once). */
  end(): void {
    const out = this.out;
    this.out = undefined;
    if (out && !out.isEnded) {
      out.finish();
      this.emit('end');
    }
  }

  async stop(): Promise<void> {
    this.end();
  }
}
