/**
 * Runs the `homeagent` executable (src/cli/main.ts through tsx) as a user
 * would, for the CLI tests.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { probeService } from '../../src/cli/client.js';
import { waitUntil } from '../support/wait.js';
import path from 'node:path';

const CLI = path.resolve('src/cli/main.ts');
/** tsx's loader by its location, so that a command run in another working directory finds it. */
const TSX = import.meta.resolve('tsx');

/**
 * Run `homeagent ARGS`; `closeStdout`: the reader is gone before the command writes (`| head` that already quit);
 * `cwd`: its working directory (default this process's).
 */
export function cli(args: string[], o: { env?: NodeJS.ProcessEnv; closeStdout?: boolean; onStdout?: (all: string) => void; cwd?: string } = {}): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, ['--import', TSX, CLI, ...args], { stdio: ['ignore', 'pipe', 'pipe'], env: { ...process.env, ...o.env }, ...(o.cwd ? { cwd: o.cwd } : {}) });
    let stdout = '';
    let stderr = '';
    if (o.closeStdout) child.stdout.destroy();
    else
      child.stdout.on('data', (d: Buffer) => {
        stdout += d.toString();
        o.onStdout?.(stdout);
      });
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** Resolves once the service `service` answers on `socket`, or has exited (the caller checks which). */
export async function serviceAnswers(socket: string, service: ChildProcess): Promise<void> {
  let up = false;
  await waitUntil(() => {
    void probeService(socket).then((s) => (up = s === 'running'));
    return up || service.exitCode !== null;
  }, 'the service to answer', 120_000);
}
