/** PocketsphinxStt behaviour that does not depend on recognition accuracy: errors, abort, grammar rebuild. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { PocketsphinxStt } from '../../src/voice/stt/pocketsphinx.js';
import { hypsegText, parseDecodeOutput, parseHypsegLine } from '../../src/voice/stt/pocketsphinx-log.js';
import { chmod, mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { existsSync, readFileSync, readdirSync, statSync } from 'node:fs';
import os from 'node:os';
import { fixtureVocabulary, voiceDir } from './home-vocab.js';
import { feed, readWavPcm } from './wav.js';
import { waitUntil } from '../support/wait.js';

test('no grammar yet: end() rejects with STT_NO_GRAMMAR', async () => {
  const e = new PocketsphinxStt();
  await assert.rejects(e.start().end(), (err: unknown) => (err as { code?: string }).code === 'STT_NO_GRAMMAR');
  await e.close();
});

test('missing binary: end() rejects with STT_UNAVAILABLE', async () => {
  const e = new PocketsphinxStt({ binary: 'no-such-pocketsphinx-binary' });
  await e.setVocabulary(fixtureVocabulary());
  const s = e.start();
  s.write(Buffer.alloc(3200));
  await assert.rejects(s.end(), (err: unknown) => (err as { code?: string }).code === 'STT_UNAVAILABLE');
  await e.close();
});

test('abort() kills the decoders and end() rejects with STT_ABORTED', async () => {
  const e = new PocketsphinxStt();
  await e.setVocabulary(fixtureVocabulary());
  const s = e.start();
  feed(readWavPcm(path.join(voiceDir, 'next.wav')).subarray(0, 16000), (b) => s.write(b));
  s.abort();
  await assert.rejects(s.end(), (err: unknown) => (err as { code?: string }).code === 'STT_ABORTED');
  await e.close();
});

test('setVocabulary rebuilds the grammar; decoding streams while audio arrives', async () => {
  const e = new PocketsphinxStt();
  const info = await e.setVocabulary(fixtureVocabulary());
  assert.ok(info.words > 100);
  assert.ok('ecobee' in info.generated, 'EcoBee pronunciation generated');
  const again = await e.setVocabulary({ entities: [{ id: 'x', name: 'Front Door', domain: 'lock' }], areas: [] });
  assert.ok(again.words < info.words);
  const s = e.start();
  feed(readWavPcm(path.join(voiceDir, 'lock the Front Door.wav')), (b) => s.write(b));
  const r = await s.end();
  assert.equal(r.engine, 'pocketsphinx');
  assert.equal(typeof r.finish_ms, 'number');
  if (!r.rejected) assert.equal(r.intent?.slots.name, 'Front Door');
  await e.close();
});

test('decoder output parsing: hypothesis, backtrace, grammar mismatch', () => {
  const stderr = [
    'INFO: pocketsphinx.c(1168): lock the front door (-6800)',
    'word                 start end   pprob ascr       lscr       lback',
    '<sil>                0     53    1.000 -1446      -337       1  ',
    'lock                 54    70    1.000 -504       0          1  ',
    'INFO: cmn_live.c(120): Update from < 63.74 >',
  ].join('\n');
  const d = parseDecodeOutput('lock the front door\n', stderr);
  assert.equal(d.hypothesis, 'lock the front door');
  assert.equal(d.words.length, 2);
  assert.deepEqual(d.words[1], { word: 'lock', start: 54, end: 70, ascr: -504, lscr: 0 });
  assert.equal(parseDecodeOutput('', 'ERROR: "fsg_search.c", line 940: Final result does not match the grammar in frame 196').grammarMismatch, true);
});

test('hypseg parsing (pocketsphinx_batch -hypseg): scores, frames, words without fillers or alternate marks', () => {
  const u = parseHypsegLine('utt S 0 T -5269 A -4838 L -431 0 -1266 -104 <sil> 62 -1152 -91 lock 96 -308 -14 the(2) 103 -641 0 front 130 -679 -14 door 161 -485 -104 <sil> 197');
  assert.ok(u);
  assert.equal(u.ascr, -4838);
  assert.equal(u.lscr, -431);
  assert.equal(u.frames, 197);
  assert.equal(hypsegText(u), 'lock the front door');
  assert.equal(parseHypsegLine('INFO: something else'), undefined);
});

test('a session leaves no files or processes behind (finished and aborted)', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ha-ps-clean-'));
  const e = new PocketsphinxStt({ workDir: dir });
  await e.setVocabulary(fixtureVocabulary());
  const s = e.start();
  feed(readWavPcm(path.join(voiceDir, 'next.wav')), (b) => s.write(b));
  await s.end();
  const a = e.start();
  a.write(Buffer.alloc(3200));
  a.abort();
  await assert.rejects(a.end());
  // The aborted session's pair is released asynchronously.
  await waitUntil(() => readdirSync(dir).filter((f) => !f.startsWith('g')).length === 0, 'the utterance directories to go');
  assert.deepEqual((await readdir(dir)).filter((f) => !f.startsWith('g')), []);
  await e.close();
  await rm(dir, { recursive: true, force: true });
});

test('overlapping setVocabulary calls: the newest vocabulary wins, whichever build finishes last', async () => {
  const e = new PocketsphinxStt();
  try {
    // The service asks for an empty grammar at start and the real one when devices arrive; the
    // empty build may finish later, but must not replace the newer one.
    const first = e.setVocabulary({ entities: [], areas: [] });
    const second = e.setVocabulary(fixtureVocabulary());
    await Promise.all([first, second]);
    const s = e.start();
    feed(readWavPcm(path.join(voiceDir, 'lock the Front Door.wav')), (b) => s.write(b));
    const r = await s.end();
    assert.equal(r.text, 'lock the front door');
  } finally {
    await e.close();
  }
});

test('a burst of setVocabulary calls (a home announced device by device) builds the newest vocabulary once, not once per call', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ha-ps-burst-'));
  const e = new PocketsphinxStt({ workDir: dir });
  try {
    const full = fixtureVocabulary();
    // Each call a device more, as the home's discovery messages arrive; the last has every device.
    const calls = [1, 3, 6, 10, full.entities.length].map((n) => e.setVocabulary({ ...full, entities: full.entities.slice(0, n) }));
    const infos = await Promise.all(calls);
    assert.deepEqual(new Set(infos.map((i) => i.dir)).size, 1, 'every call answers with the one build');
    assert.equal(path.basename(infos[0]!.dir), 'g1', 'one grammar generation was built');
    const s = e.start();
    feed(readWavPcm(path.join(voiceDir, 'lock the Front Door.wav')), (b) => s.write(b));
    assert.equal((await s.end()).text, 'lock the front door');
    // A call while a build runs waits for it, then builds the newest.
    const running = e.setVocabulary({ ...full, entities: full.entities.slice(0, 2) });
    await new Promise((r) => setImmediate(r));
    const later = [e.setVocabulary({ ...full, entities: full.entities.slice(0, 4) }), e.setVocabulary(full)];
    const [a, b, c] = await Promise.all([running, ...later]);
    assert.equal(path.basename(a!.dir), 'g2', 'the build under way finishes');
    assert.equal(path.basename(c!.dir), 'g3', 'then the newest is built, and only it');
    assert.equal(b!.dir, c!.dir, 'the call in between answers with the newest build');
  } finally {
    await e.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test('a command said while the home is being announced is heard: the build it waited for is used, not deleted for the next one (a breaking tester\'s every listen failed with "Failed to open dictionary file")', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ha-ps-churn-'));
  const e = new PocketsphinxStt({ workDir: dir });
  try {
    const full = fixtureVocabulary();
    const frontDoor = full.entities.filter((x) => x.name === 'Front Door');
    assert.equal(frontDoor.length, 1);
    await e.setVocabulary({ ...full, entities: frontDoor });
    // A build under way; a session starts and waits for it; then a newer vocabulary arrives before it is done.
    const building = e.setVocabulary({ ...full, entities: [...frontDoor, ...full.entities.filter((x) => x.name !== 'Front Door').slice(0, 5)] });
    await new Promise((r) => setImmediate(r));
    const s = e.start();
    const newer = e.setVocabulary(full);
    feed(readWavPcm(path.join(voiceDir, 'lock the Front Door.wav')), (b) => s.write(b));
    assert.equal((await s.end()).text, 'lock the front door');
    await Promise.all([building, newer]);
    const again = e.start();
    feed(readWavPcm(path.join(voiceDir, 'lock the Front Door.wav')), (b) => again.write(b));
    assert.equal((await again.end()).text, 'lock the front door', 'and on the newest grammar after it');
  } finally {
    await e.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test('pause(): the final pass runs during the silence wait and end() takes its result (no second decode), equal to a plain decode', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ha-ps-pause-'));
  const work = path.join(dir, 'work');
  // The real decoder behind a wrapper that counts its starts.
  const spawned = path.join(dir, 'spawned');
  const bin = path.join(dir, 'pocketsphinx_batch');
  await writeFile(bin, `#!/bin/sh\necho "$@" >> '${spawned}'\nexec pocketsphinx_batch "$@"\n`);
  await chmod(bin, 0o755);
  // Decoders only: the opposite-word check's alignments (align-N.fsg; "turn on" is aligned against "turn off") run after a pass.
  const starts = (): number => (existsSync(spawned) ? readFileSync(spawned, 'utf8').split('\n').filter((l) => l && !l.includes('align-')).length : 0);
  // One set per utterance (no spare, SPARE_PAIRS) so that a second decode would show as a started set.
  const e = new PocketsphinxStt({ workDir: work, binary: bin, sparePairs: 1 });
  await e.setVocabulary(fixtureVocabulary());
  const pcm = readWavPcm(path.join(voiceDir, 'turn on Standing Light.wav'));
  const plain = e.start();
  feed(pcm, (b) => plain.write(b));
  const want = await plain.end();
  assert.equal(starts(), 3, 'one set (command grammar, phone loop, compound grammar) per plain utterance');
  const s = e.start();
  feed(pcm, (b) => s.write(b));
  s.pause!();
  // Trailing silence after the pause: ignored, only silence can follow a pause without resume().
  s.write(Buffer.alloc(32 * 600));
  // The endpointer would wait for the rest of its silence now: the speculative pass finishes meanwhile (its result file is written).
  const segWritten = (): boolean => readdirSync(work).some((u) => u.startsWith('u') && existsSync(path.join(work, u, 'grammar.seg')) && statSync(path.join(work, u, 'grammar.seg')).size > 0);
  await waitUntil(segWritten, 'the speculative pass to finish before end()');
  const got = await s.end();
  assert.equal(got.text, want.text);
  assert.equal(got.rejected, want.rejected);
  assert.deepEqual(got.intent, want.intent);
  assert.equal(starts(), 6, 'end() took the speculative result: no decoder was started for it');
  await e.close();
  await rm(dir, { recursive: true, force: true });
});

test('a spare decoder set loads at the first audio; the pause after a voided pass takes it, and none loads in between (SPARE_PAIRS)', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ha-ps-spare-'));
  const work = path.join(dir, 'work');
  const spawned = path.join(dir, 'spawned');
  const bin = path.join(dir, 'pocketsphinx_batch');
  await writeFile(bin, `#!/bin/sh\necho "$@" >> '${spawned}'\nexec pocketsphinx_batch "$@"\n`);
  await chmod(bin, 0o755);
  // Decoders only: the opposite-word check's alignments (align-N.fsg) run after a pass, one per sentence.
  const starts = (): number => (existsSync(spawned) ? readFileSync(spawned, 'utf8').split('\n').filter((l) => l && !l.includes('align-')).length : 0);
  const e = new PocketsphinxStt({ workDir: work, binary: bin });
  try {
    await e.setVocabulary(fixtureVocabulary());
    const pcm = readWavPcm(path.join(voiceDir, 'lock the Front Door.wav'));
    const s = e.start();
    await waitUntil(() => starts() === 3, 'the first set (command grammar, phone loop, compound grammar) when the session starts');
    const cut = Math.floor(pcm.length / 2 / 2) * 2;
    feed(pcm.subarray(0, cut), (b) => s.write(b));
    await waitUntil(() => starts() === 6, 'the spare set at the first audio');
    s.pause!();
    await waitUntil(() => readdirSync(work).some((u) => u.startsWith('u') && existsSync(path.join(work, u, 'utt.raw'))), 'the speculative pass to start');
    s.resume!();
    feed(pcm.subarray(cut), (b) => s.write(b));
    s.pause!();
    const r = await s.end();
    assert.equal(r.text, 'lock the front door');
    // The second pass ran on the spare, loaded already, and end() took its result: no set was started after the
    // first audio (before, resume() started a fresh set and the second pass waited for it to load).
    assert.equal(starts(), 6, 'no set started between the resume and the end');
  } finally {
    await e.close();
    await rm(dir, { recursive: true, force: true });
  }
});

test('resume() voids the speculative pass: end() decodes the whole utterance', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ha-ps-spec-'));
  const e = new PocketsphinxStt({ workDir: dir });
  await e.setVocabulary(fixtureVocabulary());
  const pcm = readWavPcm(path.join(voiceDir, 'lock the Front Door.wav'));
  const s = e.start();
  // "lock" ... then a pause, then the rest of the sentence.
  const cut = Math.floor(pcm.length / 2 / 2) * 2;
  feed(pcm.subarray(0, cut), (b) => s.write(b));
  s.pause!();
  // The speculative pass has its audio (utt.raw) when resume() voids it.
  await waitUntil(() => readdirSync(dir).some((u) => u.startsWith('u') && existsSync(path.join(dir, u, 'utt.raw'))), 'the speculative pass to start');
  s.resume!();
  feed(pcm.subarray(cut), (b) => s.write(b));
  const r = await s.end();
  assert.equal(r.text, 'lock the front door');
  // Pause without resume, then abort: nothing is left behind.
  const a = e.start();
  feed(pcm, (b) => a.write(b));
  a.pause!();
  a.abort();
  await assert.rejects(a.end(), (err: unknown) => (err as { code?: string }).code === 'STT_ABORTED');
  await waitUntil(() => readdirSync(dir).filter((f) => !f.startsWith('g')).length === 0, 'the utterance directories to go');
  assert.deepEqual((await readdir(dir)).filter((f) => !f.startsWith('g')), []);
  await e.close();
  await rm(dir, { recursive: true, force: true });
});
