/**
 * How the box can be woken, in plain words, for the start-up log, `homeagent
 * status` and `homeagent doctor` (one answer for the three): the one button
 * (the stop pin with no push-to-talk pin), a separate push-to-talk button,
 * the Wyoming wake service (openWakeWord / microWakeWord, the supported wake
 * word), and what is wrong when nobody can wake it. Also the Chinese fact:
 * Debian has no Chinese acoustic model for pocketsphinx, so spoken Chinese
 * needs the Wyoming ASR. Pure: reads settings, no IO.
 */
import path from 'node:path';
import type { SettingsAPI } from '../kernel/settings-types.js';
import { wakePhraseProblem } from '../voice/keyphrase.js';

/** What decides how the box can be woken (plugin.gpio.* and plugin.voice.*). Pins are BCM numbers, -1 = none. */
export interface WakeConfig {
  /** plugin.gpio.stop_pin. */
  stopPin: number;
  /** plugin.gpio.ptt_pin. */
  pttPin: number;
  /** plugin.gpio.one_button. */
  oneButton: boolean;
  /** plugin.gpio.long_press_ms (0: no long press). */
  longPressMs: number;
  /** plugin.gpio.driver ('auto' | 'real' | 'sim'). */
  gpioDriver: string;
  /** plugin.voice.wyoming_wake_host ('' = no wake service). */
  wakeHost: string;
  /** plugin.voice.wyoming_wake_port. */
  wakePort: number;
  /** plugin.voice.wake_words (comma-separated; '' = all the service has). */
  wakeWords: string;
  /** plugin.voice.wake_phrase: the EXPERIMENTAL offline wake phrase ('' = off; used only without a wake service). */
  wakePhrase: string;
  /** plugin.voice.language ('en' | 'zh'). */
  language: string;
  /** plugin.voice.wyoming_asr_host ('' = no dictation engine). */
  asrHost: string;
}

/** One way to wake the box. */
export interface WakeWay {
  kind: 'button' | 'push_to_talk' | 'wake_service' | 'wake_phrase';
  /** Plain words: "press the button on BCM 17", "say the wake word (ok_nabu) ...". */
  text: string;
}

/** The answer: the ways, what is wrong with them, and the Chinese-speech fact. */
export interface WakeReport {
  ways: WakeWay[];
  /** Why nobody can wake the box (warnings in the log, a failure in doctor); empty when somebody can. */
  problems: string[];
  /** Facts worth saying that are not problems (no wake word configured). */
  notes: string[];
  /** plugin.voice.language is zh: `ok` when the Wyoming ASR is set (else a warning); absent for other languages. */
  chinese?: { ok: boolean; text: string };
}

/** The Chinese-speech fact (issue 15): said by doctor and the start-up log when plugin.voice.language is zh. */
export const CHINESE_SPEECH_NOTE =
  'Debian has no Chinese acoustic model for pocketsphinx: spoken Chinese is recognised only by the Wyoming ASR (plugin.voice.wyoming_asr_host, e.g. faster-whisper), and a Chinese wake word needs the Wyoming wake service; typed Chinese works without either';

/**
 * A setting's value, or `dflt` when it is unset, null or not registered (a
 * reader that runs without the plugin that registers the key: doctor with
 * the service down, a box without that plugin).
 */
export function settingOr<T>(s: Pick<SettingsAPI, 'get'>, key: string, dflt: T): T {
  try {
    const v = s.get<T>(key);
    return v === undefined || v === null ? dflt : v;
  } catch {
    return dflt;
  }
}

/** Read a WakeConfig from the settings; a key not registered reads as its default. */
export function readWakeConfig(s: Pick<SettingsAPI, 'get'>): WakeConfig {
  const get = <T>(key: string, dflt: T): T => settingOr(s, key, dflt);
  return {
    stopPin: get('plugin.gpio.stop_pin', 17),
    pttPin: get('plugin.gpio.ptt_pin', -1),
    oneButton: get('plugin.gpio.one_button', true),
    longPressMs: get('plugin.gpio.long_press_ms', 2000),
    gpioDriver: get('plugin.gpio.driver', 'auto'),
    wakeHost: get('plugin.voice.wyoming_wake_host', ''),
    wakePort: get('plugin.voice.wyoming_wake_port', 10400),
    wakeWords: get('plugin.voice.wake_words', ''),
    // A phrase the start refuses (one set through the environment, or stored before the setting checked it) is no way to wake the box.
    wakePhrase: ((p) => (p.trim() && !wakePhraseProblem(p) ? p : ''))(get('plugin.voice.wake_phrase', '')),
    language: get('plugin.voice.language', 'en'),
    asrHost: get('plugin.voice.wyoming_asr_host', ''),
  };
}

/**
 * How the box can be woken with this configuration. `gpioSimulated`: the
 * buttons are simulated (no GPIO on this machine, or driver sim), which is
 * said with each button; a box whose only way is a simulated button cannot
 * be woken by a person in the room, which is a problem. `micSimulated`: the
 * microphone is simulated (no capture device), so no way reaches the box by
 * voice, which is a problem too.
 */
export function wakeReport(c: WakeConfig, gpioSimulated = c.gpioDriver === 'sim', micSimulated = false): WakeReport {
  const ways: WakeWay[] = [];
  const problems: string[] = [];
  const notes: string[] = [];
  const sim = gpioSimulated ? ' (simulated: this machine has no GPIO, so nobody can press it)' : '';
  if (c.stopPin >= 0 && c.pttPin < 0 && c.oneButton) {
    const hold = c.longPressMs > 0 ? `; hold it ${c.longPressMs / 1000} s to switch the microphone off or on` : '';
    ways.push({ kind: 'button', text: `press the button on BCM ${c.stopPin} to talk (it also stops a reply and answers no)${hold}${sim}` });
  }
  if (c.pttPin >= 0) ways.push({ kind: 'push_to_talk', text: `hold the push-to-talk button on BCM ${c.pttPin} while speaking${sim}` });
  if (c.wakeHost) {
    const words = c.wakeWords.trim() ? c.wakeWords.split(',').map((w) => w.trim()).filter(Boolean).join(' or ') : 'any wake word the service has';
    ways.push({ kind: 'wake_service', text: `say the wake word (${words}), heard by the Wyoming wake service at ${c.wakeHost}:${c.wakePort}` });
  }
  if (!c.wakeHost && c.wakePhrase.trim()) {
    ways.push({ kind: 'wake_phrase', text: `say "${c.wakePhrase.trim()}" (EXPERIMENTAL offline spotting by pocketsphinx: it misses often and fires falsely; npm run bench -- wake)` });
  }
  const physical = ways.some((w) => w.kind === 'wake_service' || w.kind === 'wake_phrase') || (ways.length > 0 && !gpioSimulated);
  if (micSimulated && ways.length > 0) {
    // No sound card: a wake word or a press reaches a box that hears nothing said in the room (a newcomer's doctor said
    // "ok listening ... say \"hey home agent\"" on a machine without a microphone).
    problems.push('nobody in the room can be heard: the microphone is simulated (no capture device found), so no wake word or button press reaches the box by voice');
  } else if (ways.length === 0) {
    problems.push(
      c.stopPin >= 0 && c.pttPin < 0 && !c.oneButton
        ? `nothing can wake the box: the button on BCM ${c.stopPin} only stops (plugin.gpio.one_button is false), there is no push-to-talk pin and no wake word (plugin.voice.wyoming_wake_host is empty); only the console and \`homeagent listen\` reach it`
        : 'nothing can wake the box: no button (plugin.gpio.stop_pin and ptt_pin are -1) and no wake word (plugin.voice.wyoming_wake_host is empty); only the console and `homeagent listen` reach it',
    );
  } else if (!physical) {
    problems.push('nobody in the room can wake the box: its only button is simulated (no GPIO found) and no wake word is configured (plugin.voice.wyoming_wake_host is empty)');
  }
  if (!c.wakeHost && !c.wakePhrase.trim()) notes.push('no wake word: run a Wyoming wake service (openWakeWord) and set plugin.voice.wyoming_wake_host (README: The button and the wake word)');
  const report: WakeReport = { ways, problems, notes };
  if (c.language === 'zh') {
    report.chinese = c.asrHost
      ? { ok: true, text: `${CHINESE_SPEECH_NOTE}; the Wyoming ASR is set (${c.asrHost})` }
      : { ok: false, text: `plugin.voice.language is zh, but ${CHINESE_SPEECH_NOTE}; plugin.voice.wyoming_asr_host is empty, so spoken Chinese is not recognised` };
  }
  return report;
}

/** One line for the log: "the box can be woken by: ...; ..." or "nothing can wake the box ...". */
export function wakeSummary(r: WakeReport): string {
  if (r.ways.length === 0) return r.problems[0] ?? 'nothing can wake the box';
  return `the box can be woken by: ${r.ways.map((w) => w.text).join('; or ')}`;
}

/**
 * The console banner's line on talking to the box by voice (without the
 * "By voice: " it is printed after): the first problem when there is one
 * (nobody can wake it), with what reaches it instead (`listenCommand`: the
 * listen command that reaches this box, with its --data-dir when needed);
 * otherwise wakeSummary.
 */
export function bannerWakeLine(r: WakeReport, listenCommand = 'homeagent listen FILE.wav'): string {
  const problem = r.problems[0];
  if (problem === undefined) return wakeSummary(r);
  return /homeagent listen/.test(problem) ? problem : `${problem}; type here instead, or feed it a recording with \`${listenCommand}\``;
}

/**
 * The `homeagent` command that reaches the service whose data directory is
 * `dataDir` from any working directory: with `--data-dir` unless it is the
 * device's own (the CLI finds /var/lib/homeagent, $STATE_DIRECTORY or
 * $HOMEAGENT_DATA_DIR by itself; a checkout's ./data-local is relative to
 * where the command runs, so it is named).
 */
export function cliCommandFor(dataDir: string, env: NodeJS.ProcessEnv = process.env): string {
  const own = [env.HOMEAGENT_DATA_DIR, env.STATE_DIRECTORY?.split(':')[0], '/var/lib/homeagent'].filter((d): d is string => !!d).map((d) => path.resolve(d));
  return own.includes(path.resolve(dataDir)) ? 'homeagent' : `homeagent --data-dir ${path.resolve(dataDir)}`;
}

/** The `homeagent listen` command for the service whose data directory is `dataDir` (cliCommandFor). */
export function listenCommandFor(dataDir: string, env: NodeJS.ProcessEnv = process.env): string {
  return `${cliCommandFor(dataDir, env)} listen FILE.wav`;
}
