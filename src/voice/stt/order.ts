/**
 * The engine chain of the voice issue: the command grammar first, open
 * dictation when the grammar rejects and a dictation engine exists. The
 * order is configurable: 'grammar-first' (default) or 'dictation-first'
 * (dictation result used unless it fails or is empty, then the grammar), or
 * one engine only. Audio is fed to every engine of the chain while the person
 * speaks, so no engine starts from zero at the end; an engine whose result is
 * not needed is aborted.
 */
import { createLogger } from '../../kernel/log.js';
import { errorMessage } from '../../kernel/errors.js';
import type { SttEndOptions, SttEngine, SttPauseOptions, SttResult, SttSession, SttStartOptions } from './types.js';

const log = createLogger('stt:chain');

/** Order of the chain. */
export type SttOrder = 'grammar-first' | 'dictation-first' | 'grammar-only' | 'dictation-only';

/** Options of SttChain. */
export interface SttChainOptions {
  /** The command recogniser (PocketsphinxStt). */
  grammar?: SttEngine;
  /** Open dictation (Wyoming ASR), when configured. */
  dictation?: SttEngine;
  /** Default 'grammar-first'. */
  order?: SttOrder;
}

/**
 * An SttEngine that runs a grammar engine and a dictation engine in the
 * configured order. Its name is 'chain'; results keep the name of the engine
 * that produced them. A failing engine (unavailable binary, unreachable
 * service) is logged and the next one is used; when all fail, end() rejects
 * with the last error.
 */
export class SttChain implements SttEngine {
  readonly name = 'chain';
  constructor(private readonly opts: SttChainOptions) {
    if (!opts.grammar && !opts.dictation) throw new TypeError('SttChain needs at least one engine');
  }

  /** Engines to try, in order, for the configured order. */
  engines(): SttEngine[] {
    const { grammar, dictation } = this.opts;
    const order = this.opts.order ?? 'grammar-first';
    const list =
      order === 'grammar-only' ? [grammar] : order === 'dictation-only' ? [dictation] : order === 'dictation-first' ? [dictation, grammar] : [grammar, dictation];
    return list.filter((e): e is SttEngine => e !== undefined);
  }

  start(opts?: SttStartOptions): SttSession {
    const engines = this.engines();
    const sessions: Array<{ engine: SttEngine; session: SttSession | undefined; error?: unknown }> = engines.map((engine) => {
      try {
        return { engine, session: engine.start(opts) };
      } catch (error) {
        return { engine, session: undefined, error };
      }
    });
    let finished = false;
    return {
      write(pcm: Buffer): void {
        if (finished) return;
        for (const s of sessions) s.session?.write(pcm);
      },
      async end(opts?: SttEndOptions): Promise<SttResult> {
        finished = true;
        const t0 = performance.now();
        // Every engine stops receiving audio now; results are awaited in order.
        const pending = sessions.map((s) => (s.session ? s.session.end(opts) : Promise.reject(s.error)));
        for (const p of pending) p.catch(() => undefined);
        let last: SttResult | undefined;
        let lastError: unknown;
        for (let i = 0; i < sessions.length; i++) {
          const s = sessions[i]!;
          try {
            const r = await pending[i]!;
            last = r;
            const usable = !r.rejected && r.text.trim().length > 0;
            if (usable) {
              for (const other of sessions.slice(i + 1)) other.session?.abort();
              return { ...r, finish_ms: performance.now() - t0 };
            }
          } catch (err) {
            lastError = err;
            log.warn({ engine: s.engine.name, err: errorMessage(err) }, 'STT engine failed; trying the next one');
          }
        }
        if (last) return { ...last, finish_ms: performance.now() - t0 };
        throw lastError;
      },
      abort(): void {
        finished = true;
        for (const s of sessions) s.session?.abort();
      },
      // The options go on as given: without them the chain's engines decoded a lull's pass with no padding.
      pause(pauseOpts?: SttPauseOptions): void {
        if (!finished) for (const s of sessions) s.session?.pause?.(pauseOpts);
      },
      resume(): void {
        if (!finished) for (const s of sessions) s.session?.resume?.();
      },
      // Only the first engine's result can be taken without waiting for the others (end() takes the first usable one).
      speculation(): Promise<SttResult | undefined> {
        if (finished) return Promise.resolve(undefined);
        return sessions[0]?.session?.speculation?.() ?? Promise.resolve(undefined);
      },
      // The speculation taken is the first engine's: so is the check of its padding.
      paddingHeld(): boolean {
        return sessions[0]?.session?.paddingHeld?.() ?? true;
      },
    };
  }

  async close(): Promise<void> {
    await Promise.all(this.engines().map((e) => e.close?.()));
  }
}
