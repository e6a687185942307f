/**
 * The worker of grammar-thread.ts: builds one grammar from workerData (a
 * GrammarJob), posts one GrammarReply, and ends.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { buildGrammar, GrammarError } from './grammar.js';
import type { GrammarJob, GrammarReply } from './grammar-thread.js';

const job = workerData as GrammarJob;
let reply: GrammarReply;
try {
  reply = { ok: true, grammar: buildGrammar(job.vocab, job.weights, job.jointProb, job.notCommandProb) };
} catch (err) {
  const error = err instanceof Error ? err.message : String(err);
  reply = err instanceof GrammarError ? { ok: false, grammarError: error, error } : { ok: false, error };
}
parentPort?.postMessage(reply);
