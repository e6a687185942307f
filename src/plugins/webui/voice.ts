/**
 * Push-to-talk from the browser (issue 16, Talk page): while the button is
 * held the page sends the microphone's audio over a WebSocket
 * (`/api/v1/voice`) as binary frames of 16 kHz mono signed 16-bit
 * little-endian samples; `{"type":"end"}` hands the recording to the same
 * voice pipeline as the box's microphone (the voice plugin's `listen`:
 * endpointing, speech recognition, local commands or the agent), and the
 * answer comes back as `{"type":"result", transcript, reply, status, actions,
 * timings}` followed by the spoken reply as one binary WAV frame (it is also
 * played on the box). `{"type":"cancel"}` drops what was sent.
 *
 * Errors are `{"type":"error","code","error"}` frames naming what was wrong
 * (BAD_MESSAGE, ODD_BYTES, TOO_LONG, NO_AUDIO, BUSY, and the pipeline's own).
 * A recording is at most MAX_PTT_SECONDS; frames are at most 64 KiB.
 * Authentication and the origin check happen before the upgrade (index.ts).
 */
import type { IncomingMessage } from 'node:http';
import type { Duplex } from 'node:stream';
import { readFileSync, rmSync } from 'node:fs';
import { WebSocketServer, type RawData, type WebSocket } from 'ws';
import type { CommandHandler } from '../../kernel/commands.js';
import { errorMessage, HomeAgentError } from '../../kernel/errors.js';
import type { Logger } from '../../kernel/log-types.js';
import { encodeWav } from '../../../hal/common/wav.js';
import type { ListenReport } from '../../service/voice-wiring.js';
import type { SessionRecord } from './auth.js';
import { parseJson } from '../../kernel/json.js';

/** Longest recording one press may send, seconds. */
export const MAX_PTT_SECONDS = 30;
/** Bytes of one second of 16 kHz mono s16le. */
const BYTES_PER_SECOND = 32_000;

/** A push-to-talk answer (before its WAV frame). */
export interface PttResult {
  type: 'result';
  transcript: string;
  rejected: boolean;
  status: string;
  reply: string;
  actions: string[];
  timings: Record<string, number | undefined>;
  /** A binary WAV frame of the spoken reply follows. */
  audio: boolean;
}

/** See module comment. */
export class PushToTalk {
  private readonly wss = new WebSocketServer({ noServer: true, maxPayload: 64 * 1024 });
  private count = 0;

  constructor(
    /** The voice plugin's `listen` command, when it runs. */
    private readonly listen: () => CommandHandler | undefined,
    private readonly log: Logger,
  ) {}

  /** Take over an upgraded HTTP connection of `session` (already authenticated and origin-checked). */
  accept(req: IncomingMessage, socket: Duplex, head: Buffer, session: SessionRecord): void {
    this.wss.handleUpgrade(req, socket, head, (ws) => this.serve(ws, session));
  }

  /** Open push-to-talk connections. */
  get connections(): number {
    return this.wss.clients.size;
  }

  /** Close every connection. */
  close(): void {
    for (const c of this.wss.clients) c.terminate();
    this.wss.close();
  }

  private serve(ws: WebSocket, session: SessionRecord): void {
    let chunks: Buffer[] = [];
    let bytes = 0;
    let busy = false;
    const send = (o: unknown) => {
      if (ws.readyState === ws.OPEN) ws.send(JSON.stringify(o));
    };
    const error = (code: string, message: string) => send({ type: 'error', code, error: message });
    const reset = () => {
      chunks = [];
      bytes = 0;
    };
    ws.on('error', () => undefined);
    ws.on('message', (data: RawData, isBinary: boolean) => {
      if (isBinary) {
        const buf = Array.isArray(data) ? Buffer.concat(data) : Buffer.isBuffer(data) ? data : Buffer.from(data);
        if (busy) return error('BUSY', 'the last recording is still being answered; wait for its result');
        if (buf.length % 2) return error('ODD_BYTES', `audio frames are 16-bit samples (an even number of bytes); got ${buf.length} bytes`);
        if (bytes + buf.length > MAX_PTT_SECONDS * BYTES_PER_SECOND) {
          reset();
          return error('TOO_LONG', `a recording is at most ${MAX_PTT_SECONDS} s; what was sent is dropped`);
        }
        chunks.push(buf);
        bytes += buf.length;
        return;
      }
      let msg: { type?: unknown };
      try {
        msg = parseJson(String(data)) as { type?: unknown };
      } catch {
        return error('BAD_MESSAGE', 'text frames must be JSON: {"type":"end"} or {"type":"cancel"}');
      }
      if (msg.type === 'cancel') {
        reset();
        return send({ type: 'cancelled' });
      }
      if (msg.type !== 'end') return error('BAD_MESSAGE', `unknown message type ${JSON.stringify(msg.type)}; send {"type":"end"} or {"type":"cancel"}`);
      if (busy) return error('BUSY', 'the last recording is still being answered; wait for its result');
      if (bytes < 320) {
        reset();
        return error('NO_AUDIO', 'nothing was recorded (less than 10 ms of audio)');
      }
      const pcm = Buffer.concat(chunks);
      reset();
      busy = true;
      void this.answer(pcm, session, ws, send, error).finally(() => (busy = false));
    });
  }

  private async answer(pcm: Buffer, session: SessionRecord, ws: WebSocket, send: (o: unknown) => void, error: (code: string, message: string) => void): Promise<void> {
    const listen = this.listen();
    if (!listen) return error('VOICE_OFF', 'the voice pipeline is not running: push-to-talk is unavailable');
    const name = `webui-${session.id}-${++this.count}.wav`;
    const aborted = new AbortController();
    ws.once('close', () => aborted.abort());
    try {
      // A browser paired for a person speaks as that person (issue 16 "Access"), as what is typed there does.
      const r = (await listen({ files: [{ name, data_b64: encodeWav(pcm, { sampleRate: 16_000, channels: 1 }).toString('base64') }], ...(session.person ? { user: session.person } : {}) }, { send: () => undefined, signal: aborted.signal })) as { utterances?: ListenReport[] };
      const u = r.utterances?.[0];
      if (!u) return error('LISTEN_FAILED', 'the voice pipeline gave no answer');
      if (u.status === 'error') return error('LISTEN_FAILED', u.error ?? u.reply);
      const result: PttResult = { type: 'result', transcript: u.transcript, rejected: u.rejected, status: u.status, reply: u.reply, actions: u.actions, timings: u.timings, audio: !!u.wav };
      send(result);
      if (u.wav) {
        // The reply's WAV goes to the browser and is not kept (the service never grows the disk per press).
        try {
          const wav = readFileSync(u.wav);
          if (ws.readyState === ws.OPEN) ws.send(wav, { binary: true });
        } finally {
          rmSync(u.wav, { force: true });
        }
      }
    } catch (err) {
      this.log.warn({ err: errorMessage(err) }, 'push-to-talk failed');
      error(err instanceof HomeAgentError ? err.code : 'LISTEN_FAILED', errorMessage(err));
    }
  }
}
