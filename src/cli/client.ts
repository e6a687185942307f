/**
 * Client side of the maintenance socket: send one request, receive streamed
 * `data` lines and the final `end`/`error`.
 */
import net from 'node:net';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { HomeAgentError } from '../kernel/errors.js';
import { LineSplitter, type ControlResponse } from './protocol.js';
import { startServiceHint } from '../service/start-hint.js';

/** The service is not running or the socket is not reachable. */
/**
 * The service is not running or the socket is not reachable. The message says
 * how to start it where this runs (startServiceHint: systemd only where its
 * unit is installed; a tester in a checkout was pointed at systemctl).
 */
export class ServiceUnreachableError extends HomeAgentError {
  constructor(readonly socketPath: string, cause: string, unitFiles?: readonly string[]) {
    const dataDir = socketDataDir(socketPath);
    super('SERVICE_UNREACHABLE', `cannot reach the homeagent service at ${socketPath} (${cause}). Is it running? (${startServiceHint(dataDir, unitFiles, dataDir ? undefined : socketPath)})`);
  }
}

/** The data directory a socket path names when it is the service's default one there (`DIR/homeagent.sock`), else undefined. */
function socketDataDir(socketPath: string): string | undefined {
  const dir = path.dirname(socketPath);
  return path.basename(socketPath) === 'homeagent.sock' && dir !== '/run/homeagent' ? dir : undefined;
}

/** The service answered with an error line. */
export class CommandError extends HomeAgentError {}

/**
 * Where the socket is: --socket, HOMEAGENT_SOCKET, $RUNTIME_DIRECTORY
 * (systemd), /run/homeagent on the device, else the data directory.
 */
export function defaultSocketPath(dataDir: string, env: NodeJS.ProcessEnv = process.env): string {
  if (env.HOMEAGENT_SOCKET) return env.HOMEAGENT_SOCKET;
  if (env.RUNTIME_DIRECTORY) return path.join(env.RUNTIME_DIRECTORY.split(':')[0]!, 'homeagent.sock');
  if (existsSync('/run/homeagent/homeagent.sock')) return '/run/homeagent/homeagent.sock';
  return path.join(dataDir, 'homeagent.sock');
}

/**
 * Whether the service runs, told by its single-instance socket (the service
 * refuses to start while something answers on it): 'running' when a
 * connection is accepted, 'down' when the socket is absent or refuses
 * (ENOENT, ECONNREFUSED: a stale file from a crash), 'no-access' when this
 * user may not open it (EACCES: the service most likely runs; use sudo or the
 * homeagent group).
 */
export function probeService(socketPath: string): Promise<'running' | 'down' | 'no-access'> {
  return new Promise((resolve) => {
    if (!existsSync(socketPath)) return resolve('down');
    const c = net.connect(socketPath);
    c.once('connect', () => {
      c.destroy();
      resolve('running');
    });
    c.once('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'EACCES' || err.code === 'EPERM' ? 'no-access' : 'down'));
  });
}

/** Send `cmd`; `onData` receives streamed lines; resolves with the result. */
export function request(socketPath: string, cmd: string, args: Record<string, unknown>, onData?: (d: unknown) => void, opts: { timeoutMs?: number } = {}): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const sock = net.connect(socketPath);
    const splitter = new LineSplitter();
    let settled = false;
    let timer: NodeJS.Timeout | undefined;
    const finish = (fn: () => void) => {
      if (settled) return;
      settled = true;
      if (timer) clearTimeout(timer);
      sock.destroy();
      fn();
    };
    if (opts.timeoutMs) timer = setTimeout(() => finish(() => reject(new HomeAgentError('TIMEOUT', `no answer to ${cmd} within ${opts.timeoutMs} ms`))), opts.timeoutMs);
    sock.once('connect', () => sock.write(JSON.stringify({ id: 1, cmd, args }) + '\n'));
    sock.on('error', (err: NodeJS.ErrnoException) => finish(() => reject(new ServiceUnreachableError(socketPath, err.code ?? err.message))));
    sock.on('close', () => finish(() => reject(new ServiceUnreachableError(socketPath, 'connection closed before an answer'))));
    sock.on('data', (chunk: Buffer) => {
      for (const line of splitter.push(chunk)) {
        let r: ControlResponse;
        try {
          r = JSON.parse(line) as ControlResponse;
        } catch {
          continue;
        }
        if (r.type === 'data') onData?.(r.data);
        else if (r.type === 'end') finish(() => resolve(r.result));
        else if (r.type === 'error') finish(() => reject(new CommandError(r.code, r.error)));
      }
    });
  });
}
