/**
 * buildGrammarOffThread (src/intents/grammar-thread.ts): the same grammar as
 * buildGrammar, built on a worker thread so the service's event loop stays free.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildGrammar } from '../../src/intents/index.js';
import { buildGrammarOffThread } from '../../src/intents/grammar-thread.js';
import { VOCAB } from './vocab.js';

test('the grammar built on a worker thread is the one built on this thread, with the same options', async () => {
  const weights = { entryProb: 0.02, phoneProb: 1e-4 };
  const [off, here] = [await buildGrammarOffThread(VOCAB, weights, 0.2, 0.1), buildGrammar(VOCAB, weights, 0.2, 0.1)];
  assert.deepEqual(off, here);
  const plain = await buildGrammarOffThread(VOCAB, null);
  assert.deepEqual(plain, buildGrammar(VOCAB, null));
  assert.notEqual(plain.fsg, off.fsg, 'the options reach the worker');
});

test('the event loop runs while the grammar is built', async () => {
  // A callback queued before the build: on this thread the build would finish (and its promise settle) first.
  let ran = false;
  setImmediate(() => {
    ran = true;
  });
  const g = await buildGrammarOffThread(VOCAB);
  assert.ok(g.fsg.startsWith('FSG_BEGIN'));
  assert.ok(ran, 'the event loop turned while the worker built the grammar');
});
