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
 */

const LF = 0x0a;
const CR = 0x0d;
const EMPTY = new Uint8Array(0);

/** Splits a byte stream into lines (without their "\n" / "\r\n"). */
export class LineSplitter {
  private carry: Uint8Array = EMPTY;

  /** Feeds one network read; returns the lines it completed, in order. */
  push(chunk: Uint8Array): Uint8Array[] {
    const out: Uint8Array[] = [];
    let start = 0;
    let buf = chunk;
    if (this.carry.length) {
      const nl = chunk.indexOf(LF);
      if (nl < 0) {
        this.carry = concat(this.carry, chunk);
        return out;
      }
      out.push(trimCr(concat(this.carry, chunk.subarray(0, nl))));
      this.carry = EMPTY;
      start = nl + 1;
    }
    for (;;) {
      const nl = buf.indexOf(LF, start);
      if (nl < 0) break;
      out.push(trimCr(buf.subarray(start, nl)));
      start = nl + 1;
    }
    if (start < buf.length) this.carry = buf.slice(start);
    buf = EMPTY;
    return out;
  }

  /** The unterminated last line at end of stream, if any. */
  end(): Uint8Array | null {
    const c = this.carry;
    this.carry = EMPTY;
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

/** A framed payload: the bytes of one NDJSON line or one SSE event's data, or the end marker. */
export type Frame = { kind: 'data'; bytes: Uint8Array } | { kind: 'done' };

/** Frames of one protocol family. */
export interface Framer {
  /** Feeds one network read. */
  push(chunk: Uint8Array): Frame[];
  /** End of stream: frames completed by it (an unterminated last line / event). */
  end(): Frame[];
}

/** NDJSON: every non-blank line is one frame. */
export class NdjsonFramer implements Framer {
  private readonly lines = new LineSplitter();

  push(chunk: Uint8Array): Frame[] {
    const out: Frame[] = [];
    for (const l of this.lines.push(chunk)) if (!isBlank(l)) out.push({ kind: 'data', bytes: l });
    return out;
  }

  end(): Frame[] {
    const l = this.lines.end();
    return l && !isBlank(l) ? [{ kind: 'data', bytes: l }] : [];
  }
}

const DATA = [0x64, 0x61, 0x74, 0x61]; // "data"
const DONE = [0x5b, 0x44, 0x4f, 0x4e, 0x45, 0x5d]; // "[DONE]"

/** SSE: `data:` lines gathered per event; `[DONE]` becomes the done frame. */
export class SseFramer implements Framer {
  private readonly lines = new LineSplitter();
  private data: Uint8Array[] = [];

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

  private line(l: Uint8Array, out: Frame[]): void {
    if (l.length === 0) {
      this.dispatch(out);
      return;
    }
    if (l[0] === 0x3a) return; // ":" comment
    if (l.length >= 5 && l[0] === DATA[0] && l[1] === DATA[1] && l[2] === DATA[2] && l[3] === DATA[3] && l[4] === 0x3a) {
      const start = l.length > 5 && l[5] === 0x20 ? 6 : 5;
      this.data.push(l.subarray(start));
      return;
    }
    if (l.length === 4 && l[0] === DATA[0] && l[1] === DATA[1] && l[2] === DATA[2] && l[3] === DATA[3]) {
      this.data.push(EMPTY);
    }
    // other fields (event:, id:, retry:) and garbage are ignored, as the spec says
  }

  private dispatch(out: Frame[]): void {
    if (!this.data.length) return;
    const parts = this.data;
    this.data = [];
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

/** The framer for an adapter's `stream_format` ('ndjson' or 'sse'). */
export function createFramer(format: string): Framer {
  return format === 'sse' ? new SseFramer() : new NdjsonFramer();
}
