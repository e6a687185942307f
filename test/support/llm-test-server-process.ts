/**
 * The LLM test server in a process of its own, as a real Ollama is: what it
 * sees (a socket closed by a stop) is not delayed by the service's own event
 * loop, which an in-process server shares. Used by the stop bench (issue 17:
 * `stop.llm_abort_p99` is the time until the model's server sees its socket
 * closed, i.e. stops generating).
 *
 * Times: `SocketClosedInfo.at` is `process.hrtime.bigint()` taken in the
 * child; on Linux both processes read the same CLOCK_MONOTONIC, so it
 * compares with the parent's `process.hrtime.bigint()` directly.
 *
 * Only the options that survive JSON (a `defaultReply` without functions,
 * models) can be given; scripted answers need the in-process server.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { EventEmitter } from 'node:events';
import { fileURLToPath } from 'node:url';
import type { LlmTestServerOptions, SocketClosedInfo } from './llm-test-server.js';

/** A running out-of-process LLM test server. */
export interface LlmTestServerProcess {
  /** Base URL, e.g. http://127.0.0.1:41234. */
  url: string;
  /** Resolves with the next connection the child saw closed before its answer was complete. */
  nextSocketClosed(): Promise<SocketClosedInfo>;
  /** Stops the child (SIGTERM, then resolves on its exit). */
  close(): Promise<void>;
}

type ChildMessage = { type: 'ready'; url: string } | { type: 'socket-closed'; at: string; path: string; bytesSent: number } | { type: 'error'; message: string };

/**
 * Fork a child running `startLlmTestServer(opts)`; resolves once it listens.
 * Rejects if the child fails to start within 20 s or exits first.
 */
export async function startLlmTestServerProcess(opts: LlmTestServerOptions = {}): Promise<LlmTestServerProcess> {
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), ['--child'], { execArgv: ['--import', 'tsx'], stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
  const events = new EventEmitter();
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error('the LLM test server process did not start within 20 s')), 20_000);
    child.once('exit', (code) => reject(new Error(`the LLM test server process exited (${code}) before it listened`)));
    child.on('message', (m: ChildMessage) => {
      if (m.type === 'ready') {
        clearTimeout(timer);
        resolve(m.url);
      } else if (m.type === 'error') reject(new Error(`LLM test server process: ${m.message}`));
      else if (m.type === 'socket-closed') events.emit('socket-closed', { at: BigInt(m.at), path: m.path, bytesSent: m.bytesSent });
    });
    child.send({ type: 'start', opts });
  });
  return {
    url,
    nextSocketClosed: () => new Promise((resolve) => events.once('socket-closed', resolve)),
    close: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
      child.kill('SIGTERM');
      await exited;
    },
  };
}

if (process.argv.includes('--child') && process.send) {
  process.once('message', async (m: { type: string; opts: LlmTestServerOptions }) => {
    try {
      const { startLlmTestServer } = await import('./llm-test-server.js');
      const srv = await startLlmTestServer(m.opts);
      srv.on('socket-closed', (info: SocketClosedInfo) => process.send!({ type: 'socket-closed', at: String(info.at), path: info.path, bytesSent: info.bytesSent }));
      process.once('SIGTERM', () => void srv.close().finally(() => process.exit(0)));
      process.send!({ type: 'ready', url: srv.url });
    } catch (err) {
      process.send!({ type: 'error', message: String(err) });
      process.exit(1);
    }
  });
}
