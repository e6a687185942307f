import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SttChain } from '../../src/voice/stt/order.js';
import { SttUnavailableError } from '../../src/voice/stt/errors.js';
import type { SttEngine, SttResult, SttSession } from '../../src/voice/stt/types.js';

/** A hand-written engine: returns `result` (or throws `error`) and records what it saw. */
function fakeEngine(name: string, result: Partial<SttResult> | Error) {
  const seen = { bytes: 0, aborted: 0, ended: 0, paused: 0, resumed: 0, pauseOpts: [] as unknown[], held: 0 };
  const engine: SttEngine = {
    name,
    start(): SttSession {
      return {
        write: (pcm) => void (seen.bytes += pcm.length),
        end: async () => {
          seen.ended++;
          if (result instanceof Error) throw result;
          return { text: '', confidence: 0, rejected: false, engine: name, ...result };
        },
        abort: () => void seen.aborted++,
        pause: (o) => {
          seen.paused++;
          seen.pauseOpts.push(o);
        },
        paddingHeld: () => {
          seen.held++;
          return false;
        },
        resume: () => void seen.resumed++,
      };
    },
  };
  return { engine, seen };
}

test('grammar first: an accepted command wins and dictation is aborted', async () => {
  const g = fakeEngine('pocketsphinx', { text: 'next', confidence: 0.9 });
  const d = fakeEngine('wyoming', { text: 'next please', confidence: 0.8 });
  const s = new SttChain({ grammar: g.engine, dictation: d.engine }).start();
  s.write(Buffer.alloc(3200));
  const r = await s.end();
  assert.equal(r.engine, 'pocketsphinx');
  assert.equal(r.text, 'next');
  assert.equal(g.seen.bytes, 3200);
  assert.equal(d.seen.bytes, 3200, 'dictation heard the audio while the person spoke');
  assert.equal(d.seen.aborted, 1);
});

test('grammar rejects: dictation answers', async () => {
  const g = fakeEngine('pocketsphinx', { text: '', rejected: true });
  const d = fakeEngine('wyoming', { text: 'tell me a joke', confidence: 0.7 });
  const r = await new SttChain({ grammar: g.engine, dictation: d.engine }).start().end();
  assert.equal(r.engine, 'wyoming');
  assert.equal(r.text, 'tell me a joke');
});

test('no dictation engine: the rejection is the result', async () => {
  const g = fakeEngine('pocketsphinx', { text: '', rejected: true });
  const r = await new SttChain({ grammar: g.engine }).start().end();
  assert.equal(r.rejected, true);
  assert.equal(r.engine, 'pocketsphinx');
});

test('a failing engine is skipped; all failing rejects with the typed error', async () => {
  const g = fakeEngine('pocketsphinx', new SttUnavailableError('pocketsphinx_continuous not found'));
  const d = fakeEngine('wyoming', { text: 'hello' });
  const r = await new SttChain({ grammar: g.engine, dictation: d.engine }).start().end();
  assert.equal(r.text, 'hello');
  const only = new SttChain({ grammar: g.engine, order: 'grammar-only' }).start();
  await assert.rejects(only.end(), (e: unknown) => e instanceof SttUnavailableError && e.code === 'STT_UNAVAILABLE');
});

test('dictation-first order and abort', async () => {
  const g = fakeEngine('pocketsphinx', { text: 'next' });
  const d = fakeEngine('wyoming', { text: 'what is the capital of france' });
  const chain = new SttChain({ grammar: g.engine, dictation: d.engine, order: 'dictation-first' });
  assert.deepEqual(chain.engines().map((e) => e.name), ['wyoming', 'pocketsphinx']);
  assert.equal((await chain.start().end()).engine, 'wyoming');
  assert.equal(g.seen.aborted, 1, 'the grammar result was not needed');
  const s = chain.start();
  s.abort();
  assert.equal(g.seen.aborted, 2);
  assert.equal(d.seen.aborted, 1);
  assert.throws(() => new SttChain({}), TypeError);
});

test('pause and resume hints reach every engine of the chain, and none after end()', async () => {
  const g = fakeEngine('pocketsphinx', { text: 'next' });
  const d = fakeEngine('wyoming', { text: 'next' });
  const s = new SttChain({ grammar: g.engine, dictation: d.engine }).start();
  s.pause!();
  s.resume!();
  s.pause!();
  await s.end();
  s.pause!();
  s.resume!();
  assert.deepEqual([g.seen.paused, g.seen.resumed, d.seen.paused, d.seen.resumed], [2, 1, 2, 1]);
});

test('a lull\'s pause options reach the engines, and the padding check is the first engine\'s (the chain once dropped them: no padding)', () => {
  const g = fakeEngine('pocketsphinx', { text: 'next' });
  const d = fakeEngine('wyoming', { text: 'next' });
  const s = new SttChain({ grammar: g.engine, dictation: d.engine }).start();
  s.pause?.({ silenceMs: 150, padToMs: 300 });
  assert.deepEqual(g.seen.pauseOpts, [{ silenceMs: 150, padToMs: 300 }]);
  assert.deepEqual(d.seen.pauseOpts, [{ silenceMs: 150, padToMs: 300 }]);
  assert.equal(s.paddingHeld?.(), false);
  assert.equal(g.seen.held, 1);
  assert.equal(d.seen.held, 0);
});
