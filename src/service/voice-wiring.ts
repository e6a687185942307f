/**
 * Wires the voice pipeline into the service: HAL microphone and speaker (real
 * or simulated, chosen by configuration and what the machine has), the STT
 * chain (pocketsphinx with the grammar built from the home's devices, rebuilt
 * when they change; Wyoming dictation when configured), TTS, and the
 * `homeagent listen` command, which feeds uploaded recordings through the same
 * pipeline as live speech and reports what happened.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Logger } from '../kernel/log-types.js';
import type { SettingsAPI } from '../kernel/settings-types.js';
import type { TurnResult } from '../kernel/turn-types.js';
import { errorMessage, HomeAgentError } from '../kernel/errors.js';
import { createLogger } from '../kernel/log.js';
import { createMicrophone, createSpeaker, readMicConfig, readSpeakerConfig, registerVoiceDeviceSettings, SimSpeaker, wavToVoicePcm, encodeWav } from '../../hal/index.js';
import type { Speaker as HalSpeaker } from '../../hal/index.js';
import { VoicePlugin, registerVoiceSettings, createWyomingAsr } from '../voice/index.js';
import { PocketsphinxStt } from '../voice/stt/pocketsphinx.js';
import { SttChain } from '../voice/stt/order.js';
import type { HomePlugin } from '../home/index.js';
import type { CommandIO } from '../plugins/control/index.js';

/** What the service holds of the voice pipeline. */
export interface VoiceWiring {
  plugin: VoicePlugin;
  /** The HAL speaker (real aplay/sox or the simulator). */
  speaker: HalSpeaker;
  /** True when the speaker is the simulator (no sound card). */
  simulated: boolean;
  describe(): Record<string, unknown>;
  /** `homeagent listen`: args.files = [{name, data_b64}]. */
  listen(args: Record<string, unknown>, io: CommandIO): Promise<{ utterances: ListenReport[] }>;
  close(): Promise<void>;
}

/** One recording's report. */
export interface ListenReport {
  file: string;
  transcript: string;
  rejected: boolean;
  status: string;
  /** Why the recording could not be used (status 'error'). */
  error?: string;
  /** MQTT commands published and tools used while it was handled. */
  actions: string[];
  reply: string;
  /** The spoken reply as WAV (in the data directory). */
  wav?: string;
  timings: Record<string, number | undefined>;
}

/** Records what the speaker is given while a `listen` runs (the reply as WAV). */
class TeeSpeaker {
  private capture?: { chunks: Buffer[]; sampleRate: number };
  constructor(readonly inner: HalSpeaker) {}
  play(pcm: Buffer, opts: { sampleRate: number; channels?: number; id?: string; text?: string }): Promise<{ completed: boolean }> {
    if (this.capture) {
      if (this.capture.chunks.length === 0) this.capture.sampleRate = opts.sampleRate;
      if (opts.sampleRate === this.capture.sampleRate) this.capture.chunks.push(pcm);
    }
    return this.inner.play(pcm, opts);
  }
  async stop(): Promise<void> {
    await this.inner.stop();
  }
  startCapture(): void {
    this.capture = { chunks: [], sampleRate: 16000 };
  }
  endCapture(): { pcm: Buffer; sampleRate: number } | undefined {
    const c = this.capture;
    this.capture = undefined;
    return c && c.chunks.length ? { pcm: Buffer.concat(c.chunks), sampleRate: c.sampleRate } : undefined;
  }
}

/** Build the voice pipeline (not started: the kernel starts the plugin). Never throws: returns undefined when it cannot run. */
export async function buildVoice(opts: {
  settings: SettingsAPI;
  dataDir: string;
  log: Logger;
  home?: HomePlugin;
  /** Subscribe to the kernel bus (what was done during a `listen`). */
  subscribe: (type: 'plugin.home.command', cb: (p: Record<string, unknown>) => void) => () => void;
}): Promise<VoiceWiring | undefined> {
  const { settings, dataDir, log } = opts;
  try {
    registerVoiceDeviceSettings(settings);
    registerVoiceSettings(settings);
    const mic = createMicrophone(readMicConfig(settings, dataDir), createLogger('mic'));
    const halSpeaker = createSpeaker(readSpeakerConfig(settings, dataDir), createLogger('speaker'));
    const simulated = halSpeaker instanceof SimSpeaker;
    if (simulated) log.warn('no sound card found: the simulated speaker writes what it would say to WAV files in the data directory');
    const speaker = new TeeSpeaker(halSpeaker);
    const grammar = new PocketsphinxStt({ workDir: path.join(dataDir, 'stt') });
    const dictation = createWyomingAsr(settings);
    const stt = new SttChain({ grammar, ...(dictation ? { dictation } : {}) });
    const plugin = new VoicePlugin({ microphone: mic, speaker, stt });
    let grammarInfo: Record<string, unknown> = { state: 'waiting for devices' };
    let closed = false;
    let requested = 0;
    const rebuild = (vocab: Parameters<PocketsphinxStt['setVocabulary']>[0]) => {
      if (closed) return;
      const mine = ++requested;
      grammar
        .setVocabulary(vocab)
        .then((info) => {
          if (mine === requested) grammarInfo = { state: 'ready', entities: vocab.entities.length, areas: vocab.areas.length, ...info };
        })
        .catch((err: unknown) => {
          if (mine === requested) grammarInfo = { state: 'failed', error: errorMessage(err) };
          log.error({ err: errorMessage(err) }, 'speech grammar build failed; commands go to dictation or are not recognised');
        });
    };
    rebuild({ entities: [], areas: [] });
    opts.home?.onVocabularyChange(rebuild);
    let busy = false;
    return {
      plugin,
      speaker: halSpeaker,
      simulated,
      describe: () => ({ speaker: halSpeaker.kind, simulated, stt: { order: dictation ? 'grammar-first, dictation' : 'grammar only', grammar: grammarInfo } }),
      close: async () => {
        closed = true;
        await halSpeaker.close().catch(() => undefined);
        await stt.close?.().catch(() => undefined);
      },
      async listen(args, io) {
        const files = Array.isArray(args.files) ? (args.files as unknown[]) : [];
        if (files.length === 0) throw new HomeAgentError('BAD_ARGUMENT', 'listen needs at least one WAV file');
        for (const f of files) {
          if (!f || typeof f !== 'object' || typeof (f as { data_b64?: unknown }).data_b64 !== 'string') throw new HomeAgentError('BAD_ARGUMENT', 'listen: each file must be {"name": "...", "data_b64": "<base64 WAV>"}');
        }
        if (busy) throw new HomeAgentError('BUSY', 'another listen is running');
        busy = true;
        const outDir = path.join(dataDir, 'listen');
        mkdirSync(outDir, { recursive: true });
        const reports: ListenReport[] = [];
        try {
          for (const f of files as Array<{ name?: unknown; data_b64?: unknown }>) {
            const name = typeof f.name === 'string' ? path.basename(f.name) : 'input.wav';
            const report = await listenOne(plugin, speaker, opts, name, Buffer.from(String(f.data_b64 ?? ''), 'base64'), outDir, args.realtime === true);
            reports.push(report);
            io.send({ file: name, transcript: report.transcript, reply: report.reply });
          }
        } finally {
          busy = false;
        }
        return { utterances: reports };
      },
    };
  } catch (err) {
    log.error({ err: errorMessage(err) }, 'voice pipeline unavailable; the box runs text-only');
    return undefined;
  }
}

async function listenOne(
  plugin: VoicePlugin,
  speaker: TeeSpeaker,
  opts: { settings: SettingsAPI; subscribe: (type: 'plugin.home.command', cb: (p: Record<string, unknown>) => void) => () => void },
  name: string,
  wav: Buffer,
  outDir: string,
  realtime: boolean,
): Promise<ListenReport> {
  let pcm: Buffer;
  try {
    pcm = wavToVoicePcm(wav);
  } catch (err) {
    return { file: name, transcript: '', rejected: false, status: 'error', error: `not a usable WAV file: ${errorMessage(err)}`, actions: [], reply: '', timings: {} };
  }
  const actions: string[] = [];
  const off = opts.subscribe('plugin.home.command', (c) => void actions.push(`mqtt ${String(c.topic)} ${String(c.payload)}`));
  speaker.startCapture();
  try {
    const outcome = await plugin.feedUtterance(pcm, { realtime });
    let turn: TurnResult | undefined;
    if (outcome.turn) turn = await outcome.turn;
    const timings = await outcome.done;
    for (const t of turn?.tools ?? []) actions.push(`tool ${t.name}(${JSON.stringify(t.arguments)})${t.denied ? ' denied' : t.is_error ? ' failed' : ''}`);
    const audio = speaker.endCapture();
    let wavPath: string | undefined;
    if (audio) {
      wavPath = path.join(outDir, `${name.replace(/\.wav$/i, '')}.reply.wav`);
      writeFileSync(wavPath, encodeWav(audio.pcm, { sampleRate: audio.sampleRate, channels: 1 }));
    }
    const notUnderstood = opts.settings.get<string>(opts.settings.get<string>('plugin.voice.language') === 'zh' ? 'plugin.voice.message_not_understood_zh' : 'plugin.voice.message_not_understood');
    return {
      file: name,
      transcript: outcome.text,
      rejected: outcome.status === 'rejected' || outcome.status === 'no_speech',
      status: outcome.status,
      actions,
      reply: turn ? turn.reply : outcome.status === 'cancelled' ? '' : notUnderstood,
      ...(wavPath ? { wav: wavPath } : {}),
      timings: { speech_ms: timings.speech_ms, endpoint_wait_ms: timings.endpoint_wait_ms, transcript_ms: timings.transcript_ms, stt_finish_ms: timings.stt_finish_ms, first_audio_ms: timings.first_audio_ms },
    };
  } finally {
    speaker.endCapture();
    off();
  }
}
