/**
 * Open dictation through a Wyoming ASR service (faster-whisper speaks Wyoming
 * on port 10300). Event flow (rhasspy/wyoming README "Speech to Text"):
 * -> transcribe {language?, name?}, -> audio-start {rate, width, channels},
 * -> audio-chunk* (PCM payload), -> audio-stop, <- transcript {text}.
 * The connection opens when the utterance starts, so audio streams to the
 * service while the person speaks; services that stream partial results
 * (transcript-start / transcript-chunk / transcript-stop) are accepted too.
 */
import type { SttEngine, SttResult, SttSession } from './types.js';
import { WyomingConnection, type WyomingEndpoint } from '../wyoming/connection.js';
import { VoiceAbortError } from '../errors.js';
import { systemClock } from '../../kernel/clock.js';
import { SttAbortedError } from './errors.js';

/** Options of WyomingAsr. Times in ms. */
export interface WyomingAsrOptions extends WyomingEndpoint {
  /** ASR model name to ask for (`transcribe.name`), when the service has several. */
  model?: string;
  /** Default language (`transcribe.language`, e.g. 'en', 'zh'); start({language}) overrides it. */
  language?: string;
  /** How long to wait for the transcript after audio-stop, ms (default 15000). */
  transcriptTimeoutMs?: number;
  /** Sample rate of the PCM fed in, Hz (default 16000). */
  sampleRate?: number;
  /** Clock for finish_ms, ms (default the system clock's monotonic time). */
  now?: () => number;
}

/**
 * Normalise a dictation transcript to the SttResult convention: lower case,
 * outer whitespace trimmed, sentence punctuation removed (a '.' between
 * digits, as in 21.5, and apostrophes in words are kept).
 */
export function normaliseTranscript(text: string): string {
  return text
    .toLowerCase()
    .replace(/(?<!\d)[.](?!\d)|[.](?=\s|$)/g, ' ')
    .replace(/[,!?;:"“”«»()\[\]。，！？；：、…]/g, ' ')
    .replace(/\s+/g, ' ')
    .trim();
}

/**
 * SttEngine over a Wyoming ASR service. Errors (refused, timeout, service
 * `error`) reject `end()`; after `abort()` it rejects with SttAbortedError
 * (STT_ABORTED), as every SttEngine does.
 */
export class WyomingAsr implements SttEngine {
  readonly name = 'wyoming';
  constructor(private readonly opts: WyomingAsrOptions) {}

  start(opts?: { language?: string }): SttSession {
    const language = opts?.language ?? this.opts.language;
    const rate = this.opts.sampleRate ?? 16000;
    const now = this.opts.now ?? (() => systemClock.monotonic());
    const abort = new AbortController();
    let conn: WyomingConnection | undefined;
    const connecting = WyomingConnection.connect(this.opts, abort.signal).then((c) => {
      if (abort.signal.aborted) {
        c.close();
        throw new VoiceAbortError('Wyoming transcription');
      }
      conn = c;
      const transcribe: Record<string, unknown> = {};
      if (language) transcribe.language = language;
      if (this.opts.model) transcribe.name = this.opts.model;
      c.send({ type: 'transcribe', data: transcribe });
      c.send({ type: 'audio-start', data: { rate, width: 2, channels: 1, timestamp: 0 } });
      for (const p of backlog) sendChunk(c, p);
      backlog.length = 0;
      return c;
    });
    connecting.catch(() => undefined); // surfaced by end()
    const backlog: Buffer[] = [];
    let sentMs = 0;
    const sendChunk = (c: WyomingConnection, pcm: Buffer): void => {
      c.send({ type: 'audio-chunk', data: { rate, width: 2, channels: 1, timestamp: Math.round(sentMs) }, payload: pcm });
      sentMs += (pcm.length / 2 / rate) * 1000;
    };
    let ended = false;
    const timeoutMs = this.opts.transcriptTimeoutMs ?? 15000;
    /** Send audio-stop and wait for the transcript. */
    const finish = async (): Promise<SttResult> => {
      const c = await connecting;
      const t0 = now();
      try {
        c.send({ type: 'audio-stop', data: { timestamp: Math.round(sentMs) } });
        let partial = '';
        for (;;) {
          if (abort.signal.aborted) throw new VoiceAbortError('Wyoming transcription');
          const ev = await c.next(timeoutMs, 'transcript');
          if (ev.type === 'transcript-chunk' && typeof ev.data.text === 'string') partial += ev.data.text;
          if (ev.type !== 'transcript') continue;
          const raw = typeof ev.data.text === 'string' ? ev.data.text : partial;
          const text = normaliseTranscript(raw);
          const conf = typeof ev.data.confidence === 'number' ? ev.data.confidence : text ? 1 : 0;
          return { text, confidence: conf, rejected: text === '', engine: this.name, finish_ms: now() - t0 };
        }
      } finally {
        c.close();
      }
    };
    return {
      write: (pcm: Buffer): void => {
        if (ended || pcm.length === 0) return;
        if (conn) sendChunk(conn, pcm);
        else backlog.push(Buffer.from(pcm));
      },
      end: async (): Promise<SttResult> => {
        ended = true;
        try {
          return await finish();
        } catch (err) {
          // Whatever the closed connection made of it (refused, closed, aborted connect): an aborted utterance is STT_ABORTED.
          if (abort.signal.aborted) throw new SttAbortedError();
          throw err;
        }
      },
      abort: (): void => {
        ended = true;
        abort.abort();
        conn?.close();
      },
    };
  }
}
