/**
 * Speaker interface shared by the real drivers (aplay / sox `play` child
 * processes) and the simulator (WAV files + a timeline). PCM is always
 * signed 16-bit little-endian; sample rate and channels per utterance.
 */
import type { EventEmitter } from 'node:events';
import { HalError } from '../common/errors.js';
import type { EarconName } from '../common/pcm.js';

/** Format of one utterance: sample rate in Hz, channels (default 1). Samples are s16le. */
export interface PlayOptions {
  sampleRate: number;
  channels?: number;
  /** Caller's id for events and the simulator's log (default: generated `u<seq>`). */
  id?: string;
  /** What is being said, for logs and the simulator's record. */
  text?: string;
}

/** How an utterance ended: `completed` false when stop() cut or dropped it. */
export interface PlayResult {
  id: string;
  completed: boolean;
}

/** What stop() did. Times are ms on the speaker clock's monotonic time; `exitMs` = exitedAt - requestedAt. */
export interface SpeakerStopReport {
  requestedAt: number;
  exitedAt: number;
  exitMs: number;
  /** Whether an utterance was playing (and its child process was killed). */
  cut: boolean;
  /** Utterances dropped from the queue without being played. */
  dropped: number;
}

/** An utterance fed piece by piece (a sentence at a time as TTS produces them). */
export interface SpeakerStream {
  readonly id: string;
  /** Queue PCM (s16le, the stream's format). Returns false when the stream was stopped or ended. */
  write(pcm: Buffer): boolean;
  /** No more PCM: the utterance completes when what was written has played. */
  end(): void;
  /** Resolves when played to the end or dropped/cut by stop(). Rejects with SpeakerError if the player could not start. */
  readonly done: Promise<PlayResult>;
}

/** Speaker events; `at` is the speaker clock's monotonic time, ms. */
export interface SpeakerEvents {
  start: [{ id: string; text?: string; at: number }];
  end: [{ id: string; completed: boolean; at: number }];
  stopped: [SpeakerStopReport];
  error: [SpeakerError];
}

/** A speaker: a queue of utterances played one after the other. */
export interface Speaker extends EventEmitter<SpeakerEvents> {
  /** 'aplay' | 'sox' (real) or 'sim'. */
  readonly kind: 'aplay' | 'sox' | 'sim';
  /** Queue a whole utterance. Resolves `{completed}` when played or dropped; rejects with SpeakerError (code ENOENT when the player binary is missing, SPEAKER_BAD_FORMAT). */
  play(pcm: Buffer, opts: PlayOptions): Promise<PlayResult>;
  /** Queue an utterance whose PCM arrives later (streaming TTS). */
  openStream(opts: PlayOptions): SpeakerStream;
  /** Queue a generated earcon (e.g. 'listening': a short rising chirp). */
  playEarcon(name: EarconName): Promise<PlayResult>;
  /** Kill the current playback (SIGKILL for child processes), drop the queue; resolves once the child has exited. */
  stop(): Promise<SpeakerStopReport>;
  /** True while an utterance is playing. */
  readonly isPlaying: boolean;
  /** Utterances waiting behind the current one. */
  readonly queued: number;
  /** Software volume 0..100. */
  readonly volume: number;
  /** Throws SpeakerError SPEAKER_BAD_VOLUME outside 0..100. */
  setVolume(volume: number): void;
  /** Stop and refuse further playback. */
  close(): Promise<void>;
}

/** Speaker failures: ENOENT (aplay/play missing), SPEAKER_BAD_FORMAT, SPEAKER_BAD_VOLUME, SPEAKER_PLAYER_FAILED, SPEAKER_CLOSED. */
export class SpeakerError extends HalError {}
