/**
 * Microphone routing of the voice pipeline: one PCM stream from the
 * microphone goes either to the utterance being captured or, between
 * utterances, to the wake-word service. With a wake-word detector the
 * microphone stays open; without one it opens per utterance.
 */
import type { Readable } from 'node:stream';
import type { Logger } from '../kernel/log-types.js';
import type { WakeDetection, WakeSession, WakeWordDetector } from './wyoming/wake-client.js';

/**
 * The microphone as the pipeline needs it (structural; hal/mic satisfies it):
 * `start()` returns a Readable of 16 kHz mono s16le PCM; `stop()` ends it.
 */
export interface Microphone {
  start(): Readable | Promise<Readable>;
  stop(): void | Promise<void>;
}

/** Options of AudioInput. */
export interface AudioInputOptions {
  microphone?: Microphone;
  wake?: WakeWordDetector;
  /** Wait before reconnecting a failed wake session, ms (default 5000). */
  wakeRetryMs?: number;
  log?: Logger;
  onWake(d: WakeDetection): void;
  /** The microphone stream ended (device unplugged, stop()). */
  onEnd(): void;
}

/** Owns the microphone stream and the wake session. */
export class AudioInput {
  /** The capture in progress takes the audio while this returns true. */
  sink: ((pcm: Buffer) => boolean) | undefined;
  private stream: Readable | undefined;
  private opening: Promise<void> | undefined;
  private wakeSession: WakeSession | undefined;
  private retry: NodeJS.Timeout | undefined;
  private closed = false;

  constructor(private readonly o: AudioInputOptions) {}

  /** True when a wake-word detector keeps the microphone open. */
  get alwaysOn(): boolean {
    return this.o.wake !== undefined;
  }

  /** True when there is a microphone at all. */
  get hasMicrophone(): boolean {
    return this.o.microphone !== undefined;
  }

  /** Open the microphone (idempotent). */
  async open(): Promise<void> {
    if (this.stream || this.closed) return;
    if (this.opening) return this.opening;
    const mic = this.o.microphone;
    if (!mic) return;
    this.opening = (async () => {
      const stream = await mic.start();
      this.stream = stream;
      stream.on('data', (chunk: Buffer) => this.route(chunk));
      stream.on('error', (err: Error) => this.o.log?.warn({ err: err.message }, 'voice: microphone error'));
      stream.on('end', () => {
        if (this.stream === stream) this.stream = undefined;
        this.o.onEnd();
      });
    })().finally(() => (this.opening = undefined));
    return this.opening;
  }

  /** Close the microphone unless the wake word needs it (or `force`). */
  async release(force = false): Promise<void> {
    if (this.alwaysOn && !force) return;
    const stream = this.stream;
    if (!stream) return;
    this.stream = undefined;
    stream.removeAllListeners('data');
    await this.o.microphone?.stop();
  }

  /** Start wake-word detection (opens the microphone). Reconnects after failures. */
  async startWake(): Promise<void> {
    if (!this.o.wake || this.closed) return;
    if (!this.o.microphone) this.o.log?.warn({}, 'voice: wake word configured but no microphone');
    await this.open();
    this.connectWake();
  }

  /** Stop everything: wake session, retry timer, microphone. */
  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.retry);
    this.wakeSession?.close();
    this.wakeSession = undefined;
    await this.release(true);
  }

  private connectWake(): void {
    const wake = this.o.wake;
    if (!wake || this.closed) return;
    clearTimeout(this.retry);
    // one session at a time: startWake after an unmute replaces the one opened before the mute (a reconnecting session would live on)
    this.wakeSession?.close();
    this.wakeSession = wake.start({
      onDetection: (d) => this.o.onWake(d),
      onError: (err) => {
        this.wakeSession = undefined;
        this.o.log?.warn({ err: err.message }, 'voice: wake-word service failed; retrying');
        clearTimeout(this.retry);
        this.retry = setTimeout(() => this.connectWake(), this.o.wakeRetryMs ?? 5000);
        this.retry.unref();
      },
    });
  }

  private route(chunk: Buffer): void {
    if (this.sink?.(chunk)) return;
    this.wakeSession?.write(chunk);
  }
}
