/**
 * buildGrammar (grammar.ts) on a worker thread.
 *
 * Building the speech grammar of a home (the templates filled with its names,
 * then determinised and minimised as an FSG, fsg.ts) takes about 0.9 s of CPU
 * on a desktop core and allocates about 100 MB that is garbage as soon as the
 * four grammar texts exist. On the service's own thread that blocked the
 * event loop for that long at every start and every change of the home (a
 * stop press waited behind it), and left the garbage in the service's heap
 * until V8's memory reducer ran some 20 s later (the resting RSS read 250 to
 * 300 MB instead of about 150 MB). On a worker, the event loop stays free
 * and the worker's whole heap is returned when it exits.
 *
 * A worker that cannot start or dies (no worker file next to this one, a
 * resource limit) is not a failure of the grammar: the build is done here,
 * on this thread, as before, and the cause is logged once. A GrammarError
 * from the worker is the grammar's own answer and is thrown as such.
 */
import { Worker } from 'node:worker_threads';
import { buildGrammar, GrammarError, type SpeechGrammar } from './grammar.js';
import type { FillerWeights } from './filler.js';
import type { Vocabulary } from './types.js';
import { createLogger } from '../kernel/log.js';
import { HomeAgentError } from '../kernel/errors.js';

const log = createLogger('intents:grammar');

/** What the worker is given: buildGrammar's arguments (structured-cloned). */
export interface GrammarJob {
  vocab: Vocabulary;
  weights: FillerWeights | null | undefined;
  jointProb: number | undefined;
  notCommandProb: number | undefined;
}

/** What the worker answers: the grammar, or the GrammarError's message (any other error is a worker failure). */
export type GrammarReply = { ok: true; grammar: SpeechGrammar } | { ok: false; grammarError?: string; error: string };

/**
 * A worker running grammar-worker: the compiled .js directly; from the
 * sources (.ts, run through tsx), a bootstrap that registers tsx's loader on
 * the worker's thread first (loader hooks are per thread; tsx is a
 * development dependency, present wherever the sources run).
 */
function startWorker(job: GrammarJob): Worker {
  if (!import.meta.url.endsWith('.ts')) return new Worker(new URL('./grammar-worker.js', import.meta.url), { workerData: job });
  const entry = new URL('./grammar-worker.ts', import.meta.url).href;
  const tsx = import.meta.resolve('tsx/esm/api');
  const code = `import(${JSON.stringify(tsx)}).then((m) => { m.register(); return import(${JSON.stringify(entry)}); });`;
  return new Worker(code, { eval: true, workerData: job });
}

/** buildGrammar itself threw (not a GrammarError) on the worker: the same build here would throw the same, so it is not retried here. */
export class GrammarBuildError extends HomeAgentError {
  constructor(message: string) {
    super('GRAMMAR_BUILD_FAILED', message);
  }
}

let fallbackLogged = false;

/** Run one job on a fresh worker; rejects with GrammarError, or with the worker's failure. */
function onWorker(job: GrammarJob): Promise<SpeechGrammar> {
  return new Promise((resolve, reject) => {
    let settled = false;
    const worker = startWorker(job);
    const finish = (fn: () => void): void => {
      if (settled) return;
      settled = true;
      fn();
      void worker.terminate().catch(() => undefined);
    };
    worker.once('message', (reply: GrammarReply) => {
      finish(() => {
        if (reply.ok) resolve(reply.grammar);
        else if (reply.grammarError !== undefined) reject(new GrammarError(reply.grammarError));
        else reject(new GrammarBuildError(reply.error));
      });
    });
    worker.once('error', (err) => finish(() => reject(err)));
    worker.once('exit', (code) => finish(() => reject(new Error(`the grammar worker exited (code ${code}) without an answer`))));
  });
}

/**
 * buildGrammar(vocab, weights, jointProb, notCommandProb) on a worker thread
 * (arguments as buildGrammar's; undefined takes its default). Resolves with
 * the same SpeechGrammar the same call on this thread returns. Rejects with
 * GrammarError when the grammar cannot be built, GrammarBuildError (its
 * message) when buildGrammar threw anything else there; a worker that could
 * not run (start-up, crash) is replaced by the build on this thread.
 */
export async function buildGrammarOffThread(
  vocab: Vocabulary,
  weights?: FillerWeights | null,
  jointProb?: number,
  notCommandProb?: number,
): Promise<SpeechGrammar> {
  try {
    return await onWorker({ vocab, weights, jointProb, notCommandProb });
  } catch (err) {
    if (err instanceof GrammarError || err instanceof GrammarBuildError) throw err;
    if (!fallbackLogged) {
      fallbackLogged = true;
      log.warn({ err: err instanceof Error ? err.message : String(err) }, 'grammar worker failed; building the grammar on the main thread');
    }
    return buildGrammar(vocab, weights, jointProb, notCommandProb);
  }
}
