/** The turn's limits as pure functions (src/kernel/turn-limits.ts): the budget of one round and the tool-result cut. */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { ReplyBudget, capToolResult, cutAt } from '../../src/kernel/turn-limits.js';

test('cutAt never splits a surrogate pair', () => {
  assert.equal(cutAt('ab🌙cd', 3), 'ab');
  assert.equal(cutAt('ab🌙cd', 4), 'ab🌙');
  assert.equal(cutAt('abc', 10), 'abc');
  assert.equal(cutAt('abc', 0), '');
});

test('ReplyBudget: text is cut at the character limit; tool-call arguments count; more calls than the limit cut', () => {
  const b = new ReplyBudget(10, 2);
  assert.equal(b.text('hello '), 'hello ');
  assert.equal(b.cut, undefined);
  assert.equal(b.text('world!'), 'worl');
  assert.equal(b.cut, 'reply_limit');
  assert.match(b.message, /10 characters/);

  const c = new ReplyBudget(100, 2);
  assert.equal(c.toolCall(0, '{"a":'), true);
  assert.equal(c.toolCall(0, '1}'), true);
  assert.equal(c.toolCall(1, '{}'), true);
  assert.equal(c.toolCalls, 2);
  assert.equal(c.toolCall(2, '{}'), false);
  assert.equal(c.cut, 'tool_call_limit');
  assert.match(c.message, /more than 2 tool calls/);

  const d = new ReplyBudget(8, 5);
  assert.equal(d.toolCall(0, 'x'.repeat(9)), false, 'arguments count towards the characters');
  assert.equal(d.cut, 'reply_limit');
});

test('capToolResult: within the limit unchanged; past it the head in whole UTF-8 characters and a note with the size', () => {
  assert.deepEqual(capToolResult('short', 256), { text: 'short' });
  assert.deepEqual(capToolResult('é'.repeat(128), 256), { text: 'é'.repeat(128) }, 'exactly 256 bytes');
  const r = capToolResult('电'.repeat(1000), 256);
  assert.equal(r.bytes, 3000);
  assert.equal(r.text, `${'电'.repeat(85)}\n[result cut: 3000 bytes, only the first 256 kept]`);
});
