/**
 * One TCP connection to a Wyoming service (rhasspy/wyoming client.py: a
 * plain socket, events both ways). Reads are decoded with WyomingDecoder and
 * queued; `next()` waits for the next event with a timeout. Wyoming services
 * listen on tcp://HOST:PORT (faster-whisper 10300, piper 10200,
 * openWakeWord 10400).
 */
import net from 'node:net';
import { TimeoutError } from '../../kernel/errors.js';
import { VoiceAbortError, WyomingClosedError, WyomingConnectError, WyomingServiceError } from '../errors.js';
import { encodeEvent, WyomingDecoder, type WyomingEvent } from './codec.js';
import { WyomingProtocolError } from '../errors.js';

/** Where a Wyoming service listens. Times in ms. */
export interface WyomingEndpoint {
  host: string;
  port: number;
  /** Connect timeout, ms (default 3000). */
  connectTimeoutMs?: number;
}

type Waiter = { resolve: (ev: WyomingEvent) => void; reject: (err: Error) => void };

/** A connected Wyoming peer. Always `close()` it. */
export class WyomingConnection {
  private readonly decoder = new WyomingDecoder();
  private readonly queue: WyomingEvent[] = [];
  private waiter: Waiter | undefined;
  private failure: Error | undefined;

  private constructor(private readonly socket: net.Socket, private readonly label: string) {
    socket.on('data', (chunk: Buffer) => {
      if (this.failure) return;
      let events: WyomingEvent[];
      try {
        events = this.decoder.push(chunk);
      } catch (err) {
        this.fail(err instanceof Error ? err : new WyomingProtocolError(String(err)));
        socket.destroy();
        return;
      }
      for (const ev of events) this.deliver(ev);
    });
    socket.on('error', (err) => this.fail(err));
    socket.on('close', () => {
      if (this.decoder.partial) this.fail(new WyomingProtocolError(`${label} closed the connection in the middle of a frame`));
      this.fail(new WyomingClosedError('an event'));
    });
  }

  /**
   * Open a connection.
   * @throws WyomingConnectError when refused or unreachable; TimeoutError after connectTimeoutMs;
   * VoiceAbortError when `signal` aborts first.
   */
  static connect(ep: WyomingEndpoint, signal?: AbortSignal): Promise<WyomingConnection> {
    const timeoutMs = ep.connectTimeoutMs ?? 3000;
    return new Promise((resolve, reject) => {
      if (signal?.aborted) return reject(new VoiceAbortError('Wyoming connect'));
      const socket = net.connect({ host: ep.host, port: ep.port });
      socket.setNoDelay(true);
      const done = (err?: Error): void => {
        clearTimeout(timer);
        signal?.removeEventListener('abort', onAbort);
        socket.off('error', onError);
        socket.off('connect', onConnect);
        if (err) {
          socket.destroy();
          reject(err);
        } else resolve(new WyomingConnection(socket, `${ep.host}:${ep.port}`));
      };
      const onError = (err: Error): void => done(new WyomingConnectError(ep.host, ep.port, { cause: err }));
      const onConnect = (): void => done();
      const onAbort = (): void => done(new VoiceAbortError('Wyoming connect'));
      const timer = setTimeout(() => done(new TimeoutError(`connecting to Wyoming service ${ep.host}:${ep.port}`, timeoutMs)), timeoutMs);
      socket.once('error', onError);
      socket.once('connect', onConnect);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  /** Send one event (buffered by the socket; order is kept). Silently dropped after close. */
  send(ev: { type: string; data?: Record<string, unknown>; payload?: Buffer }): void {
    if (this.socket.destroyed || this.socket.writableEnded) return;
    this.socket.write(encodeEvent(ev));
  }

  /**
   * The next event from the service.
   * @param timeoutMs how long to wait, ms (Infinity: no limit)
   * @param what what is awaited, for messages ("transcript")
   * @throws TimeoutError; WyomingServiceError when the service sent `error`;
   * WyomingProtocolError on a bad frame; WyomingClosedError when the peer closed.
   */
  next(timeoutMs: number, what: string): Promise<WyomingEvent> {
    const queued = this.queue.shift();
    if (queued) return Promise.resolve(queued).then(checkError);
    if (this.failure) return Promise.reject(this.rename(this.failure, what));
    if (this.waiter) return Promise.reject(new Error('WyomingConnection.next() called concurrently'));
    return new Promise<WyomingEvent>((resolve, reject) => {
      const timer = Number.isFinite(timeoutMs)
        ? setTimeout(() => {
            this.waiter = undefined;
            reject(new TimeoutError(`waiting for ${what} from Wyoming service ${this.label}`, timeoutMs));
          }, timeoutMs)
        : undefined;
      this.waiter = {
        resolve: (ev) => {
          clearTimeout(timer);
          try {
            resolve(checkError(ev));
          } catch (err) {
            reject(err);
          }
        },
        reject: (err) => {
          clearTimeout(timer);
          reject(this.rename(err, what));
        },
      };
    });
  }

  /** Close the connection (half-close then destroy). Idempotent. */
  close(): void {
    this.fail(new WyomingClosedError('an event (closed locally)'));
    this.socket.destroy();
  }

  private rename(err: Error, what: string): Error {
    return err instanceof WyomingClosedError ? new WyomingClosedError(what) : err;
  }

  private deliver(ev: WyomingEvent): void {
    const w = this.waiter;
    if (w) {
      this.waiter = undefined;
      w.resolve(ev);
    } else this.queue.push(ev);
  }

  private fail(err: Error): void {
    if (this.failure) return;
    this.failure = err;
    const w = this.waiter;
    this.waiter = undefined;
    w?.reject(err);
  }
}

function checkError(ev: WyomingEvent): WyomingEvent {
  if (ev.type === 'error') {
    const text = typeof ev.data.text === 'string' ? ev.data.text : 'unknown error';
    const code = typeof ev.data.code === 'string' ? ev.data.code : undefined;
    throw new WyomingServiceError(text, code);
  }
  return ev;
}

/**
 * Ask a service what it offers: `describe` -> `info` (README "Service Description").
 * Returns the info data ({asr, tts, wake, handle, intent} program lists).
 * @throws as WyomingConnection.connect / next.
 */
export async function describeWyoming(ep: WyomingEndpoint, timeoutMs = 3000): Promise<Record<string, unknown>> {
  const conn = await WyomingConnection.connect(ep);
  try {
    conn.send({ type: 'describe' });
    for (;;) {
      const ev = await conn.next(timeoutMs, 'info');
      if (ev.type === 'info') return ev.data;
    }
  } finally {
    conn.close();
  }
}
