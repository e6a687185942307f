/**
 * Wyoming wake-word client (openWakeWord speaks Wyoming on port 10400).
 * Event flow (rhasspy/wyoming README "Wake Word Detection"):
 * -> detect {names?}, -> audio-start, -> audio-chunk* ... <- detection {name, timestamp}
 * (one per detection, the stream goes on), -> audio-stop, <- not-detected.
 */
import { WyomingConnection, type WyomingEndpoint } from './connection.js';

/** One detection: the wake word's name and the audio timestamp, ms, when the service sent one. */
export interface WakeDetection {
  name: string;
  timestamp?: number;
}

/** Callbacks of a wake session. */
export interface WakeHandlers {
  onDetection(d: WakeDetection): void;
  /** The session failed (connection lost, bad frame, service error); it is closed. */
  onError(err: Error): void;
}

/** A running detection over a continuous audio stream. */
export interface WakeSession {
  /** Feed PCM (16 kHz mono s16le). */
  write(pcm: Buffer): void;
  /** Send audio-stop and close. */
  close(): void;
}

/** What the pipeline needs from a wake-word service (structural; WyomingWake satisfies it). */
export interface WakeWordDetector {
  start(handlers: WakeHandlers): WakeSession;
}

/** Options of WyomingWake. */
export interface WyomingWakeOptions extends WyomingEndpoint {
  /** Wake words to listen for (`detect.names`, e.g. ['ok_nabu']); all the service has when unset. */
  names?: string[];
  /** Sample rate of the PCM, Hz (default 16000). */
  sampleRate?: number;
}

/** Wake-word detection through a Wyoming service. */
export class WyomingWake implements WakeWordDetector {
  constructor(private readonly opts: WyomingWakeOptions) {}

  start(handlers: WakeHandlers): WakeSession {
    const rate = this.opts.sampleRate ?? 16000;
    let conn: WyomingConnection | undefined;
    let closed = false;
    let sentMs = 0;
    const backlog: Buffer[] = [];
    const send = (c: WyomingConnection, pcm: Buffer): void => {
      c.send({ type: 'audio-chunk', data: { rate, width: 2, channels: 1, timestamp: Math.round(sentMs) }, payload: pcm });
      sentMs += (pcm.length / 2 / rate) * 1000;
    };
    const fail = (err: unknown): void => {
      if (closed) return;
      closed = true;
      conn?.close();
      handlers.onError(err instanceof Error ? err : new Error(String(err)));
    };
    WyomingConnection.connect(this.opts)
      .then(async (c) => {
        if (closed) return c.close();
        conn = c;
        c.send({ type: 'detect', data: this.opts.names ? { names: this.opts.names } : {} });
        c.send({ type: 'audio-start', data: { rate, width: 2, channels: 1, timestamp: 0 } });
        for (const p of backlog) send(c, p);
        backlog.length = 0;
        for (;;) {
          const ev = await c.next(Infinity, 'detection');
          if (ev.type === 'detection') {
            const name = typeof ev.data.name === 'string' ? ev.data.name : 'wake';
            const ts = typeof ev.data.timestamp === 'number' ? ev.data.timestamp : undefined;
            handlers.onDetection(ts === undefined ? { name } : { name, timestamp: ts });
          }
        }
      })
      .catch(fail);
    return {
      write: (pcm: Buffer): void => {
        if (closed || pcm.length === 0) return;
        if (conn) send(conn, pcm);
        else {
          // while connecting, keep only the last ~1 s of audio
          backlog.push(Buffer.from(pcm));
          let total = backlog.reduce((n, b) => n + b.length, 0);
          while (total > rate * 2 && backlog.length > 1) total -= backlog.shift()!.length;
        }
      },
      close: (): void => {
        if (closed) return;
        closed = true;
        conn?.send({ type: 'audio-stop', data: { timestamp: Math.round(sentMs) } });
        conn?.close();
      },
    };
  }
}
