/**
 * The HTTP leg of an LLM call on node:http/https, with what a voice box needs
 * that fetch does not give directly: aborting destroys the socket at once
 * (the stop button, issue 3), and three timeouts (connect, first response
 * byte, silence between body reads) each surface as ProviderTimeoutError.
 */
import http from 'node:http';
import https from 'node:https';
import {
  ConnectionError,
  ProviderAbortError,
  ProviderTimeoutError,
  type ProviderError,
} from './errors.js';

/** Timeouts of one call, ms. */
export interface HttpTimeouts {
  /** TCP (and TLS) connect. */
  connectMs: number;
  /** Request sent -> response headers (covers model load and prompt evaluation). */
  responseMs: number;
  /** Silence between two body reads. */
  idleMs: number;
}

/** One request. */
export interface HttpCall {
  url: string;
  method: 'POST' | 'GET';
  headers: Record<string, string>;
  body?: string;
  signal?: AbortSignal;
  timeouts: HttpTimeouts;
  /** Source name put on errors. */
  source?: string;
}

/** An open response: status, headers, and its body as an async sequence of reads. */
export interface HttpResponse {
  status: number;
  contentType: string;
  /** Body reads in order; throws ProviderTimeoutError (idle), ProviderAbortError, or ConnectionError when the connection breaks. */
  chunks(): AsyncGenerator<Uint8Array, void, void>;
  /** The whole body (up to maxBytes; more is cut). */
  readAll(maxBytes: number): Promise<Uint8Array>;
  /** Closes the connection now. */
  destroy(): void;
}

/**
 * Sends the request and resolves when the response headers arrive.
 * @throws ProviderAbortError (signal), ProviderTimeoutError (connect/response),
 *   ConnectionError (refused, reset, DNS).
 */
export function openHttp(call: HttpCall): Promise<HttpResponse> {
  const { signal, timeouts, source } = call;
  if (signal?.aborted) return Promise.reject(new ProviderAbortError({ source }));
  const u = new URL(call.url);
  const mod = u.protocol === 'https:' ? https : http;
  const headers: Record<string, string> = { ...call.headers };
  if (call.body !== undefined) headers['Content-Length'] = String(Buffer.byteLength(call.body));

  return new Promise<HttpResponse>((resolve, reject) => {
    let settled = false;
    let failure: ProviderError | null = null;
    const req = mod.request(u, { method: call.method, headers });
    const fail = (err: ProviderError): void => {
      if (!failure) failure = err;
      req.destroy(err);
      if (!settled) {
        settled = true;
        cleanup();
        reject(err);
      }
    };
    const onAbort = (): void => fail(new ProviderAbortError({ source }));
    signal?.addEventListener('abort', onAbort, { once: true });
    const connectTimer = setTimeout(() => fail(new ProviderTimeoutError('connect', timeouts.connectMs, { source })), timeouts.connectMs);
    let responseTimer: NodeJS.Timeout | undefined;
    const cleanup = (): void => {
      clearTimeout(connectTimer);
      clearTimeout(responseTimer);
    };
    req.on('socket', (sock) => {
      const started = (): void => {
        clearTimeout(connectTimer);
        responseTimer = setTimeout(() => fail(new ProviderTimeoutError('response', timeouts.responseMs, { source })), timeouts.responseMs);
      };
      if (sock.connecting) sock.once(u.protocol === 'https:' ? 'secureConnect' : 'connect', started);
      else started();
    });
    req.on('error', (err: NodeJS.ErrnoException) => {
      if (settled) return;
      fail(failure ?? new ConnectionError(`${err.code ?? ''} ${err.message}`.trim(), { cause: err, source }));
    });
    req.on('response', (res) => {
      if (settled) {
        res.destroy();
        return;
      }
      settled = true;
      cleanup();
      signal?.removeEventListener('abort', onAbort);
      resolve(wrapResponse(req, res, call));
    });
    req.end(call.body);
  });
}

/**
 * Most body bytes read from the socket ahead of the consumer (1 MiB): past it
 * the response is paused, so a fast server cannot fill memory faster than
 * the stream is decoded (issue 14 "Limits").
 */
const MAX_READ_AHEAD = 1024 * 1024;

function wrapResponse(req: http.ClientRequest, res: http.IncomingMessage, call: HttpCall): HttpResponse {
  const { signal, timeouts, source } = call;
  const queue: Buffer[] = [];
  /** Bytes in `queue`. */
  let queued = 0;
  let ended = false;
  /** The body ended without error: the socket went back to the keep-alive pool. */
  let cleanEnd = false;
  let error: ProviderError | null = null;
  let wake: (() => void) | null = null;
  let idleTimer: NodeJS.Timeout | undefined;
  const notify = (): void => {
    const w = wake;
    wake = null;
    w?.();
  };
  const armIdle = (): void => {
    clearTimeout(idleTimer);
    idleTimer = setTimeout(() => setError(new ProviderTimeoutError('idle', timeouts.idleMs, { source })), timeouts.idleMs);
  };
  const setError = (err: ProviderError): void => {
    if (!error && (!ended || err.code === 'ABORTED')) error = err;
    clearTimeout(idleTimer);
    if (!cleanEnd) {
      req.destroy();
      res.destroy();
    }
    notify();
  };
  const onAbort = (): void => setError(new ProviderAbortError({ source }));
  signal?.addEventListener('abort', onAbort, { once: true });
  armIdle();
  res.on('data', (b: Buffer) => {
    queue.push(b);
    queued += b.length;
    armIdle();
    if (queue.length > 256 || queued > MAX_READ_AHEAD) res.pause();
    notify();
  });
  res.on('end', () => {
    ended = true;
    cleanEnd = !error;
    clearTimeout(idleTimer);
    notify();
  });
  res.on('error', (err: Error) => setError(new ConnectionError(`connection broken: ${err.message}`, { cause: err, source })));
  res.on('close', () => {
    if (!ended) setError(new ConnectionError('connection closed before the response ended', { source }));
    signal?.removeEventListener('abort', onAbort);
  });

  // Closes the connection unless the response ended cleanly: then the
  // socket is back in the agent's keep-alive pool and may already carry
  // another request, so it must not be touched.
  const destroy = (): void => {
    clearTimeout(idleTimer);
    signal?.removeEventListener('abort', onAbort);
    if (cleanEnd) return;
    req.destroy();
    res.destroy();
  };

  async function* chunks(): AsyncGenerator<Uint8Array, void, void> {
    try {
      for (;;) {
        if (error && error.code === 'ABORTED') throw error;
        if (queue.length) {
          const b = queue.shift()!;
          queued -= b.length;
          if (queue.length < 64 && queued < MAX_READ_AHEAD / 4 && res.isPaused()) res.resume();
          yield new Uint8Array(b.buffer, b.byteOffset, b.byteLength);
          continue;
        }
        if (error) throw error;
        if (ended) return;
        await new Promise<void>((r) => (wake = r));
      }
    } finally {
      destroy();
    }
  }

  return {
    status: res.statusCode ?? 0,
    contentType: String(res.headers['content-type'] ?? ''),
    chunks,
    async readAll(maxBytes: number): Promise<Uint8Array> {
      const parts: Uint8Array[] = [];
      let n = 0;
      for await (const c of chunks()) {
        if (n + c.length > maxBytes) {
          parts.push(c.subarray(0, maxBytes - n));
          n = maxBytes;
          destroy();
          break;
        }
        parts.push(c);
        n += c.length;
      }
      return Buffer.concat(parts, n);
    },
    destroy,
  };
}
