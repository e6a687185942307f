/** PocketsphinxStt behaviour that does not depend on recognition accuracy: errors, abort, grammar rebuild. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { PocketsphinxStt } from '../../src/voice/stt/pocketsphinx.js';
import { parseDecodeOutput } from '../../src/voice/stt/pocketsphinx-log.js';
import { fixtureVocabulary, voiceDir } from './home-vocab.js';
import { feed, readWavPcm } from './wav.js';

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
