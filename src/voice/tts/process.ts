/**
 * Run a TTS child process: write text to stdin, collect stdout, honour an
 * AbortSignal (SIGKILL) and report failures as TtsError.
 */
import { spawn } from 'node:child_process';
import { TtsError, VoiceAbortError } from '../errors.js';

/** Result of runTtsProcess: the whole stdout. */
export interface ProcessOutput {
  stdout: Buffer;
  stderr: string;
}

/**
 * Spawn `cmd args`, write `input` to stdin, resolve with stdout when it exits 0.
 * @throws TtsError when the binary is missing (ENOENT), exits non-zero or is killed;
 * VoiceAbortError when `signal` aborts.
 */
export function runTtsProcess(engine: string, cmd: string, args: string[], input: string, signal?: AbortSignal): Promise<ProcessOutput> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) return reject(new VoiceAbortError(`${engine} synthesis`));
    const child = spawn(cmd, args, { stdio: ['pipe', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    let err = '';
    let settled = false;
    const finish = (e?: Error, value?: ProcessOutput): void => {
      if (settled) return;
      settled = true;
      signal?.removeEventListener('abort', onAbort);
      if (e) reject(e);
      else resolve(value!);
    };
    const onAbort = (): void => {
      child.kill('SIGKILL');
      finish(new VoiceAbortError(`${engine} synthesis`));
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => {
      if (err.length < 4000) err += c.toString('utf8');
    });
    child.on('error', (e: NodeJS.ErrnoException) => {
      const why = e.code === 'ENOENT' ? `binary not found: ${cmd} (install it or fix the configured path)` : e.message;
      finish(new TtsError(engine, why, { cause: e }));
    });
    child.on('close', (code, sig) => {
      if (code === 0) finish(undefined, { stdout: Buffer.concat(out), stderr: err });
      else finish(new TtsError(engine, `${cmd} exited with ${code ?? sig}: ${err.trim().slice(0, 300)}`));
    });
    child.stdin.on('error', () => undefined); // EPIPE when the binary dies early; reported by 'close'
    child.stdin.end(input, 'utf8');
  });
}
