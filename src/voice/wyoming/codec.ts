/**
 * Wyoming protocol framing (rhasspy/wyoming README "Format", event.py):
 *
 *   {"type": "...", "data": {...}, "data_length": N, "payload_length": M}\n
 *   <N bytes of UTF-8 JSON, merged on top of the header's data>
 *   <M bytes of binary payload, usually PCM>
 *
 * The encoder writes like the Python reference: `version` in the header,
 * data in the separate data section, payload last. The decoder accepts both
 * inline `data` and the data section, and any split of the byte stream.
 */
import { WyomingProtocolError } from '../errors.js';
import { parseJson } from '../../kernel/json.js';

/** One Wyoming event. `data` is the merged JSON object; `payload` the binary part, when any. */
export interface WyomingEvent {
  type: string;
  data: Record<string, unknown>;
  payload?: Buffer;
}

/** Protocol version written into headers (the Python library writes its own version; servers ignore it). */
export const WYOMING_VERSION = '1.5.4';

/** Longest accepted header line, bytes; a peer that sends more without a newline is not speaking Wyoming. */
export const MAX_HEADER_BYTES = 64 * 1024;
/** Largest accepted data section or payload, bytes (16 MiB; audio chunks are a few KiB). */
export const MAX_SECTION_BYTES = 16 * 1024 * 1024;

/** Encode one event as header line + data section + payload. */
export function encodeEvent(event: { type: string; data?: Record<string, unknown>; payload?: Buffer }): Buffer {
  const header: Record<string, unknown> = { type: event.type, version: WYOMING_VERSION };
  let dataBytes: Buffer | undefined;
  if (event.data && Object.keys(event.data).length > 0) {
    dataBytes = Buffer.from(JSON.stringify(event.data), 'utf8');
    header.data_length = dataBytes.length;
  }
  if (event.payload && event.payload.length > 0) header.payload_length = event.payload.length;
  const parts: Buffer[] = [Buffer.from(JSON.stringify(header) + '\n', 'utf8')];
  if (dataBytes) parts.push(dataBytes);
  if (event.payload && event.payload.length > 0) parts.push(event.payload);
  return Buffer.concat(parts);
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function length(header: Record<string, unknown>, key: string): number {
  const v = header[key];
  if (v === undefined || v === null) return 0;
  if (typeof v !== 'number' || !Number.isInteger(v) || v < 0) {
    throw new WyomingProtocolError(`${key} must be a non-negative integer, got ${JSON.stringify(v)}`);
  }
  if (v > MAX_SECTION_BYTES) throw new WyomingProtocolError(`${key} ${v} exceeds ${MAX_SECTION_BYTES} bytes`);
  return v;
}

/**
 * Incremental decoder: `push` bytes as they arrive (any split), get back the
 * events completed so far. After an error the decoder is unusable.
 * @throws WyomingProtocolError on a header that is not a JSON object with a
 * string `type`, bad lengths, a data section that is not a JSON object, or a
 * header line longer than MAX_HEADER_BYTES.
 */
export class WyomingDecoder {
  private buf: Buffer = Buffer.alloc(0);
  private pending: { type: string; data: Record<string, unknown>; dataLength: number; payloadLength: number } | undefined;

  /** Feed bytes; returns the events completed by them, in order. */
  push(chunk: Buffer): WyomingEvent[] {
    this.buf = this.buf.length === 0 ? chunk : Buffer.concat([this.buf, chunk]);
    const out: WyomingEvent[] = [];
    for (;;) {
      if (!this.pending) {
        const nl = this.buf.indexOf(0x0a);
        if (nl < 0) {
          if (this.buf.length > MAX_HEADER_BYTES) throw new WyomingProtocolError(`header line longer than ${MAX_HEADER_BYTES} bytes`);
          return out;
        }
        const line = this.buf.subarray(0, nl).toString('utf8').trim();
        this.buf = this.buf.subarray(nl + 1);
        if (line === '') continue;
        let header: unknown;
        try {
          header = parseJson(line);
        } catch (err) {
          throw new WyomingProtocolError(`header is not JSON: ${line.slice(0, 80)}`, { cause: err });
        }
        if (!isObject(header) || typeof header.type !== 'string' || header.type === '') {
          throw new WyomingProtocolError(`header has no string "type": ${line.slice(0, 80)}`);
        }
        const data = header.data === undefined || header.data === null ? {} : header.data;
        if (!isObject(data)) throw new WyomingProtocolError(`"data" of ${header.type} is not an object`);
        this.pending = {
          type: header.type,
          data: { ...data },
          dataLength: length(header, 'data_length'),
          payloadLength: length(header, 'payload_length'),
        };
      }
      const p = this.pending;
      if (this.buf.length < p.dataLength + p.payloadLength) return out;
      if (p.dataLength > 0) {
        let extra: unknown;
        try {
          extra = parseJson(this.buf.subarray(0, p.dataLength).toString('utf8'));
        } catch (err) {
          throw new WyomingProtocolError(`data section of ${p.type} is not JSON`, { cause: err });
        }
        if (!isObject(extra)) throw new WyomingProtocolError(`data section of ${p.type} is not a JSON object`);
        Object.assign(p.data, extra);
      }
      const ev: WyomingEvent = { type: p.type, data: p.data };
      if (p.payloadLength > 0) ev.payload = Buffer.from(this.buf.subarray(p.dataLength, p.dataLength + p.payloadLength));
      this.buf = this.buf.subarray(p.dataLength + p.payloadLength);
      this.pending = undefined;
      out.push(ev);
    }
  }

  /** True when a frame has started but not completed (the peer closed mid-frame). */
  get partial(): boolean {
    return this.pending !== undefined || this.buf.length > 0;
  }
}

/** Audio format fields of audio-start / audio-chunk (README "Audio"): rate Hz, width bytes, channels. */
export interface AudioFormat {
  rate: number;
  width: number;
  channels: number;
}

/** Read rate/width/channels from an audio event's data. @throws WyomingProtocolError when missing or not positive integers. */
export function audioFormatOf(ev: WyomingEvent): AudioFormat {
  const get = (k: string): number => {
    const v = ev.data[k];
    if (typeof v !== 'number' || !Number.isInteger(v) || v <= 0) {
      throw new WyomingProtocolError(`${ev.type} needs a positive integer "${k}", got ${JSON.stringify(v)}`);
    }
    return v;
  };
  return { rate: get('rate'), width: get('width'), channels: get('channels') };
}
