import { test } from 'node:test';
import assert from 'node:assert/strict';
import { SentenceSplitter, splitSentences, speakable } from '../../src/kernel/sentences.js';

const REPLY =
  'It is 21.5 degrees in the office. Dr. Smith left at 5 p.m. today! Shall I turn on the heating? ' +
  'J. R. R. Tolkien wrote it, e.g. The Hobbit… Version 1.2.3 is out. 现在客厅的温度是21.5度。要我打开灯吗？好的';
const EXPECTED = [
  'It is 21.5 degrees in the office.',
  'Dr. Smith left at 5 p.m. today!',
  'Shall I turn on the heating?',
  'J. R. R. Tolkien wrote it, e.g. The Hobbit…',
  'Version 1.2.3 is out.',
  '现在客厅的温度是21.5度。',
  '要我打开灯吗？',
  '好的',
];

test('whole text: English and Chinese punctuation, decimals, abbreviations, initials', () => {
  assert.deepEqual(splitSentences(REPLY), EXPECTED);
});

test('streamed token by token (every split) gives the same sentences as the whole text', () => {
  for (const size of [1, 2, 3, 5, 8]) {
    const s = new SentenceSplitter();
    const out: string[] = [];
    const chars = [...REPLY];
    for (let i = 0; i < chars.length; i += size) out.push(...s.push(chars.slice(i, i + size).join('')));
    const last = s.flush();
    if (last) out.push(last);
    assert.deepEqual(out, EXPECTED, `tokens of ${size}`);
  }
});

test('a sentence is released as soon as the next token shows it ended, not at the end of the reply', () => {
  const s = new SentenceSplitter();
  assert.deepEqual(s.push('The light is on'), []);
  assert.deepEqual(s.push('.'), []); // could be 21.5 or an abbreviation: wait for the next character
  assert.deepEqual(s.push(' And'), ['The light is on.']);
  assert.deepEqual(s.push(' the temperature is 21'), []);
  assert.deepEqual(s.push('.5 degrees'), []);
  assert.deepEqual(s.push('。'), ['And the temperature is 21.5 degrees。']); // a full-width stop needs no lookahead
  assert.equal(s.flush(), undefined);
  assert.deepEqual(s.push('好的。'), ['好的。']); // Chinese full stop ends at once
});

test('newlines end sentences (list items); blank lines are skipped', () => {
  assert.deepEqual(splitSentences('Shopping list:\n- milk\n- eggs\n\nDone'), ['Shopping list:', '- milk', '- eggs', 'Done']);
});

test('closing quotes and brackets stay with their sentence', () => {
  assert.deepEqual(splitSentences('He said "Stop." Then he left. (Really!) Ok'), ['He said "Stop."', 'Then he left.', '(Really!)', 'Ok']);
  assert.deepEqual(splitSentences('他说“好的。”然后走了。'), ['他说“好的。”', '然后走了。']);
});

test('a sentence with no end is cut at a comma once it is too long', () => {
  const long = 'one, two, three, four, five, six, seven, eight, nine, ten, eleven, twelve, thirteen';
  const out = splitSentences(long, { maxChars: 40 });
  assert.ok(out.length >= 2);
  assert.ok(out.every((s) => s.length <= 40));
  assert.equal(out.join(' ').replace(/\s+/g, ' '), long);
});

test('speakable removes markdown, links and emoji and drops empty sentences', () => {
  assert.equal(speakable('**Bold** and _it_ with `code` and [a link](http://x.y)'), 'Bold and it with code and a link');
  assert.equal(speakable('## Heading'), 'Heading');
  assert.equal(speakable('- item'), 'item');
  assert.equal(speakable('👍'), '');
  assert.equal(speakable('好的👍'), '好的');
});

test('firstClause: the first piece ends at its first clause boundary, later sentences are whole', () => {
  const s = new SentenceSplitter({ firstClause: true });
  const out: string[] = [];
  for (const ch of 'Sure, I can help with that, right away. Then, later, more.') out.push(...s.push(ch));
  const last = s.flush();
  if (last) out.push(last);
  assert.deepEqual(out, ['Sure,', 'I can help with that, right away.', 'Then, later, more.']);
});

test('firstClause: numbers and times are no clause boundaries; Chinese commas are; off by default', () => {
  const cut = (text: string, firstClause = true): string[] => {
    const s = new SentenceSplitter({ firstClause });
    const out: string[] = [];
    for (const ch of text) out.push(...s.push(ch));
    const last = s.flush();
    if (last) out.push(last);
    return out;
  };
  assert.deepEqual(cut('It costs 1,000 dollars at 3:30 today. Yes.'), ['It costs 1,000 dollars at 3:30 today.', 'Yes.']);
  assert.deepEqual(cut('好的，我这就开灯。还有别的吗？'), ['好的，', '我这就开灯。', '还有别的吗？']);
  assert.deepEqual(cut('Sure, I can help. Yes.', false), ['Sure, I can help.', 'Yes.']);
  assert.deepEqual(cut('Note: the door is locked.'), ['Note:', 'the door is locked.']);
});
