/**
 * Settings of the voice pipeline (plugin.voice.*, ConfigRegistry, seed 000
 * §10) and the factories that build engines from them.
 */
import type { SettingDef, SettingsAPI } from '../kernel/settings-types.js';
import type { TtsEngine } from './tts/types.js';
import { EspeakTts } from './tts/espeak.js';
import { PiperTts } from './tts/piper.js';
import { WyomingTts } from './wyoming/tts-client.js';
import { WyomingWake, type WyomingWakeOptions } from './wyoming/wake-client.js';
import { DEFAULT_WAKE_PHRASE_THRESHOLD, wakePhraseProblem } from './keyphrase.js';
import { WyomingAsr } from './stt/wyoming-asr.js';
import { ConfigError } from '../kernel/errors.js';
import { DEFAULT_MIN_ENERGY_DB } from './vad.js';

const P = 'plugin.voice.';

/** Every plugin.voice.* setting with its default (times in ms, levels in dB). */
export const VOICE_SETTINGS: readonly SettingDef[] = [
  { key: `${P}language`, type: 'string', default: 'en', enum: ['en', 'zh'], description: "Language spoken to the box: 'en' or 'zh' (STT language, TTS voice, messages)." },
  { key: `${P}silence_ms`, type: 'integer', default: 800, min: 200, max: 5000, description: 'Silence that ends an utterance, ms.' },
  {
    key: `${P}pause_ms`,
    type: 'integer',
    default: 300,
    min: 0,
    max: 5000,
    description:
      'Silence after which the recogniser starts its final pass speculatively, ms (kept when only silence follows, dropped when speech goes on; 0 or >= silence_ms: off). The pass then sees this much audio after the last word. Lower: faster answers, but short words with little audio after them score closer to the rejection threshold (see test/bench/voice-stt.ts). 300 (it was 400): on the real recordings here the median answer came 537 ms after the last word instead of 809, with the same commands right and no wrong action; the one recording heard otherwise at 300 ("turn off all of the lights in the Office" as "turn on all of ...") asks first.',
  },
  {
    key: `${P}speculate_ms`,
    type: 'integer',
    default: 60,
    min: 0,
    max: 5000,
    description:
      'Silence after which the recogniser starts its final pass, before pause_ms: it decodes the audio so far with its silence drawn out to pause_ms (the quietest 100 ms of the room it heard, repeated), so the result is ready when pause_ms of silence is reached and may be acted on then (early_commit). Speech that goes on voids the pass; so does audio after the lull louder than the padding (a quiet word end still going on: PAD_FAITHFUL_RATIO), and a pass on the real audio decides at the pause. 0 or >= pause_ms: the pass starts at pause_ms. 150 (it was 0): on the real recordings the median answer came 417 ms after the last word instead of 506, with the same commands right and no wrong action. 100 (it was 150): the pass of a long command takes 250 to 450 ms on 2 cores, and 50 ms more to do it in is 50 ms less wait at the pause; run alone one after the other, the median answer came 451 ms after the last word against 609 with 150 (and 501 against 583 in an earlier pair), the same 10 of 17 commands acted on at the pause, the same commands right and no wrong action. 60 (it was 100): the longest command acted on at its pause ("turn off all of the lights in the Office") then has its pass ready by pause_ms too; two pairs of runs alone, one after the other, in both orders: 340 and 365 ms against 410 and 391 with 100, the same 10 of 17 commands acted on at the pause, right and no wrong action. The price is CPU while the person speaks: more passes start in the short gaps inside words and are voided (over the 20 real recordings with room noise after them, 71 voided passes against 23 at 100 and 15 at 150; each kills a pass and loads a fresh decoder set, about 0.1 to 0.3 s of CPU on 2 cores); what is acted on does not change (the pass is padded to pause_ms and acted on only after pause_ms of real silence no louder than the padding).',
  },
  {
    key: `${P}early_commit`,
    type: 'boolean',
    default: true,
    description:
      'Act at the first pause (pause_ms) when the recogniser is sure of a complete command that no longer command of another meaning extends (an area after a one-device name, or a word such as "scene" or "brightness" that keeps the command, may follow), instead of waiting for silence_ms (issue 15). Speech that goes on is the next utterance, which may open with "and" or "then", or be the rest of a light command ("turn on the bed light … to fifty percent": the lights that command switched on are set; home/local-intents.ts PREVIOUS_TARGET_WINDOW_MS).',
  },
  { key: `${P}max_utterance_ms`, type: 'integer', default: 15000, min: 1000, max: 60000, description: 'Longest utterance after speech started, ms.' },
  { key: `${P}no_speech_timeout_ms`, type: 'integer', default: 8000, min: 1000, max: 60000, description: 'Stop listening when no speech started within this time, ms.' },
  { key: `${P}followup_ms`, type: 'integer', default: 5000, min: 1000, max: 30000, description: 'After a reply that asks something (expect_reply), listen this long for an answer without the wake word, ms.' },
  { key: `${P}vad_threshold_db`, type: 'number', default: 10, min: 3, max: 30, description: 'Speech must be this far above the noise floor, dB.' },
  {
    key: `${P}vad_min_energy_db`,
    type: 'number',
    default: DEFAULT_MIN_ENERGY_DB,
    min: -90,
    max: -20,
    description:
      'Speech must also be louder than this, dBFS (20 ms frames). Lower it (to -60 or -65) for a microphone that records the voice very quietly, in a quiet room only: at -65 room noise at -50 dBFS started utterances of its own, and speech 35 dB quieter than usual was heard but misheard.',
  },
  { key: `${P}preroll_ms`, type: 'integer', default: 300, min: 0, max: 2000, description: 'Audio before the detected speech start sent to STT, ms.' },
  { key: `${P}message_not_understood`, type: 'string', default: "Sorry, I didn't catch that.", description: 'Spoken when nothing was recognised (English).' },
  { key: `${P}message_not_understood_zh`, type: 'string', default: '抱歉，我没听清。', description: 'Spoken when nothing was recognised (Chinese).' },
  { key: `${P}tts_engine`, type: 'string', default: 'espeak-ng', enum: ['espeak-ng', 'piper', 'wyoming'], description: 'TTS engine.' },
  { key: `${P}tts_voice`, type: 'string', default: '', description: "Voice of the TTS engine ('' = by language: espeak-ng en-us / cmn)." },
  { key: `${P}piper_binary`, type: 'string', default: '', description: 'Absolute path of the piper binary (not the Debian package named piper).' },
  { key: `${P}piper_model`, type: 'string', default: '', description: 'Piper voice model (.onnx); its .onnx.json gives the sample rate.' },
  { key: `${P}wyoming_tts_host`, type: 'string', default: '127.0.0.1', description: 'Wyoming TTS host (piper).' },
  { key: `${P}wyoming_tts_port`, type: 'integer', default: 10200, min: 1, max: 65535, description: 'Wyoming TTS port.' },
  { key: `${P}wyoming_asr_host`, type: 'string', default: '', description: "Wyoming ASR host (faster-whisper); '' = no dictation engine." },
  { key: `${P}wyoming_asr_port`, type: 'integer', default: 10300, min: 1, max: 65535, description: 'Wyoming ASR port.' },
  { key: `${P}wyoming_wake_host`, type: 'string', default: '', restart: true, description: "Wyoming wake-word host (openWakeWord or microWakeWord, e.g. Home Assistant's add-on); '' = no wake word (the button only). README: The button and the wake word." },
  { key: `${P}wyoming_wake_port`, type: 'integer', default: 10400, restart: true, min: 1, max: 65535, description: 'Wyoming wake-word port.' },
  {
    key: `${P}wake_phrase`,
    type: 'string',
    default: '',
    restart: true,
    // Refused at `config set` as at start (checkWakePhrase): a stored phrase of three syllables was offered by
    // `status` and `doctor` as the way to wake the box while the start refused it.
    check: (v) => (typeof v === 'string' && v.trim() ? wakePhraseProblem(v) : undefined),
    description:
      "EXPERIMENTAL offline wake phrase, spotted by pocketsphinx (four or more syllables of dictionary words, e.g. 'hey home agent'); '' = off. Weak (README: The button and the wake word; npm run bench -- wake); used only when wyoming_wake_host is empty.",
  },
  { key: `${P}wake_phrase_threshold`, type: 'number', default: DEFAULT_WAKE_PHRASE_THRESHOLD, restart: true, min: 1e-80, max: 0.1, description: 'Spotting threshold of the experimental wake phrase (pocketsphinx -kws_threshold): lower spots more, and falsely more.' },
  { key: `${P}wake_words`, type: 'string', default: '', restart: true, description: "Comma-separated wake word names the service offers (e.g. 'ok_nabu', 'hey_jarvis'; `homeagent doctor` lists them); '' = all the service has." },
];

/** Register every VOICE_SETTINGS entry (ignores a duplicate registration error from an earlier call). */
export function registerVoiceSettings(settings: SettingsAPI): void {
  for (const def of VOICE_SETTINGS) {
    try {
      settings.register(def);
    } catch (err) {
      if (!(err instanceof Error && /already/i.test(err.message))) throw err;
    }
  }
}

/** Read a setting with a fallback to its VOICE_SETTINGS default. */
export function voiceSetting<T>(settings: SettingsAPI, name: string): T {
  const key = `${P}${name}`;
  try {
    const v = settings.get<T>(key);
    if (v !== undefined && v !== null) return v;
  } catch {
    // not registered: fall through to the default
  }
  const def = VOICE_SETTINGS.find((d) => d.key === key);
  return def?.default as T;
}

/**
 * Build the TTS engine plugin.voice.tts_engine names.
 * @throws ConfigError when piper is chosen without binary and model.
 */
export function createTtsEngine(settings: SettingsAPI): TtsEngine {
  const engine = voiceSetting<string>(settings, 'tts_engine');
  const voice = voiceSetting<string>(settings, 'tts_voice') || undefined;
  if (engine === 'piper') {
    const binary = voiceSetting<string>(settings, 'piper_binary');
    const model = voiceSetting<string>(settings, 'piper_model');
    if (!binary || !model) throw new ConfigError(`${P}piper_binary`, 'piper needs plugin.voice.piper_binary and plugin.voice.piper_model');
    return new PiperTts(voice ? { binary, model, speaker: voice } : { binary, model });
  }
  if (engine === 'wyoming') {
    return new WyomingTts({ host: voiceSetting<string>(settings, 'wyoming_tts_host'), port: voiceSetting<number>(settings, 'wyoming_tts_port'), ...(voice ? { voice } : {}) });
  }
  return new EspeakTts(voice ? { voice } : {});
}

/**
 * The Wyoming wake-word detector, when plugin.voice.wyoming_wake_host is set
 * (it reconnects by itself when the service restarts). `extra`: its log and
 * clock (src/voice/wyoming/wake-client.ts).
 */
export function createWakeDetector(settings: SettingsAPI, extra: Pick<WyomingWakeOptions, 'log' | 'clock'> = {}): WyomingWake | undefined {
  const host = voiceSetting<string>(settings, 'wyoming_wake_host');
  if (!host) return undefined;
  const names = voiceSetting<string>(settings, 'wake_words').split(',').map((s) => s.trim()).filter(Boolean);
  return new WyomingWake({ host, port: voiceSetting<number>(settings, 'wyoming_wake_port'), ...(names.length ? { names } : {}), ...extra });
}

/** The Wyoming dictation engine, when plugin.voice.wyoming_asr_host is set (for the STT order chain). */
export function createWyomingAsr(settings: SettingsAPI): WyomingAsr | undefined {
  const host = voiceSetting<string>(settings, 'wyoming_asr_host');
  if (!host) return undefined;
  return new WyomingAsr({ host, port: voiceSetting<number>(settings, 'wyoming_asr_port'), language: voiceSetting<string>(settings, 'language') });
}
