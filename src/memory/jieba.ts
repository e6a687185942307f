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

/** Build the trimmed dictionary and IDF files when absent; returns their paths. */
function ensureTrimmedDict(): { dict: string; idf: string } {
  const dir = cacheDir();
  const dict = path.join(dir, 'jieba.dict.utf8');
  const idf = path.join(dir, 'idf.utf8');
  if (fs.existsSync(dict) && fs.existsSync(idf)) return { dict, idf };
  fs.mkdirSync(dir, { recursive: true });
  const lines = fs.readFileSync(defaultPath('DEFAULT_DICT'), 'utf8').split('\n').filter((l) => l.trim() !== '');
  const rows = lines.map((l) => {
    const parts = l.split(' ');
    return { line: l, word: parts[0] ?? '', freq: Number(parts[1] ?? 0) };
  });
  rows.sort((a, b) => b.freq - a.freq);
  const kept = rows.slice(0, JIEBA_DICT_WORDS);
  const words = new Set(kept.map((r) => r.word));
  const idfLines = fs
    .readFileSync(defaultPath('DEFAULT_IDF_DICT'), 'utf8')
    .split('\n')
    .filter((l) => words.has(l.split(' ')[0] ?? ''));
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
