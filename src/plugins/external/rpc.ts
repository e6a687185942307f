/**
 * NDJSON framing and a JSON-RPC 2.0 peer for the process-plugin protocol
 * (src/plugins/external/protocol.ts). Used by both sides: the kernel's
 * ProcessPlugin and the author SDK (src/plugin-sdk). No imports besides the
 * protocol, no IO: the owner feeds bytes in and passes a `send` function.
 */
import { RPC_ERRORS, type RpcErrorObject, type RpcRequest, type RpcResponse } from './protocol.js';
import { parseJson } from '../../kernel/json.js';

/** An error a JSON-RPC call came back with (or a local failure of the call: timeout, cancel, peer gone). */
export class RpcError extends Error {
  constructor(
    /** JSON-RPC error code (RPC_ERRORS). */
    readonly rpcCode: number,
    message: string,
    readonly data?: RpcErrorObject['data'],
  ) {
    super(message);
    this.name = 'RpcError';
  }
}

/**
 * Splits a byte stream into lines ("\n", a trailing "\r" dropped) without
 * ever holding more than `maxLineBytes` of one line: once a line grows past
 * it, `push` returns 'overflow' and the reader stops collecting (the caller
 * treats the plugin as crashed). Complete lines go to `onLine` in order.
 */
export class LineReader {
  private parts: Buffer[] = [];
  private size = 0;
  private overflowed = false;
  constructor(
    private readonly maxLineBytes: number,
    private readonly onLine: (line: string) => void,
  ) {}

  /** Feed a chunk. Returns 'overflow' once a line is longer than the limit (the rest is ignored), else 'ok'. */
  push(chunk: Buffer): 'ok' | 'overflow' {
    if (this.overflowed) return 'overflow';
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(10, start);
      if (nl === -1) {
        const rest = chunk.length - start;
        if (this.size + rest > this.maxLineBytes) {
          this.overflowed = true;
          this.parts = [];
          this.size = 0;
          return 'overflow';
        }
        if (rest > 0) {
          this.parts.push(chunk.subarray(start));
          this.size += rest;
        }
        return 'ok';
      }
      if (this.size + (nl - start) > this.maxLineBytes) {
        this.overflowed = true;
        this.parts = [];
        this.size = 0;
        return 'overflow';
      }
      let buf = chunk.subarray(start, nl);
      if (this.parts.length) {
        this.parts.push(buf);
        buf = Buffer.concat(this.parts);
        this.parts = [];
        this.size = 0;
      }
      let line = buf.toString('utf8');
      if (line.endsWith('\r')) line = line.slice(0, -1);
      this.onLine(line);
      if (this.overflowed) return 'overflow';
      start = nl + 1;
    }
  }
}

/** Timers the peer uses for call time limits (the kernel passes its Clock; the SDK the global timers). */
export interface PeerTimers {
  setTimeout(fn: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

/** Options of one outgoing call. */
export interface CallOptions {
  /** Fails the call with RPC_ERRORS.TIMEOUT after this many ms (absent: no limit). */
  timeoutMs?: number;
  /** Aborting sends a `cancel` notification {id} and fails the call with RPC_ERRORS.CANCELLED. */
  signal?: AbortSignal;
}

/** What the peer's owner handles: incoming requests (return the result or throw) and notifications. */
export interface PeerHandlers {
  /** Answer a request; a thrown RpcError keeps its code, anything else becomes FAILED (-32000) with its message. */
  request(method: string, params: unknown, id: number | string): unknown | Promise<unknown>;
  notification(method: string, params: unknown): void;
  /** A line that is not a JSON-RPC 2.0 message. */
  garbage(line: string, why: string): void;
}

interface Pending {
  resolve: (v: unknown) => void;
  reject: (e: Error) => void;
  timer?: unknown;
  cleanup?: () => void;
  method: string;
}

/** One end of a JSON-RPC 2.0 connection over NDJSON. */
export class RpcPeer {
  private nextId = 1;
  private readonly pending = new Map<number | string, Pending>();
  private closedWith: RpcError | undefined;

  constructor(
    private readonly send: (line: string) => void,
    private readonly handlers: PeerHandlers,
    private readonly timers: PeerTimers,
  ) {}

  /** Number of calls waiting for an answer. */
  get pendingCount(): number {
    return this.pending.size;
  }

  /** Handle one received line (JSON). Never throws. */
  receive(line: string): void {
    if (line.trim() === '') return;
    let msg: unknown;
    try {
      msg = parseJson(line);
    } catch {
      this.handlers.garbage(line, 'not JSON');
      return;
    }
    if (!msg || typeof msg !== 'object' || Array.isArray(msg) || (msg as { jsonrpc?: unknown }).jsonrpc !== '2.0') {
      this.handlers.garbage(line, 'not a JSON-RPC 2.0 object');
      return;
    }
    const m = msg as Partial<RpcRequest & RpcResponse>;
    if (typeof m.method === 'string') {
      if (m.id === undefined || m.id === null) {
        try {
          this.handlers.notification(m.method, m.params);
        } catch {
          /* a notification has nobody to answer */
        }
        return;
      }
      void this.answer(m.id, m.method, m.params);
      return;
    }
    if (m.id !== undefined && m.id !== null && ('result' in m || 'error' in m)) {
      const p = this.pending.get(m.id);
      if (!p) return; // late answer to a call that timed out or was cancelled
      this.settle(m.id);
      if (m.error) p.reject(new RpcError(typeof m.error.code === 'number' ? m.error.code : RPC_ERRORS.FAILED, String(m.error.message ?? 'error'), m.error.data));
      else p.resolve(m.result);
      return;
    }
    this.handlers.garbage(line, 'neither a request nor a response');
  }

  private async answer(id: number | string, method: string, params: unknown): Promise<void> {
    let response: RpcResponse;
    try {
      const result = await this.handlers.request(method, params, id);
      response = { jsonrpc: '2.0', id, result: result === undefined ? null : result };
    } catch (err) {
      const e = err instanceof RpcError ? err : new RpcError(RPC_ERRORS.FAILED, err instanceof Error ? err.message : String(err), codeOf(err));
      response = { jsonrpc: '2.0', id, error: { code: e.rpcCode, message: e.message, ...(e.data ? { data: e.data } : {}) } };
    }
    if (this.closedWith) return;
    try {
      this.send(JSON.stringify(response));
    } catch {
      /* the pipe is gone; the owner learns from its exit */
    }
  }

  /** Send a notification. */
  notify(method: string, params?: unknown): void {
    if (this.closedWith) return;
    this.send(JSON.stringify({ jsonrpc: '2.0', method, ...(params === undefined ? {} : { params }) }));
  }

  /** Call `method`; resolves with the result, rejects with RpcError. */
  call<T = unknown>(method: string, params?: unknown, opts: CallOptions = {}): Promise<T> {
    if (this.closedWith) return Promise.reject(this.closedWith);
    if (opts.signal?.aborted) return Promise.reject(new RpcError(RPC_ERRORS.CANCELLED, `${method} cancelled`));
    const id = this.nextId++;
    return new Promise<T>((resolve, reject) => {
      const p: Pending = { resolve: resolve as (v: unknown) => void, reject, method };
      this.pending.set(id, p);
      if (opts.timeoutMs !== undefined) {
        p.timer = this.timers.setTimeout(() => {
          if (!this.pending.has(id)) return;
          this.settle(id);
          reject(new RpcError(RPC_ERRORS.TIMEOUT, `${method} timed out after ${opts.timeoutMs} ms`));
        }, opts.timeoutMs);
      }
      if (opts.signal) {
        const signal = opts.signal;
        const onAbort = (): void => {
          if (!this.pending.has(id)) return;
          this.settle(id);
          try {
            this.notify('cancel', { id });
          } catch {
            /* gone */
          }
          reject(new RpcError(RPC_ERRORS.CANCELLED, `${method} cancelled`));
        };
        signal.addEventListener('abort', onAbort, { once: true });
        p.cleanup = () => signal.removeEventListener('abort', onAbort);
      }
      try {
        this.send(JSON.stringify({ jsonrpc: '2.0', id, method, ...(params === undefined ? {} : { params }) }));
      } catch (err) {
        this.settle(id);
        reject(new RpcError(RPC_ERRORS.CANCELLED, `${method}: cannot send: ${err instanceof Error ? err.message : String(err)}`));
      }
    });
  }

  private settle(id: number | string): void {
    const p = this.pending.get(id);
    if (!p) return;
    this.pending.delete(id);
    if (p.timer !== undefined) this.timers.clearTimeout(p.timer);
    p.cleanup?.();
  }

  /** The other side is gone: fail every pending call with `reason` (CANCELLED) and refuse new ones. */
  close(reason: string): void {
    if (this.closedWith) return;
    this.closedWith = new RpcError(RPC_ERRORS.CANCELLED, reason);
    for (const [id, p] of [...this.pending]) {
      this.settle(id);
      p.reject(this.closedWith);
    }
  }
}

function codeOf(err: unknown): RpcErrorObject['data'] | undefined {
  const code = (err as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? { code } : undefined;
}
