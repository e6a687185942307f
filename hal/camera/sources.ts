/**
 * Snapshot sources: a file path, an HTTP snapshot URL on the LAN (e.g.
 * http://cam.local/snapshot.jpg; user:pass in the URL becomes Basic auth,
 * since fetch refuses credentials in URLs), an MQTT camera topic (Frigate,
 * zigbee2mqtt-style; we take a subscribe function from the MQTT plugin rather
 * than opening a client), and a simulated test pattern.
 */
import { readFile } from 'node:fs/promises';
import { systemClock } from '../../src/kernel/clock.js';
import { CameraError, testPattern } from './image.js';

/** Where images come from. `snapshot` returns the raw bytes (any image format). */
export interface SnapshotSource {
  readonly kind: 'file' | 'http' | 'mqtt' | 'sim';
  /** Human-readable origin (path, URL without credentials, topic). */
  readonly origin: string;
  /** Rejects with CameraError: ENOENT, CAMERA_HTTP_STATUS, CAMERA_UNREACHABLE, CAMERA_TIMEOUT, CAMERA_TOO_LARGE. */
  snapshot(signal?: AbortSignal): Promise<Buffer>;
  close(): void;
}

/** Reads an image file on each snapshot (e.g. one a camera daemon keeps overwriting). */
export class FileSnapshotSource implements SnapshotSource {
  readonly kind = 'file' as const;
  constructor(readonly origin: string) {}
  async snapshot(): Promise<Buffer> {
    try {
      return await readFile(this.origin);
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code === 'ENOENT' ? 'ENOENT' : 'CAMERA_UNREACHABLE';
      throw new CameraError(code, `cannot read snapshot file ${this.origin}: ${(err as Error).message}`, { cause: err });
    }
  }
  close(): void {}
}

/** The fetch function shape we need (global fetch by default; injectable). */
export type FetchFn = (url: string, init: { signal: AbortSignal; headers: Record<string, string> }) => Promise<Response>;

/** Options: snapshot URL, timeout (ms, default 5000), size cap (bytes, default 20 MB), fetch. */
export interface HttpSourceOptions {
  url: string;
  timeoutMs?: number;
  maxBytes?: number;
  fetch?: FetchFn;
}

/** GETs a snapshot URL. */
export class HttpSnapshotSource implements SnapshotSource {
  readonly kind = 'http' as const;
  readonly origin: string;
  private readonly url: string;
  private readonly headers: Record<string, string> = {};

  constructor(private readonly opts: HttpSourceOptions) {
    let u: URL;
    try {
      u = new URL(opts.url);
    } catch {
      throw new CameraError('CAMERA_BAD_CONFIG', `camera URL "${opts.url}" is not a valid URL`);
    }
    if (u.protocol !== 'http:' && u.protocol !== 'https:') throw new CameraError('CAMERA_BAD_CONFIG', `camera URL must be http(s), got ${u.protocol}`);
    if (u.username || u.password) {
      this.headers.authorization = `Basic ${Buffer.from(`${decodeURIComponent(u.username)}:${decodeURIComponent(u.password)}`).toString('base64')}`;
      u.username = '';
      u.password = '';
    }
    this.url = u.toString();
    this.origin = this.url;
  }

  async snapshot(signal?: AbortSignal): Promise<Buffer> {
    const timeoutMs = this.opts.timeoutMs ?? 5000;
    const timeout = AbortSignal.timeout(timeoutMs);
    const all = signal ? AbortSignal.any([signal, timeout]) : timeout;
    const doFetch: FetchFn = this.opts.fetch ?? ((url, init) => fetch(url, init));
    let res: Response;
    try {
      res = await doFetch(this.url, { signal: all, headers: { accept: 'image/*', ...this.headers } });
    } catch (err) {
      if (timeout.aborted) throw new CameraError('CAMERA_TIMEOUT', `camera ${this.origin} did not answer within ${timeoutMs} ms`, { cause: err });
      throw new CameraError('CAMERA_UNREACHABLE', `camera ${this.origin} is unreachable: ${(err as Error).message}`, { cause: err });
    }
    if (!res.ok) {
      await res.body?.cancel().catch(() => undefined);
      throw new CameraError('CAMERA_HTTP_STATUS', `camera ${this.origin} answered HTTP ${res.status}${res.status === 401 ? ' (check the user and password in the URL)' : ''}`);
    }
    const max = this.opts.maxBytes ?? 20 * 1024 * 1024;
    const declared = Number(res.headers.get('content-length') ?? '0');
    if (declared > max) {
      await res.body?.cancel().catch(() => undefined);
      throw new CameraError('CAMERA_TOO_LARGE', `camera ${this.origin} sent ${declared} bytes, more than ${max}`);
    }
    try {
      const buf = Buffer.from(await res.arrayBuffer());
      if (buf.length > max) throw new CameraError('CAMERA_TOO_LARGE', `camera ${this.origin} sent ${buf.length} bytes, more than ${max}`);
      return buf;
    } catch (err) {
      if (err instanceof CameraError) throw err;
      if (timeout.aborted) throw new CameraError('CAMERA_TIMEOUT', `camera ${this.origin} did not finish sending within ${timeoutMs} ms`, { cause: err });
      throw new CameraError('CAMERA_UNREACHABLE', `reading from camera ${this.origin} failed: ${(err as Error).message}`, { cause: err });
    }
  }

  close(): void {}
}

/**
 * Subscribe to an MQTT topic; `onMessage` gets each payload; returns an
 * unsubscribe function. The MQTT plugin provides it (we never open a client).
 */
export type MqttSubscribe = (topic: string, onMessage: (payload: Buffer) => void) => (() => void) | Promise<() => void>;

/** Options: topic, subscribe function, wait for a frame (ms, default 10000), reuse a frame younger than `maxAgeMs` (default 2000). */
export interface MqttSourceOptions {
  topic: string;
  subscribe: MqttSubscribe;
  timeoutMs?: number;
  maxAgeMs?: number;
  now?: () => number;
}

/** Turn an MQTT camera payload into image bytes: raw JPEG/PNG, or base64 (optionally a data: URL). */
export function decodeMqttImage(payload: Buffer): Buffer {
  const isJpeg = payload[0] === 0xff && payload[1] === 0xd8;
  const isPng = payload.subarray(0, 4).toString('latin1') === '\x89PNG';
  if (isJpeg || isPng) return payload;
  const text = payload.toString('latin1').trim();
  const b64 = text.replace(/^data:image\/[\w.+-]+;base64,/, '');
  if (/^[A-Za-z0-9+/=\r\n]+$/.test(b64) && b64.length >= 8) return Buffer.from(b64, 'base64');
  return payload;
}

/** Latest frame of an MQTT camera topic. */
export class MqttSnapshotSource implements SnapshotSource {
  readonly kind = 'mqtt' as const;
  readonly origin: string;
  private latest: { at: number; image: Buffer } | undefined;
  private waiters = new Set<(img: Buffer) => void>();
  private unsubscribe: (() => void) | undefined;
  private subscribing: Promise<void> | undefined;
  private readonly now: () => number;

  constructor(private readonly opts: MqttSourceOptions) {
    if (!opts.topic) throw new CameraError('CAMERA_BAD_CONFIG', 'no MQTT camera topic configured');
    this.origin = `mqtt:${opts.topic}`;
    this.now = opts.now ?? (() => systemClock.monotonic());
  }

  private ensureSubscribed(): Promise<void> {
    this.subscribing ??= Promise.resolve(
      this.opts.subscribe(this.opts.topic, (payload) => {
        const image = decodeMqttImage(payload);
        this.latest = { at: this.now(), image };
        const ws = [...this.waiters];
        this.waiters.clear();
        for (const w of ws) w(image);
      }),
    ).then((unsub) => {
      this.unsubscribe = unsub;
    });
    return this.subscribing;
  }

  async snapshot(signal?: AbortSignal): Promise<Buffer> {
    await this.ensureSubscribed();
    const maxAge = this.opts.maxAgeMs ?? 2000;
    if (this.latest && this.now() - this.latest.at <= maxAge) return this.latest.image;
    const timeoutMs = this.opts.timeoutMs ?? 10_000;
    return new Promise<Buffer>((resolve, reject) => {
      const done = (img: Buffer) => {
        clearTimeout(t);
        signal?.removeEventListener('abort', onAbort);
        resolve(img);
      };
      const onAbort = () => {
        clearTimeout(t);
        this.waiters.delete(done);
        reject(new CameraError('CAMERA_TIMEOUT', `snapshot from ${this.origin} was cancelled`));
      };
      const t = setTimeout(() => {
        this.waiters.delete(done);
        signal?.removeEventListener('abort', onAbort);
        reject(new CameraError('CAMERA_TIMEOUT', `no image on ${this.origin} within ${timeoutMs} ms`));
      }, timeoutMs);
      signal?.addEventListener('abort', onAbort, { once: true });
      this.waiters.add(done);
    });
  }

  close(): void {
    this.unsubscribe?.();
    this.unsubscribe = undefined;
    this.subscribing = undefined;
  }
}

/** A simulated camera: a fresh test pattern on each snapshot. */
export class SimSnapshotSource implements SnapshotSource {
  readonly kind = 'sim' as const;
  readonly origin = 'sim:test-pattern';
  private seq = 0;
  snapshot(): Promise<Buffer> {
    return testPattern(this.seq++);
  }
  close(): void {}
}
