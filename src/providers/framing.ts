/**
 * Byte framing of streamed LLM answers, the same for every protocol (issue 3
 * "Division of work"): network reads are split into lines on the byte 0x0A,
 * so a multi-byte UTF-8 character or a line split across reads is joined
 * before anything is decoded, and every line is handed on exactly once.
 *
 * - NDJSON (Ollama /api/chat): one JSON document per line; blank lines skipped.
 * - SSE (OpenAI /v1, text/event-stream, WHATWG "server-sent events"): `data:`
 *   lines of one event joined with "\n", dispatched on the blank line that
 *   ends the event; comments (`:`) and other fields ignored; `data: [DONE]`
 *   ends the stream.
 * Lines end in "\n" or "\r\n" (a lone "\r" is not treated as a line end).
 *
 * A line or SSE event longer than `maxFrameBytes` (default 1 MiB; a real
 * chunk is well under 1 KiB) is never held whole: its bytes are dropped as
 * they arrive and it becomes one `skipped` frame, so a server writing a
 * 20 MB line cannot grow memory by 20 MB (issue 14 "Limits").
 */

const LF = 0x0a;
const CR = 0x0d;
const EMPTY = new Uint8Array(0);

/** Default longest line or SSE event kept, bytes (1 MiB). */
export const MAX_FRAME_BYTES = 1024 * 1024;

/** What LineSplitter hands on: a line, or the mark of one too long to keep (its bytes were dropped). */
export type SplitLine = Uint8Array | typeof OVERSIZE;

/** The mark of a line longer than the limit. */
export const OVERSIZE: unique symbol = Symbol('oversize line');

/** Splits a byte stream into lines (without their "\n" / "\r\n"); a line over `maxBytes` becomes OVERSIZE. */
export class LineSplitter {
  private carry: Uint8Array = EMPTY;
  /** Inside a line already over the limit: bytes are dropped until its end. */
  private dropping = false;

  constructor(private readonly maxBytes = MAX_FRAME_BYTES) {}

  /** Feeds one network read; returns the lines it completed, in order. */
  push(chunk: Uint8Array): SplitLine[] {
    const out: SplitLine[] = [];
    let start = 0;
    if (this.dropping || this.carry.length) {
      const nl = chunk.indexOf(LF);
      if (nl < 0) {
        if (!this.dropping && this.carry.length + chunk.length > this.maxBytes) {
          this.dropping = true;
          this.carry = EMPTY;
        }
        if (!this.dropping) this.carry = concat(this.carry, chunk);
        return out;
      }
      if (this.dropping || this.carry.length + nl > this.maxBytes + 1) out.push(OVERSIZE);
      else out.push(trimCr(concat(this.carry, chunk.subarray(0, nl))));
      this.carry = EMPTY;
      this.dropping = false;
      start = nl + 1;
    }
    for (;;) {
      const nl = chunk.indexOf(LF, start);
      if (nl < 0) break;
      out.push(nl - start > this.maxBytes + 1 ? OVERSIZE : trimCr(chunk.subarray(start, nl)));
      start = nl + 1;
    }
    if (start < chunk.length) {
      if (chunk.length - start > this.maxBytes) this.dropping = true;
      else this.carry = chunk.slice(start);
    }
    return out;
  }

  /** The unterminated last line at end of stream, if any. */
  end(): SplitLine | null {
    const c = this.carry;
    const dropped = this.dropping;
    this.carry = EMPTY;
    this.dropping = false;
    if (dropped) return OVERSIZE;
    return c.length ? trimCr(c) : null;
  }

  /** Bytes held back waiting for a line end. */
  get pending(): number {
    return this.carry.length;
  }
}

function trimCr(line: Uint8Array): Uint8Array {
  return line.length && line[line.length - 1] === CR ? line.subarray(0, line.length - 1) : line;
}

function concat(a: Uint8Array, b: Uint8Array): Uint8Array {
  const out = new Uint8Array(a.length + b.length);
  out.set(a, 0);
  out.set(b, a.length);
  return out;
}

/** A framed payload: the bytes of one NDJSON line or one SSE event's data, the end marker, or a payload dropped for its size. */
export type Frame = { kind: 'data'; bytes: Uint8Array } | { kind: 'done' } | { kind: 'skipped'; reason: 'oversize' };

const SKIPPED: Frame = { kind: 'skipped', reason: 'oversize' };

/** Frames of one protocol family. */
export interface Framer {
  /** Feeds one network read. */
  push(chunk: Uint8Array): Frame[];
  /** End of stream: frames completed by it (an unterminated last line / event). */
  end(): Frame[];
}

/** NDJSON: every non-blank line is one frame. */
export class NdjsonFramer implements Framer {
  private readonly lines: LineSplitter;

  constructor(maxFrameBytes = MAX_FRAME_BYTES) {
    this.lines = new LineSplitter(maxFrameBytes);
  }

  push(chunk: Uint8Array): Frame[] {
    const out: Frame[] = [];
    for (const l of this.lines.push(chunk)) {
      if (l === OVERSIZE) out.push(SKIPPED);
      else if (!isBlank(l)) out.push({ kind: 'data', bytes: l });
    }
    return out;
  }

  end(): Frame[] {
    const l = this.lines.end();
    if (l === OVERSIZE) return [SKIPPED];
    return l && !isBlank(l) ? [{ kind: 'data', bytes: l }] : [];
  }
}

const DATA = [0x64, 0x61, 0x74, 0x61]; // "data"
const DONE = [0x5b, 0x44, 0x4f, 0x4e, 0x45, 0x5d]; // "[DONE]"

/** SSE: `data:` lines gathered per event; `[DONE]` becomes the done frame. */
export class SseFramer implements Framer {
  private readonly lines: LineSplitter;
  private data: Uint8Array[] = [];
  /** Bytes of `data` so far; past the limit the event is dropped. */
  private size = 0;
  private oversize = false;

  constructor(private readonly maxFrameBytes = MAX_FRAME_BYTES) {
    this.lines = new LineSplitter(maxFrameBytes);
  }

  push(chunk: Uint8Array): Frame[] {
    const out: Frame[] = [];
    for (const l of this.lines.push(chunk)) this.line(l, out);
    return out;
  }

  end(): Frame[] {
    const out: Frame[] = [];
    const l = this.lines.end();
    if (l) this.line(l, out);
    this.dispatch(out);
    return out;
  }

  private line(l: SplitLine, out: Frame[]): void {
    if (l === OVERSIZE) {
      this.drop();
      return;
    }
    if (l.length === 0) {
      this.dispatch(out);
      return;
    }
    if (l[0] === 0x3a) return; // ":" comment
    if (l.length >= 5 && l[0] === DATA[0] && l[1] === DATA[1] && l[2] === DATA[2] && l[3] === DATA[3] && l[4] === 0x3a) {
      const start = l.length > 5 && l[5] === 0x20 ? 6 : 5;
      this.add(l.subarray(start));
      return;
    }
    if (l.length === 4 && l[0] === DATA[0] && l[1] === DATA[1] && l[2] === DATA[2] && l[3] === DATA[3]) {
      this.add(EMPTY);
    }
    // other fields (event:, id:, retry:) and garbage are ignored, as the spec says
  }

  private add(part: Uint8Array): void {
    if (this.oversize) return;
    this.size += part.length + 1;
    if (this.size > this.maxFrameBytes) this.drop();
    else this.data.push(part);
  }

  /** The event being gathered is over the limit: its data is dropped and it dispatches as `skipped`. */
  private drop(): void {
    this.oversize = true;
    this.data = [];
    this.size = 0;
  }

  private dispatch(out: Frame[]): void {
    if (this.oversize) {
      this.oversize = false;
      out.push(SKIPPED);
      return;
    }
    if (!this.data.length) return;
    const parts = this.data;
    this.data = [];
    this.size = 0;
    let bytes: Uint8Array;
    if (parts.length === 1) bytes = parts[0]!;
    else {
      const total = parts.reduce((n, p) => n + p.length, 0) + parts.length - 1;
      bytes = new Uint8Array(total);
      let o = 0;
      parts.forEach((p, i) => {
        if (i) bytes[o++] = LF;
        bytes.set(p, o);
        o += p.length;
      });
    }
    if (isDone(bytes)) out.push({ kind: 'done' });
    else if (!isBlank(bytes)) out.push({ kind: 'data', bytes });
  }
}

function isDone(b: Uint8Array): boolean {
  let s = 0;
  let e = b.length;
  while (s < e && (b[s] === 0x20 || b[s] === 0x09)) s++;
  while (e > s && (b[e - 1] === 0x20 || b[e - 1] === 0x09)) e--;
  if (e - s !== DONE.length) return false;
  for (let i = 0; i < DONE.length; i++) if (b[s + i] !== DONE[i]) return false;
  return true;
}

function isBlank(b: Uint8Array): boolean {
  for (let i = 0; i < b.length; i++) {
    const c = b[i];
    if (c !== 0x20 && c !== 0x09 && c !== CR) return false;
  }
  return true;
}

/** The framer for an adapter's `stream_format` ('ndjson' or 'sse'); payloads over `maxFrameBytes` become `skipped` frames. */
export function createFramer(format: string, maxFrameBytes = MAX_FRAME_BYTES): Framer {
  return format === 'sse' ? new SseFramer(maxFrameBytes) : new NdjsonFramer(maxFrameBytes);
}
