/**
 * A scripted in-process Provider for kernel tests (pi-mono style: a fake
 * passed in as an argument, no module mocking). Each call takes the next
 * scripted reply; a reply may stream its content in pieces with a delay, wait
 * on a gate, or fail. Aborts are honoured at once.
 */
import type { CompletionRequest, CompletionResponse, Provider, StreamEvent, ToolCall } from '../../src/kernel/llm-types.js';

/** One scripted reply. */
export interface FakeReply {
  content?: string;
  tool_calls?: Array<{ name: string; arguments: Record<string, unknown>; id?: string }>;
  /** Split content into these pieces (default: words). */
  pieces?: string[];
  /** Delay before each piece, ms. */
  delayMs?: number;
  /** Resolve this promise before finishing (lets a test hold a call open). */
  gate?: Promise<void>;
  error?: Error;
}

type Script = FakeReply | ((req: CompletionRequest, n: number) => FakeReply);

/** The fake. `requests` records every request (deep-copied). */
export class FakeProvider implements Provider {
  readonly name = 'fake';
  readonly requests: CompletionRequest[] = [];
  aborted = 0;
  private queue: Script[] = [];
  private requestWaiters: Array<{ n: number; resolve: () => void }> = [];
  private calls = 0;
  constructor(
    script: Script[] = [],
    private readonly fallback: Script = { content: 'ok' },
  ) {
    this.queue = [...script];
  }

  /**
   * Resolves once `n` requests have arrived (at once when they already have).
   * It resolves in the microtask after the n-th request is recorded, before
   * the fake yields anything for it (every piece waits at least one
   * setImmediate), so a test sees the turn parked on that request. No
   * deadline: the test runner's timeout is the failure deadline.
   */
  waitForRequests(n: number): Promise<void> {
    if (this.requests.length >= n) return Promise.resolve();
    return new Promise((resolve) => this.requestWaiters.push({ n, resolve }));
  }

  enqueue(...r: Script[]): void {
    this.queue.push(...r);
  }

  async maxContextTokens(): Promise<number> {
    return 8192;
  }

  private next(req: CompletionRequest): FakeReply {
    this.requests.push(structuredClone(req));
    const due = this.requestWaiters.filter((w) => this.requests.length >= w.n);
    this.requestWaiters = this.requestWaiters.filter((w) => this.requests.length < w.n);
    for (const w of due) w.resolve();
    const s = this.queue.shift() ?? this.fallback;
    this.calls++;
    return typeof s === 'function' ? s(req, this.calls) : s;
  }

  async chat(req: CompletionRequest, signal?: AbortSignal): Promise<CompletionResponse> {
    let final: CompletionResponse | undefined;
    for await (const ev of this.chatStream(req, signal)) if (ev.type === 'done') final = ev.response;
    return final!;
  }

  async *chatStream(req: CompletionRequest, signal?: AbortSignal): AsyncIterable<StreamEvent> {
    const r = this.next(req);
    const abortable = <T>(p: Promise<T>): Promise<T> =>
      new Promise<T>((resolve, reject) => {
        if (signal?.aborted) {
          this.aborted++;
          return reject(abortError());
        }
        const onAbort = () => {
          this.aborted++;
          reject(abortError());
        };
        signal?.addEventListener('abort', onAbort, { once: true });
        p.then(
          (v) => {
            signal?.removeEventListener('abort', onAbort);
            resolve(v);
          },
          (e: unknown) => {
            signal?.removeEventListener('abort', onAbort);
            reject(e);
          },
        );
      });
    if (r.error) throw r.error;
    const content = r.content ?? '';
    const pieces = r.pieces ?? (content ? content.split(/(?<= )/) : []);
    for (const p of pieces) {
      await abortable(new Promise<void>((res) => (r.delayMs ? setTimeout(res, r.delayMs) : setImmediate(res))));
      yield { type: 'content', text: p };
    }
    if (r.gate) await abortable(r.gate);
    await abortable(new Promise<void>((res) => setImmediate(res)));
    const tool_calls: ToolCall[] = (r.tool_calls ?? []).map((t, i) => ({ id: t.id ?? `call_${this.calls}_${i}`, type: 'function', function: { name: t.name, arguments: t.arguments } }));
    yield { type: 'done', response: { content, tool_calls, finish_reason: tool_calls.length ? 'tool_calls' : 'stop', source: 'fake', model: 'fake' } };
  }
}

function abortError(): Error {
  const e = new Error('aborted');
  e.name = 'AbortError';
  return e;
}

/** A promise with its resolver, for gates. */
export function deferred<T = void>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve!: (v: T) => void;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}
