/**
 * A name the filler spelt in phones, aligned again with the home's names
 * (pocketsphinx-judge.ts unheardNameSentences, unheardNameVerdict): which
 * names are tried in its place, and when the command becomes that name's,
 * asking for a yes first. The end-to-end case (espeak-ng audio through the
 * running service) is in test/e2e/voice-unknown-names.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { UNHEARD_NAME_MARGIN, unheardNameSentences, unheardNameVerdict, type PocketsphinxDetails } from '../../src/voice/stt/pocketsphinx-judge.js';
import type { IntentMatch, Vocabulary } from '../../src/intents/types.js';
import type { SttResult } from '../../src/voice/stt/types.js';

const vocab: Vocabulary = {
  entities: [
    { id: 'cover.garage_door', name: 'Garage Door', domain: 'cover' },
    { id: 'lock.front_door', name: 'Front Door', domain: 'lock' },
    { id: 'light.kitchen', name: 'Kitchen Lights', domain: 'light', aliases: ['Cooker Light'] },
    { id: 'sensor.outdoor', name: 'Outdoor Temperature', domain: 'sensor' },
  ],
  areas: ['Kitchen'],
};
const phones = new Map(['open', 'close', 'the', 'garage', 'door', 'front', 'kitchen', 'lights', 'turn', 'on', 'outdoor', 'temperature'].map((w) => [w, 3]));
const unheard = (intent: string, slots: IntentMatch['slots']): IntentMatch => ({ intent, slots: { name_free: 1, name_unheard: 1, ...slots }, text: '…', confidence: 1, language: 'en' }) as IntentMatch;

test("the names tried in the phones' place are those the command could take, with words the grammar has", () => {
  const open = unheardNameSentences('<sil> open the ph_g ph_ao ph_iy ph_v <sil>', unheard('HassTurnOn', { domain: 'cover' }), vocab, phones);
  assert.deepEqual(open.sentences, [['open', 'the', 'ph_g', 'ph_ao', 'ph_iy', 'ph_v'], ['open', 'the', 'garage', 'door']]);
  assert.deepEqual(open.names, ['', 'Garage Door']);
  // "turn on": the on/off kinds only (not the lock, the cover or the sensor); an alias with a word the grammar lacks ("cooker") is left out.
  const on = unheardNameSentences('turn on the ph_k ph_ih ph_ch', unheard('HassTurnOn', {}), vocab, phones);
  assert.deepEqual(on.sentences.slice(1), [['turn', 'on', 'the', 'kitchen', 'lights']]);
  // No phone run: nothing to try.
  assert.deepEqual(unheardNameSentences('open the garage door', unheard('HassTurnOn', { domain: 'cover' }), vocab, phones).sentences.length, 1);
});

test('a name within UNHEARD_NAME_MARGIN of the phones (per frame of the name and in all) becomes the command, asking first; a farther one stays unknown; a question is never moved to another device', () => {
  const judged = (): { result: SttResult; details: PocketsphinxDetails } => ({
    result: { text: 'open the …', confidence: 0.9, rejected: false, engine: 'pocketsphinx', intent: unheard('HassTurnOn', { domain: 'cover' }) },
    details: { hypothesis: 'open the ph_g ph_ao ph_iy ph_v', grammarMismatch: false, frames: 200 },
  });
  const candidates = unheardNameSentences('open the ph_g ph_ao ph_iy ph_v', unheard('HassTurnOn', { domain: 'cover' }), vocab, phones);
  // The phones span frames 80 to 160 of the heard alignment: the lead is counted per frame of the name.
  const heard = { ascr: -10_000, frames: 200, words: [{ word: 'open', start: 20, ascr: 0, lscr: 0 }, { word: 'the', start: 60, ascr: 0, lscr: 0 }, { word: 'ph_g', start: 80, ascr: 0, lscr: 0 }, { word: 'ph_v', start: 140, ascr: 0, lscr: 0 }, { word: '<sil>', start: 160, ascr: 0, lscr: 0 }] };
  const { perFrame, total } = UNHEARD_NAME_MARGIN;
  assert.ok(total < perFrame * 80, 'with an 80-frame name, the total is the bound that counts at perFrame - 1');
  const lead = Math.min(perFrame - 1, (total - 1) / 80);
  const near = unheardNameVerdict(judged(), candidates, [heard, { ascr: -10_000 - lead * 80, frames: 200 }], vocab);
  assert.equal(near.result.rejected, false);
  assert.equal(near.result.intent?.intent, 'HassTurnOn');
  assert.equal(near.result.intent?.slots.name, 'Garage Door');
  assert.equal(near.result.intent?.slots.name_unheard, undefined);
  assert.deepEqual(near.result.intent?.unsure_between, ['…', 'garage door'], 'it asks for a yes before it acts');
  assert.equal(near.details.unheardNameRival?.name, 'Garage Door');
  assert.ok(Math.abs(near.details.unheardNameRival!.margin - lead) < 1e-9);
  assert.equal(near.details.unheardNameRival!.nameFrames, 80);
  // Too far in all (a long name the home lacks, close per frame), or per frame (a short one): still unknown.
  for (const [ascr, frames, why] of [[-10_000 - (total + 1), 80, 'total'], [-10_000 - (perFrame + 1) * 20, 20, 'per frame']] as const) {
    const h = { ...heard, words: [heard.words[0]!, heard.words[1]!, { word: 'ph_g', start: 80, ascr: 0, lscr: 0 }, { word: '<sil>', start: 80 + frames, ascr: 0, lscr: 0 }] };
    const far = unheardNameVerdict(judged(), candidates, [h, { ascr, frames: 200 }], vocab);
    assert.equal(far.result.intent?.slots.name_unheard, 1, `still a name the home does not have (${why})`);
    assert.equal(far.result.intent?.unsure_between, undefined);
  }
  // The name's own words must span most of the phones' stretch (MIN_NAME_COVERAGE): on clean audio "the coffee
  // machine" aligned as "the ecobee" and a noise almost as well as its phones.
  const cand = (nameFrames: number) => ({ ascr: -10_000 - 80, frames: 200, words: [{ word: 'open', start: 20, ascr: 0, lscr: 0 }, { word: 'the', start: 60, ascr: 0, lscr: 0 }, { word: 'garage', start: 80, ascr: 0, lscr: 0 }, { word: 'door', start: 80 + nameFrames / 2, ascr: 0, lscr: 0 }, { word: '++NOISE++', start: 80 + nameFrames, ascr: 0, lscr: 0 }, { word: '<sil>', start: 160, ascr: 0, lscr: 0 }] });
  const short = unheardNameVerdict(judged(), candidates, [heard, cand(40)], vocab);
  assert.equal(short.result.intent?.slots.name_unheard, 1, 'half the stretch is noise: still unknown');
  assert.equal(short.details.unheardNameRival?.covered, 40);
  const whole = unheardNameVerdict(judged(), candidates, [heard, cand(76)], vocab);
  assert.equal(whole.result.intent?.slots.name, 'Garage Door');
  const question = judged();
  question.result.intent = unheard('HassGetState', { state: 'on' });
  assert.deepEqual(unheardNameVerdict(question, candidates, [heard, { ascr: -10_000, frames: 200 }], vocab), question, 'a question is not moved');
  // Nothing aligned (the aligner failed): as it was.
  assert.deepEqual(unheardNameVerdict(judged(), candidates, undefined, vocab), judged());
  assert.deepEqual(unheardNameVerdict(judged(), candidates, [heard, undefined], vocab), judged());
});
