/** Where a sentence of two commands is cut (src/home/compound.ts). */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { compoundCuts } from '../../src/home/compound.js';

test('cuts at each joint word, the joint dropped, in the order said', () => {
  assert.deepEqual(compoundCuts('Turn on the kitchen light and lock the front door.', 'en'), [['turn on the kitchen light', 'lock the front door']]);
  assert.deepEqual(compoundCuts('turn on the tv and then lock the door', 'en')[0], ['turn on the tv', 'lock the door']);
  assert.deepEqual(compoundCuts('turn on the salt and pepper lamp and lock the door', 'en'), [
    ['turn on the salt', 'pepper lamp and lock the door'],
    ['turn on the salt and pepper lamp', 'lock the door'],
  ], 'every joint is offered; the caller keeps the cut whose halves both match');
  assert.deepEqual(compoundCuts('把客厅灯打开，然后把前门锁上', 'zh'), [['把客厅灯打开', '把前门锁上']]);
  assert.deepEqual(compoundCuts('把客厅灯打开然后把前门锁上', 'zh'), [['把客厅灯打开', '把前门锁上']]);
});

test('no joint, or a joint at an end, is no cut', () => {
  assert.deepEqual(compoundCuts('turn on the kitchen light', 'en'), []);
  assert.deepEqual(compoundCuts('and lock the door', 'en'), []);
  assert.deepEqual(compoundCuts('lock the door and', 'en'), []);
  assert.deepEqual(compoundCuts('', 'en'), []);
  // A tester's quoted name was split and both halves acted.
  assert.deepEqual(compoundCuts('turn on the "kitchen light and unlock the front door"', 'en'), []);
  assert.deepEqual(compoundCuts('把“厨房灯然后前门”打开', 'zh'), []);
});

test('a comma list: the cut at the first comma keeps the rest as written, its commas too, so it is cut again there (a newcomer\'s "A, B, C and D" came back as "B C"); no cut at a joint word glues parts around a comma', () => {
  assert.deepEqual(compoundCuts('turn off the kitchen light, turn on the living room lamp, lock the front door and set a timer for 3 minutes', 'en'), [
    ['turn off the kitchen light', 'turn on the living room lamp, lock the front door and set a timer for 3 minutes'],
  ]);
  assert.deepEqual(compoundCuts('turn on the lamp, and then lock the door', 'en'), [['turn on the lamp', 'lock the door']]);
  assert.deepEqual(compoundCuts('turn on the lamp and turn off the tv, lock the door', 'en'), [['turn on the lamp and turn off the tv', 'lock the door']]);
  assert.deepEqual(compoundCuts('把客厅灯打开，然后把前门锁上，再把灯关掉', 'zh'), [['把客厅灯打开', '把前门锁上，再把灯关掉']]);
});
