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
function writeAtomic(file: string, text: string | Buffer): void {
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, text);
  fs.renameSync(tmp, file);
}

const NL = 0x0a;
const SPACE = 0x20;

/** ASCII whitespace (what String.prototype.trim removes of a dictionary line's bytes). */
function isBlankByte(b: number): boolean {
  return b === SPACE || (b >= 0x09 && b <= 0x0d);
}

/**
 * The non-blank lines of `buf` (a dictionary file's bytes) as byte offsets:
 * line i is buf[starts[i], ends[i]), without its newline. The dictionaries
 * are read as bytes, not as one string split into lines: the full one has
 * 349k lines, and a string (or two) per line cost ~60 MB of garbage on the
 * service's heap at its first start, left there until V8's memory reducer
 * ran some 20 s later.
 */
function lineOffsets(buf: Buffer): { starts: Int32Array; ends: Int32Array; n: number } {
  let cap = 1;
  for (let i = 0; i < buf.length; i++) if (buf[i] === NL) cap++;
  const starts = new Int32Array(cap);
  const ends = new Int32Array(cap);
  let n = 0;
  for (let s = 0; s < buf.length; ) {
    let e = buf.indexOf(NL, s);
    if (e < 0) e = buf.length;
    let blank = true;
    for (let k = s; k < e && blank; k++) blank = isBlankByte(buf[k]!);
    if (!blank) {
      starts[n] = s;
      ends[n] = e;
      n++;
    }
    s = e + 1;
  }
  return { starts, ends, n };
}

/** Where the first field of the line [s, e) ends: its first space, else e. */
function firstFieldEnd(buf: Buffer, s: number, e: number): number {
  const sp = buf.indexOf(SPACE, s);
  return sp < 0 || sp > e ? e : sp;
}

/** The frequency column of a dictionary line "word freq tag" at [s, e) (0 when absent or not a number). */
function lineFreq(buf: Buffer, s: number, e: number): number {
  const a = firstFieldEnd(buf, s, e);
  if (a >= e) return 0;
  const b = firstFieldEnd(buf, a + 1, e);
  let f = 0;
  for (let k = a + 1; k < b; k++) {
    const d = buf[k]! - 0x30;
    if (d < 0 || d > 9) {
      // Not plain digits (a decimal, a stray "\r"): as Number() reads the column.
      const n = Number(buf.toString('latin1', a + 1, b));
      return Number.isFinite(n) ? n : 0;
    }
    f = f * 10 + d;
  }
  return f;
}

/** FNV-1a hash of buf[s, e) (32 bits), to look words up without making strings of them. */
function hashBytes(buf: Buffer, s: number, e: number): number {
  let h = 0x811c9dc5;
  for (let k = s; k < e; k++) h = Math.imul(h ^ buf[k]!, 0x01000193);
  return h >>> 0;
}

/** The lines `order` of `buf` (offsets from lineOffsets), each ended by a newline, as one buffer. */
function joinLines(buf: Buffer, starts: Int32Array, ends: Int32Array, order: ArrayLike<number>): Buffer {
  let size = 0;
  for (let i = 0; i < order.length; i++) size += ends[order[i]!]! - starts[order[i]!]! + 1;
  const out = Buffer.allocUnsafe(size);
  let at = 0;
  for (let i = 0; i < order.length; i++) {
    const l = order[i]!;
    at += buf.copy(out, at, starts[l]!, ends[l]!);
    out[at++] = NL;
  }
  return out;
}

/**
 * Build the trimmed dictionary and IDF files when absent; returns their paths.
 * The output is the `JIEBA_DICT_WORDS` most frequent lines, most frequent
 * first, ties in file order (a stable sort), and the IDF lines of those words
 * (in the IDF file's order). Both files are handled as bytes (lineOffsets).
 */
function ensureTrimmedDict(): { dict: string; idf: string } {
  const dir = cacheDir();
  const dict = path.join(dir, 'jieba.dict.utf8');
  const idf = path.join(dir, 'idf.utf8');
  if (fs.existsSync(dict) && fs.existsSync(idf)) return { dict, idf };
  fs.mkdirSync(dir, { recursive: true });
  const text = fs.readFileSync(defaultPath('DEFAULT_DICT'));
  const lines = lineOffsets(text);
  // Pass 1: the frequency a line needs to be among the most frequent.
  const freqs = new Float64Array(lines.n);
  for (let i = 0; i < lines.n; i++) freqs[i] = lineFreq(text, lines.starts[i]!, lines.ends[i]!);
  const keep = Math.min(JIEBA_DICT_WORDS, lines.n);
  const threshold = keep > 0 ? Float64Array.from(freqs).sort().reverse()[keep - 1]! : Infinity;
  let atThreshold = keep;
  for (let i = 0; i < lines.n; i++) if (freqs[i]! > threshold) atThreshold--;
  // Pass 2: the kept lines (all above the threshold, the first ones at it), then most frequent first.
  const kept: number[] = [];
  for (let i = 0; i < lines.n; i++) {
    const freq = freqs[i]!;
    if (freq > threshold || (freq === threshold && atThreshold-- > 0)) kept.push(i);
  }
  kept.sort((a, b) => freqs[b]! - freqs[a]! || a - b);
  // The kept words by hash of their bytes; a hash hit is confirmed byte for byte.
  const words = new Map<number, number[]>();
  for (const i of kept) {
    const s = lines.starts[i]!;
    const h = hashBytes(text, s, firstFieldEnd(text, s, lines.ends[i]!));
    const same = words.get(h);
    if (same) same.push(i);
    else words.set(h, [i]);
  }
  const idfText = fs.readFileSync(defaultPath('DEFAULT_IDF_DICT'));
  const idfLines = lineOffsets(idfText);
  const idfKept: number[] = [];
  for (let j = 0; j < idfLines.n; j++) {
    const s = idfLines.starts[j]!;
    const e = firstFieldEnd(idfText, s, idfLines.ends[j]!);
    const same = words.get(hashBytes(idfText, s, e));
    if (!same) continue;
    for (const i of same) {
      const ws = lines.starts[i]!;
      const we = firstFieldEnd(text, ws, lines.ends[i]!);
      if (we - ws === e - s && text.compare(idfText, s, e, ws, we) === 0) {
        idfKept.push(j);
        break;
      }
    }
  }
  writeAtomic(dict, joinLines(text, lines.starts, lines.ends, kept));
  writeAtomic(idf, joinLines(idfText, idfLines.starts, idfLines.ends, idfKept));
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
