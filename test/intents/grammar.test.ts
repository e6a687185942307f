import { test } from 'node:test';
import assert from 'node:assert/strict';
import { buildGrammar, matchIntent, GrammarError } from '../../src/intents/index.js';
import { VOCAB } from './vocab.js';

/** All sentences of an FSG (small grammars only): depth-first over its arcs. */
function fsgAccepts(fsg: string, sentence: string): boolean {
  const arcs = new Map<number, Array<[number, string]>>();
  let final = -1;
  for (const line of fsg.split('\n')) {
    const f = /^FINAL_STATE (\d+)/.exec(line);
    if (f) final = Number(f[1]);
    const t = /^TRANSITION (\d+) (\d+) \S+ (\S+)$/.exec(line);
    if (t) {
      const list = arcs.get(Number(t[1])) ?? [];
      list.push([Number(t[2]), t[3]!]);
      arcs.set(Number(t[1]), list);
    }
  }
  const words = sentence.split(' ');
  let states = new Set([0]);
  for (const w of words) {
    const next = new Set<number>();
    for (const s of states) for (const [to, word] of arcs.get(s) ?? []) if (word === w) next.add(to);
    states = next;
  }
  return states.has(final);
}

test('grammar is built from the same templates, filled with names, rooms and spoken numbers', () => {
  const g = buildGrammar(VOCAB);
  assert.match(g.jsgf, /^#JSGF V1\.0;/);
  assert.match(g.jsgf, /public <command> =/);
  for (const w of ['kitchen', 'light', 'reading', 'lamp', 'hall', 'nest', 'fifty', 'seventy', 'timer', 'hardware']) {
    assert.ok(g.words.includes(w), `word ${w}`);
  }
  assert.ok(!g.words.some((w) => /[^a-z']/.test(w)), 'only English words (no digits, no Chinese)');
  assert.ok(!g.jsgf.includes('卧室'), 'Chinese names stay out of the English grammar');
});

test('the FSG accepts template sentences and the matcher understands them', () => {
  const { fsg } = buildGrammar(VOCAB);
  const sentences = [
    'turn on the kitchen light',
    'set the reading lamp to twenty percent',
    'turn off all of the lights in the study',
    'lock the back door',
    'set a timer for three hours and ten minutes',
    "what's the weather like in new york",
    'is the back door locked',
    'activate movie night',
  ];
  for (const s of sentences) {
    assert.ok(fsgAccepts(fsg, s), `FSG accepts "${s}"`);
    assert.ok(matchIntent(s, VOCAB, 'en'), `matcher understands "${s}"`);
  }
  for (const s of ['turn on the toaster', 'lock the kitchen light', 'tell me a joke', 'turn on']) {
    assert.ok(!fsgAccepts(fsg, s), `FSG rejects "${s}"`);
  }
});

test('templates whose list is empty are left out; grammar follows the vocabulary', () => {
  const small = buildGrammar({ entities: [{ id: 'x', name: 'Desk Fan', domain: 'fan' }], areas: [] });
  assert.ok(fsgAccepts(small.fsg, 'turn on the desk fan'));
  assert.ok(!small.words.includes('unlock'), 'no lock: no unlock sentences');
  assert.ok(!fsgAccepts(small.fsg, 'turn on the kitchen light'));
  const bigger = buildGrammar({ entities: [{ id: 'x', name: 'Desk Fan', domain: 'fan' }, { id: 'y', name: 'Side Door', domain: 'lock' }], areas: [] });
  assert.ok(fsgAccepts(bigger.fsg, 'unlock the side door'), 'rebuilt grammar has the new device');
  assert.ok(GrammarError);
});
