/**
 * The real microphone: arecord (alsa-utils) or sox, spawned with the argument
 * tables of node-record-lpcm16 (recorders/arecord.js, recorders/sox.js) at
 * 16 kHz mono S16_LE with `audioType: 'raw'` (no WAV header in the stream).
 * We spawn and supervise the child ourselves because node-record-lpcm16's
 * Recording emits an error on every stop (kill -> non-zero exit) and leaves
 * spawn errors unhandled (a missing arecord would crash the process).
 *
 * A recorder that exits while we did not ask it to (at boot the USB mic may not
 * be enumerated yet: `arecord: main: audio open error`, exit code 1) is
 * restarted with exponential backoff on the injectable clock; after
 * `maxAttempts` consecutive failures the mic emits `error` (MIC_FAILED) and
 * ends its stream.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { createRequire } from 'node:module';
import type { Readable } from 'node:stream';
import type { Logger } from '../../src/kernel/log-types.js';
import { systemClock, type Clock, type TimerHandle } from '../../src/kernel/clock.js';
import { VOICE_FORMAT, type PcmFormat } from '../common/pcm.js';
import { PcmOutput } from './pcm-stream.js';
import { MicError, type MicEvents, type Microphone } from './types.js';

/** Recorder programs supported by node-record-lpcm16 that we use. */
export type RecorderKind = 'arecord' | 'sox';

/** Backoff of restarts: first delay, cap (ms) and attempts before giving up. Attempts reset after `stableMs` of running. */
export interface BackoffOptions {
  initialMs?: number;
  maxMs?: number;
  maxAttempts?: number;
  stableMs?: number;
}

/** Options: recorder, ALSA device ('' = default), binary override, env, clock, backoff, logger. */
export interface RecorderMicOptions {
  recorder?: RecorderKind;
  device?: string;
  command?: string;
  env?: NodeJS.ProcessEnv;
  clock?: Clock;
  backoff?: BackoffOptions;
  log?: Logger;
}

type RecorderBuilder = (o: Record<string, unknown>) => { cmd: string; args: Array<string | number>; spawnOptions?: { env?: NodeJS.ProcessEnv } };

/**
 * The command line node-record-lpcm16 would use for 16 kHz mono raw s16le from
 * `device` (arecord: `-D device`; sox: the AUDIODEV environment variable, returned as `audiodev`).
 */
export function recorderCommand(recorder: RecorderKind, device?: string): { cmd: string; args: string[]; audiodev?: string } {
  const require = createRequire(import.meta.url);
  const build = require(`node-record-lpcm16/recorders/${recorder}.js`) as RecorderBuilder;
  const r = build({ sampleRate: VOICE_FORMAT.sampleRate, channels: VOICE_FORMAT.channels, audioType: 'raw', threshold: 0.5, silence: '1.0', endOnSilence: false, device: device || undefined });
  const audiodev = r.spawnOptions?.env?.AUDIODEV;
  return { cmd: r.cmd, args: r.args.map(String), ...(audiodev ? { audiodev } : {}) };
}

/** arecord/sox microphone with restart-on-failure. */
export class RecorderMicrophone extends EventEmitter<MicEvents> implements Microphone {
  readonly kind: RecorderKind;
  readonly format: PcmFormat = { ...VOICE_FORMAT };
  private out: PcmOutput | undefined;
  private child: ChildProcess | undefined;
  private childExit: Promise<void> | undefined;
  private retryTimer: TimerHandle | undefined;
  private attempts = 0;
  private stopping = false;
  private readonly clock: Clock;
  private readonly backoff: Required<BackoffOptions>;

  constructor(private readonly opts: RecorderMicOptions = {}) {
    super();
    this.kind = opts.recorder ?? 'arecord';
    this.clock = opts.clock ?? systemClock;
    this.backoff = { initialMs: 500, maxMs: 10_000, maxAttempts: 8, stableMs: 5_000, ...opts.backoff };
  }

  get running(): boolean {
    return this.out !== undefined && !this.out.isEnded;
  }

  async start(): Promise<Readable> {
    if (this.out && !this.out.isEnded) return this.out.stream;
    const out = new PcmOutput();
    this.out = out;
    this.stopping = false;
    this.attempts = 0;
    try {
      await this.spawnOnce(out);
    } catch (err) {
      this.out = undefined;
      out.finish();
      throw err;
    }
    return out.stream;
  }

  /** Spawn the recorder; resolves once it is running, rejects with MicError ENOENT when the binary is missing. */
  private spawnOnce(out: PcmOutput): Promise<void> {
    const base = recorderCommand(this.kind, this.opts.device);
    const cmd = this.opts.command ?? base.cmd;
    const env = { ...(this.opts.env ?? process.env), ...(base.audiodev ? { AUDIODEV: base.audiodev } : {}) };
    const child = spawn(cmd, base.args, { stdio: ['ignore', 'pipe', 'pipe'], env });
    this.child = child;
    const startedAt = this.clock.monotonic();
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => {
      if (stderr.length < 2000) stderr += d.toString();
    });
    child.stdout?.on('data', (d: Buffer) => {
      if (!out.write(d)) {
        child.stdout?.pause();
        void out.drained().then(() => child.stdout?.resume());
      }
    });
    return new Promise<void>((resolve, reject) => {
      let spawned = false;
      this.childExit = new Promise<void>((exited) => {
        child.once('error', (err: NodeJS.ErrnoException) => {
          exited();
          if (this.child === child) this.child = undefined;
          if (spawned) return;
          const code = err.code === 'ENOENT' ? 'ENOENT' : 'MIC_FAILED';
          const hint = err.code === 'ENOENT' ? ` (install ${this.kind === 'arecord' ? 'alsa-utils' : 'sox'})` : '';
          reject(new MicError(code, `cannot start ${cmd}: ${err.message}${hint}`, { cause: err }));
        });
        child.once('spawn', () => {
          spawned = true;
          resolve();
        });
        child.once('exit', () => {
          exited();
          // Let a stdout paused for backpressure drain so 'close' (and the restart logic) follows.
          if (!child.stdout?.destroyed) child.stdout?.resume();
        });
        child.once('close', (code) => {
          exited();
          if (this.child === child) this.child = undefined;
          if (spawned) this.onExit(out, code, stderr.trim(), this.clock.monotonic() - startedAt);
        });
      });
    });
  }

  private onExit(out: PcmOutput, code: number | null, stderr: string, ranMs: number): void {
    if (this.stopping || out.isEnded || this.out !== out) return;
    if (ranMs >= this.backoff.stableMs) this.attempts = 0;
    this.attempts += 1;
    if (this.attempts > this.backoff.maxAttempts) {
      const err = new MicError('MIC_FAILED', `${this.kind} keeps exiting (code ${code}) after ${this.backoff.maxAttempts} restarts${stderr ? `: ${stderr.split('\n')[0]}` : ''}`);
      this.opts.log?.error({ code, stderr }, 'microphone: giving up');
      this.out = undefined;
      out.finish();
      if (this.listenerCount('error') > 0) this.emit('error', err);
      this.emit('end');
      return;
    }
    const delayMs = Math.min(this.backoff.maxMs, this.backoff.initialMs * 2 ** (this.attempts - 1));
    this.opts.log?.warn({ code, stderr, attempt: this.attempts, delayMs }, 'microphone: recorder exited, restarting');
    this.emit('retry', { attempt: this.attempts, delayMs, exitCode: code, stderr });
    this.retryTimer = this.clock.setTimeout(() => {
      this.retryTimer = undefined;
      if (this.stopping || this.out !== out) return;
      Promise.resolve()
        .then(() => this.spawnOnce(out))
        .catch((err: unknown) => {
          // The binary vanished between restarts: give up the same way.
          if (this.out === out) this.out = undefined;
          out.finish();
          if (this.listenerCount('error') > 0) this.emit('error', err instanceof MicError ? err : new MicError('MIC_FAILED', String(err)));
          this.emit('end');
        });
    }, delayMs, { keepAlive: true });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.clock.clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    const child = this.child;
    const exited = this.childExit;
    if (child && child.exitCode === null && child.signalCode === null) {
      // A paused stdout would hold back 'close'; we do not want its last bytes anyway.
      child.stdout?.destroy();
      child.kill('SIGTERM');
      const killTimer = setTimeout(() => child.kill('SIGKILL'), 1000);
      await exited;
      clearTimeout(killTimer);
    }
    const out = this.out;
    this.out = undefined;
    if (out && !out.isEnded) {
      out.finish();
      this.emit('end');
    }
  }
}
