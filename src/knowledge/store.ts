/**
 * The knowledge base (seed 000 §5 "知识体系"): documents
 * dataDir/knowledge/<name>/content.md plus shipped seeds in the repo's
 * data/knowledge/<name>/content.md (a user document of the same name wins).
 * Its own TF-IDF index (character bigrams + words, the memory tokenizer) kept
 * in this instance, never mixed with memory's index. Documents are split into
 * paragraph chunks so a search returns the relevant passage.
 */
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Logger } from '../kernel/log-types.js';
import type { KnowledgeAPI } from '../kernel/memory-types.js';
import { KnowledgeError } from '../memory/errors.js';
import { docWeights, idf, tfVector } from '../memory/vector-space.js';

/** One indexed passage of a knowledge document. */
interface Chunk {
  name: string;
  text: string;
  weights: Map<string, number>;
}

/** A search hit: document name, cosine score in [0, 1], the best passage. */
export interface KnowledgeHit {
  name: string;
  score: number;
  snippet: string;
}

/** A knowledge document as listed: `shipped` ones come with the release (read-only seeds), `user` ones were written on this box; `bytes` of its content.md. */
export interface KnowledgeEntry {
  name: string;
  source: 'shipped' | 'user';
  bytes: number;
}

/** Valid knowledge names: letters (any script), digits, `_`, `-`, `.`, spaces; 1-64 chars; no path parts. */
const NAME = /^[\p{L}\p{N}_][\p{L}\p{N}_. -]{0,63}$/u;
const CHUNK_CHARS = 600;

/** The repo's shipped seeds: the nearest data/knowledge above this module. */
export function defaultSeedDir(): string {
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (let i = 0; i < 6; i++) {
    if (fs.existsSync(path.join(dir, 'package.json'))) return path.join(dir, 'data', 'knowledge');
    dir = path.dirname(dir);
  }
  return path.resolve('data', 'knowledge');
}

/** Split markdown into passages of about CHUNK_CHARS characters at paragraph boundaries. */
function chunks(content: string): string[] {
  const paras = content.split(/\n\s*\n/).map((p) => p.trim()).filter((p) => p !== '');
  const out: string[] = [];
  let cur = '';
  for (const p of paras) {
    if (cur !== '' && cur.length + p.length > CHUNK_CHARS) {
      out.push(cur);
      cur = '';
    }
    cur = cur === '' ? p : `${cur}\n\n${p}`;
  }
  if (cur !== '') out.push(cur);
  return out.length > 0 ? out : [content.trim()];
}

/** Options of the knowledge base. */
export interface KnowledgeOptions {
  /** Writable documents: <dataDir>/knowledge. */
  dir: string;
  /** Shipped read-only seeds (default: the repo's data/knowledge). */
  seedDir?: string;
  log: Logger;
}

/** The knowledge base: scan on construction, incremental add on create. */
export class KnowledgeBase {
  private readonly docs = new Map<string, { file: string; chunks: Chunk[] }>();
  private readonly df = new Map<string, number>();
  private nChunks = 0;
  private readonly seedDir: string;

  constructor(private readonly opts: KnowledgeOptions) {
    this.seedDir = opts.seedDir ?? defaultSeedDir();
    fs.mkdirSync(opts.dir, { recursive: true });
    for (const dir of [this.seedDir, opts.dir]) this.scan(dir);
  }

  private scan(dir: string): void {
    let names: string[] = [];
    try {
      names = fs.readdirSync(dir);
    } catch {
      return;
    }
    for (const name of names) {
      const file = path.join(dir, name, 'content.md');
      try {
        this.index(name, file, fs.readFileSync(file, 'utf8'));
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== 'ENOENT' && (err as NodeJS.ErrnoException).code !== 'ENOTDIR') {
          this.opts.log.warn({ err, file }, 'knowledge document unreadable');
        }
      }
    }
  }

  private index(name: string, file: string, content: string): void {
    this.unindex(name);
    const list: Chunk[] = chunks(content).map((text) => {
      const tf = tfVector(`${name}\n${text}`);
      for (const t of Object.keys(tf)) this.df.set(t, (this.df.get(t) ?? 0) + 1);
      return { name, text, weights: docWeights(tf) };
    });
    this.nChunks += list.length;
    this.docs.set(name, { file, chunks: list });
  }

  private unindex(name: string): void {
    const old = this.docs.get(name);
    if (!old) return;
    for (const c of old.chunks) {
      for (const t of c.weights.keys()) {
        const n = (this.df.get(t) ?? 1) - 1;
        if (n <= 0) this.df.delete(t);
        else this.df.set(t, n);
      }
    }
    this.nChunks -= old.chunks.length;
    this.docs.delete(name);
  }

  /** Cosine search over passages; one hit per document (its best passage), best first. */
  search(query: string, limit = 5): KnowledgeHit[] {
    const qtf = tfVector(query);
    const q = new Map<string, number>();
    let qn = 0;
    for (const [t, c] of Object.entries(qtf)) {
      const w = (1 + Math.log(c)) * idf(this.nChunks, this.df.get(t) ?? 0);
      if (w > 0) {
        q.set(t, w);
        qn += w * w;
      }
    }
    if (qn === 0) return [];
    qn = Math.sqrt(qn);
    const best = new Map<string, KnowledgeHit>();
    for (const { chunks: list } of this.docs.values()) {
      for (const c of list) {
        let dot = 0;
        let dn = 0;
        for (const [t, w] of c.weights) {
          const i = idf(this.nChunks, this.df.get(t) ?? 0);
          dn += (w * i) ** 2;
          const qw = q.get(t);
          if (qw !== undefined) dot += qw * w * i;
        }
        if (dot <= 0) continue;
        const score = dot / (qn * Math.sqrt(dn));
        const prev = best.get(c.name);
        if (!prev || prev.score < score) best.set(c.name, { name: c.name, score, snippet: c.text.slice(0, 400) });
      }
    }
    return [...best.values()].sort((a, b) => b.score - a.score).slice(0, Math.max(1, limit));
  }

  /**
   * Create or replace <dir>/<name>/content.md (written to a temp file, fsynced,
   * renamed) and index it. Errors: KnowledgeError on an invalid name or empty content.
   */
  create(name: string, content: string): void {
    const n = name.trim();
    if (!NAME.test(n) || n.includes('..')) throw new KnowledgeError(`invalid knowledge name "${name}": use 1-64 letters, digits, _ - . or spaces`);
    if (content.trim() === '') throw new KnowledgeError(`knowledge "${n}": content is empty`);
    const dir = path.join(this.opts.dir, n);
    fs.mkdirSync(dir, { recursive: true });
    const file = path.join(dir, 'content.md');
    const tmp = `${file}.tmp`;
    const fd = fs.openSync(tmp, 'w');
    try {
      fs.writeSync(fd, content);
      fs.fsyncSync(fd);
    } finally {
      fs.closeSync(fd);
    }
    fs.renameSync(tmp, file);
    this.index(n, file, content);
  }

  /**
   * Forgetting (issue 18): in the user's documents (never the shipped
   * seeds), drop every paragraph (text between blank lines) `matches` says
   * holds what is forgotten; a document left empty is removed. Rewritten
   * through a new file (the old one is unlinked) and re-indexed. Returns the
   * paragraphs removed (for the rare words of the forgetting).
   */
  forget(matches: (text: string) => boolean): string[] {
    const removed: string[] = [];
    const userDir = path.resolve(this.opts.dir);
    for (const [name, d] of [...this.docs]) {
      if (path.relative(userDir, path.resolve(d.file)).startsWith('..')) continue;
      const content = this.read(name);
      if (content === undefined || !matches(content)) continue;
      const paragraphs = content.split(/\n\s*\n/);
      const kept = paragraphs.filter((p) => !matches(`${name}\n${p}`));
      removed.push(...paragraphs.filter((p) => !kept.includes(p)));
      if (kept.join('').trim() === '' || kept.length === paragraphs.length) {
        // Nothing of it is left (or what is forgotten is spread over the whole document): the document goes.
        if (kept.length === paragraphs.length) removed.push(content);
        this.unindex(name);
        fs.rmSync(path.dirname(d.file), { recursive: true, force: true });
      } else {
        this.create(name, kept.join('\n\n'));
      }
    }
    return removed;
  }

  /** Names of all documents (seeds and user documents), sorted. */
  list(): string[] {
    return [...this.docs.keys()].sort();
  }

  /** Every document with where it comes from and its size, sorted by name (a file gone since the scan: 0 bytes). */
  entries(): KnowledgeEntry[] {
    return this.list().map((name) => {
      const file = this.docs.get(name)!.file;
      let bytes = 0;
      try {
        bytes = fs.statSync(file).size;
      } catch {
        /* removed behind our back: listed until the next scan */
      }
      return { name, source: this.isUserFile(file) ? 'user' : 'shipped', bytes };
    });
  }

  /** Whether `file` is one of the user's documents (under `dir`), not a shipped seed. */
  private isUserFile(file: string): boolean {
    return !path.relative(path.resolve(this.opts.dir), path.resolve(file)).startsWith('..');
  }

  /** The full content of a document, or undefined. */
  read(name: string): string | undefined {
    const d = this.docs.get(name);
    if (!d) return undefined;
    try {
      return fs.readFileSync(d.file, 'utf8');
    } catch {
      return undefined;
    }
  }

  /** The plugin-facing API (types.ts KnowledgeAPI). */
  api(): KnowledgeAPI {
    return {
      search: async (query, limit) => this.search(query, limit ?? 5),
      create: async (name, content) => this.create(name, content),
      list: async () => this.list(),
    };
  }
}
