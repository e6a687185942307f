import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { espeakToArpabet, generatePronunciation, lookupPronunciations, writeDictionary, DEBIAN_CMUDICT } from '../../src/voice/stt/pronunciation.js';

test('espeak-ng ASCII phonemes map to ARPAbet', () => {
  assert.deepEqual(espeakToArpabet("'EkoUb,i:"), ['EH', 'K', 'OW', 'B', 'IY']);
  assert.deepEqual(espeakToArpabet("T'3:m@st,at"), ['TH', 'ER', 'M', 'AH', 'S', 'T', 'AE', 'T']);
  assert.deepEqual(espeakToArpabet("b'V?n-"), ['B', 'AH', 'T', 'AH', 'N']);
  assert.deepEqual(espeakToArpabet("tS'e@"), ['CH', 'EH', 'R']);
});

test('EcoBee is not in the CMU dictionary and gets a pronunciation from espeak-ng', async () => {
  const dict = await lookupPronunciations(['EcoBee', 'light', 'read'], DEBIAN_CMUDICT);
  assert.equal(dict.has('ecobee'), false);
  assert.ok(dict.has('light'));
  assert.deepEqual([...dict.keys()].sort(), ['light', 'read'], 'only the words asked for');
  assert.equal(dict.get('read')!.length, 2, 'alternates "read(2)" kept');
  await assert.rejects(lookupPronunciations(['light'], '/nonexistent.dict'), (e: unknown) => (e as { code?: string }).code === 'DICT_UNREADABLE');
  const phones = (await generatePronunciation('ecobee')).split(' ');
  assert.ok(phones.length >= 4, phones.join(' '));
  assert.equal(phones[phones.length - 1], 'IY');
  assert.ok(phones.includes('K') && phones.includes('B'));
  const arpabet = new Set(['AA', 'AE', 'AH', 'AO', 'AW', 'AY', 'B', 'CH', 'D', 'DH', 'EH', 'ER', 'EY', 'F', 'G', 'HH', 'IH', 'IY', 'JH', 'K', 'L', 'M', 'N', 'NG', 'OW', 'OY', 'P', 'R', 'S', 'SH', 'T', 'TH', 'UH', 'UW', 'V', 'W', 'Y', 'Z', 'ZH']);
  for (const p of phones) assert.ok(arpabet.has(p), `phone ${p} of the model`);
});

test('writeDictionary writes a subset with alternates and generated words', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ha-dict-'));
  try {
    const file = path.join(dir, 'x.dict');
    const report = await writeDictionary(['light', 'ecobee', 'what\'s'], file);
    assert.deepEqual(Object.keys(report.generated), ['ecobee']);
    const text = await readFile(file, 'utf8');
    assert.match(text, /^ecobee [A-Z ]+$/m);
    assert.match(text, /^light L AY T$/m);
    assert.match(text, /^what's\(2\) /m);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});

test('the home\'s name words also get the British pronunciation when the American dictionary lacks it', async () => {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ha-dict-'));
  try {
    const file = path.join(dir, 'x.dict');
    await writeDictionary(['garage', 'door', 'open', 'light'], file, { accentWords: ['garage', 'door', 'light', 'kitchen'] });
    const text = await readFile(file, 'utf8');
    assert.match(text, /^garage G ER AA ZH$/m, 'the dictionary\'s own first');
    assert.match(text, /^garage\(2\) G AE R IH JH$/m, 'then "GA-ridge"');
    assert.match(text, /^light L AY T$/m);
    assert.doesNotMatch(text, /^light\(2\)/m, 'no alternate where en-gb says it the same');
    assert.doesNotMatch(text, /^open\(2\)/m, 'only name words get accents');
    assert.doesNotMatch(text, /^kitchen/m, 'only words of the grammar are written');
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
