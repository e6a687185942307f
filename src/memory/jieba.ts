/**
 * nodejieba, loaded once per process with a trimmed dictionary.
 *
 * The full jieba dictionary (349k words) costs ~250 MB of RSS once loaded,
 * which does not fit the box's memory budget (issue 5: service RSS < 150 MB).
 * We derive a trimmed dictionary from the one nodejieba ships: the
 * `JIEBA_DICT_WORDS` most frequent words, and an IDF table restricted to them.
 * The HMM model still segments out-of-vocabulary words (names), so segmentation
 * of everyday speech is unchanged. The trimmed files are written once into a
 * cache directory and reused; their size is part of the vector fingerprint.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import nodejieba from 'nodejieba';

/** How many of the most frequent dictionary words are kept. */
export const JIEBA_DICT_WORDS = 30000;

let loaded = false;

/** A dictionary path nodejieba exports at runtime (its typings omit the DEFAULT_* constants). */
function defaultPath(name: 'DEFAULT_DICT' | 'DEFAULT_IDF_DICT' | 'DEFAULT_HMM_DICT' | 'DEFAULT_USER_DICT' | 'DEFAULT_STOP_WORD_DICT'): string {
  const value = (nodejieba as unknown as Record<string, unknown>)[name];
  if (typeof value !== 'string') throw new Error(`nodejieba does not export ${name}`);
  return value;
}

let configuredDir: string | undefined;

/**
 * Where the trimmed dictionary is cached (e.g. <dataDir>/cache/jieba on the
 * box, so it survives reboots; /tmp is a tmpfs there). Only effective before
 * the first load. Default: $HOMEAGENT_JIEBA_CACHE, else the OS temp directory.
 */
export function setJiebaCacheDir(dir: string): void {
  if (!loaded) configuredDir = dir;
}

/** The cache directory of the trimmed dictionary. */
function cacheDir(): string {
  return configuredDir ?? process.env.HOMEAGENT_JIEBA_CACHE ?? path.join(os.tmpdir(), `homeagent-jieba-${JIEBA_DICT_WORDS}`);
}

/** Write `file` atomically (tmp + rename) so a crash never leaves half a dictionary. */
function writeAtomic(file: string, text: string): void {
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, text);
  fs.renameSync(tmp, file);
}

/**
 * Call `fn(line, start, end)` for every non-empty line of `text` without
 * splitting it into an array (the full dictionary has 349k lines: an array of
 * them, and an object per line, cost ~100 MB of heap on the first start).
 */
function eachLine(text: string, fn: (start: number, end: number) => void): void {
  for (let start = 0; start < text.length; ) {
    let end = text.indexOf('\n', start);
    if (end < 0) end = text.length;
    if (end > start && text.slice(start, end).trim() !== '') fn(start, end);
    start = end + 1;
  }
}

/** The frequency column of a dictionary line "word freq tag" (0 when absent or not a number). */
function lineFreq(text: string, start: number, end: number): number {
  const sp1 = text.indexOf(' ', start);
  if (sp1 < 0 || sp1 >= end) return 0;
  let sp2 = text.indexOf(' ', sp1 + 1);
  if (sp2 < 0 || sp2 > end) sp2 = end;
  const f = Number(text.slice(sp1 + 1, sp2));
  return Number.isFinite(f) ? f : 0;
}

/**
 * Build the trimmed dictionary and IDF files when absent; returns their paths.
 * The output is the `JIEBA_DICT_WORDS` most frequent lines, most frequent
 * first, ties in file order (a stable sort), and the IDF lines of those words.
 */
function ensureTrimmedDict(): { dict: string; idf: string } {
  const dir = cacheDir();
  const dict = path.join(dir, 'jieba.dict.utf8');
  const idf = path.join(dir, 'idf.utf8');
  if (fs.existsSync(dict) && fs.existsSync(idf)) return { dict, idf };
  fs.mkdirSync(dir, { recursive: true });
  const text = fs.readFileSync(defaultPath('DEFAULT_DICT'), 'utf8');
  // Pass 1: the frequency a line needs to be among the most frequent.
  const freqs: number[] = [];
  eachLine(text, (s, e) => freqs.push(lineFreq(text, s, e)));
  const keep = Math.min(JIEBA_DICT_WORDS, freqs.length);
  const threshold = keep > 0 ? Float64Array.from(freqs).sort().reverse()[keep - 1]! : Infinity;
  let atThreshold = keep - freqs.filter((f) => f > threshold).length;
  // Pass 2: the kept lines (all above the threshold, the first ones at it), then most frequent first.
  const kept: Array<{ line: string; word: string; freq: number; at: number }> = [];
  let i = 0;
  eachLine(text, (s, e) => {
    const freq = freqs[i]!;
    if (freq > threshold || (freq === threshold && atThreshold-- > 0)) {
      const line = text.slice(s, e);
      kept.push({ line, word: line.split(' ')[0] ?? '', freq, at: i });
    }
    i++;
  });
  kept.sort((a, b) => b.freq - a.freq || a.at - b.at);
  const words = new Set(kept.map((r) => r.word));
  const idfText = fs.readFileSync(defaultPath('DEFAULT_IDF_DICT'), 'utf8');
  const idfLines: string[] = [];
  eachLine(idfText, (s, e) => {
    const sp = idfText.indexOf(' ', s);
    if (words.has(idfText.slice(s, sp < 0 || sp > e ? e : sp))) idfLines.push(idfText.slice(s, e));
  });
  writeAtomic(dict, kept.map((r) => r.line).join('\n') + '\n');
  writeAtomic(idf, idfLines.join('\n') + '\n');
  return { dict, idf };
}

/**
 * The nodejieba module, loaded with the trimmed dictionary on first use.
 * Errors: throws the file-system error when the cache directory is not writable.
 */
export function jieba(): typeof nodejieba {
  if (!loaded) {
    const { dict, idf } = ensureTrimmedDict();
    nodejieba.load({
      dict,
      hmmDict: defaultPath('DEFAULT_HMM_DICT'),
      userDict: defaultPath('DEFAULT_USER_DICT'),
      idfDict: idf,
      stopWordDict: defaultPath('DEFAULT_STOP_WORD_DICT'),
    });
    loaded = true;
  }
  return nodejieba;
}
