import { test } from 'node:test';
import assert from 'node:assert/strict';
import { numberToWords, wordsToNumber, normaliseText } from '../../src/intents/index.js';

test('wordsToNumber reads English number words', () => {
  assert.equal(wordsToNumber('fifty'), 50);
  assert.equal(wordsToNumber('twenty one'), 21);
  assert.equal(wordsToNumber('twenty-one'), 21);
  assert.equal(wordsToNumber('three hundred and ten'), 310);
  assert.equal(wordsToNumber('a hundred'), 100);
  assert.equal(wordsToNumber('one thousand two hundred'), 1200);
  assert.equal(wordsToNumber('twenty two point five'), 22.5);
  assert.equal(wordsToNumber('zero'), 0);
  assert.equal(wordsToNumber('42'), 42);
  assert.equal(wordsToNumber('fifty percent'), null);
  assert.equal(wordsToNumber(''), null);
});

test('wordsToNumber reads Chinese numerals', () => {
  assert.equal(wordsToNumber('五十'), 50);
  assert.equal(wordsToNumber('十五'), 15);
  assert.equal(wordsToNumber('三十'), 30);
  assert.equal(wordsToNumber('两'), 2);
  assert.equal(wordsToNumber('一百零五'), 105);
  assert.equal(wordsToNumber('二十一点五'), 21.5);
});

test('numberToWords is the inverse for the grammar', () => {
  for (const n of [0, 7, 13, 20, 21, 50, 99, 100, 105, 999, 1500]) {
    assert.equal(wordsToNumber(numberToWords(n)), n, `round trip ${n}`);
  }
  assert.equal(numberToWords(50), 'fifty');
  assert.equal(numberToWords(21.5), 'twenty one point five');
  assert.throws(() => numberToWords(-1), RangeError);
});

test('normaliseText: case, punctuation, numbers, percent', () => {
  assert.equal(normaliseText('Set the Bed Light to FIFTY percent!'), 'set the bed light to 50 percent');
  assert.equal(normaliseText('set a timer for three hours and ten minutes'), 'set a timer for 3 hours and 10 minutes');
  assert.equal(normaliseText('Dim it to 30%'), 'dim it to 30 percent');
  assert.equal(normaliseText("What’s the temperature?"), "what's the temperature");
  assert.equal(normaliseText('whats the time'), "what's the time");
  assert.equal(normaliseText('设置一个三十秒的定时器'), '设置1个30秒的定时器');
  assert.equal(normaliseText('亮度调到百分之五十'), '亮度调到50%');
  assert.equal(normaliseText('现在几点了？'), '现在几点了');
});
