/**
 * The sentence template language, a small subset of Home Assistant's hassil
 * syntax (https://github.com/home-assistant/hassil):
 *   (a|b)            alternatives
 *   [x]              optional, same as (x|)
 *   {name} {area}    slot filled from a list (the vocabulary, or a list of the template set)
 *   {slot:list}      slot `slot` filled from list `list`
 *   {slot:0-100}     slot `slot` filled from a number in that range (spoken or digits)
 *   <rule>           expansion rule of the template set
 * Literal words are tokenised with the same normaliser as the input, so
 * "turn on" and "把{name}打开" both become token sequences.
 */
import { tokenise, type IntentLanguage } from './normalise.js';
import { HomeAgentError } from '../kernel/errors.js';

/** One node of a parsed template. */
export type TemplateNode =
  | { kind: 'word'; token: string }
  | { kind: 'seq'; items: TemplateNode[] }
  | { kind: 'alt'; options: TemplateNode[] }
  | { kind: 'slot'; slot: string; list: string }
  | { kind: 'range'; slot: string; min: number; max: number }
  | { kind: 'rule'; name: string };

/** A value of a template list: what is said (`in`) and what the slot gets (`out`). */
export interface ListValue {
  in: string;
  out: string | number;
  /** More slots this value sets besides the list's own slot (e.g. the singular word said: { device: 'lamp' }). */
  slots?: Readonly<Record<string, string | number>>;
}

/** A named list of a template set. */
export interface TemplateList {
  /** Fixed values. */
  values?: Array<string | ListValue>;
  /**
   * Free text: the matcher takes any words here (a city, a shopping item).
   * A grammar cannot take free text, so it uses `grammarValues` instead.
   */
  wildcard?: boolean;
  /** Values offered to the speech grammar for a wildcard list. */
  grammarValues?: string[];
  /**
   * Words a wildcard never takes: the joints between two commands said in
   * one breath ("and", "then"), so "turn on the tv and lock the door" is not
   * one command about a device called "tv and lock the door".
   */
  stopWords?: string[];
  /** Most words a wildcard takes (matcher.ts); default 8, a device name's length. */
  maxWords?: number;
  /**
   * In the speech grammar, a loop of the acoustic model's phones stands
   * here instead of values (src/intents/filler.ts): room for a name the
   * grammar does not have.
   */
  grammarFiller?: boolean;
  /**
   * With grammarFiller: the speech grammar here also holds the home's whole
   * names that have one of these words ("door": the Front Door lock after
   * "close"), so that such a name is heard as said, not as the nearest name
   * the sentence's named twin takes. Only names with these words: every
   * whole name here took names the home lacks ("unlock the back door" heard
   * as "unlock the outdoor humidity").
   */
  grammarNamesWith?: string[];
}

/** Which vocabulary entities a group's {name} slot may name. */
export interface NameRequirement {
  /** HA components (light, lock, cover, ...). */
  domains?: string[];
  /** Sensor / binary_sensor device_class values accepted as well. */
  sensorClasses?: string[];
}

/** One family of sentences for one intent. */
export interface IntentTemplateGroup {
  intent: string;
  sentences: string[];
  /** Slots every match of this group gets (e.g. { domain: 'light' }). */
  slots?: Record<string, string | number>;
  /** Restricts {name}; absent: every entity. */
  requires?: NameRequirement;
  /** False: the matcher only (free text that no grammar can hold). Default true. */
  grammar?: boolean;
  /**
   * 'continuation': a fragment that only means something right after a
   * command acted on at its pause ("turn on the bed light … to fifty
   * percent"): a sentence of the continuation grammar (grammar.ts
   * continuationFsg), only matched when matchIntent is told so
   * (MatchOptions.continuation); in the command grammar a path that the
   * judge refuses (reason 'fragment', fsg.ts buildFsg), in the compound
   * grammar and the JSGF not at all. Absent: everywhere.
   */
  context?: 'continuation';
}

/** All templates of one language. */
export interface TemplateSet {
  language: IntentLanguage;
  /** Expansion rules, referenced as <rule>. */
  rules: Record<string, string>;
  /** Lists, referenced as {list} or {slot:list}. `name`, `area` and `list` come from the vocabulary. */
  lists: Record<string, TemplateList>;
  intents: IntentTemplateGroup[];
}

/** A template that does not parse (unbalanced brackets, bad slot). */
export class TemplateSyntaxError extends HomeAgentError {
  constructor(readonly template: string, message: string) {
    super('TEMPLATE_SYNTAX', `template "${template}": ${message}`);
  }
}

const SPECIAL = new Set(['(', ')', '[', ']', '|', '{', '}', '<', '>']);

/**
 * Parse one template sentence into a node tree. Throws TemplateSyntaxError.
 * Example: parseTemplate('(turn|switch) on [the] {name}', 'en').
 */
export function parseTemplate(template: string, language: IntentLanguage): TemplateNode {
  let pos = 0;
  const src = template;

  function literal(text: string): TemplateNode[] {
    return tokenise(text, language).map((token) => ({ kind: 'word', token }) as const);
  }

  function parseAlt(close: string | null): TemplateNode {
    const options: TemplateNode[] = [parseSeq()];
    while (src[pos] === '|') {
      pos++;
      options.push(parseSeq());
    }
    if (close !== null) {
      if (src[pos] !== close) throw new TemplateSyntaxError(template, `expected "${close}" at ${pos}`);
      pos++;
    } else if (pos < src.length) {
      throw new TemplateSyntaxError(template, `unexpected "${src[pos]}" at ${pos}`);
    }
    return options.length === 1 ? options[0]! : { kind: 'alt', options };
  }

  function parseSeq(): TemplateNode {
    const items: TemplateNode[] = [];
    let text = '';
    const flush = (): void => {
      if (text.trim()) items.push(...literal(text));
      text = '';
    };
    while (pos < src.length) {
      const c = src[pos]!;
      if (c === '|' || c === ')' || c === ']') break;
      if (!SPECIAL.has(c)) {
        text += c;
        pos++;
        continue;
      }
      flush();
      pos++;
      if (c === '(') items.push(parseAlt(')'));
      else if (c === '[') items.push({ kind: 'alt', options: [parseAlt(']'), { kind: 'seq', items: [] }] });
      else if (c === '{') items.push(parseSlot());
      else if (c === '<') items.push(parseRule());
      else throw new TemplateSyntaxError(template, `unexpected "${c}" at ${pos - 1}`);
    }
    flush();
    return items.length === 1 ? items[0]! : { kind: 'seq', items };
  }

  function readUntil(end: string): string {
    const stop = src.indexOf(end, pos);
    if (stop < 0) throw new TemplateSyntaxError(template, `missing "${end}"`);
    const body = src.slice(pos, stop).trim();
    pos = stop + 1;
    return body;
  }

  function parseSlot(): TemplateNode {
    const body = readUntil('}');
    const [slot, spec] = body.split(':').map((s) => s.trim());
    if (!slot || !/^[a-z_][a-z0-9_]*$/.test(slot)) throw new TemplateSyntaxError(template, `bad slot "{${body}}"`);
    if (spec === undefined) return { kind: 'slot', slot, list: slot };
    const range = /^(\d+)-(\d+)$/.exec(spec);
    if (range) return { kind: 'range', slot, min: Number(range[1]), max: Number(range[2]) };
    if (!/^[a-z_][a-z0-9_]*$/.test(spec)) throw new TemplateSyntaxError(template, `bad list "${spec}"`);
    return { kind: 'slot', slot, list: spec };
  }

  function parseRule(): TemplateNode {
    const name = readUntil('>');
    if (!/^[a-z_][a-z0-9_]*$/.test(name)) throw new TemplateSyntaxError(template, `bad rule "<${name}>"`);
    return { kind: 'rule', name };
  }

  return parseAlt(null);
}

/** Parse every rule of a set once: name -> node. Throws TemplateSyntaxError. */
export function parseRules(set: TemplateSet): Map<string, TemplateNode> {
  const out = new Map<string, TemplateNode>();
  for (const [name, body] of Object.entries(set.rules)) out.set(name, parseTemplate(body, set.language));
  return out;
}
