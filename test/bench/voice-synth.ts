/**
 * Benchmark (issue 15 "Measure it on audio nobody tuned for"): a confusion
 * set spoken by espeak-ng (Debian) in eight English voices and variants,
 * resampled to 16 kHz with sox, at rates of 130 to 220 words a minute after
 * a lead-in of 0.5 or 0.05 s (utteranceCondition), with room noise
 * (ROOM_NOISE_DB, -50 dBFS) around and under it, decoded by the real pocketsphinx with the grammar of the fixture home
 * (../shared/fixtures/home). Classes:
 *  in_vocab     commands of the templates for this home (every family it has)
 *  oov_name     the same sentence shapes naming devices the home lacks
 *  partial      part of a name that fits one device ("open the sliding"): that device's command is right
 *               (issue 15 "Names"), no action is no wrong either (the grammar has no partial names)
 *  two          two commands in one breath: both commands, in order, are right (the grammar's joint, src/intents/fsg.ts)
 *  unrelated    long sentences that are no command
 *  not_command  sentences that hold a command but are none: a negation ("don't turn on ..."), a statement
 *               ("the kitchen light is on"), a report ("I turned off the TV"), a correction ("no the garage
 *               door"); any action is wrong (a tester's
 *               findings; the openings of src/intents/fsg.ts NOT_COMMAND_LEADS_EN were chosen on the tune voices)
 *  hesitation   a command after "uh,", "um,", "okay,", "hey," or "so,": the command after the comma is right
 * An utterance's action is what the recognised intent would do: none when it
 * is rejected, when its name is unheard (the filler, src/intents/filler.ts)
 * or free words, or when the intent only answers (state, time, weather,
 * timer status); otherwise the intent with its slots. A wrong action is an
 * action that is not exactly the sentence's own command (for two, one of its
 * two commands; for oov_name and unrelated, any action). The filler weights were chosen on the TUNE voices;
 * the figures are those of the REPORT voices:
 *  voice.synth_wrong_action_rate       wrong actions / all utterances (report voices)
 *  voice.synth_effect_right            in_vocab utterances recognised as their own intent and slots (report voices)
 *  voice.synth_effect_right_asked      of those, the ones marked unsure_between (they ask for a yes before acting)
 *  voice.synth_unknown_name_answered   oov_name utterances answered as a name the home lacks (report voices)
 *  voice.synth_not_command_acted       not_command utterances that acted (report voices)
 *  voice.synth_wrong_action_rate_tune  the same on the tune voices
 *  voice.synth_clean_wrong_action_rate   the report voices' utterances with no room noise (and _effect_right)
 *  voice.synth_wrong_action_rate_nofiller  report voices with no filler in the grammar (the grammar before
 *                                      issue 15's names), and the ratio of the two
 * `HOMEAGENT_SYNTH_CONDITIONS=narrow` speaks the set as it was before the wider rates and short lead-ins
 * (145 to 190 words a minute, 0.5 s lead-in), to compare like with like; `HOMEAGENT_SYNTH_VOICES=report` skips the tune voices, `=tune` decodes the tune voices only (about 2 minutes: for trying a rule where it may be chosen); any other value, one espeak-ng voice or a comma-separated list (`=en-gb-x-gbcwmd,en-us-nyc`), decodes those only, for checking a rule on voices in neither half; `HOMEAGENT_SYNTH_TUNE=0.01:1e-6,0.01:1e-7`
 * prints the tune voices' figures for each ENTRY:PHONE filler weight pair instead (how the default was chosen);
 * `HOMEAGENT_SYNTH_JOINT=0.05,0.1` the same for the compound grammar's joint probability and
 * `HOMEAGENT_SYNTH_COMPOUND_MARGIN=0,2,4` for how sure two commands in one breath must be (COMPOUND_MARGIN) and
 * `HOMEAGENT_SYNTH_NOT_COMMAND=0,0.1` for the probability of the not-command openings (fsg.ts DEFAULT_NOT_COMMAND_PROB).
 */
import { mkdtemp, rm } from 'node:fs/promises';
import { appendFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { PocketsphinxStt } from '../../src/voice/stt/pocketsphinx.js';
import { matchIntent } from '../../src/intents/index.js';
import type { IntentMatch } from '../../src/intents/types.js';
import { NAME_UNHEARD, type FillerWeights } from '../../src/intents/filler.js';
import { NAME_FREE } from '../../src/intents/templates-en.js';
import type { SttResult } from '../../src/voice/stt/types.js';
import { fixtureVocabulary } from '../voice-stt/home-vocab.js';
import { feed } from '../voice-stt/wav.js';
import { mix, noise } from '../voice/helpers.js';
import { ROOM_NOISE_DB, speak } from '../support/espeak.js';
import { resolveTarget } from '../../src/home/resolve.js';
import type { Entity } from '../../src/home/entities.js';


type Kind = 'in_vocab' | 'oov_name' | 'partial' | 'two' | 'unrelated' | 'not_command' | 'hesitation';

/** The confusion set. */
export const CONFUSION_SET: Record<Kind, string[]> = {
  in_vocab: [
    'turn on the kitchen lights',
    'turn off the tv',
    'turn off the standing light',
    'switch on the bed light',
    'set the bed light to twenty percent',
    'set the office lights to seventy percent',
    'turn the bed light red',
    'unlock the front door',
    'lock the front door',
    'open the garage door',
    'close the garage door',
    'is the sliding door open',
    'is the front door locked',
    'activate mood lighting',
    'run party time',
    'turn off all the lights in the kitchen',
    'turn on the lights in the office',
    'what is the temperature',
    'set a timer for five minutes',
    'set a timer for two hours',
    'cancel the timer',
    'what time is it',
    'pause',
    'next track',
  ],
  oov_name: [
    'turn on the garden sprinkler',
    'switch off the pool pump',
    'lock the garden gate',
    'turn on the coffee machine',
    'turn off the dishwasher',
    'open the bathroom window',
    'is the washing machine on',
    'turn on the fireplace',
    'close the attic hatch',
    'unlock the back door',
    'turn on the radio',
    'turn off the heated towel rail',
  ],
  partial: ['turn off the standing', 'lock the front', 'open the sliding', 'close the garage'],
  two: [
    'turn on the kitchen lights and lock the front door',
    'turn off the tv and then open the garage door',
    'set a timer for five minutes and turn off the bed light',
    'lock the front door and close the garage door',
    // A newcomer's: at the plain threshold it came out as "... light to red and lock the front door" and acted.
    'turn off the kitchen lights then unlock the front door',
  ],
  unrelated: [
    'yesterday we drove to the coast and had lunch in a small restaurant near the harbour before walking back along the cliffs',
    'my sister is coming to visit next weekend and she wants to see the new museum downtown',
    'the quarterly report shows that sales grew by twelve percent while costs stayed roughly the same',
    'can you remember the name of the actor who played the captain in that old film we watched',
  ],
  not_command: [
    "don't turn on the kitchen lights",
    'do not unlock the front door',
    'the kitchen light is on',
    'the front door is locked',
    'i turned off the tv',
    'we locked the front door',
    'did you open the garage door',
    'never open the garage door',
    // Corrections after the box did the wrong thing: a tester's "no the garage door" was heard as "lower the garage door".
    'no the garage door',
    'no the office lights',
    'no the sliding door',
  ],
  // A command after a hesitation or a greeting, as people start one: the command after the comma is right. Espeak-ng's
  // "uh", "okay" and "hey" came out as the not-command openings' pronouns ("i turn off the tv", "we lock ...", "they
  // open ...") and the command was refused (src/voice/stt/pocketsphinx-judge.ts PRONOUN_LEADS_EN); added with that rule.
  hesitation: [
    'uh, turn off the tv',
    'um, activate mood lighting',
    'hey, open the garage door',
    'okay, lock the front door',
    'so, set a timer for five minutes',
    'uh, turn on the kitchen lights',
    'um, close the garage door',
    'okay, turn off the standing light',
  ],
};

/** What a partial name means: the command on the one device it fits. */
const PARTIAL_MEANS: Record<string, string> = {
  'turn off the standing': 'turn off the standing light',
  'lock the front': 'lock the front door',
  'open the sliding': 'open the sliding door',
  'close the garage': 'close the garage door',
};

/** The command of a hesitation sentence: the words after its first comma ("uh, turn off the tv": "turn off the tv"). */
const hesitant = (sentence: string): string => sentence.slice(sentence.indexOf(',') + 1).trim();

/** Voices the filler weights were chosen on, and the ones reported. */
export const TUNE_VOICES = ['en-us', 'en-us+f3', 'en-gb-scotland', 'en-029'];
export const REPORT_VOICES = ['en-gb-x-rp', 'en-gb', 'en-us+m3', 'en-gb-x-gbclan'];

const ANSWER_ONLY = new Set(['HassGetState', 'HassClimateGetTemperature', 'HassGetCurrentTime', 'HassGetCurrentDate', 'HassGetWeather', 'HassTimerStatus', 'HassNevermind']);

/**
 * What one recognised command would do in the fixture home: undefined for
 * nothing (an unheard name, an answer, a free name the resolver does not
 * place on one device). A free name (a part of a name, "the standing") is
 * placed as the service places it (src/home/resolve.ts resolveTarget, with
 * the command's kind): the command on that device.
 */
function acts(m: IntentMatch): IntentMatch | undefined {
  // A command the engine could not tell from its opposite (unsure_between) asks for a yes first: nothing acts on its own.
  if (m.slots[NAME_UNHEARD] !== undefined || ANSWER_ONLY.has(m.intent) || m.unsure_between) return undefined;
  // A singular kind word with no name and no room ("turn on the light"): the one device of that kind, or the service
  // asks which (src/home/resolve.ts); never every device of the kind.
  if (m.slots.device !== undefined && m.slots.name === undefined && m.slots.area === undefined) {
    const kind = fixtureEntities().filter((e) => e.component === m.slots.domain);
    if (kind.length !== 1) return undefined;
  }
  if (m.slots[NAME_FREE] === undefined) return m;
  // As the service places it (src/home/local-intents.ts placeFreeName): the one device of that name, when it is of the kind
  // the verb needs; one of another kind is answered as such ("The Front Door is a lock, so it can't be opened.").
  const { [NAME_FREE]: _free, domain, name, ...rest } = m.slots;
  const r = resolveTarget(fixtureEntities(), { name: String(name) });
  if (r.kind !== 'one' || (typeof domain === 'string' && r.entity.component !== domain)) return undefined;
  return { ...m, slots: { ...rest, name: r.entity.name } };
}

let entities: Entity[] | undefined;
/** The fixture home's devices as the resolver reads them (id, component, name, aliases, area). */
function fixtureEntities(): Entity[] {
  entities ??= fixtureVocabulary().entities.map((e) => ({ id: e.id, component: e.domain, name: e.name, aliases: e.aliases ?? [], area: e.area }) as unknown as Entity);
  return entities;
}

/** The result is `want` itself: its command (a free name placed on its device), or its answer. */
export function rightOf(r: SttResult, want: IntentMatch | null): boolean {
  if (r.rejected || !r.intent) return false;
  return same(r.intent.slots[NAME_FREE] !== undefined ? acts(r.intent) : r.intent, want);
}

/** What the recognised result would do: undefined for nothing (rejected, unheard or unplaced free name, an answer). */
export function actionOf(r: SttResult): IntentMatch | undefined {
  return r.rejected || !r.intent ? undefined : acts(r.intent);
}

/** Every action of the result: its command's, or each of two commands in one breath (SttResult.intents). */
export function actionsOf(r: SttResult): IntentMatch[] {
  if (r.rejected) return [];
  const all = r.intents ?? (r.intent ? [r.intent] : []);
  return all.map(acts).filter((m): m is IntentMatch => m !== undefined);
}

/** The same command: intent and slots (a kind the device's name already implies, `domain`, aside when both name one). */
export const same = (a: IntentMatch | null | undefined, b: IntentMatch | null | undefined): boolean => {
  if (!a || !b || a.intent !== b.intent) return false;
  const slots = (m: IntentMatch): string => {
    const { domain, ...rest } = m.slots;
    const kept = m.slots.name !== undefined ? rest : { ...rest, ...(domain !== undefined ? { domain } : {}) };
    return JSON.stringify(Object.fromEntries(Object.entries(kept).sort(([x], [y]) => x.localeCompare(y))));
  };
  return slots(a) === slots(b);
};

interface Utterance {
  kind: Kind;
  sentence: string;
  voice: string;
  pcm: Buffer;
  /** utteranceSeed(voice, sentence): its condition (utteranceCondition) and its room noise; `pcm` is the speech without room noise. */
  seed: number;
}

/**
 * A stable number for one utterance of the set (FNV-1a of voice and sentence): its speaking rate and its room
 * noise follow from it, so a sentence added to the set changes no other utterance's audio (they followed the
 * position in the set, and one added sentence reshuffled every later rate and noise).
 */
export function utteranceSeed(voice: string, sentence: string): number {
  let h = 0x811c9dc5;
  for (const ch of `${voice}|${sentence}`) {
    h ^= ch.codePointAt(0)!;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h;
}

/** How one utterance of the set is spoken, from its utteranceSeed. */
export interface UtteranceCondition {
  /** espeak-ng words per minute: 130 to 220 in steps of 15. */
  rate: number;
  /** Silence before the speech, s: 0.5, or 0.05 (speech right after a wake word or a button press). */
  leadIn: number;
}

/** Room noise under and around every utterance of the set (the "clean" pass has none): ROOM_NOISE_DB of test/support/espeak.ts. */
export { ROOM_NOISE_DB };

/**
 * The condition of one utterance (half with a short lead-in). The wider rates
 * (they were 145 to 190), the short lead-in and the clean pass were added
 * after a tester's clean en-us "unlock the front door" at 190 words a minute
 * with no lead-in locked the demo home's door.
 */
export function utteranceCondition(seed: number): UtteranceCondition {
  // HOMEAGENT_SYNTH_CONDITIONS=narrow: the set as it was before (145 to 190 words a minute, 0.5 s lead-in), to compare.
  if (process.env.HOMEAGENT_SYNTH_CONDITIONS === 'narrow') return { rate: 145 + (seed % 4) * 15, leadIn: 0.5 };
  return { rate: 130 + (seed % 7) * 15, leadIn: (seed >>> 3) % 2 === 0 ? 0.5 : 0.05 };
}

/**
 * `sentence` in `voice` as the set has it (its utteranceCondition), with the
 * room noise (ROOM_NOISE_DB) under it, or none when `clean` (espeak-ng's exact
 * digital silence, as a file a user feeds `homeagent listen`): 16 kHz mono
 * s16le PCM; `name` names its files in `dir`.
 */
export async function benchUtterance(dir: string, name: string, voice: string, sentence: string, clean = false): Promise<Buffer> {
  const seed = utteranceSeed(voice, sentence);
  const c = utteranceCondition(seed);
  const { pcm } = await speak(dir, name, sentence, { voice, rate: c.rate, padBefore: c.leadIn });
  return clean ? pcm : withRoom(pcm, seed);
}

/** `pcm` with the set's room noise (seeded) under and around it. */
const withRoom = (pcm: Buffer, seed: number): Buffer => mix(pcm, noise(pcm.length / 32, ROOM_NOISE_DB, seed));

async function synthesise(dir: string, voices: string[]): Promise<Utterance[]> {
  const out: Utterance[] = [];
  let k = 0;
  for (const voice of voices) {
    for (const [kind, sentences] of Object.entries(CONFUSION_SET) as Array<[Kind, string[]]>) {
      for (const sentence of sentences) {
        const seed = utteranceSeed(voice, sentence);
        out.push({ kind, sentence, voice, pcm: await benchUtterance(dir, String(++k), voice, sentence, true), seed });
      }
    }
  }
  return out;
}

interface Tally {
  n: number;
  wrong: number;
  inVocab: number;
  inVocabRight: number;
  /** Of inVocabRight, those the recogniser doubted (IntentMatch.unsure_between): they asked for a yes before acting. */
  inVocabAsked: number;
  oov: number;
  oovAnswered: number;
  /** Two commands in one breath, and those recognised as both their commands in order. */
  two: number;
  twoRight: number;
  /** Parts of names, and those placed on the device they fit. */
  partial: number;
  partialRight: number;
  /** Sentences that are no command, and those that acted. */
  notCommand: number;
  notCommandActed: number;
  /** Commands after a hesitation, those recognised as the command, and of those the ones that asked first. */
  hesitation: number;
  hesitationRight: number;
  hesitationAsked: number;
  notes: string[];
}

/** HOMEAGENT_SYNTH_DUMP=FILE: each decode with the default grammar as a JSON line (its details, for choosing rejection rules on the tune voices). */
const dump = process.env.HOMEAGENT_SYNTH_DUMP;

async function decodeAll(utterances: Utterance[], filler: boolean | FillerWeights, jointProb?: number, compoundMargin?: number, clean = false, notCommandProb?: number): Promise<Tally> {
  const vocab = fixtureVocabulary();
  const engine = new PocketsphinxStt({
    ...(notCommandProb !== undefined ? { notCommandProb } : {}),
    ...(filler === true ? {} : { fillerWeights: filler === false ? null : filler }),
    ...(jointProb !== undefined ? { jointProb } : {}),
    ...(compoundMargin !== undefined ? { rejection: { compoundMargin } } : {}),
  });
  await engine.setVocabulary(vocab);
  const t: Tally = { n: 0, wrong: 0, inVocab: 0, inVocabRight: 0, inVocabAsked: 0, oov: 0, oovAnswered: 0, two: 0, twoRight: 0, partial: 0, partialRight: 0, notCommand: 0, notCommandActed: 0, hesitation: 0, hesitationRight: 0, hesitationAsked: 0, notes: [] };
  try {
    for (const u of utterances) {
      const session = engine.start();
      feed(clean ? u.pcm : withRoom(u.pcm, u.seed), (b) => session.write(b));
      const r = await session.end();
      const want = u.kind === 'in_vocab' ? matchIntent(u.sentence, vocab, 'en') : u.kind === 'partial' ? matchIntent(PARTIAL_MEANS[u.sentence]!, vocab, 'en') : u.kind === 'hesitation' ? matchIntent(hesitant(u.sentence), vocab, 'en') : null;
      // Two commands in one breath: each half's command is right, in the order said.
      const halvesWanted = u.kind === 'two' ? u.sentence.split(/ (?:and (?:then )?|then )/).map((h) => matchIntent(h, vocab, 'en')) : [];
      const wants = u.kind === 'two' ? halvesWanted : [want];
      const wrongActs = actionsOf(r).filter((a) => !wants.some((w) => same(a, w)));
      t.n++;
      if (dump && filler === true && !clean) {
        const d = engine.lastDetails;
        const line = { voice: u.voice, kind: u.kind, sentence: u.sentence, heard: r.text, rejected: r.rejected, wrong: wrongActs.length > 0, right: rightOf(r, want), asked: r.intent?.unsure_between !== undefined, scoreGap: d?.scoreGap, frames: d?.frames, compound: d?.compound, compoundUnsure: d?.compoundUnsure, durationMisfit: d?.durationMisfit, oppositeMargin: d?.oppositeMargin, oppositeClose: d?.oppositeClose, oppositeAligned: d?.oppositeAligned, particleMargin: d?.particleMargin, unheardNameRival: d?.unheardNameRival, pronounLead: d?.pronounLead, ...utteranceCondition(u.seed), msPerPhone: d?.msPerPhone, hypothesis: d?.hypothesis, reason: r.reason, wordGaps: d?.wordGaps };
        appendFileSync(dump, JSON.stringify(line) + '\n');
      }
      if (wrongActs.length > 0) {
        t.wrong++;
        t.notes.push(`# wrong action (${u.kind}, ${u.voice}): "${u.sentence}" heard "${r.text}"`);
      }
      if (u.kind === 'in_vocab') {
        t.inVocab++;
        if (rightOf(r, want)) {
          t.inVocabRight++;
          if (r.intent?.unsure_between) t.inVocabAsked++;
        }
      }
      if (u.kind === 'hesitation') {
        t.hesitation++;
        if (rightOf(r, want)) {
          t.hesitationRight++;
          if (r.intent?.unsure_between) t.hesitationAsked++;
        }
      }
      if (u.kind === 'partial') {
        t.partial++;
        if (rightOf(r, want)) t.partialRight++;
      }
      if (u.kind === 'two') {
        t.two++;
        const halves = r.rejected ? undefined : r.intents;
        if (halves?.length === 2 && same(halves[0], halvesWanted[0]) && same(halves[1], halvesWanted[1])) t.twoRight++;
      }
      if (u.kind === 'not_command') {
        t.notCommand++;
        if (actionsOf(r).length > 0) t.notCommandActed++;
      }
      if (u.kind === 'oov_name') {
        t.oov++;
        if (!r.rejected && r.intent?.slots[NAME_UNHEARD] !== undefined) t.oovAnswered++;
      }
    }
  } finally {
    await engine.close();
  }
  return t;
}

/** `a` of `b` as a percentage with one decimal ("12.5 %"). */
export const pct = (a: number, b: number): string => `${((100 * a) / Math.max(1, b)).toFixed(1)} %`;

export async function run(): Promise<void> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'ha-synth-'));
  try {
    const joints = process.env.HOMEAGENT_SYNTH_JOINT;
    if (joints) {
      // Choosing the joint's probability (two commands in one breath, src/intents/fsg.ts): each value on the tune voices only.
      const tuneSet = await synthesise(dir, TUNE_VOICES);
      for (const v of joints.split(',').map(Number)) {
        const t = await decodeAll(tuneSet, true, v);
        console.log(`# tune joint ${v}: wrong ${pct(t.wrong, t.n)}, effect right ${pct(t.inVocabRight, t.inVocab)}, two right ${pct(t.twoRight, t.two)}, partial right ${pct(t.partialRight, t.partial)}, unknown answered ${pct(t.oovAnswered, t.oov)}`);
        for (const n of t.notes) console.log(`#   ${n.slice(2)}`);
      }
      return;
    }
    const margins = process.env.HOMEAGENT_SYNTH_COMPOUND_MARGIN;
    if (margins) {
      // Choosing how sure two commands in one breath must be (pocketsphinx-judge.ts COMPOUND_MARGIN): each value on the tune voices only.
      const tuneSet = await synthesise(dir, TUNE_VOICES);
      for (const v of margins.split(',').map(Number)) {
        const t = await decodeAll(tuneSet, true, undefined, v);
        console.log(`# tune compound margin ${v}: wrong ${pct(t.wrong, t.n)}, effect right ${pct(t.inVocabRight, t.inVocab)}, two right ${pct(t.twoRight, t.two)}, partial right ${pct(t.partialRight, t.partial)}, unknown answered ${pct(t.oovAnswered, t.oov)}`);
        for (const n of t.notes) console.log(`#   ${n.slice(2)}`);
      }
      return;
    }
    const notCommand = process.env.HOMEAGENT_SYNTH_NOT_COMMAND;
    if (notCommand) {
      // Choosing the probability of the not-command openings (src/intents/fsg.ts): each value on the tune voices only.
      const tuneSet = await synthesise(dir, TUNE_VOICES);
      for (const v of notCommand.split(',').map(Number)) {
        const t = await decodeAll(tuneSet, true, undefined, undefined, false, v);
        console.log(`# tune not-command ${v}: wrong ${pct(t.wrong, t.n)}, effect right ${pct(t.inVocabRight, t.inVocab)}, not-command acted ${pct(t.notCommandActed, t.notCommand)}, two right ${pct(t.twoRight, t.two)}, partial right ${pct(t.partialRight, t.partial)}, unknown answered ${pct(t.oovAnswered, t.oov)}`);
        for (const n of t.notes) console.log(`#   ${n.slice(2)}`);
      }
      return;
    }
    const grid = process.env.HOMEAGENT_SYNTH_TUNE;
    if (grid) {
      // Choosing the weights: each ENTRY:PHONE pair on the tune voices only.
      const tuneSet = await synthesise(dir, TUNE_VOICES);
      for (const pair of grid.split(',')) {
        const [entryProb, phoneProb] = pair.split(':').map(Number) as [number, number];
        const t = await decodeAll(tuneSet, { entryProb, phoneProb });
        console.log(`# tune ${pair}: wrong ${pct(t.wrong, t.n)}, effect right ${pct(t.inVocabRight, t.inVocab)}, unknown answered ${pct(t.oovAnswered, t.oov)}`);
        for (const n of t.notes) console.log(`#   ${n.slice(2)}`);
      }
      return;
    }
    const only = process.env.HOMEAGENT_SYNTH_VOICES;
    // Any value but tune and report names voices: one, or a comma-separated list.
    const listed = only && only !== 'tune' && only !== 'report' ? only.split(',').map((v) => v.trim()).filter(Boolean) : undefined;
    if (listed || only === 'tune') {
      // Trying a rule: the tune voices only. Or checking one on voices neither half holds (a rule whose idea came from
      // reading the report voices' misses is not measured by them any more): the voices named, decoded as the report
      // voices are.
      const voices = listed ?? TUNE_VOICES;
      const suffix = listed ? '_listed' : '_tune';
      const t = await decodeAll(await synthesise(dir, voices), true);
      for (const n of t.notes) console.log(n);
      console.log(`# ${t.n} utterances on ${voices.join(', ')}`);
      const figures: Array<[string, number, number]> = [
        ['wrong_action_rate', t.wrong, t.n],
        ['effect_right', t.inVocabRight, t.inVocab],
        ['effect_right_asked', t.inVocabAsked, t.inVocabRight],
        ['not_command_acted', t.notCommandActed, t.notCommand],
        ['partial_name_right', t.partialRight, t.partial],
        ['two_commands_right', t.twoRight, t.two],
        ['hesitation_right', t.hesitationRight, t.hesitation],
      ];
      for (const [name, a, b] of figures) console.log(`voice.synth_${name}${suffix}: ${pct(a, b)}`);
      return;
    }
    const report = await synthesise(dir, REPORT_VOICES);
    const r = await decodeAll(report, true);
    const base = await decodeAll(report, false);
    const clean = await decodeAll(report, true, undefined, undefined, true);
    let tune: Tally | undefined;
    if (process.env.HOMEAGENT_SYNTH_VOICES !== 'report') tune = await decodeAll(await synthesise(dir, TUNE_VOICES), true);
    for (const n of r.notes) console.log(n);
    console.log(`# ${r.n} utterances on the report voices (${REPORT_VOICES.join(', ')}); tune voices: ${TUNE_VOICES.join(', ')}`);
    console.log(`voice.synth_wrong_action_rate: ${pct(r.wrong, r.n)}`);
    console.log(`voice.synth_effect_right: ${pct(r.inVocabRight, r.inVocab)}`);
    console.log(`voice.synth_effect_right_asked: ${pct(r.inVocabAsked, r.inVocabRight)} (of those right, the ones the recogniser doubted: they ask for a yes first)`);
    console.log(`voice.synth_unknown_name_answered: ${pct(r.oovAnswered, r.oov)}`);
    console.log(`voice.synth_not_command_acted: ${pct(r.notCommandActed, r.notCommand)} (a negation, statement, report or correction that acted)`);
    console.log(`voice.synth_partial_name_right: ${pct(r.partialRight, r.partial)} (a part of a name that fits one device acted on that device)`);
    console.log(`voice.synth_two_commands_right: ${pct(r.twoRight, r.two)} (two commands in one breath recognised as both, in order)`);
    console.log(`voice.synth_hesitation_right: ${pct(r.hesitationRight, r.hesitation)} (a command after "uh,", "okay,", ... recognised as the command)`);
    console.log(`voice.synth_hesitation_right_asked: ${pct(r.hesitationAsked, r.hesitationRight)} (of those right, the ones that ask for a yes first)`);
    if (tune) console.log(`voice.synth_wrong_action_rate_tune: ${pct(tune.wrong, tune.n)}`);
    if (tune) console.log(`voice.synth_effect_right_tune: ${pct(tune.inVocabRight, tune.inVocab)}`);
    if (tune) console.log(`voice.synth_effect_right_asked_tune: ${pct(tune.inVocabAsked, tune.inVocabRight)}`);
    if (tune) console.log(`voice.synth_hesitation_right_tune: ${pct(tune.hesitationRight, tune.hesitation)}`);
    for (const n of clean.notes) console.log(n.replace('# wrong action', '# wrong action, clean'));
    console.log(`voice.synth_clean_wrong_action_rate: ${pct(clean.wrong, clean.n)} (the same utterances with no room noise)`);
    console.log(`voice.synth_clean_effect_right: ${pct(clean.inVocabRight, clean.inVocab)}`);
    console.log(`voice.synth_wrong_action_rate_nofiller: ${pct(base.wrong, base.n)}`);
    console.log(`voice.synth_effect_right_nofiller: ${pct(base.inVocabRight, base.inVocab)}`);
    console.log(`voice.synth_wrong_action_ratio_vs_nofiller: ${(r.wrong / Math.max(1, base.wrong)).toFixed(2)}`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
