/**
 * The output stream every microphone hands out: a PassThrough that only ever
 * carries whole s16le samples (an odd byte from a pipe read is held back until
 * its partner arrives) and ends exactly once.
 */
import { PassThrough } from 'node:stream';

/** A PCM output stream with sample alignment and an idempotent `finish()`. */
export class PcmOutput {
  readonly stream = new PassThrough();
  private carry: Buffer | undefined;
  private ended = false;

  get isEnded(): boolean {
    return this.ended;
  }

  /** Write bytes; returns false when the consumer wants us to wait for 'drain' (or the stream ended). */
  write(chunk: Buffer): boolean {
    if (this.ended) return false;
    let buf = this.carry ? Buffer.concat([this.carry, chunk]) : chunk;
    this.carry = undefined;
    if (buf.length % 2 === 1) {
      this.carry = buf.subarray(buf.length - 1);
      buf = buf.subarray(0, buf.length - 1);
    }
    if (buf.length === 0) return true;
    return this.stream.write(buf);
  }

  /** Resolve when the consumer drained the stream (or it ended). */
  drained(): Promise<void> {
    if (this.ended || !this.stream.writableNeedDrain) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.stream.off('drain', done);
        this.stream.off('close', done);
        resolve();
      };
      this.stream.on('drain', done);
      this.stream.on('close', done);
    });
  }

  /** End the stream once; later calls do nothing. A dangling odd byte is dropped. */
  finish(): void {
    if (this.ended) return;
    this.ended = true;
    this.carry = undefined;
    this.stream.end();
  }
}
