/**
 * The rest of a command said after a hesitation (issue 15 "Half a second
 * from the last word"): "turn on the bed light" is a whole sentence, acted on
 * at the pause, and "… to fifty percent" comes as the next utterance, decoded
 * with the continuation grammar. The fragment (templates-en.ts
 * PREVIOUS_TARGET) sets the lights the command just before it switched on,
 * and nothing else: after a command that switched nothing on, on another
 * channel, or later than PREVIOUS_TARGET_WINDOW_MS, it asks which light.
 * Typed, the fragment is no command of the matcher.
 */
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { buildGrammar, matchIntent } from '../../src/intents/index.js';
import type { IntentMatch, Vocabulary } from '../../src/intents/types.js';
import { FakeClock } from '../../src/kernel/clock.js';
import { PREVIOUS_TARGET_WINDOW_MS } from '../../src/home/local-intents.js';
import { parseFsg, standing } from '../../src/voice/stt/fsg-walk.js';
import { DEFAULT_MAX_SCORE_GAP, judgeDecode, rejectionReason, type PocketsphinxDetails } from '../../src/voice/stt/pocketsphinx-judge.js';
import type { HypsegUtterance } from '../../src/voice/stt/pocketsphinx-log.js';
import type { SttResult } from '../../src/voice/stt/types.js';
import { startRig, type Rig } from './harness.js';

/** The meta the voice pipeline gives a recognised utterance (src/voice/pipeline.ts). */
const voiceMeta = (intent: IntentMatch, trigger = 'wake'): Record<string, unknown> => ({ utterance_id: 'utt_1', stt: { engine: 'pocketsphinx', confidence: 1, intent }, trigger });

/** The judge on a made-up decode of `words` at a score gap of 0 (the phone loop as good as the grammar's path). */
function judged(words: string[], vocab: Vocabulary, continuation: boolean): { result: SttResult; details: PocketsphinxDetails } {
  const main: HypsegUtterance = { total: -1000, ascr: -1000, lscr: 0, frames: 100, words: words.map((word, i) => ({ word, start: i * 10, ascr: -10, lscr: 0 })) };
  const garbage = { ...main, words: [{ word: 'ph_ah', start: 0, ascr: -1000, lscr: 0 }] };
  return judgeDecode({ main, mainStderr: '', garbage } as never, { engine: 'pocketsphinx', vocab, maxScoreGap: DEFAULT_MAX_SCORE_GAP, droppedMs: 0, durationLimits: false, continuation });
}

test('the fragment is a sentence of the continuation grammar, and matched only when heard there; on its own the command grammar takes it and the judge refuses it', () => {
  const vocab = { entities: [{ id: 'bed_light', name: 'Bed Light', domain: 'light', area: 'Bedroom' }], areas: ['Bedroom'] };
  const g = buildGrammar(vocab);
  assert.equal(standing(parseFsg(g.continuationFsg), ['to', 'fifty', 'percent']).complete, true);
  assert.equal(standing(parseFsg(g.continuationFsg), ['and', 'set', 'it', 'to', 'thirty', 'percent']).complete, true);
  // In the command grammar a path takes such speech, so the decoder need not force it into the nearest command
  // ("at forty percent" heard as "open all the curtains"); the judge refuses it there.
  assert.equal(standing(parseFsg(g.fsg), ['to', 'fifty', 'percent']).complete, true);
  assert.equal(standing(parseFsg(g.compoundFsg), ['to', 'fifty', 'percent']).complete, false, 'not in the compound grammar');
  const alone = judged(['to', 'fifty', 'percent'], vocab, false);
  assert.deepEqual([alone.result.rejected, alone.result.intent, alone.details.fragment, rejectionReason(alone.result, alone.details)], [true, undefined, true, 'fragment']);
  const after = judged(['to', 'fifty', 'percent'], vocab, true);
  assert.deepEqual([after.result.rejected, after.result.intent?.intent, after.result.intent?.slots.brightness, after.details.fragment], [false, 'HassLightSet', 50, undefined]);
  const command = judged(['turn', 'on', 'the', 'bed', 'light'], vocab, false);
  assert.deepEqual([command.result.rejected, command.details.fragment], [false, undefined], 'a whole command is no fragment');
  assert.ok(g.words.includes('it') && g.words.includes('percent'), 'its words are in the dictionary');
  assert.doesNotMatch(g.jsgf, /\(\s*\(\s*to\s*\|\s*at\s*\)|\(\s*\(\s*set\s*\|\s*dim\s*\|\s*turn\s*\|\s*make\s*\)\s*it\b/, 'the command JSGF has none of it');
  assert.equal(matchIntent('to fifty percent', vocab, 'en'), null, 'typed, it is no command');
  const m = matchIntent('to fifty percent', vocab, 'en', { continuation: true });
  assert.deepEqual([m?.intent, m?.slots.previous_target, m?.slots.brightness], ['HassLightSet', 1, 50]);
  assert.equal(matchIntent('to fifty', vocab, 'en', { continuation: true }), null, 'a bare number is no brightness');
  // A whole command is still matched as itself in the continuation.
  assert.equal(matchIntent('turn on the bed light', vocab, 'en', { continuation: true })?.slots.name, 'Bed Light');
});

describe('a continuation fragment sets the lights just switched on', () => {
  let rig: Rig;
  const clock = new FakeClock(Date.now());
  const sent = (): Array<{ topic: string; payload: string }> => rig.sdk.events('plugin.home.command') as Array<{ topic: string; payload: string }>;
  const vocab = () => rig.plugin.registry!.vocabulary();
  /** Say `text` as the recogniser heard it (matched as the continuation grammar would when `fragment`). */
  const say = async (text: string, o: { fragment?: boolean; channel?: string } = {}): Promise<{ reply: string; commands: Array<{ topic: string; payload: string }> }> => {
    const match = matchIntent(text, vocab(), 'en', { continuation: o.fragment === true });
    assert.ok(match, `"${text}" matches`);
    const before = sent().length;
    const out = await rig.sdk.runInput(text, { channel: o.channel ?? 'speaker', meta: voiceMeta(match, o.fragment ? 'continuation' : 'wake') });
    return { reply: out.response ?? '', commands: sent().slice(before) };
  };

  before(async () => {
    rig = await startRig({ plugin: { clock } });
  });
  after(async () => {
    await rig.close();
  });
  beforeEach(() => {
    rig.sim.clear();
  });

  test('"turn on the bed light" then "to fifty percent": the Bed Light at 50 %', async () => {
    assert.match((await say('turn on the bed light')).reply, /Turned on the Bed Light/);
    const r = await say('to fifty percent', { fragment: true });
    assert.equal(r.reply, 'Set the Bed Light to 50 percent.');
    assert.deepEqual(r.commands.map((c) => c.topic), ['home/bed_light/set']);
    assert.deepEqual(JSON.parse(r.commands[0]!.payload), { state: 'ON', brightness: 128 });
  });

  test('the lights of a room switched on: all of them, said as the room\'s', async () => {
    assert.match((await say('turn on the lights in the office')).reply, /Turned on 2 lights in the Office/);
    const r = await say('set it to thirty percent', { fragment: true });
    assert.equal(r.reply, 'Set 2 lights in the Office to 30 percent.');
    assert.deepEqual(r.commands.map((c) => c.topic).sort(), ['zigbee2mqtt/Office Ceiling/set', 'zigbee2mqtt/office/desk lamp/set']);
  });

  test('after a command that switched nothing on, another command, another channel or too long: asked which light, nothing sent', async () => {
    const asked = /^Which light should I set to 50 percent\? Please say it with the light's name\.$/;
    await say('turn off the bed light');
    let r = await say('to fifty percent', { fragment: true });
    assert.match(r.reply, asked);
    assert.deepEqual(r.commands, []);

    await say('turn on the bed light');
    await say('what time is it');
    r = await say('to fifty percent', { fragment: true });
    assert.match(r.reply, asked, 'a command between forgets the light');
    assert.deepEqual(r.commands, []);

    await say('turn on the bed light');
    r = await say('to fifty percent', { fragment: true, channel: 'webui' });
    assert.match(r.reply, asked, 'another channel');
    assert.deepEqual(r.commands, []);

    await say('turn on the bed light');
    clock.advance(PREVIOUS_TARGET_WINDOW_MS + 1);
    r = await say('to fifty percent', { fragment: true });
    assert.match(r.reply, asked, 'too long after');
    assert.deepEqual(r.commands, []);

    // A switch or a lock switched on is no light to set.
    await say('lock the front door');
    r = await say('to fifty percent', { fragment: true });
    assert.match(r.reply, asked);
    assert.deepEqual(r.commands.filter((c) => !/front_door/.test(c.topic)), []);
  });

  test('a second fragment sets the same light ("… to forty, no, at twenty percent")', async () => {
    await say('turn on the bed light');
    assert.equal((await say('to forty percent', { fragment: true })).reply, 'Set the Bed Light to 40 percent.');
    // The fragment set the light (switched on): the next fragment sets it again.
    assert.equal((await say('at twenty percent', { fragment: true })).reply, 'Set the Bed Light to 20 percent.');
  });
});
