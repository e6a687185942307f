/**
 * Dense recall from the provider's embeddings (issue 19 "Embeddings from the
 * provider"; seed 001's primary vector space). Every document of the memory
 * store gets a vector from the configured embedding source (Ollama
 * /api/embed or OpenAI /v1/embeddings through the Lua adapters,
 * ProviderManager.embedder), stored with its fingerprint (source, model,
 * dimension); only vectors of one fingerprint are ever compared. A query's
 * ranking (`rank`) is a channel of its own that DocStore.search fuses with
 * the lexical channels by reciprocal rank fusion (SearchOptions.dense).
 *
 * - Background: `catchUp` embeds the documents that have no vector of the
 *   current fingerprint, oldest first, in batches, with progress in
 *   `status()` (`homeagent status`); a change of model starts it over for
 *   the new fingerprint, the old vectors stay until `prune` and are never
 *   compared with the new ones.
 * - No embedding model configured, or the source down: recall is lexical
 *   only, said once in the log (and by `homeagent doctor`), never an error
 *   in a turn. A source that failed is asked again after RETRY_MS.
 *
 * Storage: table `doc_embeddings` of memory.db, made when absent (an older
 * release ignores it): (fingerprint, doc_id) -> little-endian float32 vector.
 */
import type { Logger } from '../kernel/log-types.js';
import type { Db } from './db.js';

/** An embeddings source (ProviderManager.embedder satisfies it). */
export interface EmbeddingSource {
  source: string;
  model: string;
  /** One vector per text, in order, of one dimension. Throws the provider's error. */
  embed(texts: string[], signal?: AbortSignal): Promise<number[][]>;
}

/** What `status()` reports. */
export interface DenseStatus {
  /**
   * `off`: no embedding model configured (lexical only); `unavailable`: the
   * source failed (lexical only until it answers); `indexing`: documents
   * are being embedded in the background; `ready`: every document has a
   * vector of the current fingerprint.
   */
  state: 'off' | 'unavailable' | 'indexing' | 'ready';
  /** `source/model/dimension` once the dimension is known, else `source/model`. */
  fingerprint?: string;
  /** Documents with a vector of the current fingerprint, and all documents. */
  done: number;
  total: number;
  /** Why it is unavailable. */
  reason?: string;
}

/** Options of DenseIndex. */
export interface DenseOptions {
  /** The memory database (its `docs` table is read; `doc_embeddings` is written). */
  db: Db;
  /** The configured source, or undefined when none (read on every use, so a settings change takes effect). */
  embedder: () => EmbeddingSource | undefined;
  log: Logger;
  /** ms since epoch. */
  now: () => number;
  /** Texts per embeddings request (default 16). */
  batch?: number;
  /** Longest wait for a query's embedding in a turn, ms (default 2000); past it the turn goes on lexical only. */
  queryTimeoutMs?: number;
}

/** After a failure, the source is asked again no sooner than this, ms. */
export const RETRY_MS = 60_000;

const SCHEMA =
  'CREATE TABLE IF NOT EXISTS doc_embeddings (fingerprint TEXT NOT NULL, doc_id INTEGER NOT NULL, dim INTEGER NOT NULL, vec BLOB NOT NULL, PRIMARY KEY (fingerprint, doc_id));';

/** The text of a document that is embedded: its title, input and response. */
function docText(r: { title: string; input: string; response: string }): string {
  return [r.title, r.input, r.response].filter((s) => s !== '').join('\n');
}

function toBlob(v: number[]): Buffer {
  const f = new Float32Array(v.length);
  let n = 0;
  for (const x of v) n += x * x;
  n = Math.sqrt(n) || 1;
  v.forEach((x, i) => (f[i] = x / n));
  return Buffer.from(f.buffer);
}

function fromBlob(b: Buffer): Float32Array {
  return new Float32Array(b.buffer.slice(b.byteOffset, b.byteOffset + b.byteLength));
}

/** The dense channel of memory recall; see the module comment. */
export class DenseIndex {
  private readonly db: Db;
  private readonly opts: DenseOptions;
  /** source/model -> dimension, once seen. */
  private readonly dims = new Map<string, number>();
  /** Vectors of one fingerprint, loaded for ranking (dropped when the index grows). */
  private cache?: { fp: string; ids: number[]; vecs: Float32Array[] };
  private chain: Promise<void> = Promise.resolve();
  private pending = 0;
  private failure?: { base: string; at: number; reason: string };
  private said = '';

  constructor(opts: DenseOptions) {
    this.opts = opts;
    this.db = opts.db;
    this.db.exec(SCHEMA);
    for (const r of this.db.prepare('SELECT fingerprint, MAX(dim) AS dim FROM doc_embeddings GROUP BY fingerprint').all() as Array<{ fingerprint: string; dim: number }>) {
      this.dims.set(r.fingerprint.replace(/\/\d+$/, ''), r.dim);
    }
  }

  /** Say once (per state) why recall is lexical only. */
  private sayOnce(key: string, level: 'info' | 'warn', msg: string, extra: Record<string, unknown> = {}): void {
    if (this.said === key) return;
    this.said = key;
    this.opts.log[level](extra, msg);
  }

  private base(e: EmbeddingSource): string {
    return `${e.source}/${e.model}`;
  }

  private fingerprint(e: EmbeddingSource): string | undefined {
    const d = this.dims.get(this.base(e));
    return d ? `${this.base(e)}/${d}` : undefined;
  }

  /** Whether the source may be asked now (not within RETRY_MS of a failure of the same source and model). */
  private usable(e: EmbeddingSource): boolean {
    const f = this.failure;
    return !f || f.base !== this.base(e) || this.opts.now() - f.at >= RETRY_MS;
  }

  private failed(e: EmbeddingSource, err: unknown): void {
    const reason = err instanceof Error ? err.message : String(err);
    this.failure = { base: this.base(e), at: this.opts.now(), reason };
    this.sayOnce(`down:${this.base(e)}`, 'warn', `embeddings from ${e.source} (${e.model}) failed: memory recall is lexical only until it answers`, { reason });
  }

  private succeeded(e: EmbeddingSource, dim: number): void {
    if (this.failure?.base === this.base(e)) this.failure = undefined;
    if (this.said.startsWith('down:') || this.said === 'off') this.said = '';
    const prev = this.dims.get(this.base(e));
    if (prev !== dim) {
      // A model whose dimension changed is another fingerprint: its old vectors are not compared.
      this.dims.set(this.base(e), dim);
      this.cache = undefined;
    }
  }

  /** Progress and state (see DenseStatus). */
  status(): DenseStatus {
    const e = this.opts.embedder();
    const total = (this.db.prepare('SELECT COUNT(*) FROM docs').pluck().get() as number) ?? 0;
    if (!e) return { state: 'off', done: 0, total };
    const fp = this.fingerprint(e);
    const done = fp ? (this.db.prepare('SELECT COUNT(*) FROM doc_embeddings d JOIN docs ON docs.id = d.doc_id WHERE d.fingerprint = ?').pluck().get(fp) as number) : 0;
    if (this.failure && this.failure.base === this.base(e)) return { state: 'unavailable', fingerprint: fp ?? this.base(e), done, total, reason: this.failure.reason };
    return { state: done >= total && this.pending === 0 ? 'ready' : 'indexing', fingerprint: fp ?? this.base(e), done, total };
  }

  /**
   * Embed, in the background, the documents without a vector of the current
   * fingerprint (oldest first, `batch` per request) until none is left, the
   * source fails. One run at a time (a call while one runs queues one more
   * after it and returns it). Never throws.
   */
  catchUp(): Promise<void> {
    // One run at a time; a call while one runs queues one more (documents may have come since it looked), never more.
    if (this.pending > 1) return this.chain;
    this.pending++;
    this.chain = this.chain
      .then(() => this.index())
      .catch((err: unknown) => {
        // The store itself failed (closed at shutdown, disk): logged; recall stays lexical for what is missing.
        this.opts.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'embedding documents stopped');
      })
      .finally(() => {
        this.pending--;
      });
    return this.chain;
  }

  private async index(): Promise<void> {
    const batch = this.opts.batch ?? 16;
    for (;;) {
      const e = this.opts.embedder();
      if (!e) {
        this.sayOnce('off', 'info', 'no embedding model configured (core.llm.embedding.source/model): memory recall is lexical only');
        return;
      }
      if (!this.usable(e)) return;
      const fp = this.fingerprint(e);
      const rows = (
        fp
          ? this.db.prepare('SELECT id, title, input, response FROM docs WHERE id NOT IN (SELECT doc_id FROM doc_embeddings WHERE fingerprint = ?) ORDER BY id LIMIT ?').all(fp, batch)
          : this.db.prepare('SELECT id, title, input, response FROM docs ORDER BY id LIMIT ?').all(batch)
      ) as Array<{ id: number; title: string; input: string; response: string }>;
      if (!rows.length) {
        // Caught up: vectors of other fingerprints (an earlier model) are never compared; they go.
        const gone = this.prune();
        if (gone) this.opts.log.info({ fingerprint: fp, removed: gone }, 'vectors of an earlier embedding model removed');
        return;
      }
      let vecs: number[][];
      try {
        vecs = await e.embed(rows.map(docText));
      } catch (err) {
        this.failed(e, err);
        return;
      }
      const dim = vecs[0]?.length ?? 0;
      if (vecs.length !== rows.length || !dim) {
        this.failed(e, new Error(`${vecs.length} vectors for ${rows.length} texts`));
        return;
      }
      // The model may have changed while the request ran: store under the fingerprint of the source that answered.
      this.succeeded(e, dim);
      const at = `${this.base(e)}/${dim}`;
      const put = this.db.prepare('INSERT OR REPLACE INTO doc_embeddings (fingerprint, doc_id, dim, vec) VALUES (?, ?, ?, ?)');
      this.db.transaction(() => rows.forEach((r, i) => put.run(at, r.id, dim, toBlob(vecs[i]!))))();
      this.cache = undefined;
      this.opts.log.debug({ fingerprint: at, indexed: rows.length }, 'documents embedded');
    }
  }

  /**
   * The documents nearest to `query` by cosine similarity, best first (at
   * most `limit` ids), among the vectors of the current fingerprint only;
   * [] when there is no model, the source is down (then within RETRY_MS it
   * is not asked), or no vector of this fingerprint exists yet. Starts a
   * background catch-up. Never throws; waits at most queryTimeoutMs.
   */
  async rank(query: string, limit = 50): Promise<number[]> {
    const e = this.opts.embedder();
    if (!e) {
      this.sayOnce('off', 'info', 'no embedding model configured (core.llm.embedding.source/model): memory recall is lexical only');
      return [];
    }
    if (!this.usable(e)) return [];
    void this.catchUp();
    let q: number[] | undefined;
    try {
      [q] = await e.embed([query], AbortSignal.timeout(this.opts.queryTimeoutMs ?? 2000));
    } catch (err) {
      this.failed(e, err);
      return [];
    }
    if (!q?.length) return [];
    this.succeeded(e, q.length);
    const fp = `${this.base(e)}/${q.length}`;
    if (this.cache?.fp !== fp) {
      const rows = this.db.prepare('SELECT doc_id, vec FROM doc_embeddings WHERE fingerprint = ? AND dim = ?').all(fp, q.length) as Array<{ doc_id: number; vec: Buffer }>;
      this.cache = { fp, ids: rows.map((r) => r.doc_id), vecs: rows.map((r) => fromBlob(r.vec)) };
    }
    const qv = fromBlob(toBlob(q));
    const scored = this.cache.ids.map((id, i) => {
      const v = this.cache!.vecs[i]!;
      let s = 0;
      for (let k = 0; k < qv.length; k++) s += qv[k]! * v[k]!;
      return { id, s };
    });
    scored.sort((a, b) => b.s - a.s || b.id - a.id);
    return scored.slice(0, limit).map((x) => x.id);
  }

  /** Delete vectors of every fingerprint but the current one (after a model change finished). Returns how many went. */
  prune(): number {
    const e = this.opts.embedder();
    const fp = e ? this.fingerprint(e) : undefined;
    if (!fp) return 0;
    return this.db.prepare('DELETE FROM doc_embeddings WHERE fingerprint != ?').run(fp).changes;
  }
}
