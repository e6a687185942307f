/**
 * The recogniser's intent as it travels in an input's meta (src/intents/recognised.ts):
 * read back only when well formed, and acted on only while it fits the current home.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { matchIntent } from '../../src/intents/index.js';
import { carriedIntent, fitsVocabulary } from '../../src/intents/recognised.js';
import { VOCAB } from './vocab.js';

test('carriedIntent reads meta.stt.intent as the voice pipeline sends it, and nothing malformed', () => {
  const match = matchIntent('turn off the lights in the study', VOCAB, 'en');
  assert.ok(match);
  // Through JSON, as across the bus or a Wyoming hop: plain data.
  const meta = JSON.parse(JSON.stringify({ utterance_id: 'u1', stt: { engine: 'pocketsphinx', confidence: 0.9, intent: match }, trigger: 'wake' }));
  assert.deepEqual(carriedIntent(meta), match);
  assert.equal(carriedIntent(undefined), undefined);
  assert.equal(carriedIntent({ stt: { engine: 'wyoming', confidence: 1 } }), undefined, 'no intent: an open-vocabulary engine');
  const bad = (intent: unknown): unknown => carriedIntent({ stt: { intent } });
  assert.equal(bad({ ...match, intent: 'MakeCoffee' }), undefined, 'unknown intent name');
  assert.equal(bad({ ...match, language: 'fr' }), undefined);
  assert.equal(bad({ ...match, text: 3 }), undefined);
  assert.equal(bad({ ...match, slots: { name: { nested: true } } }), undefined);
  assert.equal(bad({ ...match, slots: { brightness: Number.NaN } }), undefined);
  assert.equal(bad([match]), undefined);
});

test('fitsVocabulary: a name or room the home no longer has does not fit; values that name nothing always do', () => {
  const byName = matchIntent('turn on the kitchen light', VOCAB, 'en');
  assert.ok(byName);
  assert.equal(fitsVocabulary(byName, VOCAB), true);
  const renamed = { ...VOCAB, entities: VOCAB.entities.map((e) => (e.name === 'Kitchen Light' ? { ...e, name: 'Counter Light' } : e)) };
  assert.equal(fitsVocabulary(byName, renamed), false);
  const byArea = matchIntent('turn off the lights in the study', VOCAB, 'en');
  assert.ok(byArea);
  assert.equal(fitsVocabulary(byArea, VOCAB), true);
  assert.equal(fitsVocabulary(byArea, { ...VOCAB, areas: VOCAB.areas.filter((a) => a !== 'Study') }), false);
  const timer = matchIntent('set a timer for 5 minutes', VOCAB, 'en');
  assert.ok(timer);
  assert.equal(fitsVocabulary(timer, { entities: [], areas: [] }), true);
});
