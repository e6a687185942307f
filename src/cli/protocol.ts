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

/** Splits a byte stream into lines; decodes UTF-8 across chunk boundaries. */
export class LineSplitter {
  private buf = '';
  private readonly decoder = new TextDecoder('utf-8');
  constructor(private readonly maxLine = 64 * 1024 * 1024) {}
  /** Feed bytes; returns complete lines. Throws when a line exceeds maxLine bytes. */
  push(chunk: Buffer): string[] {
    this.buf += this.decoder.decode(chunk, { stream: true });
    const lines = this.buf.split('\n');
    this.buf = lines.pop() ?? '';
    if (this.buf.length > this.maxLine) throw new Error(`line longer than ${this.maxLine} bytes`);
    return lines.filter((l) => l.trim().length > 0);
  }
}
