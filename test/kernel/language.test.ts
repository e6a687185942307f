/**
 * The one language helper (src/kernel/language.ts): Unicode Script=Han
 * decides what a Chinese character is, everywhere.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { detectLanguage, HAN, hasHan, isAllHan } from '../../src/kernel/language.js';
import { tokenise } from '../../src/intents/normalise.js';
import { terms } from '../../src/memory/text.js';
import { splitSentences } from '../../src/kernel/sentences.js';

describe('language', () => {
  it('Han characters of every block count, from the BMP and beyond it', () => {
    for (const c of ['中', '㐀' /* U+3400, Extension A */, '\u{20000}' /* Extension B */, '\u{2A700}' /* Extension C */, '豈' /* U+F900 compatibility */, '〇', '々']) {
      assert.equal(hasHan(c), true, `U+${c.codePointAt(0)!.toString(16)}`);
    }
  });

  it('CJK punctuation, full-width forms, kana, hangul and Latin are not Han', () => {
    for (const c of ['。', '，', '！', '「', 'Ａ', '１', 'か', 'カ', '한', 'a', '1', '䷀' /* U+4DC0 hexagram: inside the old \\u3400-\\u9fff range, Script=Common */]) {
      assert.equal(hasHan(c), false, `U+${c.codePointAt(0)!.toString(16)}`);
    }
  });

  it('detectLanguage: zh as soon as a Chinese character appears, else en', () => {
    assert.equal(detectLanguage('打开客厅的灯'), 'zh');
    assert.equal(detectLanguage('turn on the 客厅 light'), 'zh');
    assert.equal(detectLanguage('Turn on the light.'), 'en');
    assert.equal(detectLanguage('。！'), 'en');
    assert.equal(detectLanguage(''), 'en');
  });

  it('isAllHan: non-empty and only Han code points (surrogate pairs included)', () => {
    assert.equal(isAllHan('张三'), true);
    assert.equal(isAllHan('\u{20000}中'), true);
    assert.equal(isAllHan('张三。'), false);
    assert.equal(isAllHan('Zhang'), false);
    assert.equal(isAllHan(''), false);
  });

  it('HAN builds larger expressions with the u flag', () => {
    assert.equal(new RegExp(`^${HAN}{2}$`, 'u').test('\u{20000}中'), true, 'counts code points, not UTF-16 units');
    assert.deepEqual('ab中c'.match(new RegExp(`[${HAN}a]`, 'gu')), ['a', '中']);
  });

  it('the intent tokeniser, memory terms and the sentence splitter use it: a character outside the BMP is one Chinese token', () => {
    assert.deepEqual(tokenise('打开\u{20000}灯'), ['打', '开', '\u{20000}', '灯']);
    assert.ok(terms('\u{20000}中文').includes('\u{20000}中'), 'bigram over a supplementary character');
    assert.deepEqual(splitSentences('好\u{20000}!来了!'), ['好\u{20000}!', '来了!'], 'a half-width "!" after a Chinese character outside the BMP ends a sentence');
  });
});
