/**
 * The TF-IDF vector space of memory (issue 5 "Text"): sparse term-frequency
 * vectors stored with the space fingerprint, document-side weights with
 * sublinear TF and length normalisation, and IDF from the document store's
 * document frequencies (so the context window and the documents share one
 * space).
 */
import { HAN } from '../kernel/language.js';
import { terms } from './text.js';

/** A sparse term-frequency vector: term -> count. */
export type TfVector = Record<string, number>;

/** The term-frequency vector of `text` (terms from `text.terms`). */
export function tfVector(text: string): TfVector {
  const tf: TfVector = {};
  for (const t of terms(text)) tf[t] = (tf[t] ?? 0) + 1;
  return tf;
}

/** Sublinear TF: 1 + ln c for counts >= 1; fractional counts (context terms) are taken as they are. */
export function tfWeight(c: number): number {
  return c >= 1 ? 1 + Math.log(c) : c;
}

/** `a` plus `factor` times `b` (a context vector folded into a document vector). */
export function addScaled(a: TfVector, b: TfVector, factor: number): TfVector {
  const out: TfVector = { ...a };
  for (const [t, c] of Object.entries(b)) out[t] = (out[t] ?? 0) + c * factor;
  return out;
}

/** Document-side weights: (1 + ln tf) / L2 norm of those values. */
export function docWeights(tf: TfVector): Map<string, number> {
  const out = new Map<string, number>();
  let norm = 0;
  for (const [t, c] of Object.entries(tf)) {
    const w = tfWeight(c);
    out.set(t, w);
    norm += w * w;
  }
  norm = Math.sqrt(norm) || 1;
  for (const [t, w] of out) out.set(t, w / norm);
  return out;
}

/** IDF as used everywhere in memory: ln(1 + N / df); 0 for terms never seen. */
export function idf(n: number, df: number): number {
  return df > 0 ? Math.log(1 + Math.max(n, 1) / df) : 0;
}

/**
 * Cosine similarity of two TF vectors under IDF weights (`idfOf(term)`),
 * 0 when either is empty. Used to rank context events against the input.
 */
export function cosine(a: TfVector, b: TfVector, idfOf: (term: string) => number): number {
  let dot = 0;
  let na = 0;
  let nb = 0;
  for (const [t, c] of Object.entries(a)) {
    const w = (1 + Math.log(c)) * idfOf(t);
    na += w * w;
    const cb = b[t];
    if (cb !== undefined) dot += w * (1 + Math.log(cb)) * idfOf(t);
  }
  for (const [t, c] of Object.entries(b)) {
    const w = (1 + Math.log(c)) * idfOf(t);
    nb += w * w;
  }
  return na > 0 && nb > 0 ? dot / Math.sqrt(na * nb) : 0;
}

/** One or two Chinese characters: a character or bigram term of `terms`. */
const HAN_BIGRAM = new RegExp(`^${HAN}{1,2}$`, 'u');

/** The keyword-channel tokens of a TF vector: words only (no Chinese bigrams), `w:` prefix removed. */
export function keywordTokens(tf: TfVector): string[] {
  const out: string[] = [];
  for (const t of Object.keys(tf)) {
    if (t.startsWith('w:')) out.push(t.slice(2));
    else if (!HAN_BIGRAM.test(t)) out.push(t);
  }
  return out;
}

/** Parse a stored vector; `{}` when the JSON is not an object of numbers. */
export function parseVector(json: string): TfVector {
  try {
    const v: unknown = JSON.parse(json);
    if (v === null || typeof v !== 'object' || Array.isArray(v)) return {};
    const out: TfVector = {};
    for (const [k, n] of Object.entries(v as Record<string, unknown>)) if (typeof n === 'number') out[k] = n;
    return out;
  } catch {
    return {};
  }
}
