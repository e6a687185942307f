/**
 * keepDoubt (src/home/home-plugin.ts): when the home plugin matches the
 * text again instead of acting on the recogniser's match (a part of a name,
 * a device renamed since the grammar was built), what the recogniser
 * doubted still asks for a yes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { keepDoubt } from '../../src/home/home-plugin.js';
import type { IntentMatch } from '../../src/intents/types.js';

const m = (intent: string, slots: IntentMatch['slots'], unsure?: [string, string]): IntentMatch => ({ intent, slots, text: '', language: 'en', ...(unsure ? { unsure_between: unsure } : {}) });

test('the same commands in the same order: each part keeps its own doubt', () => {
  const recognised = [m('HassTurnOn', { name: 'standing' }), m('HassTurnOn', { name: 'Front Door', domain: 'lock' }, ['lock', 'unlock'])];
  const parts = [{ match: m('HassTurnOn', { name: 'Standing Light' }), text: 'turn on standing' }, { match: m('HassTurnOn', { name: 'Front Door', domain: 'lock' }), text: 'lock the front door' }];
  const out = keepDoubt(parts, recognised);
  assert.equal(out[0]!.match.unsure_between, undefined, 'the light was not doubted');
  assert.deepEqual(out[1]!.match.unsure_between, ['lock', 'unlock']);
});

test('parts that do not line up with what was recognised: every part asks', () => {
  const recognised = [m('HassTurnOn', { name: 'standing' }), m('HassTurnOn', { name: 'Front Door', domain: 'lock' }, ['lock', 'unlock'])];
  const out = keepDoubt([{ match: m('HassTurnOn', { name: 'Front Door', domain: 'lock' }), text: 'turn on standing and lock the front door' }], recognised);
  assert.deepEqual(out[0]!.match.unsure_between, ['lock', 'unlock']);
});

test('nothing doubted (or typed, nothing recognised): the parts are as matched', () => {
  const parts = [{ match: m('HassTurnOff', { name: 'TV' }), text: 'turn off the tv' }];
  assert.deepEqual(keepDoubt(parts, [m('HassTurnOff', { name: 'tv' })]), parts);
  assert.deepEqual(keepDoubt(parts, []), parts);
});
