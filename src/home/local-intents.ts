/**
 * Local intents: what a matched sentence (src/intents, Home Assistant intent
 * names and slots) does in this home, executed directly without the LLM and
 * answered in one short sentence (English or Chinese). Targets are found by
 * name or by room + domain in the registry; unavailable devices are named,
 * not commanded; risky actions (unlock, garage open, settings' risky list)
 * ask first through the confirmation gate and run only on a yes. Intents the
 * home cannot serve (weather, media without a media player) are answered
 * plainly; intents this module does not handle return undefined (LLM).
 * Source for intent semantics: Home Assistant's built-in intents
 * (homeassistant/helpers/intent.py, home-assistant/intents sentences).
 */
import type { Logger } from '../kernel/log-types.js';
import type { IntentMatch, IntentSlots, Vocabulary } from '../intents/types.js';
import type { Clock } from '../kernel/clock.js';
import type { TimerService } from '../plugins/timers/timer-service.js';
import type { ListService } from '../plugins/lists/list-service.js';
import { TIMER_INTENTS, TimerIntents } from './timer-intents.js';
import { LIST_INTENTS, handleListIntent, listActPhrase, listClearPhrase, listCleared } from './list-intents.js';
import { isListName, type ListName } from '../plugins/lists/list-service.js';
import type { ActionName, DeviceAction } from './commands.js';
import { normaliseAction } from './commands.js';
import { MAY_STILL_ARRIVE } from './mqtt-client.js';
import type { ConfirmationGate } from './confirm.js';
import type { HomeController } from './controller.js';
import type { Entity } from './entities.js';
import { HomeError } from './errors.js';
import type { DeviceRegistry } from './registry.js';
import { resolveTarget, targetsOf, type Resolution } from './resolve.js';
import { ACTIVATABLE, NAME_FREE, ON_OFF_DOMAINS, PREVIOUS_TARGET } from '../intents/templates-en.js';
import { NAME_UNHEARD } from '../intents/filler.js';
import { ANSWER_INTENTS } from '../intents/fsg.js';
import { actionPhrase, areaName, cap, COLOUR_RGB, colourName, count, describeState, done, joinNames, num, the, theNamed, toLang, verb, type Lang } from './replies.js';
import type { ReportWatch } from './report-watch.js';

/**
 * The matcher's signature (src/intents/index.ts `matchIntent`): null or
 * undefined when the sentence is not a command of the grammar.
 */
export type IntentMatcher = (text: string, vocab: Vocabulary, language?: 'en' | 'zh') => IntentMatch | null | undefined | Promise<IntentMatch | null | undefined>;

/** Dependencies of LocalIntents. */
export interface LocalIntentDeps {
  registry: DeviceRegistry;
  controller: HomeController;
  gate: ConfirmationGate;
  /** The timers service, when the timers plugin runs. */
  timers: () => TimerService | undefined;
  /** The shopping/to-do lists service, when the lists plugin runs. */
  lists?: () => ListService | undefined;
  /** How long a "which timer?" question waits for its answer, ms (default 15000). */
  choiceTimeoutMs?: () => number;
  clock: Clock;
  /** IANA time zone for time/date answers (undefined: the system's). */
  timeZone: () => string | undefined;
  log: Logger;
  /** The box's own room: "turn off the lights" without a room addresses it (absent or empty: the whole home). */
  ownArea?: () => string | undefined;
  /** Watches that the devices commanded report back (report-watch.ts); absent: not watched. */
  reportWatch?: ReportWatch;
}

/** Who asked and where the answer goes. */
export interface IntentRequest {
  who: string;
  channel: string;
  /** Reply language (the match's language). */
  lang?: Lang;
  /** The turn's stop signal: once aborted, nothing is commanded or started. */
  signal?: AbortSignal;
  /**
   * Place the command without acting (handleAll): resolve its targets and
   * check its values, then stop where it would command a device, start or
   * cancel a timer, or ask for a yes.
   */
  dryRun?: boolean;
  /**
   * Every action of this command asks for a yes first, as a risky one does:
   * the recogniser could not tell its verb from the opposite
   * (IntentMatch.unsure_between).
   */
  askFirst?: boolean;
  /**
   * The command was heard (the speech recogniser's match), not typed: one
   * that names no device and no room yet reaches several devices asks first
   * (run). A recogniser that drops a name widens it: a tester's "turn off the
   * party lights" and "the hall lights" were heard as "turn off (all of) the
   * lights" and switched off all six lights of the home (5 of 15).
   */
  heard?: boolean;
  /**
   * Collect the yes/no questions of this command here instead of asking
   * them (handleAll): two commands in one breath that each need a yes are
   * one question, so one yes runs both. Asked one by one, the second
   * question superseded the first and a yes ran only the last ("turn off the
   * lights and unlock the front door": the lights stayed on).
   */
  asks?: PendingAsk[];
}

/**
 * A command that waits for a yes (run): what it does as the box says it
 * ("unlock the Front Door"), for the decision log (`what`), and how it runs.
 */
interface PendingAsk {
  who: string;
  channel: string;
  lang: Lang;
  /** "unlock the Front Door" / "解锁前门". */
  spoken: string;
  /** "unlock Front Door" (DecisionRecord.what). */
  what: string;
  /** Runs the command; resolves to its reply. */
  execute: () => Promise<string>;
}

/** A state question waits at most this long (real time) for the report of a device commanded just before, ms (LocalIntents.reportsOf). */
const STATE_REPORT_WAIT_MS = 1500;
/** A command older than this (clock ms) with no report since is not waited for: the device does not report. */
const RECENT_COMMAND_MS = 5000;

/** What a dry run returns where the real run would act. */
const WOULD_ACT = '\u0000would act';

const STATE_WORDS: Record<string, string> = {
  locked: 'locked', unlocked: 'unlocked', open: 'open', opened: 'open', closed: 'closed', on: 'on', off: 'off',
  锁上: 'locked', 锁好: 'locked', 锁: 'locked', 锁着: 'locked', 解锁: 'unlocked', 开着: 'on', 关着: 'off', 打开: 'on', 关闭: 'off', 开: 'on', 关: 'off',
};

/** Components an on/off sentence can act on (the on/off, scene, script and button templates' domains). */
const ON_OFF_COMPONENTS = new Set([...ON_OFF_DOMAINS, ...ACTIVATABLE]);

/**
 * The state a lock or cover action leaves its device in (entities.ts
 * EntityState: lock 'locked'/'unlocked', cover 'open'/'closed'). A device
 * whose last report says it is already there is neither asked about nor sent
 * the command again when the action would ask first ("The Front Door is
 * already unlocked."): a newcomer's "unlock the front door" on an unlocked
 * door asked for a yes and sent UNLOCK. A cover counts as open only fully
 * open (position 100 or none reported): "open the garage door" on a garage
 * door half open opens it.
 */
const STATE_AFTER: Partial<Record<ActionName, string>> = { lock: 'locked', unlock: 'unlocked', open: 'open', close: 'closed' };

/** A pronoun said where a device's name stands ("turn it on" with nothing before it to stand for). */
const PRONOUN_NAME = /^(?:it|them|that|this|those|these|它们?)$/i;

/**
 * The lock or cover two of `matches` give opposite commands (HassTurnOn and
 * HassTurnOff with slots.domain lock or cover: lock/unlock, open/close, on
 * the same device: the one `deviceOf` resolves the name to, else the same
 * slots.name), as "the Front Door"; undefined when none do. Not
 * lights and switches: "turn the tv off and on" is a power cycle, and neither
 * part asks, so they run in the order said.
 */
function contradiction(matches: readonly IntentMatch[], deviceOf: (m: IntentMatch) => Entity | undefined = () => undefined): string | undefined {
  const seen = new Map<string, string>();
  for (const m of matches) {
    if ((m.intent !== 'HassTurnOn' && m.intent !== 'HassTurnOff') || typeof m.slots.name !== 'string') continue;
    if (m.slots.domain !== 'lock' && m.slots.domain !== 'cover') continue;
    // A pronoun standing for nothing names no device ("lock it and unlock it" alone): placing it says so.
    if (PRONOUN_NAME.test(m.slots.name)) continue;
    // The device the name resolves to, so that a part of its name is the same device: a tester's "unlock the front
    // door and lock the front" locked the door at once and then asked to unlock it.
    const device = deviceOf(m);
    const key = device ? `id:${device.id}` : m.slots.name.toLowerCase();
    const before = seen.get(key);
    if (before !== undefined && before !== m.intent) return device ? `the ${device.name}` : `the ${m.slots.name}`;
    seen.set(key, m.intent);
  }
  return undefined;
}

/** Ordinal words of an answer to "which one?" (1-based; -1 the last). */
const ORDINALS: Record<string, number> = { first: 1, second: 2, third: 3, fourth: 4, last: -1, 第一个: 1, 第二个: 2, 第三个: 3, 最后一个: -1 };
/** Words of an answer that name nothing ("the", "one", "I mean"). */
const CHOICE_FILLER = new Set(['the', 'one', 'i', 'mean', 'please', 'that', 'oh', 'um', 'no', 'a', '那个', '的']);

/** Lower-case words of `s` (letters and digits), for comparing names. */
function nameWords(s: string): string[] {
  return s.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim().split(' ').filter(Boolean);
}

/**
 * The one device of `candidates` (in the order the question named them) that
 * `text` picks, or undefined when it picks none or several: a whole name or
 * alias, an ordinal ("the second one"), or content words every one of which
 * only that device's name, aliases, room or kind hold ("the lamp", "the
 * kitchen one"; "the light" picks none of two lights).
 */
export function pickCandidate(text: string, candidates: readonly Entity[]): Entity | undefined {
  const said = nameWords(text).join(' ');
  if (!said) return undefined;
  const whole = candidates.filter((e) => [e.name, ...e.aliases].some((n) => ` ${said} `.includes(` ${nameWords(n).join(' ')} `)));
  if (whole.length === 1) return whole[0];
  const words = nameWords(text).filter((w) => !CHOICE_FILLER.has(w));
  const ord = words.length === 1 && Object.hasOwn(ORDINALS, words[0]!) ? ORDINALS[words[0]!] : undefined;
  if (ord !== undefined) return ord === -1 ? candidates.at(-1) : candidates[ord - 1];
  if (words.length === 0) return undefined;
  const fits = candidates.filter((e) => {
    // Its kind too: "the light" fits every light asked about, though only one has the word in its name.
    const own = new Set([e.name, ...e.aliases, e.area ?? '', e.component, e.device_class ?? ''].flatMap(nameWords));
    return words.every((w) => own.has(w) || own.has(w.replace(/s$/, '')));
  });
  return fits.length === 1 ? fits[0] : undefined;
}

function lower(s: string | undefined): string {
  return (s ?? '').trim().toLowerCase();
}

/** An open "Which one do you mean: A or B?" about devices: the command, and the devices in the order asked. */
interface DeviceQuestion {
  match: IntentMatch;
  candidates: Entity[];
  channel: string;
  /** Clock.now() after which the question is dropped. */
  until: number;
}

/**
 * How long after a command switched lights on (or set them) a continuation
 * fragment ("… to fifty percent") may still set those lights, ms. The
 * fragment is only heard in the utterance right after a command acted on at
 * its pause (templates-en.ts PREVIOUS_TARGET), which starts within
 * plugin.voice's continuation wait; this bounds it again here.
 */
export const PREVIOUS_TARGET_WINDOW_MS = 15_000;

/** The lights the last command acted on switched on or set, for a continuation fragment (PREVIOUS_TARGET). */
interface LitTargets {
  channel: string;
  /** Entity ids acted on. */
  ids: string[];
  /** The command's name and room, for the reply's wording ("the 2 lights in the office"). */
  slots: IntentSlots;
  /** clock.now() when they were acted on, ms. */
  at: number;
}

/**
 * `m` with its `here` slot ("in here": the box's own room, speech-to-phrase's
 * English) read as `area` = `ownArea` (plugin.home.area); with no room set,
 * as if no room was said (LocalIntents.handle answers such a command itself:
 * it does not know its room). A tester's "turn off the lamp in here", the box in
 * the Kitchen, switched off the Living Room Lamp: "the lamp" with no room is
 * the one lamp of the home, but "in here" said which room.
 */
export function inHere(m: IntentMatch, ownArea: string | undefined): IntentMatch {
  if (m.slots.here === undefined) return m;
  const { here: _here, ...slots } = m.slots;
  const area = ownArea?.trim();
  return { ...m, slots: { ...slots, ...(area && slots.area === undefined ? { area } : {}) } };
}

/** See module comment. */
export class LocalIntents {
  /** Set while handling when the reply says the command could not be placed (not found, ambiguous, a device that can't). */
  private unplaced = false;
  /** The devices a dry run (handleAll) would have asked "which one?" about. */
  private dryRunFits: Entity[] | undefined;
  /** What the last command switched on or set, when it was that (any other command clears it): PREVIOUS_TARGET. */
  private lit: LitTargets | undefined;
  private readonly timerIntents: TimerIntents;
  /** The devices of the last "which one?" asked while handling (set by unresolved, taken by handle). */
  private askedAbout: Entity[] | undefined;
  private deviceQuestion: DeviceQuestion | undefined;

  /** Devices commanded and not heard from since (entity id -> when commanded, clock ms): their state may be the old one. */
  private readonly unreported = new Map<string, number>();
  /** Who waits for a device's report (getState): called on any state change. */
  private readonly reportWaiters = new Set<() => void>();

  constructor(private readonly d: LocalIntentDeps) {
    this.timerIntents = new TimerIntents({ timers: d.timers, clock: d.clock, ...(d.choiceTimeoutMs ? { choiceTimeoutMs: d.choiceTimeoutMs } : {}) });
    d.registry.onChange((c) => {
      if (c.kind !== 'state') return;
      this.unreported.delete(c.id);
      for (const w of [...this.reportWaiters]) w();
    });
  }

  /**
   * Wait until none of `ids` commanded within RECENT_COMMAND_MS is still
   * unreported, or STATE_REPORT_WAIT_MS (real time) has passed: a state
   * question right after a command is answered from the device's report of
   * it, not from the state before. A newcomer's piped "unlock the front
   * door", "yes", "is the front door locked" was answered "Yes, the Front
   * Door is locked." (the demo lock had not reported yet).
   */
  private async reportsOf(ids: readonly string[]): Promise<void> {
    const now = this.d.clock.now();
    const waiting = (): boolean => ids.some((id) => {
      const at = this.unreported.get(id);
      return at !== undefined && now - at <= RECENT_COMMAND_MS;
    });
    if (!waiting()) return;
    await new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        this.reportWaiters.delete(check);
        resolve();
      };
      const check = (): void => {
        if (!waiting()) done();
      };
      const timer = setTimeout(done, STATE_REPORT_WAIT_MS);
      this.reportWaiters.add(check);
    });
  }

  /** True while a question of ours ("which timer?", "For how long?", "which one do you mean?") waits for its answer. */
  get asking(): boolean {
    return this.timerIntents.asking || this.timerIntents.askingLength || (this.deviceQuestion !== undefined && this.d.clock.now() <= this.deviceQuestion.until);
  }

  /** True while a "which timer?" question waits for its answer. */
  get askingWhichTimer(): boolean {
    return this.timerIntents.asking;
  }

  /** True while a "which one do you mean?" question about devices asked on `channel` waits for its answer. */
  askingWhichDevice(channel: string): boolean {
    const q = this.deviceQuestion;
    return q !== undefined && q.channel === channel && this.d.clock.now() <= q.until;
  }

  /** An input that is no command of ours arrived: an open "which timer?" or "which one?" question is dropped (the person moved on). */
  forgetQuestion(): void {
    this.timerIntents.forget();
    this.deviceQuestion = undefined;
  }

  /**
   * The answer to "Which one do you mean: the Kitchen Light or the Living
   * Room Lamp?" on the channel it was asked on, within choiceTimeoutMs: the
   * words name exactly one of the devices asked about (its name or an alias,
   * "the first one" / "the second" / "the last one", or words only its name,
   * room or kind hold: "the lamp", "the kitchen one"), and the command runs on
   * it; the reply is the command's. Undefined when no such question is open
   * there or the words fit none or several of them (the question is then
   * dropped and the input goes on as any other). Without it, with no
   * language model, a newcomer's "the lamp" after the question got "I can't
   * reach my language model"; timers have their own (TimerChoice).
   */
  async answerChoice(text: string, req: IntentRequest): Promise<string | undefined> {
    const q = this.deviceQuestion;
    if (!q || q.channel !== req.channel || this.d.clock.now() > q.until) return undefined;
    this.deviceQuestion = undefined;
    const chosen = pickCandidate(text, q.candidates);
    if (!chosen) return undefined;
    const { [NAME_FREE]: _free, area: _area, device: _device, device_class: _class, name: _name, ...rest } = q.match.slots;
    const slots: IntentSlots = { ...rest, name: chosen.name, domain: chosen.component };
    return this.handle({ ...q.match, slots, text: `${q.match.text} (${chosen.name})` }, { ...req, lang: req.lang ?? toLang(q.match.language) });
  }

  /**
   * Two (or more) commands said in one breath (compound.ts cut them; each
   * half matched): every part is placed first, and only when all are does
   * any act, in the order said (issue 15). A part that needs a yes asks for
   * itself as it would alone; its question comes last in the reply, so it
   * is what the person answers. A part that cannot be placed (a name the
   * home lacks, several devices fit, a device that cannot do it) stops them
   * all, and the reply says which part it did not get. Undefined (the LLM)
   * when no part is a local command at all.
   */
  async handleAll(all: ReadonlyArray<{ match: IntentMatch; text: string }>, req: IntentRequest): Promise<string | undefined> {
    // One command said twice in a row ("unlock the front door and unlock the front door") is done once, and asked
    // once. Only in a row: with another command between, the repeat is what the device ends with (a tester's "turn on
    // the tv and turn it off, then turn it on" left the TV off, the last "on" dropped as said before).
    const keyOf = (p: { match: IntentMatch }): string => JSON.stringify([p.match.intent, Object.entries(p.match.slots).sort(([a], [b]) => a.localeCompare(b))]);
    const parts = all.filter((p, i) => i === 0 || keyOf(p) !== keyOf(all[i - 1]!));
    if (parts.length === 0) return undefined;
    const lang = req.lang ?? toLang(parts[0]!.match.language);
    // One device told to do a thing and its opposite ("unlock the front door and lock the front door"): neither. Done
    // in order, the part that asks for a yes ran last and a yes left the door unlocked (a tester's finding).
    const clash = contradiction(
      parts.map((p) => p.match),
      (m) => {
        const r = this.resolve(m.slots);
        return r.kind === 'one' ? r.entity : undefined;
      },
    );
    if (clash) return lang === 'zh' ? `这句话让${clash.replace(/^the /, '')}既开又关，所以都没做。` : `That asks ${clash} to do a thing and its opposite, so I did neither.`;
    const neither = lang === 'zh' ? (parts.length === 2 ? '所以两件都没做。' : '所以都没做。') : parts.length === 2 ? 'So I did neither.' : 'So I did none of them.';
    for (const p of parts) {
      this.unplaced = false;
      const r = await this.handle(p.match, { ...req, lang, dryRun: true });
      if (r === undefined) return lang === 'zh' ? `我没听懂“${p.text}”，${neither}` : `I didn't get "${p.text}". ${neither}`;
      // Several devices fit a part: said, not asked, since the question would be kept for no command (a tester's
      // answer "the reading lamp" went to the LLM after "Which one do you mean: ...? So I did neither.").
      const fits = this.dryRunFits;
      this.dryRunFits = undefined;
      if (this.unplaced && fits?.length) {
        const names = fits.map((e) => the(e, lang));
        const last = names.pop() as string;
        return lang === 'zh' ? `我不确定“${p.text}”说的是${names.join('、')}还是${last}，${neither}` : `I don't know which you meant in "${p.text}": ${names.join(', ')} or ${last}. ${neither}`;
      }
      if (this.unplaced) return lang === 'zh' ? `${r}${neither}` : `${r} ${neither}`;
    }
    const said: string[] = [];
    const questions: string[] = [];
    const asks: PendingAsk[] = [];
    for (const p of parts) {
      if (req.signal?.aborted) break;
      const before = asks.length;
      const r = await this.handle(p.match, { ...req, lang, asks });
      // A part that waits for a yes is asked below, with any other such part, in one question; what it did at
      // once (the devices of it that need no yes) is said here.
      if (asks.length > before) {
        if (r) said.push(r);
        continue;
      }
      if (r) (/[?？]\s*(please say yes or no\.|请说是或不。)?$/i.test(r) ? questions : said).push(r);
    }
    if (asks.length) questions.push(this.ask(asks));
    return [...said, ...questions].join(lang === 'zh' ? '' : ' ');
  }

  /**
   * Ask one yes/no question for every command of `asks` (one, or the parts
   * of two commands in one breath that each need a yes): a yes runs them in
   * the order said, a no or no answer runs none. Returns the question, the
   * turn's reply (the gate does not deliver it: ConfirmRequest.deliver).
   */
  private ask(asks: PendingAsk[]): string {
    const first = asks[0]!;
    const zh = first.lang === 'zh';
    const spoken = asks.map((a) => a.spoken);
    // A comma before the last "and"/"or" when a part has an "and" of its own ("the Office Ceiling and the desk lamp").
    const comma = spoken.length > 2 || spoken.some((x) => / and /.test(x)) ? ',' : '';
    const doing = zh ? spoken.join('，并且') : spoken.join(`${comma} and `);
    const question = zh ? `确定要${doing}吗？请说是或不。` : `Do you really want to ${doing}? Please say yes or no.`;
    const declined = zh ? `好的，没有${spoken.join('，也没有')}。` : `OK, I did not ${spoken.join(`${comma} or `)}.`;
    void this.d.gate.request({
      who: first.who,
      what: asks.map((a) => a.what).join('; '),
      spoken: doing,
      channel: first.channel,
      question,
      lang: first.lang,
      deliver: false,
      followUp: async (yes) => {
        if (!yes) return declined;
        const replies: string[] = [];
        for (const a of asks) replies.push(await a.execute());
        return replies.filter(Boolean).join(zh ? '' : ' ');
      },
    });
    return question;
  }

  /**
   * Execute `match`; resolves to the spoken reply, or undefined to leave the
   * input to the LLM. A request whose `signal` is aborted (the turn was
   * stopped) does nothing and resolves undefined.
   */
  async handle(match: IntentMatch, req: IntentRequest): Promise<string | undefined> {
    if (req.signal?.aborted) return undefined;
    const lang = req.lang ?? toLang(match.language);
    // "In here" with no room of the box's own is no room it knows: asked, not the whole home (a breaking tester's
    // "open the windows in here" opened every window of the home, "turn off the lights in here" all 70 lights).
    if (match.slots.here !== undefined && !this.d.ownArea?.()?.trim() && match.slots.area === undefined) {
      this.unplaced = true;
      return lang === 'zh' ? '我不知道自己在哪个房间。请说出房间名，或用 homeagent config set plugin.home.area 设置。' : "I don't know which room I'm in. Say the room, or set mine with homeagent config set plugin.home.area.";
    }
    match = inHere(match, this.d.ownArea?.());
    if (match.unsure_between) req = { ...req, askFirst: true };
    // A continuation fragment sets the lights the command just before it switched on; anything else forgets them.
    const previous = this.lit;
    if (!req.dryRun) this.lit = undefined;
    if (match.slots[PREVIOUS_TARGET] !== undefined) return this.setPrevious(match.slots, previous, req, lang);
    if (TIMER_INTENTS.has(match.intent)) {
      if (!req.dryRun) {
        // A doubted timer command asks first, as a doubted device command does: the recogniser's doubt
        // (unsure_between) said a yes comes before anything changes, and a timer started, cancelled or paused on
        // a mishearing is a wrong action too. One that would change nothing (no such timer, which of two) says so.
        if (req.askFirst && !ANSWER_INTENTS.has(match.intent)) {
          // A new command drops an open "which timer?" as any other does: its answer would act after this one's no
          // (a tester's "the first one" cancelled a timer after "no" to a doubted pause).
          this.timerIntents.forget();
          const placed = this.timerIntents.place(match.intent, match.slots, lang);
          // Nothing to change ("cancel all timers" with none running): said so, not asked.
          if (placed === 'act' && match.intent !== 'HassStartTimer' && this.timerIntents.targets(match.intent, match.slots).length === 0) return this.timerIntents.handle(match.intent, match.slots, req.channel, lang);
          if (placed === 'act') return this.askTimer(match, req, lang);
          // A doubted command opens no "which timer?" or "for how long?": its answer would act with no yes (a
          // tester's "i cancelled the timer", two timers running, then "the first one" cancelled one).
          if (/[?？]$/.test(placed)) {
            return lang === 'zh' ? '抱歉，我不确定听到的是什么，所以什么也没做。请再说一遍。' : "Sorry, I'm not sure what I heard, so I did nothing. Please say it again.";
          }
          if (placed !== 'answer') return placed;
        }
        return this.timerIntents.handle(match.intent, match.slots, req.channel, lang);
      }
      const placed = this.timerIntents.place(match.intent, match.slots, lang);
      if (placed === 'act') return WOULD_ACT;
      if (placed === 'answer') return placed;
      this.unplaced = true;
      return placed;
    }
    // Any other command: an open "which timer?" or "which one?" question is not being answered.
    if (!req.dryRun) {
      this.timerIntents.forget();
      this.deviceQuestion = undefined;
    }
    this.askedAbout = undefined;
    const reply = await this.device(match, req, lang);
    // A dry run keeps the devices it would have asked about (handleAll says them instead of asking).
    if (req.dryRun) this.dryRunFits = this.askedAbout;
    // It asked which device: the answer may come next ("the lamp"; answerChoice).
    if (!req.dryRun && this.askedAbout) {
      const ms = this.d.choiceTimeoutMs?.() ?? 15_000;
      this.deviceQuestion = { match, candidates: this.askedAbout, channel: req.channel, until: this.d.clock.now() + ms };
    }
    this.askedAbout = undefined;
    return reply;
  }

  /**
   * Ask for a yes before a timer command (a start, cancel, pause, resume or
   * change that TimerIntents.place would act on), in the words it was heard
   * in: "Do you really want to set a timer for 5 minutes?". The yes runs it
   * on the timers it was about (TimerIntents.targets and runOn); two commands in one breath
   * (`req.asks`) collect it into their one question.
   */
  private askTimer(match: IntentMatch, req: IntentRequest, lang: Lang): string {
    const doing = match.text.trim().replace(/[.!?。！？]+$/u, '');
    // The yes acts on the timers the question was about, not on whichever fit by then.
    const ids = this.timerIntents.targets(match.intent, match.slots);
    const ask: PendingAsk = { who: req.who, channel: req.channel, lang, spoken: doing, what: doing, execute: async () => this.timerIntents.runOn(match.intent, match.slots, ids, req.channel, lang) ?? '' };
    if (req.asks) {
      req.asks.push(ask);
      return '';
    }
    return this.ask([ask]);
  }

  /** The device, state, time and list intents (handle's part after timers). */
  private async device(match: IntentMatch, req: IntentRequest, lang: Lang): Promise<string | undefined> {
    if (LIST_INTENTS.has(match.intent)) {
      if (req.dryRun) return this.d.lists?.() ? WOULD_ACT : undefined;
      const run = (): string | undefined => handleListIntent(this.d.lists?.(), match.intent, match.slots, lang);
      // Emptying a list that has items always asks first: nothing brings them back. A yes removes the items the
      // question counted, no others: a tester's "clear my shopping list and add tea ..." and a "tea" added from
      // elsewhere while the question waited were removed by the yes.
      const lists = this.d.lists?.();
      const list = match.slots.list;
      const open = match.intent === 'HassListClear' && lists && isListName(list) ? lists.items(list).map((i) => i.id) : [];
      // An item the recogniser may have forced into its word list (a to-do heard by voice) is changed after a yes.
      const doing = open.length > 0 ? listClearPhrase(list as ListName, open.length, lang) : req.askFirst && lists ? listActPhrase(match.intent, match.slots, lang) : undefined;
      if (doing) {
        const clear = (): string => listCleared(list as ListName, open.filter((id) => lists!.remove(list as ListName, { id }) !== undefined).length, lang);
        const ask: PendingAsk = { who: req.who, channel: req.channel, lang, spoken: doing, what: doing, execute: async () => (open.length > 0 ? clear() : run() ?? '') };
        if (req.asks) {
          req.asks.push(ask);
          return '';
        }
        return this.ask([ask]);
      }
      return run();
    }
    let s = this.preferNamed(match);
    if (s[NAME_FREE] !== undefined) {
      const placed = this.placeFreeName(match.intent, s, lang);
      if (typeof placed !== 'object') return placed;
      s = placed;
    }
    switch (match.intent) {
      case 'HassTurnOn':
        return this.onOff(s, 'turn_on', req, lang);
      case 'HassTurnOff':
        return this.onOff(s, 'turn_off', req, lang);
      case 'HassToggle':
        return this.onOff(s, 'toggle', req, lang);
      case 'HassLightSet':
        return this.lightSet(s, req, lang);
      case 'HassSetPosition':
        return this.setPosition(s, req, lang);
      case 'HassGetState':
        return this.getState(s, lang);
      case 'HassClimateGetTemperature':
        return this.getTemperature(s, lang);
      case 'HassClimateSetTemperature':
        return this.setTemperature(s, req, lang);
      case 'HassGetCurrentTime':
        return this.time(lang);
      case 'HassGetCurrentDate':
        return this.date(lang);
      case 'HassGetWeather': {
        const where = typeof s.location === 'string' ? s.location : undefined;
        // A room of the home ("is it cold in the bedroom", "what's the weather in the kitchen"): its temperature. A
        // newcomer's got "I can't tell you the weather in The Bedroom" while the Bedroom's thermometer read 19.5.
        const room = where ? this.homeArea(where) : undefined;
        if (room) return this.getTemperature({ area: room }, lang);
        // Here and now: the home's own outdoor sensors, when it has any (issue 15: weather from the home's sensors).
        const outside = where ? undefined : this.outdoorReading(lang);
        if (outside) return outside;
        if (lang === 'zh') return `我没有天气数据来源，所以查不了${where ? `${where}的` : ''}天气。`;
        return `I don't have a weather source, so I can't tell you the weather${where ? ` in ${where}` : ''}.`;
      }
      case 'HassMediaNext':
      case 'HassMediaPrevious':
      case 'HassMediaPause':
      case 'HassMediaUnpause':
        return this.media(match.intent, s, lang);
      case 'HassNevermind':
        return lang === 'zh' ? '好的。' : 'OK.';
      default:
        return undefined;
    }
  }

  /**
   * A name beats a room: when a room + domain match ("客厅" + "灯") was said
   * as exactly one device's full name ("客厅灯"), the slots name that device.
   */
  private preferNamed(match: IntentMatch): IntentSlots {
    const s = match.slots;
    if (s.name || !s.area) return s;
    const text = match.text.replace(/\s+/g, '').toLowerCase();
    const named = targetsOf(this.resolve(s)).filter((e) => [e.name, ...e.aliases].some((n) => text.includes(n.replace(/\s+/g, '').toLowerCase())));
    return named.length === 1 ? { ...s, name: (named[0] as Entity).name } : s;
  }

  /**
   * What the slots point at, by the one resolver's rules (resolve.ts): a
   * name (exact, then partial), a singular kind word ("the lamp": one
   * device), else the devices of the room and/or domain.
   */
  resolve(s: IntentSlots): Resolution {
    return resolveTarget(
      this.d.registry.entities(),
      { name: s.name, area: s.area, domain: s.domain, device: s.device, device_class: s.device_class },
      { ownArea: this.d.ownArea?.() },
    );
  }

  /**
   * A name said in free words (NAME_FREE: a sentence of the right shape whose
   * name is none of the home's; issue 15 "Names"), placed by the one
   * resolver: a partial name that fits one device that can do this means that
   * device (the slots now name it exactly); one that fits several that can
   * asks which; none at all is "I don't know a device called ...". Never the
   * nearest other device. The one device of that name that cannot do what was
   * said is said so ("The Front Door is a lock, so it can't be opened.":
   * opening is no lock's action, and unlocking it would be a guess).
   * Undefined (the LLM answers) when several devices of that name exist and
   * none can do it, or when the words are a room (room sentences have their own templates).
   */
  private placeFreeName(intent: string, s: IntentSlots, lang: Lang): IntentSlots | string | undefined {
    const said = typeof s.name === 'string' ? s.name : '';
    // No device known at all (none announced yet, or a home without MQTT devices): no claim about names.
    if (this.d.registry.entities().length === 0) return undefined;
    // The recogniser's filler took the name: it was no name of the home, and no words are known for it.
    if (s[NAME_UNHEARD] !== undefined || !said) return this.unknownName('', lang);
    const { [NAME_FREE]: _free, ...rest } = s;
    const can = (e: Entity): boolean => (s.domain !== undefined ? e.component === s.domain : intent === 'HassLightSet' ? e.component === 'light' : intent === 'HassGetState' || ON_OFF_COMPONENTS.has(e.component));
    const r = resolveTarget(this.d.registry.entities(), { name: said }, { ownArea: this.d.ownArea?.() });
    if (r.kind === 'not_found') {
      // A name the home has, with more words around it ("the kitchen light in 5 minutes"): not an unknown
      // device but a sentence the templates do not cover; the LLM has it.
      if (this.holdsKnownName(said)) {
        this.unplaced = true;
        return undefined;
      }
      return this.unknownName(said, lang);
    }
    if (r.kind === 'set') return undefined;
    const named = r.kind === 'one' ? [r.entity] : r.candidates;
    const fit = named.filter(can);
    // The one device of that whole name, of a kind that cannot do this ("open the front door": a lock): said so, and
    // nothing acts (the LLM guessing from possibly misheard words could act on another device). A part of a name
    // ("unlock the outdoor", heard for "unlock the back door") is no claim on that device: the LLM has it.
    if (fit.length === 0 && r.kind === 'one' && (r.by === 'name' || r.by === 'id')) return this.cannotDo(r.entity, intent, s.domain, lang);
    if (fit.length === 0) {
      this.unplaced = true;
      return undefined;
    }
    if (fit.length > 1) return this.unresolved({ kind: 'ambiguous', candidates: fit, said }, s, lang);
    const e = fit[0] as Entity;
    return { ...rest, name: e.name, domain: e.component };
  }

  /** "The Front Door is a lock, so it can't be opened.": what a free-name command asked of a device that cannot do it. */
  private cannotDo(e: Entity, intent: string, domain: string | undefined, lang: Lang): string {
    this.unplaced = true;
    const on = intent === 'HassTurnOn';
    // A brightness for a lock or a switch ("set the front door to 50 percent"): said as such, not as "turned off".
    if (intent === 'HassLightSet') return kindCannot(e, 'be set to a brightness', '调亮度', lang);
    const [en, cn] = domain === 'cover' ? (on ? ['opened', '打开'] : ['closed', '关上']) : domain === 'lock' ? (on ? ['locked', '锁上'] : ['unlocked', '解锁']) : on ? ['turned on', '打开'] : ['turned off', '关闭'];
    return kindCannot(e, `be ${en}`, cn, lang);
  }

  /** The home's area (as its devices name it) that `said` names, "the" or not, any case; undefined for none. */
  private homeArea(said: string): string | undefined {
    const want = said.toLowerCase().replace(/^the\s+/, '').trim();
    return this.d.registry.entities().map((e) => e.area).find((a): a is string => typeof a === 'string' && a.toLowerCase() === want);
  }

  /** Whether `said` holds a device's name or alias as whole words. */
  private holdsKnownName(said: string): boolean {
    const words = ` ${said.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim()} `;
    return this.d.registry.entities().some((e) =>
      [e.name, ...e.aliases].some((n) => {
        const w = n.toLowerCase().replace(/[^\p{L}\p{N}]+/gu, ' ').trim();
        return w !== '' && words.includes(` ${w} `);
      }),
    );
  }

  /** "I don't know a device called the garden sprinkler."; with no words for the name, "... by that name." */
  private unknownName(said: string, lang: Lang): string {
    this.unplaced = true;
    if (!said) return lang === 'zh' ? '我不知道这个名字的设备。' : "I don't know a device by that name.";
    // A pronoun with nothing before it to stand for ("turn it on" alone): not a device's name (a tester's "the it").
    if (lang === 'zh' && /^它们?$/.test(said)) return '我不知道"它"指的是哪个设备，请说设备的名字。';
    if (PRONOUN_NAME.test(said)) return `I don't know which device "${said.toLowerCase()}" is; please say its name.`;
    if (lang === 'zh') return `我不知道叫${said}的设备。`;
    return `I don't know a device called ${the({ name: said }, lang)}.`;
  }

  /** The reply for a resolution that addresses nothing: ask which of the candidates, or say nothing fits. */
  private unresolved(r: Extract<Resolution, { kind: 'ambiguous' | 'not_found' }>, s: IntentSlots, lang: Lang): string {
    this.unplaced = true;
    if (r.kind === 'not_found') return this.none(s, lang, r.elsewhere);
    this.askedAbout = r.candidates;
    const names = r.candidates.map((e) => the(e, lang));
    const last = names.pop() as string;
    if (lang === 'zh') return `你说的是哪一个：${names.join('、')}还是${last}？`;
    return `Which one do you mean: ${names.join(', ')} or ${last}?`;
  }

  /**
   * The reply when nothing fits `s`: the name the home lacks, the room with no
   * device of the kind, or, with `elsewhere` (Resolution's `not_found`), where
   * the one device of that name is.
   */
  private none(s: IntentSlots, lang: Lang, elsewhere: readonly Entity[] = []): string {
    this.unplaced = true;
    const zh = lang === 'zh';
    if (typeof s.name === 'string' && s.name) {
      // The device is known, in another room than the one said ("turn on the bed light in the kitchen"): said so.
      if (elsewhere.length === 1 && elsewhere[0]!.area && typeof s.area === 'string' && s.area) {
        const e = elsewhere[0]!;
        return zh ? `${e.name}在${areaName(e.area!, lang)}，不在${areaName(String(s.area), lang)}，所以我没有操作。` : `${cap(the(e, lang))} is in the ${e.area}, not the ${String(s.area)}, so I left it alone.`;
      }
      return this.unknownName(s.name, lang);
    }
    // A cover's kind (blind, curtain, shade, shutter: HA device classes) is said in the plural.
    const what = s.device_class && lang !== 'zh' ? `${s.device_class}s` : count(0, s.domain ?? 'device', lang).replace(/^0\s*个?/, '');
    // No room said: the resolver looked in the box's own room (plugin.home.area), so that is the room said to have none
    // (a tester's box in the Hallway answered "There are no lights in the home." with four lights elsewhere).
    if (!s.area && !s.name) s = { ...s, ...(this.d.ownArea?.()?.trim() ? { area: this.d.ownArea?.()?.trim() } : {}) };
    if (s.area) return zh ? `${areaName(s.area, lang)}没有${what}。` : `There are no ${what} in the ${s.area}.`;
    return zh ? `家里没有${what}。` : `There are no ${what} in the home.`;
  }

  private async onOff(s: IntentSlots, action: ActionName, req: IntentRequest, lang: Lang): Promise<string> {
    const r = this.resolve(s);
    if (r.kind === 'ambiguous' || r.kind === 'not_found') return this.unresolved(r, s, lang);
    return this.run(targetsOf(r), { action }, req, lang, s, roomOf(r));
  }

  private async lightSet(s: IntentSlots, req: IntentRequest, lang: Lang): Promise<string> {
    const r = this.resolve({ ...s, domain: s.domain ?? 'light' });
    if (r.kind === 'ambiguous' || r.kind === 'not_found') return this.unresolved(r, { ...s, domain: s.domain ?? 'light' }, lang);
    const targets = targetsOf(r);
    const a: DeviceAction = { action: 'turn_on' };
    if (typeof s.brightness === 'number') a.brightness_pct = s.brightness;
    if (typeof s.color === 'string') {
      const rgb = Object.hasOwn(COLOUR_RGB, lower(s.color)) ? COLOUR_RGB[lower(s.color)] : undefined;
      if (!rgb) return this.cannot(lang === 'zh' ? `我不认识${s.color}这个颜色。` : `I don't know the colour ${s.color}.`);
      a.color = rgb;
    }
    return this.run(targets, a, req, lang, s, roomOf(r));
  }

  /**
   * "… to fifty percent" right after "turn on the bed light" was acted on at
   * its pause (PREVIOUS_TARGET): the same lights, set. Asks which light when
   * the command before switched nothing on (it asked, failed, or turned
   * something off), was on another channel, or is older than
   * PREVIOUS_TARGET_WINDOW_MS: never a guess.
   */
  private async setPrevious(s: IntentSlots, previous: LitTargets | undefined, req: IntentRequest, lang: Lang): Promise<string> {
    const targets = previous && previous.channel === req.channel && this.d.clock.now() - previous.at <= PREVIOUS_TARGET_WINDOW_MS
      ? previous.ids.map((id) => this.d.registry.get(id)).filter((e): e is Entity => e !== undefined)
      : [];
    if (!targets.length) {
      this.unplaced = true;
      const pct = typeof s.brightness === 'number' ? s.brightness : undefined;
      return lang === 'zh' ? `要把哪盏灯调到${pct ?? ''}%？请连设备名一起说。` : `Which light should I set${pct !== undefined ? ` to ${pct} percent` : ''}? Please say it with the light's name.`;
    }
    const a: DeviceAction = { action: 'turn_on' };
    if (typeof s.brightness === 'number') a.brightness_pct = s.brightness;
    return this.run(targets, a, req, lang, { ...previous!.slots, ...(typeof s.brightness === 'number' ? { brightness: s.brightness } : {}) });
  }

  private async setPosition(s: IntentSlots, req: IntentRequest, lang: Lang): Promise<string> {
    const r = this.resolve({ ...s, domain: s.domain ?? 'cover' });
    if (r.kind === 'ambiguous' || r.kind === 'not_found') return this.unresolved(r, s, lang);
    const targets = targetsOf(r);
    if (typeof s.position !== 'number') return this.cannot(lang === 'zh' ? '要调到多少？' : 'To what position?');
    return this.run(targets, { action: 'set_position', position: s.position }, req, lang, s);
  }

  private async setTemperature(s: IntentSlots, req: IntentRequest, lang: Lang): Promise<string> {
    const r = this.resolve({ ...s, domain: 'climate' });
    if (r.kind === 'ambiguous') return this.unresolved(r, s, lang);
    const targets = targetsOf(r);
    if (!targets.length) return this.cannot(lang === 'zh' ? '没有可以调温度的设备。' : 'There is no thermostat I can set.');
    if (typeof s.temperature !== 'number') return this.cannot(lang === 'zh' ? '要设成多少度？' : 'To what temperature?');
    return this.run(targets.slice(0, s.area ? targets.length : 1), { action: 'set_temperature', temperature: s.temperature }, req, lang, s);
  }

  /**
   * Send `action` to every target: unavailable ones are skipped and named,
   * risky sets (every set, with req.askFirst) ask first (the question is
   * this turn's reply; the answer turn gets the outcome), failures are
   * reported.
   */
  private async run(targets: Entity[], action: DeviceAction, req: IntentRequest, lang: Lang, s: IntentSlots, room?: string): Promise<string> {
    if (req.dryRun) return this.wouldRun(targets, action, lang, s);
    const zh = lang === 'zh';
    const unavailable: Entity[] = [];
    const problems: string[] = [];
    const ready: Entity[] = [];
    for (const e of targets) {
      try {
        this.d.controller.plan(e.id, action);
        ready.push(e);
      } catch (err) {
        if (err instanceof HomeError && err.code === 'DEVICE_UNAVAILABLE') unavailable.push(e);
        else problems.push(this.failure(e, action, err, lang));
      }
    }
    const widened = req.heard === true && ready.length > 1 && !s.name && !s.area;
    // A device that would be asked about and is already where the action leaves it (STATE_AFTER): said so, not asked, not sent.
    const already = ready.filter((e) => (req.askFirst || widened || this.d.controller.isRisky(e, action)) && this.alreadyThere(e, action));
    if (already.length) {
      const act = normaliseAction(already[0] as Entity, action.action);
      const names = joinNames(already.map((e) => the(e, lang)), lang);
      const note = zh ? `${names}已经${verb(act, lang)}了。` : `${cap(names)} ${already.length > 1 ? 'are' : 'is'} already ${STATE_AFTER[act]}.`;
      const rest = ready.filter((e) => !already.includes(e));
      if (!rest.length && !unavailable.length && !problems.length) return note;
      ready.splice(0, ready.length, ...rest);
      problems.unshift(note);
    }
    const risky = req.askFirst || widened ? ready : ready.filter((e) => this.d.controller.isRisky(e, action));
    // Sends `action` to `set`; the reply names what failed, and with `notes` the devices skipped before (unavailable, already there).
    const executeOn = (set: Entity[], notes: boolean) => async (): Promise<string> => {
      if (req.signal?.aborted) return '';
      const probs = notes ? problems : [];
      // Marked before sending: a report that comes before the broker's acknowledgement clears it.
      for (const e of set) this.unreported.set(e.id, this.d.clock.now());
      const reportsBefore = this.d.reportWatch?.before(set);
      const results = await Promise.allSettled(set.map((e) => this.d.controller.control(e.id, action, req.who)));
      const ok: Entity[] = [];
      results.forEach((r, i) => {
        const e = set[i] as Entity;
        if (r.status === 'fulfilled') ok.push(e);
        else {
          this.unreported.delete(e.id);
          probs.push(this.failure(e, action, r.reason, lang));
        }
      });
      // Lights switched on or set: a continuation fragment ("… to fifty percent") may set them next (setPrevious).
      if (ok.length && normaliseAction(ok[0] as Entity, action.action) === 'turn_on' && ok.every((e) => e.component === 'light')) {
        this.lit = { channel: req.channel, ids: ok.map((e) => e.id), slots: { ...(s.name ? { name: s.name } : {}), ...(s.area ? { area: s.area } : {}) }, at: this.d.clock.now() };
      }
      if (ok.length) this.d.reportWatch?.expect(ok, { phrase: (x) => actionPhrase(x, normaliseAction(x, action.action), action, lang), lang }, req.channel, reportsBefore);
      // The room a command that named none reached (the box's own, plugin.home.area) is said in the reply.
      return this.summary(ok, action, notes ? unavailable : [], probs, lang, s.area || !room ? s : { ...s, area: room });
    };
    if (risky.length) {
      // Some of several devices are risky (plugin.home.risky_devices): the others are done now and the question is
      // about the risky ones alone. A newcomer's "turn on the lights" asked about the Kitchen Light only, and a no
      // left the Living Room Lamp off without a word. In two commands in one breath (req.asks) every part was
      // placed before any runs (handleAll), so the part does the same as it would alone: a tester's "lock the
      // front door and turn off the lights" asked about the Kitchen Light and a no left four other lights on.
      const split = risky.length < ready.length;
      const act = normaliseAction(risky[0] as Entity, action.action);
      const names = joinNames(risky.map((e) => the(e, lang)), lang);
      const ask: PendingAsk = {
        who: req.who,
        channel: req.channel,
        lang,
        // With what it sets ("set the Bed Light to blue"): a tester's "turn the bed light blue" was asked "turn on the Bed Light?", and a yes would have made it blue.
        spoken: actionPhrase(risky.length === 1 ? (risky[0] as Entity) : { name: names }, act, action, lang),
        what: `${act} ${risky.map((e) => e.name).join(', ')}`,
        execute: split ? executeOn(risky, false) : executeOn(ready, true),
      };
      if (!split) {
        if (!req.asks) return this.ask([ask]);
        req.asks.push(ask);
        return '';
      }
      const done = await executeOn(ready.filter((e) => !risky.includes(e)), true)();
      if (req.signal?.aborted) return done;
      if (req.asks) {
        req.asks.push(ask);
        return done;
      }
      return [done, this.ask([ask])].filter(Boolean).join(' ');
    }
    return executeOn(ready, true)();
  }

  /**
   * The dry run of run() (handleAll places every part before any acts):
   * WOULD_ACT when the action is planned for at least one target with no
   * refusal; otherwise the reply run() would give (a device that cannot do
   * it, a value out of its range, every target unavailable), with `unplaced`
   * set, so that no part of the sentence acts. A tester's "turn off the tv
   * and set the ecobee to 95 degrees" turned the TV off and then refused the
   * temperature.
   */
  private wouldRun(targets: Entity[], action: DeviceAction, lang: Lang, s: IntentSlots): string {
    const unavailable: Entity[] = [];
    const problems: string[] = [];
    let ready = 0;
    for (const e of targets) {
      try {
        this.d.controller.plan(e.id, action);
        ready++;
      } catch (err) {
        if (err instanceof HomeError && err.code === 'DEVICE_UNAVAILABLE') unavailable.push(e);
        else problems.push(this.failure(e, action, err, lang));
      }
    }
    if (ready > 0 && problems.length === 0) return WOULD_ACT;
    return this.cannot(this.summary([], action, unavailable, problems, lang, s));
  }

  /** `reply`, for a command that cannot be carried out as said: marked unplaced (handleAll then runs no part). */
  private cannot(reply: string): string {
    this.unplaced = true;
    return reply;
  }

  /** Whether `e`'s last report puts it where `action` would leave it (STATE_AFTER; a cover fully open to be open). */
  private alreadyThere(e: Entity, action: DeviceAction): boolean {
    const after = STATE_AFTER[normaliseAction(e, action.action)];
    const v = this.d.registry.view(e.id);
    if (after === undefined || v?.available !== true || v.state.state !== after) return false;
    const position = v.state.position;
    return !(e.component === 'cover' && after === 'open' && typeof position === 'number' && position < 100);
  }

  private failure(e: Entity, action: DeviceAction, err: unknown, lang: Lang): string {
    const zh = lang === 'zh';
    // What was asked, with its values ("set the Bed Light to 40 percent"), not only the verb it maps to.
    const what = actionPhrase(e, normaliseAction(e, action.action), action, lang);
    if (err instanceof HomeError) {
      switch (err.code) {
        case 'UNSUPPORTED_ACTION':
          return zh ? `${e.name}不支持这个操作。` : `${cap(the(e, lang))} can't do that.`;
        case 'BROKER_UNREACHABLE':
          return zh ? `没能${what}：连不上MQTT服务器，命令没有发出。` : `I could not ${what}: the MQTT broker is unreachable, so nothing was sent.`;
        case 'COMMAND_TIMEOUT':
        case 'COMMAND_FAILED':
        case 'MQTT_NOT_STARTED':
          // A hung broker (connected, no acknowledgement): the command left and may still be carried out.
          if (err.message.includes(MAY_STILL_ARRIVE)) return zh ? `MQTT服务器没有确认${what}的命令；它恢复后这个命令仍可能执行。` : `The MQTT broker did not confirm the command to ${what}; it may still be carried out if the broker recovers.`;
          return zh ? `没能${what}：MQTT服务器没有确认。` : `I could not ${what}: the MQTT broker did not confirm the command.`;
        case 'BAD_ARGUMENT':
          return zh ? `${e.name}：${err.message}。` : `${cap(the(e, lang))}: ${err.message}.`;
        default:
          break;
      }
    }
    this.d.log.warn({ entity: e.id, err: (err as Error)?.message }, 'local intent failed');
    return zh ? `没能${what}。` : `I could not ${what}.`;
  }

  private summary(ok: Entity[], action: DeviceAction, unavailable: Entity[], problems: string[], lang: Lang, s: IntentSlots): string {
    const zh = lang === 'zh';
    const parts: string[] = [];
    if (ok.length) {
      const first = ok[0] as Entity;
      const act = normaliseAction(first, action.action);
      let what: string;
      if (ok.length > 1 && !s.name) {
        const dom = first.component;
        what = zh ? `${s.area ? `${areaName(s.area, lang)}的` : ''}${count(ok.length, dom, lang)}` : `${count(ok.length, dom, lang)}${s.area ? ` in the ${s.area}` : ''}`;
      } else what = joinNames(ok.map((e) => theNamed(e, lang)), lang);
      if (action.brightness_pct !== undefined || action.color) {
        const to = [action.brightness_pct !== undefined ? (zh ? `${Math.round(action.brightness_pct)}%` : `${Math.round(action.brightness_pct)} percent`) : '', action.color && s.color ? colourName(String(s.color), lang) : '']
          .filter(Boolean)
          .join(zh ? '，' : ' and ');
        parts.push(zh ? `已把${what}调到${to}。` : `Set ${what} to ${to}.`);
      } else if (act === 'set_temperature') {
        parts.push(zh ? `已把${what}设为${num(action.temperature ?? 0)}度。` : `Set ${what} to ${num(action.temperature ?? 0)} degrees.`);
        // A set-point does not switch a thermostat on (Home Assistant's climate.set_temperature keeps its mode): one that
        // is off will not heat to it, and "Set the EcoBee to 22 degrees" alone let the person think it would.
        const off = ok.filter((e) => e.component === 'climate' && this.d.registry.view(e.id)?.state.mode === 'off');
        if (off.length) {
          const names = joinNames(off.map((e) => the(e, lang)), lang);
          parts.push(zh ? `${off.map((e) => e.name).join('、')}是关着的，打开之前不会加热或制冷。` : `${cap(names)} ${off.length > 1 ? 'are' : 'is'} off, so ${off.length > 1 ? 'they' : 'it'} will not heat or cool until switched on.`);
        }
      } else if (act === 'set_position') {
        parts.push(zh ? `已把${what}调到${action.position}%。` : `Moved ${what} to ${action.position} percent.`);
      } else {
        parts.push(zh ? `${done(act, lang)}${what}。` : `${done(act, lang)} ${what}.`);
      }
    }
    if (unavailable.length) {
      const names = joinNames(unavailable.map((e) => the(e, lang)), lang);
      parts.push(zh ? `${names}现在不可用，我没有操作它。` : `${cap(names)} ${unavailable.length > 1 ? 'are' : 'is'} unavailable, so I left ${unavailable.length > 1 ? 'them' : 'it'} alone.`);
    }
    parts.push(...problems);
    return parts.join(zh ? '' : ' ');
  }

  private async getState(s: IntentSlots, lang: Lang): Promise<string> {
    const zh = lang === 'zh';
    const r = this.resolve(s);
    if (r.kind === 'ambiguous' || r.kind === 'not_found') return this.unresolved(r, s, lang);
    const targets = targetsOf(r);
    await this.reportsOf(targets.map((e) => e.id));
    const asked = typeof s.state === 'string' ? (Object.hasOwn(STATE_WORDS, lower(s.state)) ? STATE_WORDS[lower(s.state)] : undefined) ?? lower(s.state) : undefined;
    if (r.kind === 'one' || targets.length === 1) {
      const e = targets[0] as Entity;
      const v = this.d.registry.view(e.id);
      if (!v) return this.none(s, lang);
      if (!asked || !v.available || v.state.state === undefined) return describeState(e, v.state, v.available, lang);
      const actual = v.state.state;
      const yes = actual === asked;
      if (zh) return `${yes ? '是的' : '不是'}，${describeState(e, v.state, true, lang)}`;
      return `${yes ? 'Yes' : 'No'}, ${describeState(e, v.state, true, lang).replace(/^The /, 'the ')}`;
    }
    const views = targets.map((e) => this.d.registry.view(e.id)).filter((v): v is NonNullable<typeof v> => !!v);
    const want = asked ?? 'on';
    const matching = views.filter((v) => v.available && v.state.state === want);
    const dom = s.domain ?? (targets[0] as Entity).component;
    const where = s.area ? (zh ? `${areaName(s.area, lang)}的` : ` in the ${s.area}`) : '';
    if (zh) return matching.length ? `${where}${count(views.length, dom, lang)}中有${matching.length}个${want === 'on' ? '开着' : want === 'off' ? '关着' : want}。` : `没有，${where}${count(views.length, dom, lang)}都不是${want === 'on' ? '开着' : want === 'off' ? '关着' : want}的。`;
    if (!matching.length) return `No, none of the ${count(views.length, dom, lang)}${where} ${views.length === 1 ? 'is' : 'are'} ${want}.`;
    if (matching.length === views.length) return `Yes, all ${count(views.length, dom, lang)}${where} are ${want}.`;
    return `${matching.length} of the ${count(views.length, dom, lang)}${where} ${matching.length === 1 ? 'is' : 'are'} ${want}: ${joinNames(matching.map((v) => v.entity.name), lang)}.`;
  }

  /**
   * "Outside it is 12.5 degrees and 63 percent humidity." from the home's
   * outdoor sensors (temperature and humidity sensors whose name or room says
   * outdoor, outside, garden, balcony, patio, yard, 室外, 户外, 外面);
   * undefined when there are none with a reading.
   */
  private outdoorReading(lang: Lang): string | undefined {
    const outdoor = /\b(outdoors?|outside|garden|balcony|patio|yard|terrace|porch)\b|室外|户外|外面|阳台|花园/i;
    const read = (cls: string): { e: Entity; v: number; unit: string } | undefined => {
      for (const e of this.d.registry.entities()) {
        if (e.component !== 'sensor' || e.device_class !== cls || !(outdoor.test(e.name) || outdoor.test(e.area ?? ''))) continue;
        const view = this.d.registry.view(e.id);
        const v = Number(view?.state.state);
        if (view?.available && view.state.state !== undefined && Number.isFinite(v)) return { e, v, unit: String(view.state.unit ?? '') };
      }
      return undefined;
    };
    const t = read('temperature');
    const h = read('humidity');
    if (!t && !h) return undefined;
    const deg = (r: { unit: string }): string => (r.unit && !/°?C$/i.test(r.unit) ? ` ${r.unit}` : lang === 'zh' ? '度' : ' degrees');
    if (lang === 'zh') return `外面${t ? `${num(t.v)}${deg(t)}` : ''}${t && h ? '，' : ''}${h ? `湿度百分之${num(h.v)}` : ''}。`;
    const parts = [t ? `${num(t.v)}${deg(t)}` : '', h ? `${num(h.v)} percent humidity` : ''].filter(Boolean);
    return `Outside it is ${parts.join(' and ')}, by the home's own sensors.`;
  }

  private getTemperature(s: IntentSlots, lang: Lang): string {
    const zh = lang === 'zh';
    let candidates: Entity[];
    if (s.name) {
      const r = this.resolve(s);
      if (r.kind === 'ambiguous' || r.kind === 'not_found') return this.unresolved(r, s, lang);
      candidates = targetsOf(r);
    } else {
      const all = this.d.registry.entities().filter((e) => e.component === 'climate' || (e.component === 'sensor' && e.device_class === 'temperature'));
      const area = lower(s.area);
      candidates = area ? all.filter((e) => lower(e.area) === area) : all;
      candidates.sort((a, b) => (a.component === 'climate' ? 0 : 1) - (b.component === 'climate' ? 0 : 1));
    }
    if (!candidates.length) {
      if (s.area) return zh ? `我不知道${areaName(s.area, lang)}的温度。` : `I don't know the temperature in the ${s.area}.`;
      return s.name ? this.none(s, lang) : zh ? '家里没有温度传感器。' : 'There is no thermometer in the home.';
    }
    for (const e of candidates) {
      const v = this.d.registry.view(e.id);
      if (!v?.available) continue;
      const t = e.component === 'climate' ? v.state.current_temperature : Number(v.state.state);
      if (t === undefined || !Number.isFinite(t)) continue;
      const unit = e.component === 'climate' ? '' : v.state.unit ?? '';
      const deg = unit && !/°?C$/i.test(unit) ? ` ${unit}` : ' degrees';
      return zh ? `${e.name}现在是${num(t)}度。` : `${cap(the(e, lang))} reads ${num(t)}${deg}.`;
    }
    const e = candidates[0] as Entity;
    const v = this.d.registry.view(e.id);
    if (!v?.available) return describeState(e, v?.state ?? {}, false, lang);
    return zh ? `我还没有收到${e.name}的温度。` : `I have no temperature reading from ${the(e, lang)} yet.`;
  }

  private time(lang: Lang): string {
    const d = new Date(this.d.clock.now());
    const tz = this.d.timeZone();
    if (lang === 'zh') {
      const f = new Intl.DateTimeFormat('zh-CN', { hour: 'numeric', minute: '2-digit', hour12: false, ...(tz ? { timeZone: tz } : {}) });
      const parts = Object.fromEntries(f.formatToParts(d).map((p) => [p.type, p.value]));
      return `现在是${Number(parts.hour)}点${parts.minute}分。`;
    }
    const f = new Intl.DateTimeFormat('en-US', { hour: 'numeric', minute: '2-digit', hour12: true, ...(tz ? { timeZone: tz } : {}) });
    return `It is ${f.format(d)}.`;
  }

  private date(lang: Lang): string {
    const d = new Date(this.d.clock.now());
    const tz = this.d.timeZone();
    const f = new Intl.DateTimeFormat(lang === 'zh' ? 'zh-CN' : 'en-US', { dateStyle: 'full', ...(tz ? { timeZone: tz } : {}) });
    return lang === 'zh' ? `今天是${f.format(d)}。` : `Today is ${f.format(d)}.`;
  }

  private media(intent: string, s: IntentSlots, lang: Lang): string {
    const zh = lang === 'zh';
    const what: Record<string, [string, string]> = {
      HassMediaNext: ['skip to the next track', '切到下一首'],
      HassMediaPrevious: ['go back a track', '切到上一首'],
      HassMediaPause: ['pause', '暂停'],
      HassMediaUnpause: ['resume playback', '继续播放'],
    };
    const [en, cn] = what[intent] ?? ['do that', '这样做'];
    if (s.name) {
      const r = this.resolve(s);
      const e = r.kind === 'one' ? r.entity : undefined;
      if (e) return this.cannot(kindCannot(e, en, cn, lang));
    }
    return this.cannot(zh ? `家里没有可以${cn}的媒体播放器。` : `There is no media player in the home, so I can't ${en}.`);
  }
}

/** "The TV is a switch, so it can't skip to the next track.": a device of a kind that cannot do `en` (Chinese `cn`). */
function kindCannot(e: Entity, en: string, cn: string, lang: Lang): string {
  if (lang === 'zh') return `${e.name}是一个${count(1, e.component, lang).replace(/^1个/, '')}，不能${cn}。`;
  return `${cap(the(e, lang))} is a ${count(1, e.component, lang).replace(/^1 /, '')}, so it can't ${en}.`;
}

/**
 * The room a set resolution used when the command named none (the box's own,
 * plugin.home.area), for the reply: "Turned off 2 lights in the Kitchen."
 * (a newcomer's "Turned off 2 lights." did not say which, with four more
 * elsewhere). Undefined for one device or the whole home.
 */
function roomOf(r: Resolution): string | undefined {
  return r.kind === 'set' ? r.area : undefined;
}
