/**
 * A Wyoming test peer (rhasspy/wyoming README "Event Flow"): one TCP server
 * that answers like faster-whisper (ASR), piper (TTS, including the
 * streaming synthesize-start/-chunk/-stop events and synthesize-stopped) and
 * openWakeWord (wake), with `describe` -> `info`. Behaviour comes from
 * callbacks the test passes in; faults are injected per event type.
 * Listens on 127.0.0.1 on a free port (or `port`); `close()` ends every connection.
 */
import { EventEmitter } from 'node:events';
import net from 'node:net';
import { encodeEvent, WyomingDecoder, type WyomingEvent } from '../../src/voice/wyoming/codec.js';

/** What the ASR side was given for one utterance. */
export interface AsrRequest {
  pcm: Buffer;
  rate: number;
  width: number;
  channels: number;
  language?: string;
  name?: string;
}

/** Fault injected instead of the normal answer to an event type. */
export type Fault =
  | 'bad-frame' // send a header that is not JSON
  | 'close' // close the connection
  | 'hang' // never answer
  | 'error' // send an `error` event
  | { delayMs: number }; // answer late

/** Options of startWyomingTestServer. */
export interface WyomingTestServerOptions {
  /** Transcript for an utterance (default: '' for silence, else 'hello world'). */
  transcribe?: (req: AsrRequest) => string | Promise<string>;
  /** PCM for a text at `rate` Hz (default: 30 ms of a tone per character at 22050 Hz). */
  synthesize?: (text: string, voice: Record<string, unknown> | undefined) => { pcm: Buffer; rate: number };
  /** Wake word name when this audio chunk completes a detection (default: a chunk with peak above -6 dBFS -> 'ok_nabu'). */
  wake?: (chunk: Buffer, audioMs: number) => string | undefined;
  /** Faults keyed by the client event type that triggers them ('transcribe' fires at audio-stop, 'synthesize', 'describe', 'detect', 'synthesize-stop'). */
  faults?: Record<string, Fault>;
  /** Bytes per TTS audio-chunk (default 2048). */
  ttsChunkBytes?: number;
  /** Port to listen on (default: a free one); a test restarts a service on the port it had. */
  port?: number;
}

/** A running test server. */
export interface WyomingTestServer {
  port: number;
  host: string;
  /** Every event received, per connection, in order (payloads included). */
  received: WyomingEvent[][];
  /**
   * Resolves when the server receives an event of `type` (counting those
   * already received), so a test waits for the client to get there instead
   * of sleeping. No deadline: the test runner's timeout is the failure deadline.
   */
  waitForEvent(type: string): Promise<WyomingEvent>;
  close(): Promise<void>;
}

function defaultTts(text: string): { pcm: Buffer; rate: number } {
  const rate = 22050;
  const n = Math.max(1, text.length) * Math.round(rate * 0.03);
  const pcm = Buffer.alloc(n * 2);
  for (let i = 0; i < n; i++) pcm.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 330 * i) / rate)), i * 2);
  return { pcm, rate };
}

function peak(pcm: Buffer): number {
  let p = 0;
  for (let i = 0; i + 1 < pcm.length; i += 2) p = Math.max(p, Math.abs(pcm.readInt16LE(i)));
  return p;
}

/** Start the server on a free port. */
export async function startWyomingTestServer(opts: WyomingTestServerOptions = {}): Promise<WyomingTestServer> {
  const sockets = new Set<net.Socket>();
  const received: WyomingEvent[][] = [];
  const arrivals = new EventEmitter();
  const server = net.createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    socket.on('error', () => undefined);
    const log: WyomingEvent[] = [];
    received.push(log);
    const decoder = new WyomingDecoder();
    const send = (ev: { type: string; data?: Record<string, unknown>; payload?: Buffer }): void => {
      if (!socket.destroyed) socket.write(encodeEvent(ev));
    };
    // per-connection state
    let asr: AsrRequest | undefined;
    let asrChunks: Buffer[] = [];
    let wakeActive = false;
    let wakeMs = 0;
    let detections = 0;
    let streaming: { voice?: Record<string, unknown>; text: string } | undefined;
    let queue = Promise.resolve();

    const withFault = async (type: string, answer: () => Promise<void> | void): Promise<void> => {
      const f = opts.faults?.[type];
      if (f === undefined) return answer();
      if (f === 'bad-frame') return void socket.write('this is not json\n');
      if (f === 'close') return void socket.destroy();
      if (f === 'hang') return;
      if (f === 'error') return send({ type: 'error', data: { text: `injected failure on ${type}`, code: 'TestFault' } });
      await new Promise((r) => setTimeout(r, f.delayMs));
      return answer();
    };

    const speak = (text: string, voice: Record<string, unknown> | undefined): void => {
      const { pcm, rate } = (opts.synthesize ?? defaultTts)(text, voice);
      const fmt = { rate, width: 2, channels: 1 };
      send({ type: 'audio-start', data: fmt });
      const step = opts.ttsChunkBytes ?? 2048;
      for (let o = 0; o < pcm.length; o += step) send({ type: 'audio-chunk', data: fmt, payload: pcm.subarray(o, o + step) });
      send({ type: 'audio-stop' });
    };

    const takeSentences = (final: boolean): string[] => {
      if (!streaming) return [];
      const out: string[] = [];
      const re = /^(.*?[.!?。！？])(\s+|$)/s;
      for (;;) {
        const m = re.exec(streaming.text);
        if (!m || (!final && m[2] === '' )) break;
        out.push(m[1]!.trim());
        streaming.text = streaming.text.slice(m[0].length);
      }
      if (final && streaming.text.trim()) out.push(streaming.text.trim());
      if (final) streaming.text = '';
      return out;
    };

    const handle = async (ev: WyomingEvent): Promise<void> => {
      switch (ev.type) {
        case 'describe':
          return withFault('describe', () =>
            send({
              type: 'info',
              data: {
                asr: [{ name: 'test-asr', attribution: { name: 'test', url: 'http://localhost' }, installed: true, description: 'test ASR', version: '1', supports_transcript_streaming: false, models: [{ name: 'tiny', attribution: { name: 'test', url: 'http://localhost' }, installed: true, description: null, version: '1', languages: ['en', 'zh'] }] }],
                tts: [{ name: 'test-tts', attribution: { name: 'test', url: 'http://localhost' }, installed: true, description: 'test TTS', version: '1', supports_synthesize_streaming: true, voices: [{ name: 'en_US-test-medium', attribution: { name: 'test', url: 'http://localhost' }, installed: true, description: null, version: '1', languages: ['en_US'], speakers: null }] }],
                wake: [{ name: 'test-wake', attribution: { name: 'test', url: 'http://localhost' }, installed: true, description: 'test wake', version: '1', models: [{ name: 'ok_nabu', attribution: { name: 'test', url: 'http://localhost' }, installed: true, description: null, version: '1', languages: ['en'], phrase: 'okay nabu' }] }],
                handle: [],
                intent: [],
              },
            }),
          );
        case 'transcribe':
          asr = { pcm: Buffer.alloc(0), rate: 0, width: 0, channels: 0 };
          if (typeof ev.data.language === 'string') asr.language = ev.data.language;
          if (typeof ev.data.name === 'string') asr.name = ev.data.name;
          asrChunks = [];
          return;
        case 'detect':
          return withFault('detect', () => {
            wakeActive = true;
            wakeMs = 0;
            detections = 0;
          });
        case 'audio-start':
          if (asr) {
            asr.rate = Number(ev.data.rate);
            asr.width = Number(ev.data.width);
            asr.channels = Number(ev.data.channels);
          }
          return;
        case 'audio-chunk':
          if (asr && ev.payload) asrChunks.push(ev.payload);
          if (wakeActive && ev.payload) {
            wakeMs += ev.payload.length / 32;
            const name = opts.wake ? opts.wake(ev.payload, wakeMs) : peak(ev.payload) > 16000 ? 'ok_nabu' : undefined;
            if (name) {
              detections++;
              send({ type: 'detection', data: { name, timestamp: Math.round(wakeMs) } });
            }
          }
          return;
        case 'audio-stop':
          if (asr) {
            const req = { ...asr, pcm: Buffer.concat(asrChunks) };
            asr = undefined;
            return withFault('transcribe', async () => {
              const text = opts.transcribe ? await opts.transcribe(req) : peak(req.pcm) > 1000 ? 'hello world' : '';
              send({ type: 'transcript', data: { text } });
            });
          }
          if (wakeActive) {
            wakeActive = false;
            if (detections === 0) send({ type: 'not-detected' });
          }
          return;
        case 'synthesize': {
          if (streaming) return; // streaming clients may also send synthesize for old servers; ignored (wyoming-piper)
          const voice = typeof ev.data.voice === 'object' && ev.data.voice !== null ? (ev.data.voice as Record<string, unknown>) : undefined;
          return withFault('synthesize', () => speak(String(ev.data.text ?? ''), voice));
        }
        case 'synthesize-start':
          streaming = { text: '' };
          if (typeof ev.data.voice === 'object' && ev.data.voice !== null) streaming.voice = ev.data.voice as Record<string, unknown>;
          return;
        case 'synthesize-chunk':
          if (!streaming) return;
          streaming.text += String(ev.data.text ?? '');
          for (const s of takeSentences(false)) speak(s, streaming.voice);
          return;
        case 'synthesize-stop':
          return withFault('synthesize-stop', () => {
            for (const s of takeSentences(true)) speak(s, streaming?.voice);
            streaming = undefined;
            send({ type: 'synthesize-stopped' });
          });
        default:
          return;
      }
    };

    socket.on('data', (chunk: Buffer) => {
      let events: WyomingEvent[];
      try {
        events = decoder.push(chunk);
      } catch {
        socket.destroy();
        return;
      }
      for (const ev of events) {
        log.push(ev);
        arrivals.emit(ev.type, ev);
        queue = queue.then(() => handle(ev)).catch(() => void socket.destroy());
      }
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 0, '127.0.0.1', () => {
      server.off('error', reject);
      resolve();
    });
  });
  const addr = server.address() as net.AddressInfo;
  return {
    port: addr.port,
    host: '127.0.0.1',
    received,
    waitForEvent: (type) => {
      const seen = received.flat().find((e) => e.type === type);
      if (seen) return Promise.resolve(seen);
      return new Promise((resolve) => arrivals.once(type, resolve));
    },
    close: () =>
      new Promise<void>((resolve) => {
        for (const s of sockets) s.destroy();
        server.close(() => resolve());
      }),
  };
}
