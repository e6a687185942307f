/**
 * Text processing shared by every memory layer: normalisation, the terms of
 * the TF-IDF vector space, keywords and name bigrams (issue 5 "Text").
 *
 * Vector terms: for Chinese runs, character bigrams plus nodejieba words; for
 * Latin runs, lower-cased word tokens without stop words, lightly stemmed.
 * Keywords (graph seeds, keyword channel): nodejieba `extract` for Chinese,
 * the same stop-word-filtered tokens for English.
 */
import { HAN, hasHan } from '../kernel/language.js';
import { jieba, JIEBA_DICT_WORDS } from './jieba.js';

/**
 * Identifies the vector space: tokenizer, dictionary and stemmer versions.
 * Stored beside every vector; a stored vector of another fingerprint is
 * recomputed, never compared (seed 001 "dense_fp must match").
 */
export const VECTOR_FINGERPRINT = `tfidf-v1|zh:bigram+jieba${JIEBA_DICT_WORDS}|en:word+stem1|cap40`;

const EN_STOP = new Set(
  (
    "a an the and or but if then else of at by for with about against between into through during before after above below to from up down in out on off over under " +
    "again further once here there when where why how all any both each few more most other some such no nor not only own same so than too very s t can will just don should now " +
    "i me my myself we our ours ourselves you your yours yourself yourselves he him his himself she her hers herself it its itself they them their theirs themselves " +
    "what which who whom this that these those am is are was were be been being have has had having do does did doing would could ought i'm you're he's she's it's we're they're " +
    "i've you've we've they've i'd you'd he'd she'd we'd they'd i'll you'll he'll she'll we'll they'll isn't aren't wasn't weren't hasn't haven't hadn't doesn't don't didn't " +
    "won't wouldn't shan't shouldn't can't cannot couldn't mustn't let's that's who's what's here's there's when's where's why's how's as until while also yeah yes oh ok okay " +
    "really thanks thank hey hi hello wow get got go going gonna lot lots much many like just so well one"
  ).split(/\s+/),
);

const ZH_STOP = new Set('的 了 是 在 我 你 他 她 它 们 这 那 和 与 就 都 也 还 吗 呢 吧 啊 呀 哦 嗯 个 有 没 不 很 被 把 给 让 对 说 要 会 能 可以 一个 什么 怎么 我们 你们 他们 自己 这个 那个'.split(' '));

/** A run of Chinese characters, or an English word / number. */
const RUNS = new RegExp(`${HAN}+|[a-z0-9][a-z0-9'’]*`, 'gu');

/** Normalise text before any processing: NFKC, lower case, whitespace collapsed. */
export function cleanText(text: string): string {
  return text.normalize('NFKC').replace(/<\|[^|]*\|>/g, ' ').replace(/\s+/g, ' ').trim().toLowerCase();
}

/**
 * A light English stemmer (suffix rules after Porter step 1 and a few of step
 * 2/4). Only consistency matters: queries and documents use the same rules.
 */
export function stem(word: string): string {
  let w = word.replace(/[’']s$/, '').replace(/[’']/g, '');
  if (w.length <= 3 || /\d/.test(w)) return w;
  if (w.endsWith('sses')) w = w.slice(0, -2);
  else if (w.endsWith('ies') && w.length > 4) w = w.slice(0, -3) + 'y';
  else if (w.endsWith('s') && !w.endsWith('ss') && !w.endsWith('us') && !w.endsWith('is')) w = w.slice(0, -1);
  for (const suffix of ['ing', 'ed']) {
    if (w.endsWith(suffix) && w.length - suffix.length >= 3) {
      const base = w.slice(0, -suffix.length);
      if (!/[aeiouy]/.test(base)) break;
      w = base;
      if (/([^aeiouslz])\1$/.test(w)) w = w.slice(0, -1);
      break;
    }
  }
  for (const [suffix, rep] of [
    ['ational', 'ate'],
    ['ization', 'ize'],
    ['fulness', 'ful'],
    ['iveness', 'ive'],
    ['ousness', 'ous'],
    ['ation', 'ate'],
    ['ness', ''],
    ['ment', ''],
    ['tion', 't'],
    ['sion', 's'],
    ['ly', ''],
  ] as const) {
    if (w.endsWith(suffix) && w.length - suffix.length >= 4) {
      w = w.slice(0, -suffix.length) + rep;
      break;
    }
  }
  if (w.endsWith('e') && w.length > 4) w = w.slice(0, -1);
  return w;
}

/** English tokens of a cleaned text: stop words removed, stemmed. */
/** Longest English token kept, characters. */
const MAX_TOKEN_CHARS = 40;
/** Longest run of Chinese characters vectorised at once (longer runs are cut), characters. */
const MAX_CJK_RUN = 400;

function englishTokens(run: string, out: string[]): void {
  const w = run.replace(/[’']+$/, '');
  if (w.length < 2 && !/\d/.test(w)) return;
  // No word is 40 letters long: such a run is noise (a pasted blob) and would bloat every vector it enters.
  if (w.length > MAX_TOKEN_CHARS) return;
  if (EN_STOP.has(w.replace(/’/g, "'"))) return;
  out.push(stem(w));
}

/**
 * The vector-space terms of `text`, with repetitions (term frequency = count).
 * Chinese: character bigrams (a lone character stands for itself) plus
 * nodejieba words of two or more characters; English: `englishTokens`.
 */
export function terms(text: string): string[] {
  const out: string[] = [];
  const clean = cleanText(text);
  for (const m of clean.matchAll(RUNS)) {
    const run = m[0];
    if (hasHan(run)) {
      const chars = [...run].slice(0, MAX_CJK_RUN);
      if (chars.length === 1) {
        if (!ZH_STOP.has(run)) out.push(run);
        continue;
      }
      for (let i = 0; i + 1 < chars.length; i++) out.push(chars[i]! + chars[i + 1]!);
      for (const word of jieba().cut(chars.join(''))) if (word.length >= 2 && !ZH_STOP.has(word)) out.push(`w:${word}`);
    } else {
      englishTokens(run, out);
    }
  }
  return out;
}

/** Term frequencies of `text` (see `terms`). */
export function termFreqs(text: string): Map<string, number> {
  const tf = new Map<string, number>();
  for (const t of terms(text)) tf.set(t, (tf.get(t) ?? 0) + 1);
  return tf;
}

/**
 * Keywords of `text` for graph seeds and the keyword channel: nodejieba
 * `extract` (TF-IDF against jieba's IDF table) on the Chinese part, stop-word
 * filtered stemmed tokens on the English part. Unique, at most `limit`.
 */
export function keywords(text: string, limit = 12): string[] {
  const clean = cleanText(text);
  const out = new Set<string>();
  if (hasHan(clean)) {
    for (const k of jieba().extract(clean, limit)) if (!ZH_STOP.has(k.word) && hasHan(k.word)) out.add(k.word);
  }
  const en: string[] = [];
  for (const m of clean.matchAll(RUNS)) if (!hasHan(m[0])) englishTokens(m[0], en);
  for (const w of en) out.add(w);
  return [...out].slice(0, limit);
}

/** Character bigrams of a name (spaces and punctuation removed), for merge detection. */
export function nameBigrams(name: string): Set<string> {
  const chars = [...cleanText(name).replace(/[\s.,'’"-]/g, '')];
  const out = new Set<string>();
  if (chars.length === 1) out.add(chars[0]!);
  for (let i = 0; i + 1 < chars.length; i++) out.add(chars[i]! + chars[i + 1]!);
  return out;
}

/** Jaccard similarity |A ∩ B| / |A ∪ B| of two sets (0 when both are empty). */
export function jaccard(a: ReadonlySet<string>, b: ReadonlySet<string>): number {
  if (a.size === 0 && b.size === 0) return 0;
  let inter = 0;
  for (const x of a) if (b.has(x)) inter++;
  return inter / (a.size + b.size - inter);
}
