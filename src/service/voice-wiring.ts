/**
 * The voice plugin of the service (`VoiceServicePlugin`, name `voice`):
 * wires the voice pipeline to the HAL microphone and speaker (real or
 * simulated, chosen by configuration and what the machine has), the STT
 * chain (pocketsphinx with the grammar built from the home's vocabulary,
 * rebuilt when it changes; Wyoming dictation when configured) and TTS, all
 * inside the plugin host's guard, and serves the `homeagent listen` command,
 * which feeds uploaded recordings through the same pipeline as live speech
 * and reports what happened. It also says how the box can be woken (the
 * start-up log and `status`: src/service/wake-ways.ts), keeps the Wyoming
 * wake service's connection state for `status`, and announces once when the
 * microphone is switched off or on.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { SettingsAPI } from '../kernel/settings-types.js';
import type { Plugin, PluginSDK } from '../kernel/sdk.js';
import type { CommandIO } from '../kernel/commands.js';
import type { TurnResult } from '../kernel/turn-types.js';
import { errorMessage, HomeAgentError } from '../kernel/errors.js';
import { createLogger } from '../kernel/log.js';
import { createMicrophone, createSpeaker, probeSysfsGpio, RecorderMicrophone, readMicConfig, readSpeakerConfig, registerVoiceDeviceSettings, SimSpeaker, wavToVoicePcm, encodeWav } from '../../hal/index.js';
import type { Speaker as HalSpeaker } from '../../hal/index.js';
import { VoicePlugin, registerVoiceSettings, createWyomingAsr, createWakeDetector, voiceSetting } from '../voice/index.js';
import type { WakeWordDetector, WyomingWake } from '../voice/wyoming/wake-client.js';
import { checkWakePhrase, KeyphraseWake } from '../voice/keyphrase.js';
import type { Logger } from '../kernel/log-types.js';
import { readWakeConfig, wakeReport, wakeSummary, type WakeConfig, type WakeReport } from './wake-ways.js';
import { PocketsphinxStt } from '../voice/stt/pocketsphinx.js';
import { SttChain } from '../voice/stt/order.js';
import { SttNoGrammarError } from '../voice/stt/errors.js';
import type { SttResult } from '../voice/stt/types.js';
import type { Vocabulary } from '../intents/types.js';
import { probeAlsa } from '../../hal/common/alsa.js';
import { watchActions } from '../plugins/control/actions.js';

/** One recording's report. */
export interface ListenReport {
  file: string;
  transcript: string;
  rejected: boolean;
  status: string;
  /** Why the recording could not be used (status 'error'). */
  error?: string;
  /** MQTT commands published, timers started, changed or cancelled, list items changed, and tools used while it was handled. */
  actions: string[];
  reply: string;
  /**
   * Every sentence the speaker said while it was handled, in order: the reply
   * and anything else the box said then ("OK, I did not unlock the Front
   * Door." when a spoken question dropped a yes/no question; a timer ringing).
   */
  spoken?: string[];
  /** What to do: set when it was not understood and the clip looks cut tight to the speech (tightClipHint), or when the recording went on with speech after the utterance ended with its silence (unheardHint); both joined with "; ". */
  hint?: string;
  /** Why the recogniser refused it, when it did and knows (SttResult.reason: not_command, score_gap, word_misfit:WORD, ...; README, the `stt: decoded` log line), or 'no_speech' when the endpointer heard no speech in it (nothing was decoded). */
  reason?: string;
  /**
   * What the decoder heard in a recording it refused (SttResult.heard: the
   * grammar's words, `ph_…` for sounds it placed in no word), for the person
   * debugging a recording; the log has it only at `debug` (README).
   */
  heard?: string;
  /**
   * The command was heard but doubted, so it asks for a yes first (unless
   * nothing is left to do: "The Front Door is already locked."): the two
   * readings it could not tell apart (SttResult intent's unsure_between:
   * ["turn on", "turn off"], or a device name word and "another name" when
   * that word fit its stretch of audio badly, pocketsphinx-judge.ts NAME_WORD_ASK_GAP).
   */
  unsure_between?: string[];
  /** The spoken reply as WAV (in the data directory). */
  wav?: string;
  timings: Record<string, number | undefined>;
  /** How the first utterance ended: 'silence' (the endpointer's full silence), 'early' (acted on at its first pause), 'stream_end', ... */
  end_reason?: string;
  /**
   * Utterances heard after the first in the same recording: the first was
   * acted on at its pause (end_reason 'early', issue 15) and speech went on
   * ("… and lock the front door"). Each with its transcript, status and reply.
   */
  then?: Array<{ transcript: string; status: string; reply: string; reason?: string; heard?: string; unsure_between?: string[] }>;
}

/**
 * What the listen report says of one utterance's recognition: why it was
 * refused (`reason`) and the first reading the recogniser doubted
 * (`unsure_between`), of its command or of either of two commands said in
 * one breath (a tester's "turn on the kitchen lights and lock the front
 * door" asked about the lock while the report said nothing of a doubt).
 */
function recognition(stt: SttResult | undefined): { reason?: string; heard?: string; unsure_between?: string[] } {
  const doubt = [stt?.intent, ...(stt?.intents ?? [])].find((m) => m?.unsure_between)?.unsure_between;
  return { ...(stt?.rejected && stt.reason ? { reason: stt.reason } : {}), ...(stt?.rejected && stt.heard ? { heard: stt.heard } : {}), ...(doubt ? { unsure_between: [...doubt] } : {}) };
}

/** Records what the speaker is given while a `listen` runs (the reply as WAV). */
class TeeSpeaker {
  private capture?: { chunks: Buffer[]; sampleRate: number; texts: string[] };
  constructor(readonly inner: HalSpeaker) {}
  play(pcm: Buffer, opts: { sampleRate: number; channels?: number; id?: string; text?: string }): Promise<{ completed: boolean }> {
    if (this.capture) {
      if (this.capture.chunks.length === 0) this.capture.sampleRate = opts.sampleRate;
      if (opts.sampleRate === this.capture.sampleRate) this.capture.chunks.push(pcm);
      if (opts.text) this.capture.texts.push(opts.text);
    }
    return this.inner.play(pcm, opts);
  }
  async stop(): Promise<void> {
    await this.inner.stop();
  }
  startCapture(): void {
    this.capture = { chunks: [], sampleRate: 16000, texts: [] };
  }
  /** The audio played since startCapture() and the sentences it said, in order; undefined when nothing was played. */
  endCapture(): { pcm: Buffer; sampleRate: number; texts: string[] } | undefined {
    const c = this.capture;
    this.capture = undefined;
    return c && c.chunks.length ? { pcm: Buffer.concat(c.chunks), sampleRate: c.sampleRate, texts: c.texts } : undefined;
  }
}

/**
 * Whether the speaker will be the simulator (no sound card, or configured
 * `sim`), decided as createSpeaker decides it, without opening anything: the
 * service announces its demo home on simulated hardware before the plugins
 * start. Registers the device settings it reads.
 */
export function audioSimulated(settings: SettingsAPI, dataDir: string): boolean {
  registerVoiceDeviceSettings(settings);
  const cfg = readSpeakerConfig(settings, dataDir);
  if (cfg.driver === 'sim' || cfg.driver === 'real') return cfg.driver === 'sim';
  return !probeAlsa('p', cfg.player === 'sox' ? 'play' : 'aplay').present;
}

/**
 * The voice plugin of the service (name `voice`), started and stopped by the
 * plugin host like every other plugin (guarded, with its time limit): on
 * start it opens the HAL microphone and speaker (real or simulated), builds
 * the STT chain (pocketsphinx with the grammar built from the home's
 * vocabulary, Wyoming dictation when configured), starts the voice pipeline
 * (src/voice/pipeline.ts) on its own SDK, follows `plugin.home.vocabulary`
 * on the bus (retained: the current vocabulary arrives at once, whenever the
 * home plugin started), and serves `homeagent listen` through the plugin API.
 * A start that fails (no usable audio configuration) leaves the box
 * text-only; `homeagent plugins` says why.
 */
export class VoiceServicePlugin implements Plugin {
  readonly name = 'voice';
  private pipelineRef: VoicePlugin | undefined;
  private halSpeaker: HalSpeaker | undefined;
  private tee: TeeSpeaker | undefined;
  private stt: SttChain | undefined;
  private grammarInfo: Record<string, unknown> = { state: 'waiting for devices' };
  private dictation = false;
  private closed = true;
  private busy = false;
  private lastBuild: Promise<void> = Promise.resolve();
  private wake: WyomingWake | undefined;
  private readonly unsubs: Array<() => void> = [];
  private wakeInfo: WakeReport | undefined;

  /** How the box can be woken (src/service/wake-ways.ts), once the pipeline has started; undefined before, or when it did not start. */
  get wakeWays(): WakeReport | undefined {
    return this.wakeInfo;
  }

  /** The voice pipeline, while running. */
  get pipeline(): VoicePlugin | undefined {
    return this.pipelineRef;
  }

  /** The HAL speaker (real aplay/sox or the simulator), while running (benchmarks watch its start/stopped events). */
  get speaker(): HalSpeaker | undefined {
    return this.closed ? undefined : this.halSpeaker;
  }

  /** True when the speaker is the simulator; undefined before start. */
  get simulated(): boolean | undefined {
    return this.halSpeaker ? this.halSpeaker instanceof SimSpeaker : undefined;
  }

  /** For `homeagent status`: speaker kind, simulated or not, STT order and grammar state. */
  describe(): Record<string, unknown> {
    if (!this.halSpeaker || this.closed) return { running: false };
    return {
      speaker: this.halSpeaker.kind,
      simulated: this.simulated,
      stt: { order: this.dictation ? 'grammar-first, dictation' : 'grammar only', grammar: this.grammarInfo },
      ...(this.wakeInfo ? { wake: { ways: this.wakeInfo.ways.map((w) => w.text), problems: [...this.wakeInfo.problems, ...(this.wakeInfo.chinese && !this.wakeInfo.chinese.ok ? [this.wakeInfo.chinese.text] : [])], ...(this.wake ? { service: this.wake.endpoint, connection: this.wake.status } : {}) } } : {}),
    };
  }

  /** Resolves when the newest grammar build requested so far has finished (ready or failed; see describe()). */
  whenGrammarBuilt(): Promise<void> {
    return this.lastBuild;
  }

  async start(sdk: PluginSDK): Promise<void> {
    this.closed = false;
    this.grammarInfo = { state: 'waiting for devices' };
    const settings = sdk.settings();
    const log = sdk.log;
    registerVoiceDeviceSettings(settings);
    registerVoiceSettings(settings);
    const mic = createMicrophone(readMicConfig(settings, sdk.dataDir), createLogger('mic'));
    const halSpeaker = createSpeaker(readSpeakerConfig(settings, sdk.dataDir), createLogger('speaker'));
    this.halSpeaker = halSpeaker;
    if (halSpeaker instanceof SimSpeaker) log.warn('no sound card found: the simulated speaker writes what it would say to WAV files in the data directory');
    const speaker = new TeeSpeaker(halSpeaker);
    this.tee = speaker;
    const grammar = new PocketsphinxStt({ workDir: path.join(sdk.dataDir, 'stt') });
    const dictation = createWyomingAsr(settings);
    this.dictation = dictation !== undefined;
    const stt = new SttChain({ grammar, ...(dictation ? { dictation } : {}) });
    this.stt = stt;
    let requested = 0;
    const rebuild = (vocab: Vocabulary) => {
      if (this.closed) return;
      const mine = ++requested;
      // The first build says so; a rebuild keeps the grammar in use (and its state) until the new one is ready.
      // Only a built grammar has `entities` (what clients wait for: test/cli/control.test.ts grammarReady).
      if (this.grammarInfo?.state !== 'ready') this.grammarInfo = { state: 'building' };
      this.lastBuild = grammar
        .setVocabulary(vocab)
        .then((info) => {
          if (mine === requested) this.grammarInfo = { state: 'ready', entities: vocab.entities.length, areas: vocab.areas.length, ...info };
        })
        .catch((err: unknown) => {
          // A build still queued when the voice stops (or restarts: a new recogniser by then) is dropped
          // (SttNoGrammarError): no failure.
          if (this.closed || err instanceof SttNoGrammarError) return;
          if (mine === requested) this.grammarInfo = { state: 'failed', error: errorMessage(err) };
          log.error({ err: errorMessage(err) }, 'speech grammar build failed; commands go to dictation or are not recognised');
        });
    };
    // The vocabulary comes only over the bus; it is retained, so the current one (if the home announced one) arrives at once.
    let announced = false;
    sdk.subscribe('plugin.home.vocabulary', (e) => {
      announced = true;
      rebuild(e.vocabulary);
    });
    if (!announced) rebuild({ entities: [], areas: [] });
    this.wake = createWakeDetector(settings, { log });
    const pipeline = new VoicePlugin({ microphone: mic, speaker, stt, wake: this.wake ?? (await experimentalWakePhrase(settings, log)) ?? null });
    this.pipelineRef = pipeline;
    this.unsubs.push(announceMute(sdk));
    await pipeline.start(sdk);
    this.wakeInfo = logWakeWays(sdk, readWakeConfig(settings), !(mic instanceof RecorderMicrophone));
    sdk.registerCommand('listen', (args, io) => this.listen(sdk, args, io));
  }

  async stop(): Promise<void> {
    this.closed = true;
    for (const u of this.unsubs.splice(0)) u();
    await this.pipelineRef?.stop();
    this.pipelineRef = undefined;
    await this.halSpeaker?.close().catch(() => undefined);
    await this.stt?.close?.().catch(() => undefined);
    this.stt = undefined;
  }

  /**
   * `homeagent listen`: args.files = [{name, data_b64}] (WAV), args.realtime; streams one line per recording.
   * A client that disconnects ends it: no further file is fed, and another listen may start at once.
   * @throws HomeAgentError VOICE_UNAVAILABLE, BAD_ARGUMENT, BUSY (another listen's client is still waiting).
   */
  private async listen(sdk: PluginSDK, args: Record<string, unknown>, io: CommandIO): Promise<{ utterances: ListenReport[] }> {
    const pipeline = this.pipelineRef;
    const speaker = this.tee;
    if (!pipeline || !speaker) throw new HomeAgentError('VOICE_UNAVAILABLE', 'the voice pipeline is not running');
    const files = Array.isArray(args.files) ? (args.files as unknown[]) : [];
    if (files.length === 0) throw new HomeAgentError('BAD_ARGUMENT', 'listen needs at least one WAV file');
    for (const f of files) {
      if (!f || typeof f !== 'object' || typeof (f as { data_b64?: unknown }).data_b64 !== 'string') throw new HomeAgentError('BAD_ARGUMENT', 'listen: each file must be {"name": "...", "data_b64": "<base64 WAV>"}');
    }
    if (args.user !== undefined && (typeof args.user !== 'string' || !args.user.trim())) throw new HomeAgentError('BAD_ARGUMENT', 'listen: "user" must be a person\'s name');
    const user = typeof args.user === 'string' ? args.user.trim() : undefined;
    if (this.busy) throw new HomeAgentError('BUSY', 'another listen is running');
    this.busy = true;
    const outDir = path.join(sdk.dataDir, 'listen');
    mkdirSync(outDir, { recursive: true });
    const reports: ListenReport[] = [];
    // The client went away (the CLI was killed): no more files, and the next listen may start at once; what was
    // heard goes on as it would (its reply is spoken, or cut by the next utterance as any barge-in).
    const gone = new Promise<undefined>((resolve) => {
      if (io.signal.aborted) resolve(undefined);
      else io.signal.addEventListener('abort', () => resolve(undefined), { once: true });
    });
    try {
      for (const f of files as Array<{ name?: unknown; data_b64?: unknown }>) {
        if (io.signal.aborted) break;
        const name = typeof f.name === 'string' ? path.basename(f.name) : 'input.wav';
        const one = listenOne(pipeline, speaker, sdk, name, Buffer.from(String(f.data_b64 ?? ''), 'base64'), outDir, args.realtime === true, user);
        one.catch((err: unknown) => {
          if (io.signal.aborted) sdk.log.warn({ err: errorMessage(err), file: name }, 'listen: a file the client no longer waits for failed');
        });
        const report = await Promise.race([one, gone]);
        if (report === undefined) break;
        reports.push(report);
        io.send({ file: name, transcript: report.transcript, reply: report.reply });
      }
    } finally {
      this.busy = false;
    }
    return { utterances: reports };
  }
}

/**
 * The EXPERIMENTAL offline wake phrase (plugin.voice.wake_phrase, used only
 * without a Wyoming wake service): pocketsphinx keyphrase spotting
 * (src/voice/keyphrase.ts). Undefined when off, or when the phrase is
 * refused (not dictionary words, fewer than four syllables: logged as an
 * error naming why); a warning says it is experimental and weak.
 */
export async function experimentalWakePhrase(settings: SettingsAPI, log: Logger): Promise<WakeWordDetector | undefined> {
  const raw = voiceSetting<string>(settings, 'wake_phrase').trim();
  if (!raw) return undefined;
  try {
    const { phrase, syllables } = await checkWakePhrase(raw);
    const threshold = voiceSetting<number>(settings, 'wake_phrase_threshold');
    log.warn({ phrase, syllables, threshold }, 'EXPERIMENTAL wake phrase by pocketsphinx keyphrase spotting: it misses often and fires falsely (npm run bench -- wake); the Wyoming wake service is the supported wake word');
    return new KeyphraseWake({ phrase, threshold });
  } catch (err) {
    log.error({ err: errorMessage(err) }, 'plugin.voice.wake_phrase is not used');
    return undefined;
  }
}

/** What the box says when the microphone is switched off or on (plugin.voice.mute), per language. */
export const MUTE_ANNOUNCEMENTS = {
  en: { mute: 'Microphone off.', unmute: 'Microphone on.' },
  zh: { mute: '麦克风已关闭。', unmute: '麦克风已打开。' },
} as const;

/**
 * Say it once through the speaker when the microphone is switched off or on
 * (the one button's long press, Home Assistant, the CLI): the voice
 * pipeline's `mute` / `unmute` facts come once per change, so each change is
 * said once. The muted box still speaks (messages, replies), so this is
 * heard. Returns an unsubscribe function.
 */
export function announceMute(sdk: Pick<PluginSDK, 'subscribe' | 'sendOutput' | 'settings' | 'log'>): () => void {
  return sdk.subscribe('plugin.voice.activity', (a) => {
    if (a.event !== 'mute' && a.event !== 'unmute') return;
    const texts = voiceSetting<string>(sdk.settings(), 'language') === 'zh' ? MUTE_ANNOUNCEMENTS.zh : MUTE_ANNOUNCEMENTS.en;
    sdk.sendOutput('speaker', texts[a.event], { announcement: a.event }).catch((err: unknown) => sdk.log.warn({ err: errorMessage(err) }, 'voice: could not announce the microphone state'));
  });
}

/**
 * Say in the start-up log how the box can be woken (button, push-to-talk,
 * Wyoming wake service), warn for each problem (nobody can wake it) and for
 * Chinese without the Wyoming ASR (with zh and the ASR set, the Chinese fact
 * is logged as information), and log the notes. The buttons count as simulated
 * when plugin.gpio.driver is sim, or auto on a machine without usable sysfs
 * GPIO; `micSimulated`: the microphone is no recorder (no sound card). Returns
 * the report (for `status`).
 */
export function logWakeWays(sdk: Pick<PluginSDK, 'log' | 'settings'>, cfg: WakeConfig, micSimulated = false): WakeReport {
  let sysfsRoot = '/sys';
  try {
    sysfsRoot = sdk.settings().get<string>('plugin.gpio.sysfs_root') || '/sys';
  } catch {
    // gpio settings not registered (no GPIO plugin): the default root
  }
  const simulated = cfg.gpioDriver === 'sim' || (cfg.gpioDriver === 'auto' && !probeSysfsGpio(sysfsRoot).present);
  const report = wakeReport(cfg, simulated, micSimulated);
  if (report.ways.length > 0) sdk.log.info({ ways: report.ways.map((w) => w.kind) }, wakeSummary(report));
  for (const p of report.problems) sdk.log.warn({}, p);
  for (const n of report.notes) sdk.log.info({}, n);
  if (report.chinese) {
    if (report.chinese.ok) sdk.log.info({}, report.chinese.text);
    else sdk.log.warn({}, report.chinese.text);
  }
  return report;
}

/**
 * The hint for a recording that went on with speech after the box stopped
 * listening (UtteranceOutcome.unheard): undefined when it did not, or only
 * silence or noise followed.
 */
export function unheardHint(unheard: { from_ms: number; speech: boolean } | undefined): string | undefined {
  if (!unheard?.speech) return undefined;
  return `the recording goes on with speech after ${(unheard.from_ms / 1000).toFixed(1)} s, where the utterance had ended (its silence, or its longest length); that was not listened to: the box hears one utterance per wake, as after a button press (feed the rest as its own file, or leave less than plugin.voice.silence_ms of silence between two commands)`;
}

/** Longest part of a reply file's name taken from the listened file's name, in UTF-8 bytes (file systems allow 255). */
const REPLY_BASE_MAX_BYTES = 100;

/**
 * The part of a reply file's name that comes from the listened file's
 * `name` (any string a client sent): its last path part without `.wav`,
 * without control characters (a NUL made the write fail after the command
 * had acted), not starting with a dot, cut to REPLY_BASE_MAX_BYTES on a
 * character boundary (a 240-character name gave ENAMETOOLONG, also after
 * acting); 'utterance' when nothing is left.
 */
export function replyBaseName(name: string): string {
  // eslint-disable-next-line no-control-regex
  let base = path.basename(name.replace(/[\u0000-\u001f\u007f]/g, '')).replace(/\.wav$/i, '').replace(/^\.+/, '');
  while (Buffer.byteLength(base) > REPLY_BASE_MAX_BYTES) base = [...base].slice(0, -1).join('');
  return base || 'utterance';
}

/**
 * Write a listened file's spoken reply next to the others as
 * `<input name>.<UTC yyyymmdd-hhmmss>[-n].reply.wav` and return its path: a
 * file listened to again (the same `yes.wav` for every question) keeps each
 * reply instead of overwriting the last one. Created exclusively (`wx`), so
 * two replies in one second get -2, -3, ….
 */
export function writeReplyWav(outDir: string, name: string, wav: Buffer, now = new Date()): string {
  const base = replyBaseName(name);
  const stamp = now.toISOString().replace(/[-:]/g, '').replace('T', '-').slice(0, 15);
  for (let n = 1; ; n++) {
    const file = path.join(outDir, `${base}.${stamp}${n > 1 ? `-${n}` : ''}.reply.wav`);
    try {
      writeFileSync(file, wav, { flag: 'wx' });
      return file;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
}

/** Peak within the first or last EDGE_MS of a listened clip that counts as speech cut tight to its edge (about -30 dBFS). */
const EDGE_PEAK = 1000;
/** How much of a listened clip's start and end is checked for speech cut tight (EDGE_PEAK), ms. */
const EDGE_MS = 50;
/** How far above the clip's own noise floor its edges must be to be speech cut tight, dB. */
const EDGE_ABOVE_FLOOR_DB = 6;

/**
 * What to tell the person when a listened clip was not understood and its
 * speech runs up to its first or last EDGE_MS (16 kHz mono s16le `pcm`):
 * a microphone hears silence around speech, and a yes that starts at the
 * first sample is never taken (pocketsphinx-judge.ts ANSWER_YES_MIN_LEAD_MS).
 * A newcomer's espeak-ng `-w` clips were "didn't catch that" with no word of
 * why. Undefined when both edges are quiet.
 */
export function tightClipHint(pcm: Buffer): string | undefined {
  const n = Math.floor(pcm.length / 2);
  const edge = Math.min(n, EDGE_MS * 16);
  const peak = (from: number, to: number): number => {
    let m = 0;
    for (let i = from; i < to; i++) m = Math.max(m, Math.abs(pcm.readInt16LE(i * 2)));
    return m;
  };
  const db = (from: number, to: number): number => {
    let sum = 0;
    for (let i = from; i < to; i++) sum += pcm.readInt16LE(i * 2) ** 2;
    return 10 * Math.log10(1 + sum / Math.max(1, to - from));
  };
  // Loud edges are speech cut tight only when they stand out of the recording's own floor (the 10th percentile of
  // its 10 ms frames), or the recording has no quiet part at all: a newcomer's real recordings, with room noise at
  // -34 dBFS, were told to pad theirs.
  const frames: number[] = [];
  for (let i = 0; i + 160 <= n; i += 160) frames.push(db(i, i + 160));
  frames.sort((a, b) => a - b);
  const floor = frames.length ? frames[Math.floor(frames.length * 0.1)]! : 0;
  const noQuiet = frames.length > 0 && frames[Math.floor(frames.length / 2)]! - floor < EDGE_ABOVE_FLOOR_DB;
  const loud = (from: number, to: number): boolean => peak(from, to) >= EDGE_PEAK && (noQuiet || db(from, to) >= floor + EDGE_ABOVE_FLOOR_DB);
  const start = loud(0, edge);
  const end = loud(n - edge, n);
  if (!start && !end) return undefined;
  const where = start && end ? 'at its very start and end' : start ? 'at its very start' : 'at its very end';
  return `the recording has sound ${where}: leave silence around the speech as a microphone would (about 0.5 s before, 1 s after: sox in.wav -r 16000 -c 1 -b 16 out.wav pad 0.5 1) and try again`;
}

async function listenOne(
  plugin: VoicePlugin,
  speaker: TeeSpeaker,
  sdk: PluginSDK,
  name: string,
  wav: Buffer,
  outDir: string,
  realtime: boolean,
  user?: string,
): Promise<ListenReport> {
  let pcm: Buffer;
  try {
    pcm = wavToVoicePcm(wav);
  } catch (err) {
    return { file: name, transcript: '', rejected: false, status: 'error', error: `not a usable WAV file: ${errorMessage(err)}`, actions: [], reply: '', timings: {} };
  }
  // A header with no samples (or less than one 10 ms frame) is no utterance: said so, never run through the pipeline.
  if (pcm.length < 320) {
    return { file: name, transcript: '', rejected: false, status: 'error', error: 'the WAV file has no audio (a header with no samples)', actions: [], reply: '', timings: {} };
  }
  const { actions, off } = watchActions(sdk);
  speaker.startCapture();
  try {
    const outcome = await plugin.feedUtterance(pcm, { realtime, ...(user ? { user } : {}) });
    let turn: TurnResult | undefined;
    if (outcome.turn) turn = await outcome.turn;
    const timings = await outcome.done;
    for (const t of turn?.tools ?? []) actions.push(`tool ${t.name}(${JSON.stringify(t.arguments)})${t.denied ? ' denied' : t.is_error ? ' failed' : ''}`);
    // What was heard after an early end (the rest of the recording), in order.
    const then: NonNullable<ListenReport['then']> = [];
    for (let next = outcome.continuation; next; ) {
      const o = await next;
      const t = o.turn ? await o.turn : undefined;
      await o.done;
      for (const x of t?.tools ?? []) actions.push(`tool ${x.name}(${JSON.stringify(x.arguments)})${x.denied ? ' denied' : x.is_error ? ' failed' : ''}`);
      if (o.status !== 'no_speech') then.push({ transcript: o.text, status: o.status, reply: t?.reply ?? o.said ?? '', ...recognition(o.stt) });
      next = o.continuation;
    }
    const audio = speaker.endCapture();
    let wavPath: string | undefined;
    if (audio) {
      // The turn has acted by now: a reply that cannot be written (a full disk) loses the file, never the report.
      try {
        wavPath = writeReplyWav(outDir, name, encodeWav(audio.pcm, { sampleRate: audio.sampleRate, channels: 1 }));
      } catch (err) {
        sdk.log.warn({ err: errorMessage(err), dir: outDir }, 'cannot write the spoken reply of a listened file');
      }
    }
    const settings = sdk.settings();
    const notUnderstood = settings.get<string>(settings.get<string>('plugin.voice.language') === 'zh' ? 'plugin.voice.message_not_understood_zh' : 'plugin.voice.message_not_understood');
    return {
      file: name,
      transcript: outcome.text,
      rejected: outcome.status === 'rejected' || outcome.status === 'no_speech',
      status: outcome.status,
      actions,
      reply: turn ? turn.reply : outcome.status === 'cancelled' ? '' : (outcome.said ?? notUnderstood),
      ...(audio?.texts.length ? { spoken: audio.texts } : {}),
      // A tight clip also loses the sounds of a name (a tester's unpadded "turn off the tv" was heard as "turn off the …"
      // and answered "I don't know a device by that name"): hinted then too.
      ...((h) => (h ? { hint: h } : {}))([outcome.status === 'rejected' || outcome.status === 'no_speech' || outcome.text.includes('…') ? tightClipHint(pcm) : undefined, unheardHint(outcome.unheard)].filter(Boolean).join('; ')),
      // No speech heard (the endpointer found none, so nothing was decoded): said as such, not as a bare "rejected".
      ...(outcome.status === 'no_speech' ? { reason: 'no_speech' } : recognition(outcome.stt)),
      ...(wavPath ? { wav: wavPath } : {}),
      timings: { speech_ms: timings.speech_ms, endpoint_wait_ms: timings.endpoint_wait_ms, transcript_ms: timings.transcript_ms, stt_finish_ms: timings.stt_finish_ms, first_audio_ms: timings.first_audio_ms },
      end_reason: timings.end_reason,
      ...(then.length ? { then } : {}),
    };
  } finally {
    speaker.endCapture();
    off();
  }
}
