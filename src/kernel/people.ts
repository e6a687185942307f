/**
 * Who is speaking (issue 18 "People"). Every input carries its speaker when
 * it is known, otherwise the prompt says "someone in the household":
 *
 * - given by the injector (`homeagent ask --as NAME`; a WebUI pairing link
 *   made for a person passes `user` with `user_via: 'pairing'`);
 * - said in the input itself: "this is Anna", "my name is Anna", "Anna
 *   here", "我叫安娜" (and "I'm Anna" / "我是安娜" for a person the household
 *   already knows); the speaker then holds for that channel (or the
 *   session a plugin names in `meta.session`) for core.people.speaker_ttl_min
 *   minutes after the last input of that session;
 * - never the channel's name (`console`, `cli`, `speaker` are channels, not
 *   people).
 *
 * A wrong name files facts under the wrong person, so an introduction is
 * taken only in plain forms and never when the word after "this is" is a
 * common word ("this is great", "this is the kitchen"). No IO here.
 */
import type { InputMessage, SpeakerVia } from './turn-types.js';
import { hasHan } from './language.js';

/** How the prompt names a speaker nobody identified. */
export const UNKNOWN_SPEAKER = 'someone in the household';

/** The graph entity that holds what an unidentified speaker said about themselves, by the language of what was said. */
export function unknownSpeakerEntity(text: string): string {
  return hasHan(text) ? UNKNOWN_SPEAKER_ZH : UNKNOWN_SPEAKER;
}

/** The Chinese name of the unidentified speaker's entity ("someone in the household"). */
export const UNKNOWN_SPEAKER_ZH = '家里某人';

/** A person's name is at most this many characters. */
export const MAX_PERSON_NAME = 60;

/** Words that follow "this is" / "I'm" without being a name ("this is great", "I'm the one"). */
const NOT_NAMES = new Set(
  `a an the it this that my your our his her their me him us them you i we they he she one someone somebody anyone nobody everyone what who
  not no so very too really just also only still even now here there then why how when where which again all some any more most much many
  going gonna getting trying being doing having taking making looking asking calling talking saying done fine ok okay good great bad nice cool
  awesome amazing terrible horrible weird strange wrong right true false fun funny silly stupid crazy ridiculous annoying boring cold hot warm
  late early enough important interesting perfect wonderful beautiful lovely sad happy tired busy ready sure sorry home back out in on off up
  down over about for from with without to of at by as and or but if because ok hello hi hey yes yeah nope exactly actually definitely
  probably maybe literally totally absolutely new old big small long short hard easy difficult possible impossible better worse best worst
  broken working useless helpful great loud quiet slow fast mine yours ours theirs something nothing everything anything kitchen bedroom
  living room light lamp door music song radio test testing speaking`.split(/\s+/),
);

const LATIN_NAME = "[A-Za-z][A-Za-z'’-]{1,24}";
const HAN_NAME = '[\\u4e00-\\u9fff·]{1,6}';

/** Title-case a Latin name ("anna maria" -> "Anna Maria"); Chinese unchanged. */
export function normalisePersonName(name: string): string {
  const n = name.normalize('NFKC').trim().replace(/\s+/g, ' ').replace(/’/g, "'");
  if (hasHan(n)) return n;
  return n.replace(/(^|[\s-])([a-z])/g, (_m, sep: string, c: string) => sep + c.toUpperCase());
}

/**
 * Check a person's name given by a user or a plugin (`--as NAME`,
 * `user`): returns it trimmed, or throws a TypeError naming what is wrong
 * (empty, too long, control characters, a channel's name).
 */
export function validatePersonName(name: unknown, what = 'person name'): string {
  if (typeof name !== 'string') throw new TypeError(`${what} must be a string, got ${typeof name}`);
  const n = name.normalize('NFKC').trim().replace(/\s+/g, ' ');
  if (n === '') throw new TypeError(`${what} is empty`);
  if (n.length > MAX_PERSON_NAME) throw new TypeError(`${what} is longer than ${MAX_PERSON_NAME} characters`);
  if (/[\p{Cc}\p{Cf}]/u.test(n)) throw new TypeError(`${what} contains control characters`);
  if (/^(?:console|cli|speaker|voice|_.*)$/i.test(n)) throw new TypeError(`${what} "${n}" is a channel's name, not a person's`);
  return n;
}

function plausibleLatin(words: string[]): boolean {
  return words.length >= 1 && words.length <= 2 && words.every((w) => !NOT_NAMES.has(w.toLowerCase()));
}

/**
 * The name an input introduces its speaker by, or undefined. `known(name)`
 * says whether the household already knows a person of that name. Forms
 * (after an optional "hi," / "hello," / "hey,"), the name at most two words
 * followed by the end, a comma or full stop, "and"/"but", or
 * "speaking"/"here":
 * - "my name is NAME" (any case: what follows is a name);
 * - "this is NAME", "it's NAME here": NAME written with a capital (typed,
 *   or a recogniser that capitalises names), or known — "this is
 *   hilarious" is not an introduction;
 * - "NAME here", "I'm NAME", "I am NAME", "it's NAME": known people only
 *   ("stay here");
 * - "我叫NAME", "我的名字是NAME"; "我是NAME", "这里是NAME" for known people only.
 * Common words (NOT_NAMES) are never names.
 */
export function speakerIntroduction(text: string, known: (name: string) => boolean = () => false): string | undefined {
  const t = text.normalize('NFKC').replace(/’/g, "'").trim();
  const greet = "^(?:(?:hi|hello|hey|good (?:morning|evening|afternoon))(?: there)?[,!.]?\\s+)?";
  const end = "(?:\\s+(?:speaking|here))?\\s*(?=[,.!?;]|\\s+(?:and|but)\\b|$)";
  const latin = `(${LATIN_NAME}(?:\\s+${LATIN_NAME})??)`;
  const tail = "\\s+(?:speaking|here)\\s*(?=[,.!?;]|$)";
  /** `name`: any case; `capital`: written with a capital, or known; `known`: known people only. */
  const en: Array<{ re: RegExp; needs: 'name' | 'capital' | 'known' }> = [
    { re: new RegExp(`${greet}my name is\\s+${latin}${end}`, 'i'), needs: 'name' },
    { re: new RegExp(`${greet}this is\\s+${latin}${end}`, 'i'), needs: 'capital' },
    { re: new RegExp(`${greet}(?:it's|it is)\\s+${latin}${tail}`, 'i'), needs: 'capital' },
    // "Ben here": the name starts the sentence, so a capital says nothing ("Stay here").
    { re: new RegExp(`${greet}${latin}${tail}`, 'i'), needs: 'known' },
    { re: new RegExp(`${greet}(?:it's|it is)\\s+${latin}\\s*(?=[,.!?;]|$)`, 'i'), needs: 'known' },
    { re: new RegExp(`${greet}(?:i'm|i am)\\s+${latin}${end}`, 'i'), needs: 'known' },
  ];
  for (const { re, needs } of en) {
    const m = re.exec(t);
    if (!m || !plausibleLatin(m[1]!.split(/\s+/))) continue;
    const name = normalisePersonName(m[1]!);
    if (needs === 'known' && !known(name)) continue;
    if (needs === 'capital' && !/^[A-Z]/.test(m[1]!) && !known(name)) continue;
    return name;
  }
  const zh: Array<{ re: RegExp; knownOnly: boolean }> = [
    { re: new RegExp(`^(?:你好[，,]?\\s*)?(?:我叫|我的名字是|我的名字叫)(${HAN_NAME})(?=[，。！？,.!?]|$)`, 'u'), knownOnly: false },
    { re: new RegExp(`^(?:你好[，,]?\\s*)?(?:这里是|我是)(${HAN_NAME})(?=[，。！？,.!?]|$)`, 'u'), knownOnly: true },
  ];
  for (const { re, knownOnly } of zh) {
    const m = re.exec(t);
    if (!m) continue;
    const name = m[1]!;
    if (NOT_ZH_NAME.test(name) || (knownOnly && !known(name))) continue;
    return name;
  }
  return undefined;
}

/** What follows 我叫 without being a name: 叫 is also "to order / call for" (我叫外卖, 我叫了车). */
const NOT_ZH_NAME = /^(?:[了个过你他她它人车]|外卖|出租|快递|救护车|醒)/u;

/** The speaker an input ends up with. */
export interface ResolvedSpeaker {
  user?: string;
  user_via?: SpeakerVia;
}

/**
 * The speaker of each channel or session, for a while (core.people.speaker_ttl_min):
 * set when an input says who is speaking, renewed by every input of that
 * session, forgotten `ttlMs` after the last one. In memory only (a restart
 * forgets who was talking, as a person would expect after a reboot).
 */
export class SpeakerSessions {
  private readonly sessions = new Map<string, { name: string; until: number }>();

  /**
   * @param now wall time, ms since epoch (the kernel's clock)
   * @param ttlMs how long a session keeps its speaker after its last input, ms
   * @param known whether the household knows a person by that name (for "I'm Anna")
   */
  constructor(
    private readonly now: () => number,
    private readonly ttlMs: () => number,
    private readonly known: (name: string) => boolean = () => false,
  ) {}

  /** The session an input belongs to: the plugin's `meta.session` when it names one, else its channel. */
  static keyOf(input: Pick<InputMessage, 'channel' | 'meta'>): string {
    const s = input.meta?.session;
    return typeof s === 'string' && s !== '' ? `${input.channel}#${s}` : input.channel;
  }

  /**
   * Resolve the speaker of an input about to enter the agent: the one given
   * (`given`, `pairing`), else the one the text introduces (`said`, and the
   * session remembers it), else the session's (`session`), else none.
   */
  resolve(input: Pick<InputMessage, 'channel' | 'meta' | 'text'>, given?: { user?: string; user_via?: SpeakerVia }): ResolvedSpeaker {
    const key = SpeakerSessions.keyOf(input);
    const now = this.now();
    if (given?.user) return { user: given.user, user_via: given.user_via ?? 'given' };
    const said = speakerIntroduction(input.text, this.known);
    if (said) {
      this.sessions.set(key, { name: said, until: now + this.ttlMs() });
      return { user: said, user_via: 'said' };
    }
    const s = this.sessions.get(key);
    if (s && s.until > now) {
      s.until = now + this.ttlMs();
      return { user: s.name, user_via: 'session' };
    }
    if (s) this.sessions.delete(key);
    return {};
  }

  /** The speaker a session has now, if any (for status and tests). */
  current(key: string): string | undefined {
    const s = this.sessions.get(key);
    return s && s.until > this.now() ? s.name : undefined;
  }
}
