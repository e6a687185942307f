/**
 * Microphone interface: a source of 16 kHz mono s16le raw PCM (no WAV header
 * bytes), shared by the real recorder (arecord/sox via node-record-lpcm16's
 * argument tables), the file source and the push source.
 */
import type { EventEmitter } from 'node:events';
import type { Readable } from 'node:stream';
import { HalError } from '../common/errors.js';
import type { PcmFormat } from '../common/pcm.js';

/** Microphone events: `retry` when a recorder died and will be restarted after `delayMs`; `error` when it gave up. */
export interface MicEvents {
  retry: [{ attempt: number; delayMs: number; exitCode: number | null; stderr: string }];
  error: [MicError];
  end: [];
}

/**
 * A microphone. `start()` resolves with a byte stream of whole s16le samples in
 * `format` (always 16000 Hz, 1 channel); calling it while running returns the
 * same stream. `stop()` ends that stream exactly once with no error.
 */
export interface Microphone extends EventEmitter<MicEvents> {
  /** 'arecord' | 'sox' (real), 'file' (a WAV streamed as if live), 'push' (PCM written by code). */
  readonly kind: 'arecord' | 'sox' | 'file' | 'push';
  readonly format: PcmFormat;
  readonly running: boolean;
  /** Rejects with MicError: code ENOENT (recorder binary or file missing), WAV_INVALID / WAV_UNSUPPORTED (file source). */
  start(): Promise<Readable>;
  /** End the stream (once, no error event). Idempotent; resolves when the recorder has exited. */
  stop(): Promise<void>;
}

/** Microphone failures: ENOENT, MIC_FAILED (recorder kept failing), MIC_NOT_STARTED, WAV_INVALID, WAV_UNSUPPORTED. */
export class MicError extends HalError {}
