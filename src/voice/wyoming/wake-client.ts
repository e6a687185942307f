/**
 * Wyoming wake-word client (openWakeWord and microWakeWord speak Wyoming on
 * port 10400; Home Assistant's add-ons run them).
 * Event flow (rhasspy/wyoming README "Wake Word Detection"):
 * -> detect {names?}, -> audio-start, -> audio-chunk* ... <- detection {name, timestamp}
 * (one per detection, the stream goes on), -> audio-stop, <- not-detected.
 *
 * The box stays woken by voice when the service restarts (an add-on update,
 * a reboot of the machine it runs on): a session that loses its connection
 * reconnects by itself, after 1 s, then 2, 4 ... up to 30 s between
 * attempts, and says so once per outage (`onStatus`, the log). Audio spoken
 * while it reconnects is kept for the last second only, so a wake word said
 * just before the connection came back is still heard.
 */
import type { Logger } from '../../kernel/log-types.js';
import { errorMessage } from '../../kernel/errors.js';
import { systemClock, type Clock, type TimerHandle } from '../../kernel/clock.js';
import { WyomingConnection, type WyomingEndpoint } from './connection.js';

/** One detection: the wake word's name and the audio timestamp, ms, when the service sent one. */
export interface WakeDetection {
  name: string;
  timestamp?: number;
}

/**
 * The connection to the wake service, as `status` and the logs show it:
 * `connected` (detect sent, audio flowing), `connecting` (first attempt or a
 * reconnect in progress), `waiting` (the last attempt failed; the next one is
 * due in `retry_ms`), `closed` (the session ended). `error`: why the last
 * connection was lost or refused.
 */
export interface WakeStatus {
  state: 'connecting' | 'connected' | 'waiting' | 'closed';
  error?: string;
  /** Delay before the next attempt, ms (state `waiting`). */
  retry_ms?: number;
  /** Connections made so far in this session (1 after the first; more after reconnects). */
  connections: number;
}

/** Callbacks of a wake session. */
export interface WakeHandlers {
  onDetection(d: WakeDetection): void;
  /**
   * The session failed and is closed (connection lost, bad frame, service
   * error) and will not reconnect: only a detector made with `reconnect:
   * false` calls it; a reconnecting one reports `onStatus` instead.
   */
  onError(err: Error): void;
  /** The connection's state changed (see WakeStatus). */
  onStatus?(s: WakeStatus): void;
}

/** A running detection over a continuous audio stream. */
export interface WakeSession {
  /** Feed PCM (16 kHz mono s16le). */
  write(pcm: Buffer): void;
  /** Send audio-stop and close; no reconnect after this. */
  close(): void;
}

/** What the pipeline needs from a wake-word service (structural; WyomingWake satisfies it). */
export interface WakeWordDetector {
  start(handlers: WakeHandlers): WakeSession;
}

/** Options of WyomingWake. Times in ms. */
export interface WyomingWakeOptions extends WyomingEndpoint {
  /** Wake words to listen for (`detect.names`, e.g. ['ok_nabu']); all the service has when unset. */
  names?: string[];
  /** Sample rate of the PCM, Hz (default 16000). */
  sampleRate?: number;
  /** Reconnect by itself when the connection is lost or refused (default true); false: `onError` ends the session. */
  reconnect?: boolean;
  /** First wait before reconnecting (default 1000); doubled after each failed attempt. */
  minRetryMs?: number;
  /** Longest wait between attempts (default 30000). */
  maxRetryMs?: number;
  /** Clock of the reconnect timers (tests: FakeClock). */
  clock?: Clock;
  /** Connection changes are logged here (one warning per outage, one line when connected again). */
  log?: Logger;
}

/** Wake-word detection through a Wyoming service. */
export class WyomingWake implements WakeWordDetector {
  private current: WakeStatus = { state: 'closed', connections: 0 };
  private readonly listeners = new Set<(s: WakeStatus) => void>();

  constructor(private readonly opts: WyomingWakeOptions) {}

  /** Where the service is (`host:port`). */
  get endpoint(): string {
    return `${this.opts.host}:${this.opts.port}`;
  }

  /** The newest session's connection state (`closed` before the first start). */
  get status(): WakeStatus {
    return { ...this.current };
  }

  /** Call `fn` on every connection change of any session; returns an unsubscribe function. */
  onStatus(fn: (s: WakeStatus) => void): () => void {
    this.listeners.add(fn);
    return () => this.listeners.delete(fn);
  }

  start(handlers: WakeHandlers): WakeSession {
    const o = this.opts;
    const rate = o.sampleRate ?? 16000;
    const clock = o.clock ?? systemClock;
    const reconnect = o.reconnect ?? true;
    const minRetry = o.minRetryMs ?? 1000;
    const maxRetry = Math.max(minRetry, o.maxRetryMs ?? 30000);
    let conn: WyomingConnection | undefined;
    let closed = false;
    let sentMs = 0;
    let failures = 0;
    let connections = 0;
    let retry: TimerHandle | undefined;
    let outage = false;
    const backlog: Buffer[] = [];
    const report = (s: Omit<WakeStatus, 'connections'>): void => {
      const full: WakeStatus = { ...s, connections };
      this.current = full;
      handlers.onStatus?.({ ...full });
      for (const l of this.listeners) l({ ...full });
    };
    const send = (c: WyomingConnection, pcm: Buffer): void => {
      c.send({ type: 'audio-chunk', data: { rate, width: 2, channels: 1, timestamp: Math.round(sentMs) }, payload: pcm });
      sentMs += (pcm.length / 2 / rate) * 1000;
    };
    const lost = (c: WyomingConnection | undefined, err: unknown): void => {
      if (closed || c !== conn) return;
      conn = undefined;
      c?.close();
      const error = err instanceof Error ? err : new Error(String(err));
      if (!reconnect) {
        closed = true;
        report({ state: 'closed', error: error.message });
        handlers.onError(error);
        return;
      }
      const delay = Math.min(maxRetry, minRetry * 2 ** Math.min(failures, 16));
      failures++;
      if (!outage) o.log?.warn({ err: errorMessage(error), service: this.endpoint, retry_ms: delay }, 'wake-word service unreachable; reconnecting by itself');
      else o.log?.debug({ err: errorMessage(error), retry_ms: delay }, 'wake-word service still unreachable');
      outage = true;
      report({ state: 'waiting', error: error.message, retry_ms: delay });
      retry = clock.setTimeout(connect, delay, { keepAlive: false });
    };
    const connect = (): void => {
      retry = undefined;
      if (closed) return;
      report({ state: 'connecting' });
      WyomingConnection.connect(o).then(
        async (c) => {
          if (closed) return c.close();
          conn = c;
          sentMs = 0;
          failures = 0;
          connections++;
          c.send({ type: 'detect', data: o.names ? { names: o.names } : {} });
          c.send({ type: 'audio-start', data: { rate, width: 2, channels: 1, timestamp: 0 } });
          for (const p of backlog) send(c, p);
          backlog.length = 0;
          if (outage) o.log?.info({ service: this.endpoint }, 'wake-word service connected again');
          outage = false;
          report({ state: 'connected' });
          try {
            for (;;) {
              const ev = await c.next(Infinity, 'detection');
              if (ev.type === 'detection') {
                const name = typeof ev.data.name === 'string' ? ev.data.name : 'wake';
                const ts = typeof ev.data.timestamp === 'number' ? ev.data.timestamp : undefined;
                handlers.onDetection(ts === undefined ? { name } : { name, timestamp: ts });
              }
            }
          } catch (err) {
            lost(c, err);
          }
        },
        (err: unknown) => lost(undefined, err),
      );
    };
    connect();
    return {
      write: (pcm: Buffer): void => {
        if (closed || pcm.length === 0) return;
        if (conn) send(conn, pcm);
        else {
          // while (re)connecting, keep only the last ~1 s of audio
          backlog.push(Buffer.from(pcm));
          let total = backlog.reduce((n, b) => n + b.length, 0);
          while (total > rate * 2 && backlog.length > 1) total -= backlog.shift()!.length;
        }
      },
      close: (): void => {
        if (closed) return;
        closed = true;
        clock.clearTimeout(retry);
        retry = undefined;
        conn?.send({ type: 'audio-stop', data: { timestamp: Math.round(sentMs) } });
        conn?.close();
        conn = undefined;
        report({ state: 'closed' });
      },
    };
  }
}
