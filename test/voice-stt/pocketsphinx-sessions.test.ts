/**
 * PocketsphinxSession call sequences found by a break test of the
 * speculative final pass (pause/resume), each with the behaviour it must have.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { mkdtemp, rm, writeFile, chmod } from 'node:fs/promises';
import os from 'node:os';
import { PocketsphinxStt } from '../../src/voice/stt/pocketsphinx.js';
import { garbageShare } from '../../src/voice/stt/pocketsphinx-decoder.js';
import { waitUntil } from '../support/wait.js';
import { fixtureVocabulary, voiceDir } from './home-vocab.js';
import { feed, readWavPcm } from './wav.js';

const A = (): Buffer => readWavPcm(path.join(voiceDir, 'lock the Front Door.wav'));
const B = (): Buffer => readWavPcm(path.join(voiceDir, 'turn on Standing Light.wav'));
const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Resolves once a decode has been handed its audio in the engine's work directory `dir` (a pair's utt.raw exists): the speculative pass is running. */
function decoding(dir: string): Promise<void> {
  return waitUntil(() => readdirSync(dir).some((u) => u.startsWith('u') && existsSync(path.join(dir, u, 'utt.raw'))), 'a decode to start');
}

/** pocketsphinx_batch processes whose arguments mention `dir`. */
function decoders(dir: string): number {
  try {
    return execFileSync('pgrep', ['-f', `pocketsphinx_batch.*${dir}/`], { encoding: 'utf8' }).trim().split('\n').filter(Boolean).length;
  } catch {
    return 0;
  }
}

async function engine(t: { after(fn: () => Promise<void>): void }): Promise<{ e: PocketsphinxStt; dir: string }> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ps-break-'));
  const e = new PocketsphinxStt({ workDir: dir });
  await e.setVocabulary(fixtureVocabulary());
  t.after(async () => {
    await e.close();
    await rm(dir, { recursive: true, force: true });
  });
  return { e, dir };
}

test('voided speculative passes do not decode when end() follows in the same tick (listen without --realtime)', async (t) => {
  const { e, dir } = await engine(t);
  const s = e.start();
  feed(A(), (b) => s.write(b));
  // What Capture does when a whole recording is fed at once: every pause/resume and the end in one tick.
  for (let i = 0; i < 10; i++) {
    s.pause!();
    s.resume!();
  }
  let max = 0;
  const timer = setInterval(() => (max = Math.max(max, decoders(dir))), 20);
  const r = await s.end();
  clearInterval(timer);
  assert.equal(r.text, 'lock the front door');
  // One set of decoders (command grammar, phone loop, compound grammar) decodes; a second may be starting. Before
  // the fix all 10 voided sets decoded too (20+ processes with two per set).
  assert.ok(max <= 6, `at most one decoder set at a time, saw ${max} processes`);
});

test('resume() after end() is ignored: end() still resolves with the speculative result', async (t) => {
  const { e, dir } = await engine(t);
  const s = e.start();
  feed(A(), (b) => s.write(b));
  s.pause!();
  await decoding(dir);
  const p = s.end();
  s.resume!();
  const r = await p; // before the fix: STT_FAILED "pocketsphinx_batch exited with SIGKILL"
  assert.equal(r.text, 'lock the front door');
});

test('end() twice: both calls resolve with the same result', async (t) => {
  const { e } = await engine(t);
  const s = e.start();
  feed(A(), (b) => s.write(b));
  const [r1, r2] = await Promise.allSettled([s.end(), s.end()]);
  assert.equal(r1.status, 'fulfilled', `first end(): ${r1.status === 'rejected' ? String(r1.reason) : ''}`);
  assert.equal(r2.status, 'fulfilled');
  assert.equal((r1 as PromiseFulfilledResult<{ text: string }>).value.text, 'lock the front door');
});

test('a vocabulary change while a session speculates: the session keeps its grammar files until it is done, then they go', async (t) => {
  const { e, dir } = await engine(t);
  const s = e.start();
  feed(A(), (b) => s.write(b));
  s.pause!();
  await decoding(dir);
  await e.setVocabulary({ entities: [{ id: 'x', name: 'Standing Light', domain: 'light' }, { id: 'y', name: 'Front Door', domain: 'lock' }], areas: [] });
  s.resume!();
  feed(B(), (b) => s.write(b));
  s.pause!();
  const r = await s.end(); // before: STT_FAILED "Failed to open dictionary file .../g1/command.dict" once g1 was removed
  assert.equal(r.engine, 'pocketsphinx');
  // The replaced grammar's files go (asynchronously) once the last session using it is done.
  const grammars = (): string[] => readdirSync(dir).filter((f) => f.startsWith('g'));
  await waitUntil(() => grammars().length === 1, `g1 to be removed; grammars: ${grammars().join(' ')}`);
  assert.deepEqual(grammars(), ['g2'], 'the replaced grammar is removed once its last session is done');
});

test('an utterance too short to decode is rejected, not an STT failure', async (t) => {
  const { e } = await engine(t);
  const s = e.start();
  s.write(Buffer.alloc(100 * 32)); // 100 ms
  const r = await s.end(); // today: STT_FAILED "pocketsphinx_batch exited with SIGKILL"
  assert.equal(r.rejected, true);
  assert.equal(r.text, '');
});

test('a failed vocabulary rebuild does not break later sessions (the previous grammar stays)', async (t) => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ps-break-'));
  const espeak = path.join(dir, 'espeak');
  await writeFile(espeak, '#!/bin/sh\ncase "$*" in *zorglubb*) exit 3;; esac\nexec espeak-ng "$@"\n');
  await chmod(espeak, 0o755);
  const e = new PocketsphinxStt({ workDir: dir, espeakBinary: espeak });
  t.after(async () => {
    await e.close();
    await rm(dir, { recursive: true, force: true });
  });
  await e.setVocabulary(fixtureVocabulary());
  await assert.rejects(e.setVocabulary({ entities: [{ id: 'z', name: 'Zorglubb', domain: 'light' }], areas: [] }));
  const s = e.start();
  feed(A(), (b) => s.write(b));
  const r = await s.end(); // today: rejects with the espeak error of the failed build, for every later session
  assert.equal(r.text, 'lock the front door');
});

test('no decoder is spawned after engine.close()', async (t) => {
  const { e, dir } = await engine(t);
  const s = e.start();
  feed(A(), (b) => s.write(b));
  s.pause!();
  await decoding(dir);
  await e.close();
  s.resume!();
  // Negative evidence: a decoder spawned by resume() would show up within this window (it can only make the test miss a bug, never fail it).
  await sleep(500);
  assert.equal(decoders(dir), 0, 'resume() after close() spawned a new decoder pair');
  await assert.rejects(s.end(), (err: unknown) => (err as { code?: string }).code === 'STT_ABORTED', 'close() aborted the open session');
  await assert.rejects(e.start().end(), (err: unknown) => (err as { code?: string }).code === 'STT_NO_GRAMMAR');
});

test('the utterance after an early commit starts its decoders at its first audio, not when it is made (the reply being spoken keeps the CPU)', async (t) => {
  const { e, dir } = await engine(t);
  const first = e.start();
  await waitUntil(() => decoders(dir) >= 2, 'a command session to start its decoders when made');
  first.abort();
  await waitUntil(() => decoders(dir) === 0, 'the aborted session to kill its decoders');
  const next = e.start({ continuation: true });
  // Made and fed nothing: no decoder may load. Wait for something that would have happened by now (another session's decoders) rather than the clock.
  const probe = e.start();
  await waitUntil(() => decoders(dir) >= 2, 'the probe session to start its decoders');
  probe.abort();
  await waitUntil(() => decoders(dir) === 0, 'only the probe had decoders; the continuation none');
  feed(B(), (b) => next.write(b));
  await waitUntil(() => decoders(dir) >= 2, 'the continuation to start its decoders at its first audio');
  const r = await next.end();
  assert.equal(r.text, 'turn on standing light');
});

test('garbageShare: the first caller for a key runs the decode, the others get its result; a failed one is no result, and the next caller runs its own', async () => {
  const share = garbageShare(50);
  const seg = { total: -1, ascr: -1, lscr: 0, frames: 10, words: [] };
  let runs = 0;
  const run = async () => {
    runs++;
    await sleep(5);
    return seg;
  };
  const [a, b] = await Promise.all([share('k', run), share('k', run)]);
  assert.equal(runs, 1);
  assert.equal(a, seg);
  assert.equal(b, seg);
  await share('other', run);
  assert.equal(runs, 2, 'another key (audio or grammar) runs its own');
  await assert.rejects(share('bad', async () => Promise.reject(new Error('killed'))));
  assert.equal(await share('bad', run), seg, 'after a failure the next caller runs its own');
  await sleep(120);
  await share('k', run);
  assert.equal(runs, 4, 'a settled decode is forgotten after keepMs');
});

test('a question waits: its answer-grammar and command-grammar sessions on the same audio each hear what they hear alone (one phone loop decodes for both)', async (t) => {
  const { e } = await engine(t);
  const alone = async (answer: boolean) => {
    const s = e.start(answer ? { answer: true } : undefined);
    feed(B(), (b) => s.write(b));
    const r = await s.end();
    return { r, gap: e.lastDetails?.scoreGap };
  };
  const soloCommand = await alone(false);
  const soloAnswer = await alone(true);
  const a = e.start({ answer: true });
  const c = e.start();
  feed(B(), (b) => {
    a.write(b);
    c.write(b);
  });
  const [ra, rc] = await Promise.all([a.end(), c.end()]);
  assert.equal(rc.text, soloCommand.r.text);
  assert.equal(rc.rejected, soloCommand.r.rejected);
  assert.equal(rc.confidence, soloCommand.r.confidence, 'the same score gap: the shared phone loop read the same audio');
  assert.equal(ra.text, soloAnswer.r.text);
  assert.equal(ra.rejected, soloAnswer.r.rejected);
  assert.equal(ra.confidence, soloAnswer.r.confidence);
});
