/**
 * The trimmed jieba dictionary (src/memory/jieba.ts): the JIEBA_DICT_WORDS
 * most frequent lines of nodejieba's dictionary, most frequent first (ties in
 * file order), and the IDF lines of exactly those words. Checked against a
 * plain string reading of the same files.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import nodejieba from 'nodejieba';
import { JIEBA_DICT_WORDS, jieba, setJiebaCacheDir } from '../../src/memory/jieba.js';

const defaults = nodejieba as unknown as Record<string, string>;

test('the trimmed dictionary is the most frequent words, most frequent first, with their IDF lines', () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homeagent-jieba-test-'));
  try {
    setJiebaCacheDir(dir);
    assert.deepEqual(jieba().cut('我们去客厅开灯'), nodejieba.cut('我们去客厅开灯'));
    const full = fs.readFileSync(defaults.DEFAULT_DICT!, 'utf8').split('\n').filter((l) => l.trim() !== '');
    const freq = (l: string): number => Number(l.split(' ')[1] ?? '') || 0;
    const expected = full
      .map((line, at) => ({ line, at, f: freq(line) }))
      .sort((a, b) => b.f - a.f || a.at - b.at)
      .slice(0, JIEBA_DICT_WORDS)
      .map((r) => r.line);
    const dict = fs.readFileSync(path.join(dir, 'jieba.dict.utf8'), 'utf8');
    assert.equal(dict, `${expected.join('\n')}\n`);
    const words = new Set(expected.map((l) => l.split(' ')[0]));
    const idfFull = fs.readFileSync(defaults.DEFAULT_IDF_DICT!, 'utf8').split('\n').filter((l) => l.trim() !== '');
    const idfExpected = idfFull.filter((l) => words.has(l.split(' ')[0]));
    assert.ok(idfExpected.length > JIEBA_DICT_WORDS / 2, 'most kept words have an IDF line');
    assert.equal(fs.readFileSync(path.join(dir, 'idf.utf8'), 'utf8'), `${idfExpected.join('\n')}\n`);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
});
