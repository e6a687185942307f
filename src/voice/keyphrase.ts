/**
 * EXPERIMENTAL offline wake phrase: Debian's pocketsphinx keyphrase spotting
 * (`pocketsphinx_continuous -keyphrase ... -kws_threshold ...`, CMU Sphinx
 * "keyword spotting"), the only wake engine that runs offline here. It is
 * weak (README "The button and the wake word": `npm run bench -- wake` measures it on the real
 * recordings and room noise), so it is off by default
 * (plugin.voice.wake_phrase ''), the Wyoming wake service is the supported
 * way, and a phrase needs four or more syllables (short phrases fire on
 * everything). Audio streams to the program's stdin as raw 16 kHz mono
 * s16le; it prints the phrase on a line per detection.
 */
import { spawn, type ChildProcessByStdio } from 'node:child_process';
import type { Readable, Writable } from 'node:stream';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { ConfigError } from '../kernel/errors.js';
import { DEBIAN_CMUDICT, DEBIAN_MODEL_DIR, lookupPronunciations, lookupPronunciationsSync } from './stt/pronunciation.js';
import type { WakeHandlers, WakeSession, WakeWordDetector } from './wyoming/wake-client.js';

/**
 * Default `-kws_threshold` of plugin.voice.wake_phrase_threshold, chosen by
 * the wake bench on the real recordings for phrases of four or more
 * syllables: at 1e-30 they were spotted in 2 of 5 recordings with no false
 * alarm in 12.6 min; at 1e-40 in 5 of 5 but with 38 false alarms per hour.
 * A box that wakes by itself is worse than one that needs the phrase again.
 */
export const DEFAULT_WAKE_PHRASE_THRESHOLD = 1e-30;

/** Fewest syllables a wake phrase may have (shorter ones are spotted in ordinary speech). */
export const MIN_WAKE_PHRASE_SYLLABLES = 4;

/** The ARPAbet vowels of the CMU dictionary: one per syllable. */
const VOWELS = new Set(['AA', 'AE', 'AH', 'AO', 'AW', 'AY', 'EH', 'ER', 'EY', 'IH', 'IY', 'OW', 'OY', 'UH', 'UW']);

/**
 * Check a wake phrase: every word in the pronouncing dictionary and at
 * least MIN_WAKE_PHRASE_SYLLABLES syllables (vowels of each word's first
 * pronunciation). Returns the phrase lower-cased with single spaces and its
 * syllable count.
 * @throws ConfigError (key plugin.voice.wake_phrase) naming the unknown words or the count.
 */
export async function checkWakePhrase(phrase: string, dict = DEBIAN_CMUDICT): Promise<{ phrase: string; syllables: number }> {
  const words = phraseWords(phrase);
  return judgeWakePhrase(words, words.length ? await lookupPronunciations(words, dict) : new Map());
}

/**
 * What is wrong with `phrase` as a wake phrase (checkWakePhrase's reasons,
 * or an unreadable dictionary), or undefined when it may be used; read
 * synchronously, for the setting's check at `config set` (a phrase of
 * three syllables was stored, refused at the next start, and still offered
 * by `status` and `doctor` as the way to wake the box).
 */
export function wakePhraseProblem(phrase: string, dict = DEBIAN_CMUDICT): string | undefined {
  const words = phraseWords(phrase);
  try {
    judgeWakePhrase(words, words.length ? lookupPronunciationsSync(words, dict) : new Map());
    return undefined;
  } catch (err) {
    return err instanceof Error ? err.message.replace(/^setting plugin\.voice\.wake_phrase: /, '') : String(err);
  }
}

function phraseWords(phrase: string): string[] {
  return phrase.toLowerCase().trim().split(/\s+/).filter(Boolean);
}

/** The checks of checkWakePhrase on words looked up in `pron`. @throws ConfigError */
function judgeWakePhrase(words: string[], pron: Map<string, string[]>): { phrase: string; syllables: number } {
  const key = 'plugin.voice.wake_phrase';
  if (words.length === 0) throw new ConfigError(key, 'the wake phrase is empty');
  const unknown = words.filter((w) => !pron.has(w));
  if (unknown.length) throw new ConfigError(key, `not in the pronouncing dictionary: ${unknown.join(', ')} (choose ordinary English words)`);
  const syllables = words.reduce((n, w) => n + pron.get(w)![0]!.split(/\s+/).filter((p) => VOWELS.has(p.replace(/\d$/, ''))).length, 0);
  if (syllables < MIN_WAKE_PHRASE_SYLLABLES) throw new ConfigError(key, `"${words.join(' ')}" has ${syllables} syllable(s); a wake phrase needs ${MIN_WAKE_PHRASE_SYLLABLES} or more (e.g. "hey home agent")`);
  return { phrase: words.join(' '), syllables };
}

/** Options of KeyphraseWake. */
export interface KeyphraseWakeOptions {
  /** The phrase (lower case, dictionary words; see checkWakePhrase). */
  phrase: string;
  /** `-kws_threshold`: lower spots more (and falsely more), e.g. 1e-20. */
  threshold: number;
  /** pocketsphinx_continuous (default: on PATH). */
  binary?: string;
  /** The en-us model directory (default Debian's). */
  modelDir?: string;
}

/**
 * How many times `phrase` is in an output line: pocketsphinx prints one line
 * per speech segment, with the phrase once per detection ("timer timer").
 */
export function occurrences(line: string, phrase: string): number {
  const words = line.trim().toLowerCase().split(/\s+/).filter(Boolean);
  const want = phrase.split(' ');
  let n = 0;
  for (let i = 0; i + want.length <= words.length; ) {
    if (want.every((w, j) => words[i + j] === w)) {
      n++;
      i += want.length;
    } else i++;
  }
  return n;
}

/**
 * Start pocketsphinx_continuous reading raw PCM from its stdin. Node's
 * stdin pipe is a socket, which pocketsphinx cannot open as `-infile
 * /dev/stdin` (ENXIO), so `cat` passes the audio on through a real pipe;
 * `stdbuf -oL` makes it print each detection at once. The process ends when
 * stdin is closed.
 */
function spawnSpotter(opts: KeyphraseWakeOptions): ChildProcessByStdio<Writable, Readable, null> {
  const dir = opts.modelDir ?? DEBIAN_MODEL_DIR;
  const args = ['-infile', '/dev/stdin', '-keyphrase', opts.phrase, '-kws_threshold', String(opts.threshold), '-hmm', path.join(dir, 'en-us'), '-dict', path.join(dir, 'cmudict-en-us.dict'), '-logfn', '/dev/null'];
  return spawn('sh', ['-c', 'cat | exec stdbuf -oL "$0" "$@"', opts.binary ?? 'pocketsphinx_continuous', ...args], { stdio: ['pipe', 'pipe', 'ignore'] });
}

/** Spotting through pocketsphinx_continuous (one process per session, audio on its stdin). */
export class KeyphraseWake implements WakeWordDetector {
  constructor(private readonly opts: KeyphraseWakeOptions) {}

  start(handlers: WakeHandlers): WakeSession {
    const child = spawnSpotter(this.opts);
    let closed = false;
    createInterface({ input: child.stdout }).on('line', (line) => {
      for (let i = occurrences(line, this.opts.phrase); i > 0; i--) handlers.onDetection({ name: this.opts.phrase });
    });
    const fail = (err: Error): void => {
      if (closed) return;
      closed = true;
      handlers.onError(err);
    };
    child.on('error', (err) => fail(err));
    child.on('exit', (code, signal) => fail(new Error(`pocketsphinx_continuous ended (${signal ?? `exit ${code}`})`)));
    child.stdin.on('error', () => undefined);
    return {
      write: (pcm: Buffer): void => {
        if (!closed && pcm.length > 0) child.stdin.write(pcm);
      },
      close: (): void => {
        if (closed) return;
        closed = true;
        child.stdin.end(); // cat ends, then pocketsphinx at the end of its input
      },
    };
  }
}

/**
 * Run a whole recording (16 kHz mono s16le) through the spotter and count
 * the detections (the bench, and tests): the count is final when the
 * program has read it all and ended.
 * @throws Error when the program fails (not installed, bad model).
 */
export function countSpotted(pcm: Buffer, opts: KeyphraseWakeOptions): Promise<number> {
  return new Promise((resolve, reject) => {
    const child = spawnSpotter(opts);
    let n = 0;
    createInterface({ input: child.stdout }).on('line', (line) => {
      n += occurrences(line, opts.phrase);
    });
    child.on('error', reject);
    child.on('close', (code) => (code === 0 ? resolve(n) : reject(new Error(`pocketsphinx_continuous exit ${code}`))));
    child.stdin.on('error', () => undefined);
    child.stdin.end(pcm);
  });
}
