/**
 * The same command grammar as a finite-state grammar in Sphinx FSG text
 * format (FSG_BEGIN / NUM_STATES / START_STATE / FINAL_STATE / TRANSITION
 * from to prob word / FSG_END, read by pocketsphinx -fsg). The templates are
 * compiled to an automaton with empty (null) arcs for optional parts, then
 * made deterministic and minimised here (states with the same continuations
 * merged: 599 states for the fixture home instead of 1766), so pocketsphinx gets an epsilon-free automaton
 * with one arc per word and state: pocketsphinx 5prealpha (Debian 12) mis-decodes JSGF with nested
 * optional rules ("Final result does not match the grammar"), which this
 * avoids. Arc probabilities make every sentence equally likely (see
 * arcProbabilities).
 */
import type { CompiledTemplates } from './matcher.js';
import type { NameRequirement, TemplateNode } from './template-syntax.js';
import { numberToWords } from './numbers.js';
import { DEFAULT_FILLER_WEIGHTS, FILLER_SLOT, MODEL_PHONES, isPhoneWord, phoneWord, type FillerWeights } from './filler.js';

/** A list resolver: spoken alternatives ("word word") of a slot list. */
export type SlotResolver = (listName: string, requires: NameRequirement | undefined) => string[];

interface Arc {
  to: number;
  word: string | null;
}

class Automaton {
  arcs: Arc[][] = [];
  state(): number {
    this.arcs.push([]);
    return this.arcs.length - 1;
  }
  add(from: number, to: number, word: string | null): void {
    this.arcs[from]!.push({ to, word });
  }
  /** A chain of words from -> to. */
  words(from: number, to: number, words: string[]): void {
    if (words.length === 0) return this.add(from, to, null);
    let cur = from;
    words.forEach((w, i) => {
      const next = i === words.length - 1 ? to : this.state();
      this.add(cur, next, w);
      cur = next;
    });
  }
}

function tokenWords(token: string): string[] {
  return /^\d+(\.\d+)?$/.test(token) ? numberToWords(Number(token)).split(' ') : [token];
}

/**
 * Build the FSG text for the English templates. `resolve` gives the spoken
 * alternatives of each slot list (the same function the JSGF uses); a
 * sentence whose list is empty is left out. Returns null when no sentence
 * survives.
 */
/**
 * Words the continuation grammar's sentences may open with, left out of the
 * transcript (issue 15: "turn on the kitchen light … and lock the front
 * door" is two utterances when the first is acted on at the pause; the
 * second opens with "and"). Only the utterance after an early commit is
 * decoded with them: in the command grammar a leading "and" turns
 * "unlock the front door" into "and lock the front door"
 * (test/voice-stt/held-out.test.ts).
 */
export const LEADING_WORDS: readonly string[] = ['and', 'then'];

/**
 * Probability of going on with a second command where a sentence ends, in
 * the compound grammar (issue 15 "Two commands in one breath": "turn on the
 * kitchen light and lock the front door"); the sentence ends with the rest.
 * The command grammar has no joint: with one, pocketsphinx, which scores each
 * frame against the best senone its search has active, keeps the grammar's
 * first words active through the silence after every sentence, so the
 * grammar path's score, and with it the rejection measure against the phone
 * loop (pocketsphinx-judge.ts), moved by up to 9 units per frame on the same
 * words, and commands recognised as themselves fell from 72.9 % to 66.7 % on
 * the tune voices of test/bench/voice-synth.ts whatever the probability
 * (0.01 to 0.2). So a third decoder runs the compound grammar beside the
 * command grammar and only tells whether two commands were said
 * (pocketsphinx-decoder.ts); a single command is still judged on the command
 * grammar's decode.
 */
export const DEFAULT_JOINT_PROB = 0.05;

/**
 * Openings that make what follows no command (issue 15 "Never the wrong
 * action"; a tester's findings): a negation ("don't turn on the kitchen
 * light", "please do not unlock the front door", "never open the garage
 * door") or a report of what someone did ("I turned off the TV", "she
 * switched on the bed light"). Without them the grammar, which holds only
 * commands, had the decoder force such speech into the command it contains,
 * and it acted: espeak-ng voices, 16 utterances each, acted on 8 of "don't
 * turn on the kitchen lights", on 4 of "do not unlock the front door" (3 of
 * them unlocking) and on 7 of "I turned off the TV"; with the openings only
 * at the very start, a second tester had 13 of 24 "please don't ..." /
 * "please do not ..." heard as "please ..." and acted on. In the speech
 * grammars every command (no question: ANSWER_INTENTS) may open with one of
 * them; the matcher has no sentence that does, so a decode that opens so is
 * no command and is rejected (the box says it did not catch it, and nothing
 * acts; pocketsphinx-judge.ts opensNotCommand), except that a pronoun before
 * one command in the home's own words asks for a yes first instead
 * (pocketsphinx-judge.ts PRONOUN_LEADS_EN: "uh, turn off the TV" is heard so).
 */
export const NOT_COMMAND_LEADS_EN: readonly string[] = ["don't", 'do not', 'please don\'t', 'please do not', 'never', 'i', 'we', 'you', 'she', 'he', 'they'];

/**
 * Corrections a person says right after a command when they change their
 * mind: said after a setting, they came out as the setting. A tester's
 * "turn off the office lights no wait" was heard as "turn all of the office
 * lights to 8" (or "... to white") and switched them on, "turn on the
 * kitchen lights no" as "... to 0" or "... blue" (espeak-ng voices, 130 to
 * 200 words a minute, room noise: 25 of 54 such utterances acted). The
 * grammar cannot hold them after every sentence (a path that goes on after
 * each sentence moved the command grammar's scores through the silence
 * after it; DEFAULT_JOINT_PROB), so a command heard ending in a setting is
 * aligned against the same words with each of these in place of the
 * setting (src/voice/stt/pocketsphinx-judge.ts correctionSentences,
 * CORRECTION_MARGIN), as against an opposite word.
 */
export const CORRECTION_TAILS_EN: readonly string[] = ['no wait', 'no', 'wait'];

/** Every word the correction sentences use (the aligner's dictionary needs them). */
export function correctionWords(): string[] {
  return [...new Set(CORRECTION_TAILS_EN.flatMap((p) => p.split(' ')))].sort();
}

/**
 * Intents that only answer (they change nothing): a not-command opening
 * precedes none of their sentences. "Don't" before a question means nothing,
 * and the path was there for a command's verb misheard: en-gb-scotland's
 * "turn on the kitchen lights" was decoded as "don't are the kitchen light
 * off" (tune voices of test/bench/voice-synth.ts).
 */
export const ANSWER_INTENTS: ReadonlySet<string> = new Set([
  'HassGetState',
  'HassClimateGetTemperature',
  'HassGetCurrentTime',
  'HassGetCurrentDate',
  'HassGetWeather',
  'HassTimerStatus',
  'HassListGetItems',
  'HassNevermind',
  'TimerChoice',
  'TimerDuration',
]);

/**
 * The probability of a decode opening with one of NOT_COMMAND_LEADS_EN whose
 * first word opens no command, all together (the sentences share the rest as
 * before; "please don't" and "never" share their first word's arc and
 * price). Chosen on the tune voices of test/bench/voice-synth.ts
 * (HOMEAGENT_SYNTH_NOT_COMMAND) with the first five openings, where the
 * price hardly matters (the audio decides): wrong actions 5.7 % with no
 * openings, 1.8 % at 0.01 and 1e-4, 2.2 % at 1e-6; commands right 69.8 %
 * with none, 64.6 % at 0.01, 63.5 % below. With all eleven: 1.3 % and 63.5 %. The cost is en-gb-scotland's
 * "turn", heard as "don't" ("don't open the ...") and then not understood,
 * where it was understood before. Without "don't" (its negations are then
 * heard as "do not ...") the wrong actions were 3.1 %, and the openings' words
 * had also kept en-029's misheard commands from acting.
 */
export const DEFAULT_NOT_COMMAND_PROB = 0.01;

/** Joint words between two commands in the grammar, with their share of the joint. */
const JOINT_WORDS: ReadonlyArray<[string, number]> = [
  ['and', 0.7],
  ['then', 0.3],
];

/** Openings that make a decode no command (NOT_COMMAND_LEADS_EN), and their probability together. */
export interface NotCommandLeads {
  /** Each a word or words ("do not"). */
  leads: readonly string[];
  /** Probability of a decode opening with any of them, 0 to 1 (0: none in the grammar). */
  prob: number;
}

/**
 * The FSG of the templates' sentences filled by `resolve`; `leading`:
 * words a sentence may open with (LEADING_WORDS for the continuation
 * grammar; none for the command grammar); `jointProb` > 0: a second command
 * may follow a whole sentence (the compound grammar, DEFAULT_JOINT_PROB);
 * `notCommand`: openings that make the sentence no command (the matcher has
 * none of them, so a decode that takes one is rejected); `fragments`:
 * the fragments that only mean something right after a command acted on at
 * its pause (IntentTemplateGroup.context 'continuation': "to fifty
 * percent") are paths too, and no not-command opening leads into them. In
 * the continuation grammar they are sentences; in the command grammar they
 * take such speech said on its own, which the judge rejects (the matcher
 * has them only for a continuation), instead of leaving the decoder to force
 * it into the nearest command ("at forty percent" heard as "open all the
 * curtains").
 * Null when no sentence can be filled.
 */
export function buildFsg(
  c: CompiledTemplates,
  resolve: SlotResolver,
  weights: FillerWeights = DEFAULT_FILLER_WEIGHTS,
  leading: readonly string[] = [],
  jointProb = 0,
  notCommand?: NotCommandLeads,
  fragments = false,
): string | null {
  const a = new Automaton();
  const start = a.state();
  const final = a.state();
  const emptiness = new Map<string, boolean>();

  /** Can `node` produce at least one word sequence? */
  function producible(node: TemplateNode, requires: NameRequirement | undefined, seen: Set<string>): boolean {
    switch (node.kind) {
      case 'word':
        return /^[a-z0-9'.]+$/.test(node.token);
      case 'seq':
        return node.items.every((n) => producible(n, requires, seen));
      case 'alt':
        return node.options.some((n) => producible(n, requires, seen));
      case 'rule': {
        const body = c.rules.get(node.name);
        if (!body || seen.has(node.name)) return false;
        return producible(body, requires, new Set([...seen, node.name]));
      }
      case 'range':
        return node.max >= node.min;
      case 'slot': {
        const key = `${node.list}|${JSON.stringify(requires ?? null)}`;
        let ok = emptiness.get(key);
        if (ok === undefined) {
          ok = resolve(node.list, requires).length > 0;
          emptiness.set(key, ok);
        }
        return ok;
      }
    }
  }

  function build(node: TemplateNode, from: number, to: number, requires: NameRequirement | undefined): void {
    switch (node.kind) {
      case 'word':
        a.words(from, to, tokenWords(node.token));
        return;
      case 'seq': {
        if (node.items.length === 0) return a.add(from, to, null);
        let cur = from;
        node.items.forEach((item, i) => {
          const next = i === node.items.length - 1 ? to : a.state();
          build(item, cur, next, requires);
          cur = next;
        });
        return;
      }
      case 'alt':
        for (const opt of node.options) if (producible(opt, requires, new Set())) build(opt, from, to, requires);
        return;
      case 'rule':
        build(c.rules.get(node.name)!, from, to, requires);
        return;
      case 'range':
        for (let i = node.min; i <= node.max; i++) a.words(from, to, numberToWords(i).split(' '));
        return;
      case 'slot':
        for (const alt of resolve(node.list, requires)) {
          if (alt !== FILLER_SLOT) {
            a.words(from, to, alt.split(' '));
            continue;
          }
          // One or more phones, then on (filler.ts).
          const loop = a.state();
          for (const ph of MODEL_PHONES) {
            a.add(from, loop, phoneWord(ph));
            a.add(loop, loop, phoneWord(ph));
          }
          a.add(loop, to, null);
        }
        return;
    }
  }

  const body = a.state();
  a.add(start, body, null);
  for (const w of leading) a.add(start, body, w);
  let sentences = 0;
  for (const { group, sentences: nodes } of c.groups) {
    if (group.grammar === false || (group.context === 'continuation' && !fragments)) continue;
    for (const node of nodes) {
      if (!producible(node, group.requires, new Set())) continue;
      build(node, body, final, group.requires);
      sentences++;
    }
  }
  if (sentences === 0) return null;
  // Openings that make the sentence no command: a chain of words into a copy of the commands (the sentences of
  // intents that act; minimising merges the copy's tails with the originals). An opening whose first word also
  // opens a sentence ("please don't", "never" of "never mind") shares that arc, which keeps its own price.
  const decoyFirst = new Set<string>();
  if (notCommand && notCommand.prob > 0) {
    const opening = openingWords(a, body);
    const commands = a.state();
    for (const { group, sentences: nodes } of c.groups) {
      if (group.grammar === false || group.context !== undefined || ANSWER_INTENTS.has(group.intent)) continue;
      for (const node of nodes) if (producible(node, group.requires, new Set())) build(node, commands, final, group.requires);
    }
    for (const lead of notCommand.leads) {
      const words = lead.split(' ');
      a.words(start, commands, words);
      if (!opening.has(words[0]!)) decoyFirst.add(words[0]!);
    }
  }
  const f = minimise(determinise(a, start, final));
  return serialise(f, weights, jointProb, decoyFirst.size > 0 ? { first: decoyFirst, prob: notCommand!.prob } : undefined);
}

/** The words that may open a sentence from `from` (its null closure's word arcs). */
function openingWords(a: Automaton, from: number): Set<string> {
  const seen = new Set([from]);
  const stack = [from];
  const out = new Set<string>();
  while (stack.length) {
    for (const arc of a.arcs[stack.pop()!]!) {
      if (arc.word !== null) out.add(arc.word);
      else if (!seen.has(arc.to)) (seen.add(arc.to), stack.push(arc.to));
    }
  }
  return out;
}

interface PlainFsg {
  n: number;
  start: number;
  final: number;
  arcs: Array<[number, number, string]>;
}

/**
 * Subset construction over null-closed state sets: the result has no null
 * arcs and at most one arc per word from each state (a small lexical tree per
 * state for pocketsphinx). An arc into a set that contains the final state
 * is doubled into one dedicated final state, since an FSG has a single final
 * state and that state must have no way out.
 */
function determinise(a: Automaton, start: number, final: number): PlainFsg {
  const closureOf = (states: Iterable<number>): number[] => {
    const seen = new Set<number>(states);
    const stack = [...seen];
    while (stack.length) {
      const x = stack.pop()!;
      for (const arc of a.arcs[x]!) if (arc.word === null && !seen.has(arc.to)) (seen.add(arc.to), stack.push(arc.to));
    }
    return [...seen].sort((p, q) => p - q);
  };
  const ids = new Map<string, number>();
  const sets: number[][] = [];
  const idOf = (set: number[]): number => {
    const key = set.join(',');
    let v = ids.get(key);
    if (v === undefined) {
      v = sets.length;
      ids.set(key, v);
      sets.push(set);
    }
    return v;
  };
  idOf(closureOf([start]));
  const raw: Array<[number, number, string]> = [];
  for (let i = 0; i < sets.length; i++) {
    const byWord = new Map<string, number[]>();
    for (const s of sets[i]!) {
      for (const arc of a.arcs[s]!) {
        if (arc.word === null) continue;
        const list = byWord.get(arc.word) ?? [];
        list.push(arc.to);
        byWord.set(arc.word, list);
      }
    }
    for (const [w, tos] of byWord) raw.push([i, idOf(closureOf(tos)), w]);
  }
  const finalId = sets.length;
  const arcs: Array<[number, number, string]> = [];
  for (const [from, to, w] of raw) {
    if (a.arcs.length > 0 && sets[to]!.some((x) => a.arcs[x]!.some((arc) => arc.word !== null))) arcs.push([from, to, w]);
    if (sets[to]!.includes(final)) arcs.push([from, finalId, w]);
  }
  return { n: finalId + 1, start: 0, final: finalId, arcs };
}

/**
 * Merge states with the same continuations (partition refinement, Moore's
 * algorithm, on the word and the class of each arc's target): the same
 * sentences, far fewer states. Determinising keeps a copy of a shared part
 * (a length of time, the names of the home) for every sentence it occurs in,
 * and most of those copies end the same way. Two states are merged only when
 * their classes and arcs agree, so every merged state has exactly the
 * continuations of each state it replaces; identical parallel arcs become
 * one.
 */
function minimise(f: PlainFsg): PlainFsg {
  const out: Array<Array<[string, number]>> = Array.from({ length: f.n }, () => []);
  for (const [from, to, w] of f.arcs) out[from]!.push([w, to]);
  let cls: number[] = Array.from({ length: f.n }, (_, i) => (i === f.final ? 1 : 0));
  let classes = new Set(cls).size;
  for (;;) {
    const ids = new Map<string, number>();
    const next = cls.map((c, s) => {
      const sig = `${c}|${[...new Set(out[s]!.map(([w, t]) => `${w} ${cls[t]}`))].sort().join('|')}`;
      let id = ids.get(sig);
      if (id === undefined) {
        id = ids.size;
        ids.set(sig, id);
      }
      return id;
    });
    cls = next;
    if (ids.size === classes) break;
    classes = ids.size;
  }
  const seen = new Set<string>();
  const arcs: Array<[number, number, string]> = [];
  for (const [from, to, w] of f.arcs) {
    const arc: [number, number, string] = [cls[from]!, cls[to]!, w];
    const key = arc.join(' ');
    if (!seen.has(key)) (seen.add(key), arcs.push(arc));
  }
  return { n: classes, start: cls[f.start]!, final: cls[f.final]!, arcs };
}

/**
 * Arc probabilities that make every complete sentence of the grammar equally
 * likely: an arc's probability is the number of sentences through its target
 * divided by the number through its source (weight pushing of a uniform
 * sentence distribution). Sharing probability equally among a state's arcs
 * instead would favour words with few continuations: "eight percent" (one way
 * on) over "fifty percent" (ten: "percent", "one" .. "nine"), by a factor of
 * ten, whatever was said. Path counts are doubles (they overflow only past
 * 1e308 sentences). A grammar with a cycle (no template has one today) falls
 * back to equal shares per state.
 */
function arcProbabilities(f: PlainFsg, weights: FillerWeights): number[] {
  // The filler (filler.ts) is priced on its own: each phone arc costs weights.phoneProb, entering it
  // entryProb * phoneProb more. For the sentence counts the filler is one more name (its loop is the grammar's
  // only cycle; counted phone by phone it would outweigh every name): a state that enters it counts the
  // sentences after it once, and a filler state counts its way on plus one when a sentence may end there.
  // The word arcs of a state share 1 among themselves by the sentences behind each, as without a filler.
  const phone = f.arcs.map(([, , w]) => isPhoneWord(w));
  const inFiller = new Set<number>();
  f.arcs.forEach(([, to], i) => {
    if (phone[i] && to !== f.final) inFiller.add(to);
  });
  const out = new Map<number, number[]>();
  /** Filler states entered from each state (its phone arcs' targets, when it is no filler state itself). */
  const enters = new Map<number, Set<number>>();
  /** Filler states where a sentence may end (a phone arc into the final state). */
  const ends = new Set<number>();
  f.arcs.forEach(([from, to], i) => {
    if (phone[i]) {
      if (inFiller.has(from)) {
        if (to === f.final) ends.add(from);
      } else if (to !== f.final) {
        const e = enters.get(from) ?? new Set<number>();
        e.add(to);
        enters.set(from, e);
      }
      return;
    }
    const l = out.get(from) ?? [];
    l.push(i);
    out.set(from, l);
  });
  const next = (s: number): number[] => [...(out.get(s) ?? []).map((a) => f.arcs[a]![1]), ...(enters.get(s) ?? [])];
  const paths = new Map<number, number>([[f.final, 1]]);
  /** Sentences through each state's word arcs only (what they share). */
  const wordPaths = new Map<number, number>();
  const state = new Map<number, 'open' | 'done'>();
  let cyclic = false;
  // Iterative depth-first post-order: the grammar can be deep (long sentences).
  const count = (root: number): void => {
    const stack: Array<{ s: number; i: number; to: number[] }> = [{ s: root, i: 0, to: next(root) }];
    state.set(root, 'open');
    while (stack.length > 0) {
      const top = stack[stack.length - 1]!;
      if (top.i < top.to.length) {
        const to = top.to[top.i++]!;
        const st = state.get(to);
        if (st === 'open') cyclic = true;
        else if (st === undefined && to !== f.final) {
          state.set(to, 'open');
          stack.push({ s: to, i: 0, to: next(to) });
        }
        continue;
      }
      let words = 0;
      for (const a of out.get(top.s) ?? []) words += paths.get(f.arcs[a]![1]) ?? 0;
      let n = words + (ends.has(top.s) ? 1 : 0);
      for (const e of enters.get(top.s) ?? []) n += paths.get(e) ?? 0;
      wordPaths.set(top.s, words);
      paths.set(top.s, n);
      state.set(top.s, 'done');
      stack.pop();
    }
  };
  count(f.start);
  for (const s of inFiller) if (!state.has(s)) count(s);
  const equal = f.arcs.map(([from]) => 1 / (out.get(from)?.length ?? 1));
  const filler = (from: number): number => (inFiller.has(from) ? weights.phoneProb : weights.entryProb * weights.phoneProb);
  if (cyclic) return f.arcs.map(([from], i) => (phone[i] ? filler(from) : equal[i]!));
  return f.arcs.map(([from, to], i) => {
    if (phone[i]) return filler(from);
    const total = wordPaths.get(from) ?? 0;
    const through = paths.get(to) ?? 0;
    return total > 0 && through > 0 ? through / total : equal[i]!;
  });
}

/**
 * Give the start state's arcs on the first words of not-command openings
 * (`first`) `prob` together, shared equally, and its other arcs the rest in
 * their proportions (arcProbabilities counted a decoy's sentences as many as
 * all commands', which would make each decoy as likely as no decoy).
 */
function priceDecoys(f: PlainFsg, probs: number[], first: ReadonlySet<string>, prob: number): void {
  const fromStart = f.arcs.map((arc, i) => i).filter((i) => f.arcs[i]![0] === f.start);
  const decoy = fromStart.filter((i) => first.has(f.arcs[i]![2]));
  const rest = fromStart.filter((i) => !first.has(f.arcs[i]![2]));
  const restTotal = rest.reduce((sum, i) => sum + probs[i]!, 0);
  if (decoy.length === 0 || restTotal <= 0) return;
  for (const i of decoy) probs[i] = prob / decoy.length;
  for (const i of rest) probs[i] = (probs[i]! / restTotal) * (1 - prob);
}

/**
 * FSG text of `f`. With `jointProb` > 0 a second command may follow a whole
 * sentence: every arc into the final state is doubled into a joint state J
 * (its probability times jointProb; the arc that ends the sentence keeps the
 * rest), and J goes back to the start on a joint word (JOINT_WORDS). The
 * only arcs into the start state are J's, which is how fsg-walk.ts tells
 * them from a longer sentence. The sentence counts of arcProbabilities are
 * taken before, on the grammar without the joint (it has no cycle then).
 */
function serialise(f: PlainFsg, weights: FillerWeights, jointProb: number, decoys?: { first: ReadonlySet<string>; prob: number }): string {
  const probs = arcProbabilities(f, weights);
  if (decoys) priceDecoys(f, probs, decoys.first, decoys.prob);
  const joint = jointProb > 0 ? f.n : undefined;
  const lines = ['FSG_BEGIN homeagent', `NUM_STATES ${joint === undefined ? f.n : f.n + 1}`, `START_STATE ${f.start}`, `FINAL_STATE ${f.final}`];
  f.arcs.forEach(([from, to, w], i) => {
    const p = probs[i]!;
    if (joint === undefined || to !== f.final) return lines.push(`TRANSITION ${from} ${to} ${p.toPrecision(6)} ${w}`);
    lines.push(`TRANSITION ${from} ${to} ${(p * (1 - jointProb)).toPrecision(6)} ${w}`);
    lines.push(`TRANSITION ${from} ${joint} ${(p * jointProb).toPrecision(6)} ${w}`);
  });
  if (joint !== undefined) for (const [w, share] of JOINT_WORDS) lines.push(`TRANSITION ${joint} ${f.start} ${share.toPrecision(6)} ${w}`);
  lines.push('FSG_END', '');
  return lines.join('\n');
}
