/**
 * What typed text has that can be seen (src/kernel/visible-text.ts): a
 * tester's `say` and `ask` took a soft hyphen, tag characters, Hangul fillers,
 * the braille blank, variation selectors, combining marks alone and lone
 * surrogates as text, and the tag characters reached the LLM unseen.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { charCount, visibleText } from '../../src/kernel/visible-text.js';

test('text of invisible characters only is no text', () => {
  const invisible = ['\u0000', '\u00ad', '\u034f', '\u061c', '\u180e', '\u200b\u200b', '\u202e', '\u3164', '\uffa0', '\u115f\u1160', '\u2800', '\ufe0f', '\ufff9\ufffa\ufffb', '\u{1d173}', '\u{e0041}\u{e0042}', '\u0301\u0301', '\ud800', '\ufeff', '\uffff', ' \t\n '];
  for (const t of invisible) assert.equal(visibleText(t), '', JSON.stringify(t));
});

test('visible text keeps what is seen, drops what is not, and keeps lines', () => {
  assert.equal(visibleText('  turn on the kitchen light\u200b '), 'turn on the kitchen light');
  assert.equal(visibleText('\u{e0069}\u{e0067}\u{e006e}ignore'), 'ignore', 'tag characters (invisible ASCII for the LLM) are dropped');
  assert.equal(visibleText('café \u{1F600}'), 'café \u{1F600}');
  assert.equal(visibleText('打开厨房灯'), '打开厨房灯');
  assert.equal(visibleText('line one\nline two'), 'line one\nline two');
  assert.equal(visibleText('a\u0301'), 'a\u0301', 'a mark on a letter stays');
});

test('characters are counted as a person counts them', () => {
  assert.equal(charCount('\u{1F600}\u{1F600}'), 2);
  assert.equal(charCount('abc'), 3);
  assert.equal(charCount(''), 0);
});
