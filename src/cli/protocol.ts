/**
 * The maintenance socket protocol between `homeagent <command>` and the
 * running service: NDJSON over a Unix socket. The client sends one request
 * line; the service answers with zero or more `data` lines and then exactly
 * one `end` or `error` line for that id. Binary payloads (WAV files for
 * `listen`) travel base64-encoded inside the request, so the service never
 * opens a path given by the caller.
 */

/** Client -> service. */
export interface ControlRequest {
  id: number;
  cmd: string;
  args: Record<string, unknown>;
}

/** Service -> client. */
export type ControlResponse =
  | { id: number; type: 'data'; data: unknown }
  | { id: number; type: 'end'; result: unknown }
  | { id: number; type: 'error'; error: string; code: string };

/** Largest request line the service accepts, bytes (a WAV of ~20 MB in base64). */
export const MAX_REQUEST_BYTES = 32 * 1024 * 1024;

/**
 * Splits a byte stream into lines. Linear in the input (only new bytes are
 * searched for a newline); a line longer than `maxLine` bytes throws
 * REQUEST_TOO_LARGE as soon as it is known, without buffering the rest.
 */
export class LineSplitter {
  private parts: Buffer[] = [];
  private size = 0;
  constructor(private readonly maxLine = MAX_REQUEST_BYTES) {}
  /** Feed bytes; returns complete lines. */
  push(chunk: Buffer): string[] {
    const out: string[] = [];
    let start = 0;
    for (;;) {
      const nl = chunk.indexOf(10, start);
      if (nl < 0) break;
      const piece = chunk.subarray(start, nl);
      const line = this.parts.length ? Buffer.concat([...this.parts, piece]).toString('utf8') : piece.toString('utf8');
      this.parts = [];
      this.size = 0;
      if (line.trim()) out.push(line);
      start = nl + 1;
    }
    if (start < chunk.length) {
      this.size += chunk.length - start;
      if (this.size > this.maxLine) {
        this.parts = [];
        this.size = 0;
        throw new Error(`request larger than ${Math.round(this.maxLine / 1048576)} MB`);
      }
      this.parts.push(Buffer.from(chunk.subarray(start)));
    }
    return out;
  }
}
