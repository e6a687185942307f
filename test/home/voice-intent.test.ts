/**
 * One path from audio to action: the recogniser's intent (pocketsphinx with
 * the grammar of the same templates, carried in the input's meta.stt.intent
 * as the voice pipeline sends it) is acted on by the local intents without
 * matching the text again, and does what the same words typed do. A
 * recognised intent that names a device the home no longer has is not acted
 * on: the text is matched against the current home instead.
 */
import { after, before, beforeEach, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { matchIntent } from '../../src/intents/index.js';
import type { IntentMatch } from '../../src/intents/types.js';
import type { IntentMatcher } from '../../src/home/local-intents.js';
import { PocketsphinxStt } from '../../src/voice/stt/pocketsphinx.js';
import { asThePipelineHearsIt, feed, readWavPcm } from '../voice-stt/wav.js';
import { reportState, startRig, type Rig } from './harness.js';

const VOICE = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../../shared/fixtures/voice/en');

/** The meta the voice pipeline gives a recognised utterance (src/voice/pipeline.ts). */
function voiceMeta(stt: { engine: string; confidence: number; intent?: IntentMatch; intents?: IntentMatch[] }): Record<string, unknown> {
  return { utterance_id: 'utt_1', stt, trigger: 'wake' };
}

describe('the recogniser\'s intent is used, not recomputed', () => {
  let rig: Rig;
  const matched: string[] = [];
  /** The real matcher, counting its calls. */
  const spy: IntentMatcher = (text, vocab, lang) => {
    matched.push(text);
    return matchIntent(text, vocab, lang);
  };
  const sent = (): Array<{ topic: string; payload: string }> => rig.sdk.events('plugin.home.command') as Array<{ topic: string; payload: string }>;

  before(async () => {
    rig = await startRig({ plugin: { matchIntent: spy } });
  });
  after(async () => {
    await rig.close();
  });
  beforeEach(() => {
    matched.length = 0;
    rig.sim.clear();
  });

  test('a recording: pocketsphinx\'s intent is acted on without the matcher, and does what the typed words do', async () => {
    const engine = new PocketsphinxStt();
    let heard;
    try {
      await engine.setVocabulary(rig.plugin.registry!.vocabulary());
      const s = engine.start();
      feed(asThePipelineHearsIt(readWavPcm(path.join(VOICE, 'turn off lights in the Office.wav'))), (b) => s.write(b));
      heard = await s.end();
    } finally {
      await engine.close();
    }
    assert.equal(heard.rejected, false);
    // (pocketsphinx may hear "light" or "lights": both are the lights of the room.)
    assert.match(heard.text, /^turn off lights? in the office$/);
    assert.deepEqual([heard.intent?.intent, heard.intent?.slots.area, heard.intent?.slots.domain], ['HassTurnOff', 'Office', 'light']);

    const before = sent().length;
    const spoken = await rig.sdk.runInput(heard.text, { channel: 'speaker', meta: voiceMeta({ engine: heard.engine, confidence: heard.confidence, intent: heard.intent }) });
    assert.deepEqual(matched, [], 'the text of a recognised utterance is not matched again');
    const bySpeech = sent().slice(before);

    const mid = sent().length;
    const typed = await rig.sdk.runInput(heard.text);
    assert.deepEqual(matched, [heard.text], 'typed text is matched');
    const byText = sent().slice(mid);

    assert.equal(spoken.response, typed.response);
    assert.match(spoken.response ?? '', /Turned off 2 lights in the Office/);
    const topics = (cmds: typeof bySpeech): string[] => cmds.map((c) => `${c.topic} ${c.payload}`).sort();
    assert.deepEqual(topics(bySpeech), topics(byText));
    assert.deepEqual(bySpeech.map((c) => c.topic).sort(), ['zigbee2mqtt/Office Ceiling/set', 'zigbee2mqtt/office/desk lamp/set']);
  });

  test('a carried intent is checked against the current home: a device gone since the grammar was built is not commanded', async () => {
    // The recogniser's grammar still had a "Floor Lamp" the home no longer announces.
    const stale: IntentMatch = { intent: 'HassTurnOn', slots: { name: 'Floor Lamp', domain: 'light' }, text: 'turn on the floor lamp', language: 'en' };
    const before = sent().length;
    const r = await rig.sdk.runInput(stale.text, { channel: 'speaker', meta: voiceMeta({ engine: 'pocketsphinx', confidence: 0.9, intent: stale }) });
    assert.deepEqual(matched, [stale.text], 'the text was matched against the current home instead');
    assert.equal(r.response, "I don't know a device called the floor lamp.", 'matched as a name the home does not have, and said so');
    assert.equal(sent().length, before);
  });

  test('two commands in one breath: the recogniser\'s two matches are both placed, then run in order', async () => {
    const a = matchIntent('turn on the tv', rig.plugin.registry!.vocabulary(), 'en')!;
    const b = matchIntent('turn off lights in the office', rig.plugin.registry!.vocabulary(), 'en')!;
    const text = 'turn on the tv and turn off lights in the office';
    const before = sent().length;
    const r = await rig.sdk.runInput(text, { channel: 'speaker', meta: voiceMeta({ engine: 'pocketsphinx', confidence: 0.9, intents: [a, b] }) });
    assert.deepEqual(matched, [text], 'the whole text is tried once as one command; the halves are the recogniser\'s, not cut again');
    const topics = sent().slice(before).map((c) => c.topic);
    assert.equal(topics[0], 'home/tv/set', 'in the order said');
    assert.deepEqual(topics.slice(1).sort(), ['zigbee2mqtt/Office Ceiling/set', 'zigbee2mqtt/office/desk lamp/set']);
    assert.match(r.response ?? '', /TV/);
    // A half naming a device the home no longer has: the text is cut and matched against the current home instead.
    matched.length = 0;
    const stale: IntentMatch = { intent: 'HassTurnOn', slots: { name: 'Floor Lamp', domain: 'light' }, text: 'turn on the floor lamp', language: 'en' };
    const mid = sent().length;
    await rig.sdk.runInput('turn on the tv and turn on the floor lamp', { channel: 'speaker', meta: voiceMeta({ engine: 'pocketsphinx', confidence: 0.9, intents: [a, stale] }) });
    assert.ok(matched.includes('turn on the floor lamp'), `the halves were matched again: ${matched.join(' | ')}`);
    assert.deepEqual(sent().slice(mid), [], 'one half cannot be placed: neither acts');
  });

  test('a command the recogniser could not tell from its opposite (unsure_between) asks for a yes before it acts, alone or as the second of two', async () => {
    const vocab = rig.plugin.registry!.vocabulary();
    const tv = matchIntent('turn on the tv', vocab, 'en')!;
    const lock = { ...matchIntent('lock the front door', vocab, 'en')!, unsure_between: ['lock', 'unlock'] as [string, string] };
    // An unlocked door: one already locked is said so, not asked (local-intents.ts STATE_AFTER).
    await reportState(rig, 'front_door', 'unlocked');
    const before = sent().length;
    const r = await rig.sdk.runInput('turn on the tv then lock the front door', { channel: 'speaker', meta: voiceMeta({ engine: 'pocketsphinx', confidence: 0.9, intents: [tv, lock] }) });
    assert.deepEqual(sent().slice(before), [{ topic: 'home/tv/set', payload: 'ON' }], 'the sure half acts, the unsure one waits');
    assert.match(r.response ?? '', /^Turned on the TV\. Do you really want to lock the Front Door\? Please say yes or no\.$/);
    assert.deepEqual(r.response_meta, { confirmation: true }, 'a confirmation question: the voice box listens for the yes or no (its answer grammar)');
    await rig.sdk.runInput('yes', { channel: 'speaker' });
    assert.deepEqual(sent().slice(before + 1).map((c) => [c.topic, c.payload]), [['home/front_door/set', 'LOCK']], 'a yes locks it');
    // Alone, and answered no: nothing is sent.
    await reportState(rig, 'front_door', 'unlocked');
    const mid = sent().length;
    const one = await rig.sdk.runInput('lock the front door', { channel: 'speaker', meta: voiceMeta({ engine: 'pocketsphinx', confidence: 0.9, intent: lock }) });
    assert.match(one.response ?? '', /lock the Front Door\? Please say yes or no/);
    assert.deepEqual(one.response_meta, { confirmation: true });
    const no = await rig.sdk.runInput('no', { channel: 'speaker' });
    assert.match(no.response ?? '', /did not lock the Front Door/);
    assert.deepEqual(sent().slice(mid), []);
    // A malformed flag is dropped with nothing else lost: the command acts as heard.
    const bad = { ...matchIntent('turn off the tv', vocab, 'en')!, unsure_between: ['off'] as unknown as [string, string] };
    const last = sent().length;
    await rig.sdk.runInput('turn off the tv', { channel: 'speaker', meta: voiceMeta({ engine: 'pocketsphinx', confidence: 0.9, intent: bad }) });
    assert.deepEqual(sent().slice(last), [{ topic: 'home/tv/set', payload: 'OFF' }]);
  });

  test('a doubted setting asks with what it sets: "set the Bed Light to blue?", not "turn on the Bed Light?" (a tester\'s; a yes would have made it blue)', async () => {
    const vocab = rig.plugin.registry!.vocabulary();
    const m = matchIntent('turn the bed light blue', vocab, 'en')!;
    assert.equal(m.intent, 'HassLightSet');
    const before = sent().length;
    const r = await rig.sdk.runInput('turn the bed light blue', { channel: 'speaker', meta: voiceMeta({ engine: 'pocketsphinx', confidence: 0.9, intent: { ...m, unsure_between: ['bed', 'another name'] } }) });
    assert.equal(r.response, 'Do you really want to set the Bed Light to blue? Please say yes or no.');
    assert.deepEqual(sent().slice(before), [], 'nothing before the yes');
    const no = await rig.sdk.runInput('no', { channel: 'speaker' });
    assert.match(no.response ?? '', /did not set the Bed Light to blue/);
    const b = matchIntent('set the bed light to forty percent', vocab, 'en')!;
    const r2 = await rig.sdk.runInput('set the bed light to forty percent', { channel: 'speaker', meta: voiceMeta({ engine: 'pocketsphinx', confidence: 0.9, intent: { ...b, unsure_between: ['bed', 'another name'] } }) });
    assert.equal(r2.response, 'Do you really want to set the Bed Light to 40 percent? Please say yes or no.');
    await rig.sdk.runInput('no', { channel: 'speaker' });
    assert.deepEqual(sent().slice(before), []);
  });

  test('a doubted "lock" on a locked door is said to be locked already: never a question about the unlock (a tester\'s "turn off the tv and lock the front door" was asked "unlock?" and a yes unlocked it)', async () => {
    const vocab = rig.plugin.registry!.vocabulary();
    const tv = matchIntent('turn off the tv', vocab, 'en')!;
    const lock = { ...matchIntent('lock the front door', vocab, 'en')!, unsure_between: ['lock', 'unlock'] as [string, string] };
    await reportState(rig, 'front_door', 'locked');
    const before = sent().length;
    const r = await rig.sdk.runInput('turn off the tv and lock the front door', { channel: 'speaker', meta: voiceMeta({ engine: 'pocketsphinx', confidence: 0.9, intents: [tv, lock] }) });
    assert.equal(r.response, 'Turned off the TV. The Front Door is already locked.');
    assert.notEqual(r.response_meta?.confirmation, true, 'no question');
    await rig.sdk.runInput('yes', { channel: 'speaker' });
    assert.deepEqual(sent().slice(before).map((c) => [c.topic, c.payload]), [['home/tv/set', 'OFF']], 'a yes after it unlocks nothing');
  });

  test('a heard command that names no device and no room yet reaches several asks first; typed, or with a room, it acts (a tester\'s "turn off the party lights", heard as "turn off the lights", switched off all six)', async () => {
    const vocab = rig.plugin.registry!.vocabulary();
    const all = matchIntent('turn off the lights', vocab, 'en')!;
    const before = sent().length;
    const heard = await rig.sdk.runInput('turn off the lights', { channel: 'speaker', meta: voiceMeta({ engine: 'pocketsphinx', confidence: 0.9, intent: all }) });
    assert.match(heard.response ?? '', /^Do you really want to turn off .* and .*\? Please say yes or no\.$/);
    assert.deepEqual(heard.response_meta, { confirmation: true });
    assert.deepEqual(sent().slice(before), [], 'nothing before the yes');
    await rig.sdk.runInput('yes', { channel: 'speaker' });
    const lights = sent().slice(before).length;
    assert.ok(lights > 1, `a yes turns them all off (${lights})`);
    // With a room named it acts at once, as one device named does.
    const room = matchIntent('turn off the lights in the office', vocab, 'en')!;
    const mid = sent().length;
    const inRoom = await rig.sdk.runInput('turn off the lights in the office', { channel: 'speaker', meta: voiceMeta({ engine: 'pocketsphinx', confidence: 0.9, intent: room }) });
    assert.match(inRoom.response ?? '', /^Turned off \d+ lights in the Office\.$/);
    assert.ok(sent().length > mid);
    // Typed, the words are exact: it acts at once.
    const typedAt = sent().length;
    const typed = await rig.sdk.runInput('turn off the lights');
    assert.doesNotMatch(typed.response ?? '', /really want/);
    assert.ok(sent().length - typedAt > 1);
  });

  test('a carried intent that is not a well-formed match is ignored and the text matched', async () => {
    const before = sent().length;
    const r = await rig.sdk.runInput('turn on the tv', { channel: 'speaker', meta: voiceMeta({ engine: 'pocketsphinx', confidence: 0.9, intent: { intent: 'NotAnIntent', slots: {}, text: 'x', language: 'en' } }) });
    assert.deepEqual(matched, ['turn on the tv']);
    assert.equal(r.response, 'Turned on the TV.');
    assert.deepEqual(sent().slice(before), [{ topic: 'home/tv/set', payload: 'ON' }]);
  });
});
