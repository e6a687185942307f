/**
 * The real speaker: one `aplay` (alsa-utils) or sox `play` child process per
 * utterance, fed raw s16le PCM on stdin. stop() sends SIGKILL (no draining of
 * the ALSA buffer, so the room goes quiet at once) and resolves when the child
 * has exited. Works against `aplay -D null` without a sound card (tests, CI).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import type { Logger } from '../../src/kernel/log-types.js';
import { systemClock, type Clock } from '../../src/kernel/clock.js';
import { QueueSpeaker, type SpeakerBackend, type Utterance } from './queue-speaker.js';
import { SpeakerError } from './types.js';

/** Which player binary: `aplay` (ALSA) or sox `play`. */
export type PlayerKind = 'aplay' | 'sox';

/** Options of the process speaker. `device`: ALSA PCM name (e.g. 'default', 'plughw:1,0', 'null'); `command` overrides the binary path. */
export interface ProcessSpeakerOptions {
  player?: PlayerKind;
  device?: string;
  command?: string;
  volume?: number;
  clock?: Clock;
  log?: Logger;
  env?: NodeJS.ProcessEnv;
}

/** The argv of the player for one utterance (raw s16le at `rate` Hz, `channels`). */
export function playerArgs(player: PlayerKind, rate: number, channels: number, device?: string): string[] {
  if (player === 'aplay') {
    return ['-q', ...(device ? ['-D', device] : []), '-t', 'raw', '-f', 'S16_LE', '-r', String(rate), '-c', String(channels), '-'];
  }
  return ['-q', '-t', 'raw', '-r', String(rate), '-e', 'signed-integer', '-b', '16', '-c', String(channels), '-'];
}

class ProcessBackend implements SpeakerBackend {
  /** The player of the utterance playing now, if any. */
  child: ChildProcess | undefined;
  private exited: Promise<void> | undefined;

  constructor(private readonly opts: ProcessSpeakerOptions & { player: PlayerKind }) {}

  async play(u: Utterance): Promise<boolean> {
    const { player, device } = this.opts;
    const cmd = this.opts.command ?? (player === 'aplay' ? 'aplay' : 'play');
    const env = player === 'sox' && device ? { ...(this.opts.env ?? process.env), AUDIODEV: device } : (this.opts.env ?? process.env);
    const child = spawn(cmd, playerArgs(player, u.sampleRate, u.channels, player === 'aplay' ? device : undefined), { stdio: ['pipe', 'ignore', 'pipe'], env });
    this.child = child;
    let stderr = '';
    child.stderr?.on('data', (d: Buffer) => {
      if (stderr.length < 2000) stderr += d.toString();
    });
    child.stdin?.on('error', () => {
      /* EPIPE when the player dies or is killed: the exit code tells what happened */
    });
    const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null; error?: NodeJS.ErrnoException }>((resolve) => {
      child.once('error', (error: NodeJS.ErrnoException) => resolve({ code: null, signal: null, error }));
      child.once('close', (code, signal) => resolve({ code, signal }));
    });
    // stop() waits for the process itself to end ('exit'), not for its pipes to drain and close as well ('close').
    this.exited = Promise.race([exit.then(() => undefined), new Promise<void>((resolve) => child.once('exit', () => resolve()))]);
    const feed = (async () => {
      for await (const chunk of u.chunks()) {
        const stdin = child.stdin;
        if (!stdin || stdin.destroyed || child.exitCode !== null) return;
        if (!stdin.write(chunk)) {
          await new Promise<void>((r) => {
            const done = () => {
              stdin.off('drain', done);
              stdin.off('close', done);
              r();
            };
            stdin.on('drain', done);
            stdin.on('close', done);
          });
        }
      }
      if (!u.aborted) child.stdin?.end();
    })();
    const result = await exit;
    await feed.catch(() => undefined);
    if (this.child === child) {
      this.child = undefined;
      this.exited = undefined;
    }
    if (result.error) {
      const code = result.error.code === 'ENOENT' ? 'ENOENT' : 'SPEAKER_PLAYER_FAILED';
      const hint = result.error.code === 'ENOENT' ? ` (install ${player === 'aplay' ? 'alsa-utils' : 'sox'})` : '';
      throw new SpeakerError(code, `cannot start ${cmd}: ${result.error.message}${hint}`, { cause: result.error });
    }
    if (u.aborted) return false;
    if (result.code !== 0) {
      this.opts.log?.warn({ cmd, code: result.code, signal: result.signal, stderr: stderr.trim() }, 'speaker: player exited with an error');
      throw new SpeakerError('SPEAKER_PLAYER_FAILED', `${cmd} exited with code ${result.code}${stderr ? `: ${stderr.trim().split('\n')[0]}` : ''}`);
    }
    return true;
  }

  async abort(): Promise<void> {
    const child = this.child;
    const exited = this.exited;
    if (!child || !exited) return;
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  }
}

/** A speaker playing through aplay or sox `play`. */
export class ProcessSpeaker extends QueueSpeaker {
  readonly kind: PlayerKind;
  private readonly proc: ProcessBackend;

  constructor(opts: ProcessSpeakerOptions = {}) {
    const player = opts.player ?? 'aplay';
    const backend = new ProcessBackend({ ...opts, player });
    super(backend, opts.clock ?? systemClock, opts.volume ?? 100);
    this.proc = backend;
    this.kind = player;
  }

  /** The process id of the player now playing (undefined between utterances): for diagnostics and the stop bench, which watches it end from outside. */
  get playerPid(): number | undefined {
    return this.proc.child?.pid;
  }
}
