/**
 * `homeagent doctor`: checks what the box depends on and says what to fix for
 * each failure — whether the service runs, audio devices, GPIO access,
 * how the box can be woken (the one button, a push-to-talk pin, the Wyoming
 * wake service, which must answer and offer the configured wake words),
 * Chinese speech (needs the Wyoming ASR),
 * the programs speech needs (espeak-ng, pocketsphinx and its model), the MQTT
 * broker, each LLM source (reachable, model present, supports tools, its
 * context large enough for the prompt the box sends), disk space, database
 * integrity. Every check has a time limit and never throws.
 * Runs inside the service or, when it is down, in `homeagent doctor` itself
 * from settings.db (doctorInputFromSettings).
 */
import { execFile } from 'node:child_process';
import { accessSync, constants, existsSync, readdirSync, readFileSync, statfsSync, statSync } from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import mqtt from 'mqtt';
import { errorMessage } from '../kernel/errors.js';
import { SETTINGS_STORE } from '../config/registry.js';
import { RUN_LOG_STORE } from '../kernel/run-log.js';
import { MEMORY_STORE } from '../memory/db.js';
import { TIMERS_STORE } from '../plugins/timers/timer-service.js';
import { LISTS_STORE } from '../plugins/lists/list-service.js';
import type { SettingsAPI } from '../kernel/settings-types.js';
import { DEBIAN_MODEL_DIR } from '../voice/stt/pronunciation.js';
import { visibleText } from '../kernel/visible-text.js';
import { describeWyoming } from '../voice/wyoming/connection.js';
import { probeSysfsGpio } from '../../hal/gpio/onoff-driver.js';
import { DiskKeeper, type DiskStatus } from './disk-keeper.js';
import { systemClock } from '../kernel/clock.js';
import { createLogger } from '../kernel/log.js';
import { readWakeConfig, settingOr, wakeReport, wakeSummary, type WakeConfig } from './wake-ways.js';
import { sandboxStatus, type SandboxMode } from '../plugins/external/sandbox.js';
import { startServiceHint } from './start-hint.js';

/** One check's outcome. */
export interface DoctorCheck {
  name: string;
  ok: boolean;
  detail: string;
  /** What to do about a failure. */
  fix?: string;
}

/** What the doctor needs to know. */
export interface DoctorInput {
  dataDir: string;
  /** MQTT broker URL, or undefined when the embedded broker is used. */
  brokerUrl?: string;
  brokerUsername?: string;
  brokerPassword?: string;
  /** LLM sources in order; `context_window` as core.llm.sources.<name>.context_window (0/absent = core.llm.num_ctx). */
  sources: Array<{ name: string; adapter: string; base_url: string; model: string; api_key?: string; context_window?: number }>;
  /** The embedding source of dense recall (core.llm.embedding.*; issue 19); absent = none configured (lexical only). */
  embedding?: { source: string; adapter: string; base_url: string; model: string; api_key?: string };
  /** core.llm.num_ctx: the context asked of Ollama (0 = the model's own). */
  numCtx?: number;
  /** The largest prompt of the box's recent LLM requests, estimated tokens; default: read from the run log (`largestRecentPrompt`). */
  promptTokens?: number;
  /** sysfs root for GPIO (tests). */
  sysfsRoot?: string;
  /** Free-space threshold, bytes (default 200 MB). */
  minFreeBytes?: number;
  fetchImpl?: typeof fetch;
  /** How listening starts and what speaks (from plugin.gpio.* and plugin.voice.*); checks skipped when absent. */
  voice?: VoiceDoctorInput;
  /** PATH searched for espeak-ng and pocketsphinx_batch (default process.env.PATH; tests). */
  pathEnv?: string;
  /** The pocketsphinx model directory (default Debian's /usr/share/pocketsphinx/model/en-us). */
  pocketsphinxModelDir?: string;
  /** Whether the service answers on `socket`; `dataDir`: its data directory, named in how to start it (startServiceHint). */
  service?: { running: boolean; socket: string; dataDir?: string };
  /** Sizes of the run log, memory and log files against their bounds (the disk keeper, issue 18); checks skipped when absent. */
  disk?: DiskStatus;
  /** core.plugins.sandbox (default auto): how process plugins are confined (issue 17). */
  pluginSandbox?: SandboxMode;
}

/**
 * What the listening and speech checks read from the settings: how the box
 * can be woken (src/service/wake-ways.ts WakeConfig: the buttons, the
 * Wyoming wake service, the language and the Wyoming ASR) and the TTS engine.
 */
export interface VoiceDoctorInput extends WakeConfig {
  /** plugin.voice.tts_engine. */
  ttsEngine: string;
  /** plugin.voice.piper_binary and plugin.voice.piper_model ('' = unset). */
  piperBinary?: string;
  piperModel?: string;
  /** plugin.voice.wyoming_tts_host and _port. */
  ttsHost?: string;
  ttsPort?: number;
}

/**
 * The TTS engine plugin.voice.tts_engine chose can speak: piper has its
 * binary (an executable file), its model and the model's .onnx.json; a
 * Wyoming TTS service answers `describe` within `timeoutMs`. Undefined for
 * espeak-ng (checkSpeechPrograms looks for it). The voice plugin speaks with
 * espeak-ng when the piper settings are unusable (pipeline.ts
 * ttsFromSettings), which only its log said: a tester's `config set
 * plugin.voice.tts_engine piper` with no binary was taken without a word.
 */
export async function checkTts(v: VoiceDoctorInput, timeoutMs = 3000): Promise<DoctorCheck | undefined> {
  const name = 'tts engine';
  if (v.ttsEngine === 'piper') {
    const fallback = 'the box speaks with espeak-ng instead';
    const binary = v.piperBinary ?? '';
    const model = v.piperModel ?? '';
    const unset = [binary ? '' : 'plugin.voice.piper_binary', model ? '' : 'plugin.voice.piper_model'].filter(Boolean);
    if (unset.length) return { name, ok: false, detail: `plugin.voice.tts_engine is piper but ${unset.join(' and ')} ${unset.length === 1 ? 'is' : 'are'} empty: ${fallback}`, fix: `${unset.map((k) => `homeagent config set ${k} ${k.endsWith('model') ? '/ABSOLUTE/PATH/voice.onnx' : '/ABSOLUTE/PATH/piper'}`).join(' and ')} (README: Configuration), or homeagent config set plugin.voice.tts_engine espeak-ng` };
    // A bare name is looked up on PATH, as spawning it does.
    const program = binary.includes('/') ? binary : (findOnPath(binary) ?? binary);
    try {
      if (!statSync(program).isFile()) throw new Error('not a file');
      accessSync(program, constants.X_OK);
    } catch {
      return { name, ok: false, detail: `piper binary ${binary} is not an executable file${binary.includes('/') ? '' : ' on PATH'}: nothing is said aloud`, fix: 'set plugin.voice.piper_binary to the piper program (the release archive of rhasspy/piper, not the Debian package named piper)' };
    }
    for (const f of [model, `${model}.json`]) {
      const isFile = ((): boolean => {
        try {
          return statSync(f).isFile();
        } catch {
          return false;
        }
      })();
      if (!isFile) return { name, ok: false, detail: `piper voice file ${f} is missing (or not a file): nothing is said aloud`, fix: 'put the voice .onnx and its .onnx.json side by side and set plugin.voice.piper_model to the .onnx' };
    }
    return { name, ok: true, detail: `piper ${binary}, voice ${model}` };
  }
  if (v.ttsEngine === 'wyoming') {
    const where = `${v.ttsHost ?? ''}:${v.ttsPort ?? 10200}`;
    if (!v.ttsHost) return { name, ok: false, detail: 'plugin.voice.tts_engine is wyoming but plugin.voice.wyoming_tts_host is empty', fix: 'homeagent config set plugin.voice.wyoming_tts_host HOST (a Wyoming piper service, port 10200)' };
    try {
      const info = await describeWyoming({ host: v.ttsHost, port: v.ttsPort ?? 10200, connectTimeoutMs: timeoutMs }, timeoutMs);
      if (!Array.isArray(info.tts) || info.tts.length === 0) return { name, ok: false, detail: `${where} answers but offers no TTS (is it a TTS service? ASR is on 10300, wake words on 10400)`, fix: 'point plugin.voice.wyoming_tts_host/_port at a Wyoming piper service' };
    } catch (err) {
      return { name, ok: false, detail: `Wyoming TTS ${where}: ${errorMessage(err)}; nothing is said aloud until it answers`, fix: 'start the Wyoming piper service or correct plugin.voice.wyoming_tts_host/_port, or homeagent config set plugin.voice.tts_engine espeak-ng' };
    }
    return { name, ok: true, detail: `Wyoming TTS ${where} answers` };
  }
  return undefined;
}

/** `name` as an executable file in a directory of `pathEnv`, or undefined. */
export function findOnPath(name: string, pathEnv = process.env.PATH ?? ''): string | undefined {
  for (const dir of pathEnv.split(path.delimiter)) {
    if (!dir) continue;
    const f = path.join(dir, name);
    try {
      if (statSync(f).isFile()) {
        accessSync(f, constants.X_OK);
        return f;
      }
    } catch {
      /* not here */
    }
  }
  return undefined;
}

/** How to get a wake word: the Wyoming wake service (README "The button and the wake word"). */
const WAKE_FIX = 'run a Wyoming wake service (docker run -d -p 10400:10400 rhasspy/wyoming-openwakeword --preload-model ok_nabu, or the openWakeWord add-on of Home Assistant) and: homeagent config set plugin.voice.wyoming_wake_host HOST';

/**
 * What to do so that a person can start listening, for this configuration:
 * only what is not already so (a fix never tells to set a setting that has
 * that value already).
 */
function listeningFix(v: WakeConfig, gpioSimulated: boolean): string {
  const pin = v.stopPin >= 0 ? v.stopPin : 17;
  if (v.pttPin >= 0) return gpioSimulated ? `on the Pi, wire the push-to-talk button to BCM ${v.pttPin} and GND` : `check the push-to-talk button on BCM ${v.pttPin}`;
  const wire = `${gpioSimulated ? 'on the Pi, ' : ''}wire a button to BCM ${pin} and GND${v.stopPin < 0 ? ` (homeagent config set plugin.gpio.stop_pin ${pin})` : ''}`;
  if (!v.oneButton) return `${wire} and let it also start listening (homeagent config set plugin.gpio.one_button true), or add a push-to-talk button (plugin.gpio.ptt_pin)`;
  return `${wire}: with plugin.gpio.one_button on (it is), a press starts listening; or a separate push-to-talk button (plugin.gpio.ptt_pin)`;
}

/**
 * How can the box be woken (src/service/wake-ways.ts)? The one button (the
 * stop pin with no push-to-talk pin), a separate push-to-talk button, the
 * Wyoming wake service. Fails when nothing can wake it, or when the only
 * way is a simulated button (`gpioSimulated`: plugin.gpio.driver sim, or no
 * GPIO on this machine), when the microphone is simulated (`micSimulated`: no
 * capture device), or when the only way is a wake service that does not
 * answer (`wakeServiceDown`: checkWakeService failed). The detail names every
 * way in plain words.
 */
export function checkListening(v: VoiceDoctorInput, gpioSimulated = v.gpioDriver === 'sim', micSimulated = false, wakeServiceDown = false): DoctorCheck {
  const r = wakeReport(v, gpioSimulated, micSimulated);
  // The wake service is the only way a person can wake the box, and it does not answer (checkWakeService): nobody can.
  if (wakeServiceDown && r.problems.length === 0 && !r.ways.some((w) => w.kind === 'wake_phrase' || ((w.kind === 'button' || w.kind === 'push_to_talk') && !gpioSimulated))) {
    r.problems.push(`nobody in the room can wake the box: the Wyoming wake service at ${v.wakeHost}:${v.wakePort} does not answer${gpioSimulated ? ' and the buttons are simulated' : ''}`);
  }
  if (r.problems.length > 0) {
    return {
      name: 'listening',
      ok: false,
      detail: [...r.problems, ...r.ways.map((w) => w.text)].join('; '),
      fix: `${listeningFix(v, gpioSimulated)}, or ${WAKE_FIX}`,
    };
  }
  return { name: 'listening', ok: true, detail: wakeSummary(r) };
}

/**
 * Chinese speech (plugin.voice.language zh): Debian has no Chinese acoustic
 * model for pocketsphinx, so spoken Chinese needs the Wyoming ASR. Fails
 * without plugin.voice.wyoming_asr_host; undefined for other languages.
 */
export function checkChineseSpeech(v: VoiceDoctorInput): DoctorCheck | undefined {
  const zh = wakeReport(v).chinese;
  if (!zh) return undefined;
  if (zh.ok) return { name: 'chinese speech', ok: true, detail: zh.text };
  return {
    name: 'chinese speech',
    ok: false,
    detail: zh.text,
    fix: 'run faster-whisper with Wyoming (docker run -d -p 10300:10300 rhasspy/wyoming-whisper --model small --language zh) and: homeagent config set plugin.voice.wyoming_asr_host HOST',
  };
}

/** The wake word names a Wyoming `info` offers (info.wake[].models[].name). */
export function offeredWakeWords(info: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const prog of Array.isArray(info.wake) ? (info.wake as unknown[]) : []) {
    const models = typeof prog === 'object' && prog !== null && Array.isArray((prog as { models?: unknown }).models) ? ((prog as { models: unknown[] }).models) : [];
    for (const m of models) if (typeof m === 'object' && m !== null && typeof (m as { name?: unknown }).name === 'string') out.push((m as { name: string }).name);
  }
  return out;
}

/**
 * The Wyoming wake service answers (`describe` -> `info` within 3 s), has
 * wake words, and has the ones plugin.voice.wake_words asks for. Undefined
 * when no wake service is configured.
 */
export async function checkWakeService(v: VoiceDoctorInput, timeoutMs = 3000): Promise<DoctorCheck | undefined> {
  if (!v.wakeHost) {
    // Wake words with no service to spot them: a tester set plugin.voice.wake_words alone and was told nothing.
    // Names as the service reads them (comma-separated, blanks dropped), shown without control characters.
    const names = v.wakeWords.split(',').map((w) => visibleText(w).replace(/\s+/g, ' ').trim()).filter(Boolean);
    if (names.length) return { name: 'wake word service', ok: false, detail: `plugin.voice.wake_words is ${names.join(', ')} but plugin.voice.wyoming_wake_host is empty: no wake word is listened for`, fix: WAKE_FIX };
    return undefined;
  }
  const where = `${v.wakeHost}:${v.wakePort}`;
  let info: Record<string, unknown>;
  try {
    info = await describeWyoming({ host: v.wakeHost, port: v.wakePort, connectTimeoutMs: timeoutMs }, timeoutMs);
  } catch (err) {
    return { name: 'wake word service', ok: false, detail: `${where}: ${errorMessage(err)}; the box is not woken by voice until it answers (it reconnects by itself)`, fix: `start the wake service (docker ps; the openWakeWord add-on's log) or correct plugin.voice.wyoming_wake_host/_port; ${WAKE_FIX}` };
  }
  const offered = offeredWakeWords(info);
  if (offered.length === 0) return { name: 'wake word service', ok: false, detail: `${where} answers but offers no wake word (is it a wake service? ASR is on 10300, TTS on 10200)`, fix: WAKE_FIX };
  const wanted = v.wakeWords.split(',').map((w) => w.trim()).filter(Boolean);
  const missing = wanted.filter((w) => !offered.includes(w));
  if (missing.length > 0) {
    return { name: 'wake word service', ok: false, detail: `${where} does not offer ${missing.join(', ')} (it offers: ${offered.join(', ')})`, fix: `homeagent config set plugin.voice.wake_words ${offered[0]} (one of: ${offered.join(', ')})` };
  }
  return { name: 'wake word service', ok: true, detail: `${where} answers; listening for ${wanted.length ? wanted.join(', ') : `all it offers: ${offered.join(', ')}`}` };
}

/** The programs speech needs: espeak-ng (the default TTS, and pronunciations) and pocketsphinx_batch with its model. */
export function checkSpeechPrograms(v: VoiceDoctorInput | undefined, pathEnv?: string, modelDir = DEBIAN_MODEL_DIR): DoctorCheck[] {
  const out: DoctorCheck[] = [];
  const espeak = findOnPath('espeak-ng', pathEnv);
  const needs = v?.ttsEngine === 'espeak-ng' ? 'the voice (plugin.voice.tts_engine is espeak-ng) and the pronunciations of device names need it' : 'the pronunciations of device names need it';
  out.push(espeak ? { name: 'espeak-ng', ok: true, detail: espeak } : { name: 'espeak-ng', ok: false, detail: `espeak-ng is not installed (not on PATH): ${needs}`, fix: 'sudo apt-get install espeak-ng' });
  const ps = findOnPath('pocketsphinx_batch', pathEnv);
  const hmm = path.join(modelDir, 'en-us');
  if (!ps) out.push({ name: 'pocketsphinx', ok: false, detail: 'pocketsphinx_batch is not installed (not on PATH): spoken device commands are not recognised', fix: 'sudo apt-get install pocketsphinx pocketsphinx-en-us' });
  else if (!existsSync(hmm)) out.push({ name: 'pocketsphinx', ok: false, detail: `${ps} is installed but its acoustic model ${hmm} is missing`, fix: 'sudo apt-get install pocketsphinx-en-us' });
  else out.push({ name: 'pocketsphinx', ok: true, detail: `${ps}, model ${hmm}` });
  return out;
}

/**
 * What the doctor needs, read from the settings (the running service's, or
 * settings.db opened by `homeagent doctor` while the service is down): the
 * broker (empty plugin.mqtt.url = the embedded broker), the LLM sources in
 * core.llm.sources_order, GPIO and voice settings. Unregistered keys read as
 * their absence.
 */
export function doctorInputFromSettings(s: SettingsAPI, dataDir: string): DoctorInput {
  let disk: DiskStatus | undefined;
  try {
    disk = new DiskKeeper({ dataDir, settings: s, clock: systemClock, log: createLogger('doctor'), runLog: () => undefined }).status();
  } catch {
    disk = undefined;
  }
  const get = <T>(key: string, dflt: T): T => settingOr(s, key, dflt);
  const order = get<unknown>('core.llm.sources_order', []);
  const sources = (Array.isArray(order) ? order : []).filter((n): n is string => typeof n === 'string').map((name) => {
    const p = `core.llm.sources.${name}`;
    return { name, adapter: get(`${p}.adapter`, ''), base_url: get(`${p}.base_url`, ''), model: get(`${p}.model`, ''), api_key: get(`${p}.api_key`, ''), context_window: get(`${p}.context_window`, 0) };
  });
  const brokerUrl = get('plugin.mqtt.url', '');
  const embSource = get('core.llm.embedding.source', '');
  const embModel = get('core.llm.embedding.model', '');
  const ep = `core.llm.sources.${embSource}`;
  return {
    dataDir,
    ...(embSource && embModel ? { embedding: { source: embSource, adapter: get(`${ep}.adapter`, ''), base_url: get(`${ep}.base_url`, ''), model: embModel, api_key: get(`${ep}.api_key`, '') } } : {}),
    ...(brokerUrl ? { brokerUrl, brokerUsername: get('plugin.mqtt.username', ''), brokerPassword: get('plugin.mqtt.password', '') } : {}),
    sources,
    numCtx: get('core.llm.num_ctx', 8192),
    sysfsRoot: get('plugin.gpio.sysfs_root', '/sys'),
    voice: { ...readWakeConfig(s), ttsEngine: get('plugin.voice.tts_engine', 'espeak-ng'), piperBinary: get('plugin.voice.piper_binary', ''), piperModel: get('plugin.voice.piper_model', ''), ttsHost: get('plugin.voice.wyoming_tts_host', ''), ttsPort: get('plugin.voice.wyoming_tts_port', 10200) },
    ...(disk ? { disk } : {}),
    pluginSandbox: get<SandboxMode>('core.plugins.sandbox', 'auto'),
  };
}

function run(cmd: string, args: string[], timeoutMs = 5000): Promise<{ code: number | null; stdout: string; stderr: string; error?: NodeJS.ErrnoException }> {
  return new Promise((resolve) => {
    execFile(cmd, args, { timeout: timeoutMs, encoding: 'utf8' }, (error, stdout, stderr) => {
      const e = error as (NodeJS.ErrnoException & { code?: number | string }) | null;
      resolve({ code: e ? (typeof e.code === 'number' ? e.code : -1) : 0, stdout, stderr, ...(e ? { error: e } : {}) });
    });
  });
}

/** The process plugins installed under `<dataDir>/plugins` (folders whose plugin.json says kind process). */
function installedProcessPlugins(dataDir: string): string[] {
  const dir = path.join(dataDir, 'plugins');
  const out: string[] = [];
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return out;
  }
  for (const n of names) {
    try {
      const m = JSON.parse(readFileSync(path.join(dir, n, 'plugin.json'), 'utf8')) as { kind?: unknown };
      if (m.kind === 'process') out.push(n);
    } catch {
      /* not a plugin */
    }
  }
  return out;
}

/**
 * The process-plugin sandbox (issue 17 "A real boundary"; src/plugins/external/sandbox.ts):
 * bubblewrap works (confined), or plugins run unsandboxed with advisory
 * capabilities — a failure when process plugins are installed and the mode
 * is not explicitly `off`.
 */
export function checkPluginSandbox(dataDir: string, mode: SandboxMode = 'auto'): DoctorCheck {
  const s = sandboxStatus(mode);
  const installed = installedProcessPlugins(dataDir);
  const which = installed.length ? `${installed.length} process plugin(s) installed (${installed.join(', ')})` : 'no process plugins installed';
  if (s.confined) return { name: 'plugin sandbox', ok: true, detail: `${which}; ${s.summary}` };
  const ok = installed.length === 0 || mode === 'off';
  return {
    name: 'plugin sandbox',
    ok,
    detail: `${which}; ${s.summary}`,
    ...(ok ? {} : { fix: mode === 'required' ? 'install bubblewrap (apt install bubblewrap) and check that the service may create user namespaces (systemd/homeagent.service RestrictNamespaces=)' : 'install bubblewrap (apt install bubblewrap); or accept unsandboxed plugins with homeagent config set core.plugins.sandbox off' }),
  };
}

/** Audio: sound cards for playback and capture. */
export async function checkAudio(): Promise<DoctorCheck[]> {
  const out: DoctorCheck[] = [];
  for (const [tool, what] of [['aplay', 'playback'], ['arecord', 'capture']] as const) {
    const r = await run(tool, ['-l']);
    if (r.error?.code === 'ENOENT') {
      out.push({ name: `audio ${what}`, ok: false, detail: `${tool} is not installed`, fix: 'apt-get install alsa-utils' });
      continue;
    }
    const cards = (r.stdout.match(/^card \d+:/gm) ?? []).length;
    out.push(
      cards > 0
        ? { name: `audio ${what}`, ok: true, detail: `${cards} ${what} device(s)` }
        : { name: `audio ${what}`, ok: false, detail: `no ${what} device found; the simulated ${what === 'playback' ? 'speaker' : 'microphone'} is used`, fix: `plug in a USB ${what === 'playback' ? 'speaker' : 'microphone'} or enable the audio HAT's overlay in /boot/firmware/config.txt, then check \`${tool} -l\`; the service user must be in the audio group` },
    );
  }
  return out;
}

/** GPIO: sysfs export is writable (gpio group) or a gpiochip device is accessible. */
export function checkGpio(sysfsRoot = '/sys'): DoctorCheck {
  const gpio = path.join(sysfsRoot, 'class', 'gpio');
  if (!existsSync(gpio)) return { name: 'gpio', ok: false, detail: `${gpio} does not exist (no GPIO on this machine); the simulated buttons and LEDs are used`, fix: 'on a Raspberry Pi, use a kernel with sysfs GPIO (Raspberry Pi OS Bookworm has it)' };
  const chips = readdirSync(gpio).filter((n) => n.startsWith('gpiochip'));
  try {
    accessSync(path.join(gpio, 'export'), constants.W_OK);
    return { name: 'gpio', ok: true, detail: `${chips.length} gpio chip(s); export is writable` };
  } catch {
    return { name: 'gpio', ok: false, detail: `${path.join(gpio, 'export')} is not writable by this user`, fix: 'add the service user to the gpio group (usermod -aG gpio homeagent) and install systemd/99-homeagent-gpio.rules into /etc/udev/rules.d' };
  }
}

/** The MQTT broker answers a CONNECT within 5 s. */
export async function checkBroker(url: string | undefined, username?: string, password?: string): Promise<DoctorCheck> {
  if (!url) return { name: 'mqtt broker', ok: true, detail: 'no broker configured: the embedded broker on 127.0.0.1 is used' };
  return new Promise((resolve) => {
    const client = mqtt.connect(url, { connectTimeout: 5000, reconnectPeriod: 0, clientId: `homeagent-doctor-${process.pid}-${Date.now()}`, ...(username ? { username, password } : {}) });
    const done = (c: DoctorCheck) => {
      client.end(true);
      resolve(c);
    };
    const timer = setTimeout(() => done({ name: 'mqtt broker', ok: false, detail: `${url}: no answer within 5 s`, fix: 'check plugin.mqtt.url, that the broker runs (systemctl status mosquitto) and that the network/firewall lets port 1883 through' }), 5500);
    client.once('connect', () => {
      clearTimeout(timer);
      done({ name: 'mqtt broker', ok: true, detail: `${url}: connected` });
    });
    client.once('error', (err) => {
      clearTimeout(timer);
      const auth = /not authorized|bad user/i.test(err.message);
      done({ name: 'mqtt broker', ok: false, detail: `${url}: ${err.message}`, fix: auth ? 'set plugin.mqtt.username and plugin.mqtt.password to an account the broker accepts' : 'check plugin.mqtt.url and that the broker is running' });
    });
  });
}

/**
 * The largest `prompt_tokens` of the last `limit` LLM requests in the run
 * log (`runlog.db` in `dataDir`, read-only; the service may be running);
 * undefined when there is no log or no request in it yet.
 */
export function largestRecentPrompt(dataDir: string, limit = 50): number | undefined {
  const file = path.join(dataDir, 'runlog.db');
  if (!existsSync(file)) return undefined;
  try {
    const db = new Database(file, { readonly: true, fileMustExist: true });
    try {
      const rows = db.prepare("SELECT body FROM run_events WHERE type = 'llm.requested' ORDER BY seq DESC LIMIT ?").all(limit) as Array<{ body: string }>;
      let max: number | undefined;
      for (const r of rows) {
        const n = (JSON.parse(r.body) as { prompt_tokens?: unknown }).prompt_tokens;
        if (typeof n === 'number' && Number.isFinite(n) && (max === undefined || n > max)) max = n;
      }
      return max;
    } finally {
      db.close();
    }
  } catch {
    return undefined;
  }
}

/**
 * The context Ollama gives the model (issue 19), from its /api/show answer
 * and the num_ctx the box sends (`sent`: a source's context_window, else
 * core.llm.num_ctx; 0 = none set): what is sent, within the window the model
 * was trained for (model_info `<arch>.context_length`); with none set, the
 * box sends the model's own, a `num_ctx` parameter of its Modelfile over the
 * trained window (the rule of adapters/ollama.lua context_window).
 * `trained` is undefined when /api/show does not say; `context` too when
 * nothing is known.
 */
export function ollamaContext(show: { parameters?: unknown; model_info?: Record<string, unknown> }, sent: number): { context?: number; trained?: number } {
  const param = typeof show.parameters === 'string' ? /(?:^|\n)num_ctx\s+(\d+)/.exec(show.parameters) : null;
  const modelfile = param ? Number(param[1]) : undefined;
  let trained: number | undefined;
  const info = show.model_info;
  if (info) {
    const arch = info['general.architecture'];
    const key = typeof arch === 'string' && typeof info[`${arch}.context_length`] === 'number' ? `${arch}.context_length` : Object.keys(info).find((k) => k.endsWith('.context_length') && typeof info[k] === 'number');
    if (key) trained = info[key] as number;
  }
  const context = sent > 0 ? Math.min(sent, trained ?? sent) : (modelfile ?? trained);
  return { ...(context !== undefined ? { context } : {}), ...(trained !== undefined ? { trained } : {}) };
}

/**
 * One LLM source: reachable, model present, supports tools (Ollama /api/show
 * capabilities), and for Ollama its context (`ollamaContext`) at least
 * `prompt.promptTokens`, else Ollama silently cuts the start of the prompt
 * (persona, rules, tools).
 */
export async function checkLlmSource(src: DoctorInput['sources'][number], fetchImpl: typeof fetch = fetch, prompt: { numCtx?: number; promptTokens?: number } = {}): Promise<DoctorCheck> {
  const name = `llm source ${src.name}`;
  const base = src.base_url.replace(/\/+$/, '');
  const headers: Record<string, string> = src.api_key ? { Authorization: `Bearer ${src.api_key}` } : {};
  const get = async (p: string, init?: RequestInit) => {
    const ctl = AbortSignal.timeout(5000);
    return fetchImpl(base + p, { ...init, headers: { ...headers, ...(init?.headers as Record<string, string>) }, signal: ctl });
  };
  try {
    if (src.adapter === 'ollama') {
      const tags = await get('/api/tags');
      if (!tags.ok) return { name, ok: false, detail: `${base}/api/tags answered HTTP ${tags.status}`, fix: 'check core.llm.sources.' + src.name + '.base_url' };
      const body = (await tags.json()) as { models?: Array<{ name: string; model?: string }> };
      const models = (body.models ?? []).map((m) => m.name);
      const present = models.some((m) => m === src.model || m === `${src.model}:latest`);
      if (!present) return { name, ok: false, detail: `model ${src.model} is not on ${base} (has: ${models.join(', ') || 'none'})`, fix: `ollama pull ${src.model}` };
      const show = await get('/api/show', { method: 'POST', body: JSON.stringify({ model: src.model }), headers: { 'Content-Type': 'application/json' } });
      const info = show.ok ? ((await show.json()) as { capabilities?: string[]; parameters?: unknown; model_info?: Record<string, unknown> }) : {};
      if (info.capabilities && !info.capabilities.includes('tools')) return { name, ok: false, detail: `${src.model} does not support tools; device control by the LLM will not work (local intents still do)`, fix: 'choose a model with tool support, e.g. qwen2.5 or llama3.1' };
      const sent = src.context_window && src.context_window > 0 ? src.context_window : (prompt.numCtx ?? 0);
      const { context, trained } = ollamaContext(info, sent);
      const need = prompt.promptTokens;
      if (context !== undefined && need !== undefined && context < need) {
        const setting = src.context_window && src.context_window > 0 ? `core.llm.sources.${src.name}.context_window` : 'core.llm.num_ctx';
        const want = Math.ceil((need * 1.25) / 1024) * 1024;
        return {
          name,
          ok: false,
          detail: `${src.model}'s context is ${context} tokens (${sent > 0 ? `num_ctx ${sent}` : 'no num_ctx set'}${trained !== undefined ? `, the model's ${trained}` : ''}), smaller than the box's prompt (up to ${need} tokens in recent requests): Ollama cuts the start of the prompt (persona, rules, tools)`,
          fix: trained !== undefined && trained < need ? `choose a model with a longer context than ${trained} tokens` : `homeagent config set ${setting} ${want}`,
        };
      }
      const ctxText = context !== undefined ? `, context ${context} tokens${need !== undefined ? ` (prompts up to ${need})` : ''}` : '';
      return { name, ok: true, detail: `${base}: ${src.model} present${info.capabilities ? ', supports tools' : ''}${ctxText}` };
    }
    const r = await get('/models');
    if (r.status === 401 || r.status === 403) return { name, ok: false, detail: `${base}: HTTP ${r.status} (key refused)`, fix: `set core.llm.sources.${src.name}.api_key` };
    if (!r.ok) return { name, ok: false, detail: `${base}/models answered HTTP ${r.status}`, fix: `check core.llm.sources.${src.name}.base_url` };
    const body = (await r.json()) as { data?: Array<{ id: string }> };
    const ids = (body.data ?? []).map((m) => m.id);
    if (ids.length && !ids.includes(src.model)) return { name, ok: false, detail: `model ${src.model} not offered by ${base}`, fix: `set core.llm.sources.${src.name}.model to one of: ${ids.slice(0, 8).join(', ')}` };
    return { name, ok: true, detail: `${base}: reachable, ${src.model}` };
  } catch (err) {
    return { name, ok: false, detail: `${base}: ${errorMessage(err)}`, fix: src.adapter === 'ollama' ? 'start Ollama (systemctl start ollama) or point core.llm.sources.' + src.name + '.base_url at a running one' : 'check the host is reachable from the box' };
  }
}

/**
 * The embedding source of dense recall (issue 19): asks it for one
 * embedding the way the adapter does (Ollama /api/embed, else
 * /v1/embeddings). Not configured, or failing: memory recall is lexical
 * only, which this says (not configured is no failure).
 */
export async function checkEmbeddings(e: DoctorInput['embedding'], fetchImpl: typeof fetch = fetch): Promise<DoctorCheck> {
  const name = 'embeddings';
  if (!e) return { name, ok: true, detail: 'no embedding model configured: memory recall is lexical only', fix: 'optional: homeagent config set core.llm.embedding.source ollama; homeagent config set core.llm.embedding.model nomic-embed-text' };
  const base = e.base_url.replace(/\/+$/, '');
  const ollama = e.adapter === 'ollama';
  const url = base + (ollama ? '/api/embed' : '/v1/embeddings');
  try {
    const r = await fetchImpl(url, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...(e.api_key ? { Authorization: `Bearer ${e.api_key}` } : {}) },
      body: JSON.stringify({ model: e.model, input: ['homeagent doctor'] }),
      signal: AbortSignal.timeout(10000),
    });
    if (!r.ok) {
      return { name, ok: false, detail: `${url} answered HTTP ${r.status} for ${e.model}: memory recall is lexical only`, fix: r.status === 404 && ollama ? `ollama pull ${e.model}` : `check core.llm.embedding.model and core.llm.sources.${e.source}` };
    }
    const body = (await r.json()) as { embeddings?: number[][]; data?: Array<{ embedding?: number[] }> };
    const dim = (ollama ? body.embeddings?.[0] : body.data?.[0]?.embedding)?.length ?? 0;
    if (!dim) return { name, ok: false, detail: `${url} gave no vector for ${e.model}: memory recall is lexical only`, fix: `choose an embedding model for core.llm.embedding.model` };
    return { name, ok: true, detail: `${e.model} on ${e.source} (${base}): ${dim} dimensions; dense recall joins the lexical channels` };
  } catch (err) {
    return { name, ok: false, detail: `${url}: ${errorMessage(err)}: memory recall is lexical only`, fix: `start the embedding source or point core.llm.sources.${e.source}.base_url at a running one` };
  }
}

/** Free space on the data directory's file system. */
export function checkDisk(dataDir: string, minFree = 200 * 1024 * 1024): DoctorCheck {
  try {
    const s = statfsSync(dataDir);
    const free = s.bavail * s.bsize;
    const mb = Math.round(free / 1048576);
    return free >= minFree ? { name: 'disk space', ok: true, detail: `${mb} MB free in ${dataDir}` } : { name: 'disk space', ok: false, detail: `only ${mb} MB free in ${dataDir}`, fix: 'free space (journalctl --vacuum-size=50M, remove old releases in /opt/homeagent/releases)' };
  } catch (err) {
    return { name: 'disk space', ok: false, detail: errorMessage(err), fix: `create ${dataDir} and give the service user write access` };
  }
}

/**
 * What the box keeps on the card against its bounds (issue 18): one line
 * with every area's size; fails when an area warns (the memory near or at
 * its cap).
 */
export function checkStorage(disk: DiskStatus): DoctorCheck {
  const sizes = disk.areas.map((a) => `${a.name} ${a.used_mb} MB${a.max_mb > 0 ? ` of ${a.max_mb}` : ''}`).join(', ');
  const warnings = disk.areas.filter((a) => a.warning).map((a) => a.warning!);
  return warnings.length === 0
    ? { name: 'storage', ok: true, detail: sizes }
    : { name: 'storage', ok: false, detail: `${sizes}; ${warnings.join('; ')}`, fix: 'forget what is no longer needed (homeagent memory forget, or ask the box to forget), or raise core.storage.memory_max_mb if the card has room' };
}

/** The schema version this release writes, per database file (src/kernel/store-version.ts). */
const STORE_VERSIONS: Readonly<Record<string, number>> = {
  'memory.db': MEMORY_STORE.version,
  'runlog.db': RUN_LOG_STORE.version,
  'settings.db': SETTINGS_STORE.version,
  'timers.db': TIMERS_STORE.version,
  'lists.db': LISTS_STORE.version,
};

/**
 * SQLite integrity and schema version (`PRAGMA user_version`) of every
 * database in the data directory; a store newer than this release supports
 * fails with the rollback as the fix.
 */
export function checkDatabases(dataDir: string): DoctorCheck[] {
  let files: string[] = [];
  try {
    files = readdirSync(dataDir).filter((f) => f.endsWith('.db'));
  } catch {
    return [{ name: 'databases', ok: false, detail: `cannot read ${dataDir}`, fix: 'check the data directory permissions' }];
  }
  return files.map((f) => {
    try {
      const db = new Database(path.join(dataDir, f), { readonly: true, fileMustExist: true });
      const r = String(db.pragma('integrity_check', { simple: true }));
      const version = Number(db.pragma('user_version', { simple: true }));
      db.close();
      const supported = STORE_VERSIONS[f];
      if (r === 'ok' && supported !== undefined && version > supported) {
        return { name: `database ${f}`, ok: false, detail: `schema version ${version}, newer than this release supports (${supported})`, fix: 'it was written by a newer release: start that one again, or run "sudo homeagent rollback" from it' };
      }
      return r === 'ok' ? { name: `database ${f}`, ok: true, detail: `integrity ok, schema version ${version}` } : { name: `database ${f}`, ok: false, detail: r, fix: `stop the service, back up ${f}, and run sqlite3 ${f} ".recover" into a new file` };
    } catch (err) {
      return { name: `database ${f}`, ok: false, detail: errorMessage(err), fix: `stop the service and check ${f}` };
    }
  });
}

export { startServiceHint } from './start-hint.js';

/** Run every check. */
export async function runDoctor(input: DoctorInput): Promise<{ ok: boolean; checks: DoctorCheck[] }> {
  const checks: DoctorCheck[] = [];
  if (input.service) {
    checks.push(
      input.service.running
        ? { name: 'service', ok: true, detail: `running (its socket ${input.service.socket} answers)` }
        : { name: 'service', ok: false, detail: `not running (nothing answers on ${input.service.socket}); these checks read settings.db directly`, fix: startServiceHint(input.service.dataDir) },
    );
  }
  checks.push(...(await checkAudio()));
  checks.push(checkGpio(input.sysfsRoot));
  if (input.voice) {
    const v = input.voice;
    const gpioSimulated = v.gpioDriver === 'sim' || (v.gpioDriver === 'auto' && !probeSysfsGpio(input.sysfsRoot ?? '/sys').present);
    // No capture device (checkAudio): the simulated microphone hears nobody, whatever wakes the box.
    const micSimulated = checks.some((c) => c.name === 'audio capture' && !c.ok);
    const wake = await checkWakeService(v);
    checks.push(checkListening(v, gpioSimulated, micSimulated, wake?.ok === false && v.wakeHost !== ''));
    if (wake) checks.push(wake);
    const zh = checkChineseSpeech(v);
    if (zh) checks.push(zh);
  }
  checks.push(...checkSpeechPrograms(input.voice, input.pathEnv, input.pocketsphinxModelDir));
  const tts = input.voice ? await checkTts(input.voice) : undefined;
  if (tts) checks.push(tts);
  checks.push(await checkBroker(input.brokerUrl, input.brokerUsername, input.brokerPassword));
  const promptTokens = input.promptTokens ?? largestRecentPrompt(input.dataDir);
  for (const s of input.sources) checks.push(await checkLlmSource(s, input.fetchImpl, { ...(input.numCtx !== undefined ? { numCtx: input.numCtx } : {}), ...(promptTokens !== undefined ? { promptTokens } : {}) }));
  checks.push(await checkEmbeddings(input.embedding, input.fetchImpl));
  if (input.sources.length === 0) checks.push({ name: 'llm sources', ok: false, detail: 'no LLM source configured', fix: 'homeagent config set core.llm.sources.ollama.base_url http://HOST:11434' });
  checks.push(checkDisk(input.dataDir, input.minFreeBytes));
  if (input.disk) checks.push(checkStorage(input.disk));
  checks.push(...checkDatabases(input.dataDir));
  checks.push(checkPluginSandbox(input.dataDir, input.pluginSandbox));
  return { ok: checks.every((c) => c.ok), checks };
}

