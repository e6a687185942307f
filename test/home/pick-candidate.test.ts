/**
 * The answer to "Which one do you mean: A or B?" (src/home/local-intents.ts
 * pickCandidate): the words pick one device, or none.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { pickCandidate } from '../../src/home/local-intents.js';
import type { Entity } from '../../src/home/entities.js';

const entity = (name: string, area: string, aliases: string[] = []): Entity => ({ id: name.toLowerCase().replace(/ /g, '_'), component: 'light', name, aliases, area } as unknown as Entity);
// The demo home's "turn on the light": "Which one do you mean: the Kitchen Light or the Living Room Lamp?"
const asked = [entity('Kitchen Light', 'Kitchen'), entity('Living Room Lamp', 'Living Room', ['reading lamp'])];

test('a whole name, an alias, a word only one holds, its room, or an ordinal picks that one', () => {
  for (const [said, name] of [
    ['the lamp', 'Living Room Lamp'],
    ['Living Room Lamp', 'Living Room Lamp'],
    ['the living room lamp please', 'Living Room Lamp'],
    ['the reading lamp', 'Living Room Lamp'],
    ['the kitchen one', 'Kitchen Light'],
    ['kitchen', 'Kitchen Light'],
    ['the first one', 'Kitchen Light'],
    ['the second', 'Living Room Lamp'],
    ['the last one', 'Living Room Lamp'],
    ['lamps', 'Living Room Lamp'],
  ] as const) assert.equal(pickCandidate(said, asked)?.name, name, said);
});

test('words that fit both, neither, or nothing pick none', () => {
  for (const said of ['the light', 'the bedroom one', 'both', 'the one', '', 'the third one', 'yes', 'constructor', 'the toString one']) assert.equal(pickCandidate(said, asked), undefined, said);
});
