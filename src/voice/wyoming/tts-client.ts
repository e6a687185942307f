/**
 * Wyoming TTS client (piper speaks Wyoming on port 10200). Event flows
 * (rhasspy/wyoming README "Text to Speech", tts.py):
 * - one-shot: -> synthesize {text, voice?} ; <- audio-start, audio-chunk*, audio-stop
 * - streaming: -> synthesize-start {voice?}, synthesize-chunk {text}*, synthesize-stop ;
 *   <- (audio-start, audio-chunk*, audio-stop) per sentence the service cut, then synthesize-stopped
 */
import type { TtsAudio, TtsEngine, TtsOptions } from '../tts/types.js';
import { TtsError, VoiceAbortError } from '../errors.js';
import { audioFormatOf, type AudioFormat } from './codec.js';
import { WyomingConnection, type WyomingEndpoint } from './connection.js';
import { toMono } from '../../../hal/common/pcm.js';

/** Options of WyomingTts. Times in ms. */
export interface WyomingTtsOptions extends WyomingEndpoint {
  /** Voice name (`synthesize.voice.name`), e.g. 'en_US-lessac-medium'; else the language is sent. */
  voice?: string;
  /** Speaker of a multi-speaker voice (`voice.speaker`). */
  speaker?: string;
  /** Longest wait between two events from the service, ms (default 10000). */
  eventTimeoutMs?: number;
}

function voiceField(opts: WyomingTtsOptions, call: TtsOptions): Record<string, unknown> | undefined {
  const name = call.voice ?? opts.voice;
  if (name) return opts.speaker ? { name, speaker: opts.speaker } : { name };
  if (call.language) return { language: call.language };
  return undefined;
}

function toAudio(chunks: Buffer[], fmt: AudioFormat | undefined): TtsAudio {
  if (!fmt) throw new TtsError('wyoming', 'audio-stop without audio-start');
  if (fmt.width !== 2) throw new TtsError('wyoming', `sample width ${fmt.width} bytes is not supported (need 2)`);
  return { pcm: toMono(Buffer.concat(chunks), fmt.channels), sampleRate: fmt.rate };
}

/** TtsEngine over a Wyoming TTS service, with the streaming events as `synthesizeStream`. */
export class WyomingTts implements TtsEngine {
  readonly name = 'wyoming';
  constructor(private readonly opts: WyomingTtsOptions) {}

  /**
   * One-shot synthesis.
   * @throws WyomingConnectError, TimeoutError, WyomingServiceError, WyomingProtocolError, TtsError, VoiceAbortError.
   */
  async synthesize(text: string, call: TtsOptions = {}): Promise<TtsAudio> {
    const conn = await WyomingConnection.connect(this.opts, call.signal);
    const onAbort = (): void => conn.close();
    call.signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const data: Record<string, unknown> = { text };
      const voice = voiceField(this.opts, call);
      if (voice) data.voice = voice;
      conn.send({ type: 'synthesize', data });
      const out: TtsAudio[] = [];
      for await (const a of this.readSegments(conn, false, call.signal)) out.push(a);
      if (out.length === 0) throw new TtsError(this.name, 'service sent no audio');
      return { pcm: Buffer.concat(out.map((a) => a.pcm)), sampleRate: out[0]!.sampleRate };
    } finally {
      call.signal?.removeEventListener('abort', onAbort);
      conn.close();
    }
  }

  /**
   * Streaming synthesis: text chunks (LLM tokens) go out as synthesize-chunk
   * while audio for finished sentences comes back; yields one TtsAudio per
   * audio-start..audio-stop segment, ends at synthesize-stopped.
   * @throws as synthesize.
   */
  async *synthesizeStream(textChunks: AsyncIterable<string>, call: TtsOptions = {}): AsyncGenerator<TtsAudio> {
    const conn = await WyomingConnection.connect(this.opts, call.signal);
    const onAbort = (): void => conn.close();
    call.signal?.addEventListener('abort', onAbort, { once: true });
    let sendError: unknown;
    try {
      const voice = voiceField(this.opts, call);
      conn.send({ type: 'synthesize-start', data: voice ? { voice } : {} });
      const sender = (async () => {
        for await (const text of textChunks) {
          if (text) conn.send({ type: 'synthesize-chunk', data: { text } });
        }
        conn.send({ type: 'synthesize-stop' });
      })().catch((err: unknown) => {
        sendError = err;
        conn.close();
      });
      yield* this.readSegments(conn, true, call.signal);
      await sender;
      if (sendError) throw sendError;
    } finally {
      call.signal?.removeEventListener('abort', onAbort);
      conn.close();
    }
  }

  private async *readSegments(conn: WyomingConnection, streaming: boolean, signal?: AbortSignal): AsyncGenerator<TtsAudio> {
    const timeout = this.opts.eventTimeoutMs ?? 10000;
    let fmt: AudioFormat | undefined;
    let chunks: Buffer[] = [];
    for (;;) {
      let ev;
      try {
        ev = await conn.next(timeout, streaming ? 'synthesize-stopped' : 'audio-stop');
      } catch (err) {
        if (signal?.aborted) throw new VoiceAbortError('Wyoming synthesis');
        throw err;
      }
      if (ev.type === 'audio-start') {
        fmt = audioFormatOf(ev);
        chunks = [];
      } else if (ev.type === 'audio-chunk') {
        fmt ??= audioFormatOf(ev);
        if (ev.payload) chunks.push(ev.payload);
      } else if (ev.type === 'audio-stop') {
        if (fmt) yield toAudio(chunks, fmt);
        fmt = undefined;
        chunks = [];
        if (!streaming) return;
      } else if (ev.type === 'synthesize-stopped') {
        return;
      }
    }
  }
}
