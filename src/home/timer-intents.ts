/**
 * Timer intents done locally (no LLM), in English and Chinese, with Home
 * Assistant's intent names: HassStartTimer, HassCancelTimer,
 * HassCancelAllTimers, HassPauseTimer, HassUnpauseTimer, HassIncreaseTimer,
 * HassDecreaseTimer, HassTimerStatus. A timer is named by its name
 * (`timer_name`: "the pasta timer") or by the length it was set for
 * (`start_seconds`: "the 10 minute timer"), or not at all ("the timer").
 *
 * Never the wrong timer: when what was said fits more than one timer, nothing
 * is done and the box asks which ("Which timer: the pasta timer or the timer
 * for 10 minutes?"). The answer (intent TimerChoice: "the pasta one", "the
 * 10 minute one", "the first one") within `choiceTimeoutMs` picks one of the
 * timers asked about and the operation runs on it alone; an answer that
 * still fits several asks again; anything else said drops the question. A
 * TimerChoice with no question open is not ours (undefined: the LLM).
 *
 * A timer started with no length ("set a timer", 设一个计时器) asks "For how
 * long?"; the answer (intent TimerDuration: "5 minutes", "for an hour";
 * spoken, "for ..." only: src/intents/templates-en.ts) on the same channel
 * within `choiceTimeoutMs` starts it, with the name it was asked with. Anything else said drops the question; a
 * TimerDuration with none open is not ours.
 */
import type { IntentSlots } from '../intents/types.js';
import type { Clock } from '../kernel/clock.js';
import { TimerError, formatDuration, type TimerSelector, type TimerService, type TimerStatus } from '../plugins/timers/timer-service.js';
import { cap, joinNames, type Lang } from './replies.js';

/** The timer intents this module answers. */
export const TIMER_INTENTS: ReadonlySet<string> = new Set([
  'HassStartTimer', 'HassCancelTimer', 'HassCancelAllTimers', 'HassPauseTimer', 'HassUnpauseTimer',
  'HassIncreaseTimer', 'HassDecreaseTimer', 'HassTimerStatus', 'TimerChoice', 'TimerDuration',
]);

/** Dependencies of TimerIntents. */
export interface TimerIntentDeps {
  timers: () => TimerService | undefined;
  clock: Clock;
  /** How long a "which timer?" question waits for its answer, ms (default 15000). */
  choiceTimeoutMs?: () => number;
}

/** An open "which timer?" question. */
interface PendingChoice {
  intent: string;
  slots: IntentSlots;
  /** Ids of the timers asked about, in the order the question named them. */
  ids: string[];
  channel: string;
  until: number;
}

/** An open "For how long?" question: the timer's other slots (its name) and where it was asked. */
interface PendingLength {
  slots: IntentSlots;
  channel: string;
  until: number;
}

type Op = 'HassCancelTimer' | 'HassPauseTimer' | 'HassUnpauseTimer' | 'HassIncreaseTimer' | 'HassDecreaseTimer' | 'HassTimerStatus';

/** The operations on one timer that change it (not a status question). */
const CHANGING_OPS: ReadonlySet<string> = new Set(['HassCancelTimer', 'HassPauseTimer', 'HassUnpauseTimer', 'HassIncreaseTimer', 'HassDecreaseTimer']);
const isOp = (intent: string): intent is Op => CHANGING_OPS.has(intent);

const ORDINALS_EN = ['first', 'second', 'third'];

function str(v: unknown): string | undefined {
  return typeof v === 'string' && v.trim() ? v.trim() : undefined;
}

function posNum(v: unknown): number | undefined {
  return typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : undefined;
}

/** See module comment. */
export class TimerIntents {
  private pending: PendingChoice | undefined;
  private pendingLength: PendingLength | undefined;

  constructor(private readonly d: TimerIntentDeps) {}

  /** True while a "which timer?" question waits for its answer (and has not timed out). */
  get asking(): boolean {
    return this.pending !== undefined && this.d.clock.now() <= this.pending.until;
  }

  /** True while a "For how long?" question waits for its answer (and has not timed out). */
  get askingLength(): boolean {
    return this.pendingLength !== undefined && this.d.clock.now() <= this.pendingLength.until;
  }

  /** Drop an open "which timer?" or "For how long?" question (the person said something else). */
  forget(): void {
    this.pending = undefined;
    this.pendingLength = undefined;
  }

  /**
   * Do a timer intent; resolves to the reply, or undefined when it is not
   * this module's (a TimerChoice with no question open). Throws TimerError
   * only for a length out of range when starting (the caller says it).
   */
  /**
   * Place a timer command without acting (two commands in one breath,
   * LocalIntents.handleAll): 'act' when it would change a timer, 'answer'
   * when it only tells, else the reply that says why it cannot be placed
   * (no such timer, which of several, for how long). Changes nothing, not
   * even an open "which timer?" question.
   */
  place(intent: string, s: IntentSlots, lang: Lang): 'act' | 'answer' | string {
    const svc = this.d.timers();
    const zh = lang === 'zh';
    if (!svc) return zh ? '计时器现在不可用。' : 'Timers are not available right now.';
    switch (intent) {
      case 'HassStartTimer':
        return (posNum(s.seconds) ?? 0) >= 1 ? 'act' : zh ? '要定多长时间？' : 'For how long?';
      case 'HassCancelAllTimers':
        return 'act';
      case 'HassTimerStatus':
        return 'answer';
      case 'HassCancelTimer':
      case 'HassPauseTimer':
      case 'HassUnpauseTimer':
      case 'HassIncreaseTimer':
      case 'HassDecreaseTimer': {
        const sel: TimerSelector = {};
        const name = str(s.timer_name);
        const start = posNum(s.start_seconds);
        if (name) sel.name = name;
        if (start) sel.seconds = start;
        const fits = svc.find(sel, TimerIntents.states(intent));
        if (fits.length === 1) return 'act';
        if (fits.length > 1) {
          const labels = this.labels(fits, lang);
          return zh ? `你说的是哪个计时器：${labels.join('还是')}？` : `Which timer do you mean: ${labels.join(' or ')}?`;
        }
        return this.op(svc, intent, s, '', lang);
      }
      case 'TimerDuration':
        // The answer to "For how long?" is no command of its own.
        return zh ? '我没听懂这个时长是给什么的。' : "I didn't get what that length is for.";
      default:
        // The answer to "which timer?" is no command of its own.
        return zh ? '我没听懂是哪个计时器。' : "I didn't get which timer.";
    }
  }

  /**
   * The timers a command TimerIntents.place would act on change now, by id:
   * the one an operation fits, every timer for "cancel all", none for a
   * start (it makes a new one). What a yes to "Do you really want to cancel
   * the timer?" may change (runOn): the timers the question was about.
   */
  targets(intent: string, s: IntentSlots): string[] {
    const svc = this.d.timers();
    if (!svc || intent === 'HassStartTimer') return [];
    if (intent === 'HassCancelAllTimers') return svc.find({}).map((t) => t.id);
    if (!isOp(intent)) return [];
    const sel: TimerSelector = {};
    const name = str(s.timer_name);
    const start = posNum(s.start_seconds);
    if (name) sel.name = name;
    if (start) sel.seconds = start;
    return svc.find(sel, TimerIntents.states(intent)).map((t) => t.id);
  }

  /**
   * Run a command asked about first on the timers it was asked about
   * (`ids`, from targets): a start starts; "cancel all" cancels those of
   * them still there; an operation acts on its one timer if that is still
   * in a state it can act on, else says the timer changed and does nothing
   * (a tester's yes to "cancel the timer?" cancelled a timer started after
   * the question).
   */
  runOn(intent: string, s: IntentSlots, ids: readonly string[], channel: string, lang: Lang): string | undefined {
    const svc = this.d.timers();
    const zh = lang === 'zh';
    if (!svc || intent === 'HassStartTimer') return this.handle(intent, s, channel, lang);
    if (intent === 'HassCancelAllTimers') {
      const n = ids.filter((id) => svc.find({ id }).length > 0 && svc.cancel({ id }).length > 0).length;
      if (n === 0) return zh ? '问到的计时器都已经不在了，所以什么也没做。' : 'The timers I asked about are gone, so I did nothing.';
      return zh ? `已取消${n}个计时器。` : n === 1 ? 'Cancelled the timer.' : `Cancelled ${n} timers.`;
    }
    if (!isOp(intent)) return this.handle(intent, s, channel, lang);
    const t = ids.length === 1 ? svc.find({ id: ids[0] }, TimerIntents.states(intent))[0] : undefined;
    if (!t) return zh ? '问到的那个计时器已经变了，所以什么也没做。' : 'The timer I asked about has changed since, so I did nothing.';
    return this.act(svc, intent, t, s, lang);
  }

  handle(intent: string, s: IntentSlots, channel: string, lang: Lang): string | undefined {
    const svc = this.d.timers();
    const zh = lang === 'zh';
    if (intent === 'TimerChoice') {
      this.pendingLength = undefined;
      return this.choice(s, lang);
    }
    if (intent === 'TimerDuration') {
      this.pending = undefined;
      return this.length(s, channel, lang);
    }
    this.pending = undefined;
    this.pendingLength = undefined;
    if (!svc) return zh ? '计时器现在不可用。' : 'Timers are not available right now.';
    switch (intent) {
      case 'HassStartTimer':
        return this.start(svc, s, channel, lang);
      case 'HassCancelAllTimers': {
        const n = svc.cancel({ all: true }).length;
        if (n === 0) return zh ? '现在没有在运行的计时器。' : 'There is no timer running.';
        return zh ? `已取消${n}个计时器。` : n === 1 ? 'Cancelled the timer.' : `Cancelled ${n} timers.`;
      }
      case 'HassTimerStatus':
        if (!str(s.timer_name) && !posNum(s.start_seconds)) return this.statusAll(svc, lang);
        return this.op(svc, intent, s, channel, lang);
      case 'HassCancelTimer':
      case 'HassPauseTimer':
      case 'HassUnpauseTimer':
      case 'HassIncreaseTimer':
      case 'HassDecreaseTimer':
        return this.op(svc, intent, s, channel, lang);
      default:
        return undefined;
    }
  }

  private start(svc: TimerService, s: IntentSlots, channel: string, lang: Lang): string {
    const zh = lang === 'zh';
    const secs = posNum(s.seconds) ?? 0;
    if (secs < 1) {
      const { seconds: _none, ...rest } = s;
      this.pendingLength = { slots: rest, channel, until: this.d.clock.now() + (this.d.choiceTimeoutMs?.() ?? 15_000) };
      return zh ? '要定多长时间？' : 'For how long?';
    }
    const name = str(s.timer_name);
    const t = svc.set({ seconds: secs, ...(name ? { name } : {}), channel, lang });
    if (zh) return name ? `好的，${name}计时器开始了，${formatDuration(t.duration_s, 'zh')}。` : `好的，${formatDuration(t.duration_s, 'zh')}的计时器开始了。`;
    return name ? `${cap(name)} timer set for ${formatDuration(t.duration_s, 'en')}.` : `Timer set for ${formatDuration(t.duration_s, 'en')}.`;
  }

  /**
   * The answer to "For how long?" (TimerDuration, slot `seconds`) on the
   * channel it was asked on: the timer starts with that length and the name
   * it was asked with. Undefined (not ours: the LLM) with no question open
   * there, or after choiceTimeoutMs.
   * @throws TimerError for a length out of range (the caller says it).
   */
  private length(s: IntentSlots, channel: string, lang: Lang): string | undefined {
    const p = this.pendingLength;
    if (!p || p.channel !== channel || this.d.clock.now() > p.until) {
      if (p && this.d.clock.now() > p.until) this.pendingLength = undefined;
      return undefined;
    }
    this.pendingLength = undefined;
    const svc = this.d.timers();
    if (!svc) return lang === 'zh' ? '计时器现在不可用。' : 'Timers are not available right now.';
    return this.start(svc, { ...p.slots, seconds: s.seconds }, channel, lang);
  }

  /** The states an operation can act on: pause a running timer, resume a paused one, anything else either. */
  private static states(intent: Op): Array<'running' | 'paused'> {
    if (intent === 'HassPauseTimer') return ['running'];
    if (intent === 'HassUnpauseTimer') return ['paused'];
    return ['running', 'paused'];
  }

  private op(svc: TimerService, intent: Op, s: IntentSlots, channel: string, lang: Lang): string {
    const zh = lang === 'zh';
    const sel: TimerSelector = {};
    const name = str(s.timer_name);
    const start = posNum(s.start_seconds);
    if (name) sel.name = name;
    if (start) sel.seconds = start;
    const fits = svc.find(sel, TimerIntents.states(intent));
    if (fits.length === 1) return this.act(svc, intent, fits[0] as TimerStatus, s, lang);
    if (fits.length > 1) return this.ask(intent, s, fits, channel, lang);
    // Nothing fits: say why (no such timer, or it is already in the state asked for).
    const any = svc.find(sel);
    const what = name || start ? this.describe({ name, seconds: start }, lang) : zh ? '计时器' : 'timer';
    if (any.length === 0) {
      if (!name && !start) return zh ? '现在没有在运行的计时器。' : 'There is no timer running.';
      return zh ? `没有${what}。` : `There is no ${what}.`;
    }
    if (intent === 'HassPauseTimer') return zh ? `${what}已经暂停了。` : `The ${what} is already paused.`;
    return zh ? `${what}没有暂停。` : `The ${what} is not paused.`;
  }

  /** "pasta timer" / "timer for 10 minutes" (without the article), 意面计时器 / 10分钟的计时器. */
  private describe(t: { name?: string | undefined; seconds?: number | undefined }, lang: Lang): string {
    if (lang === 'zh') return t.name ? `${t.name}计时器` : `${formatDuration(t.seconds ?? 0, 'zh')}的计时器`;
    return t.name ? `${t.name} timer` : `timer for ${formatDuration(t.seconds ?? 0, 'en')}`;
  }

  /** How the question names each timer: by name, else length; both, and then the time left, when that is not enough to tell them apart. */
  private labels(ts: TimerStatus[], lang: Lang): string[] {
    const zh = lang === 'zh';
    const base = ts.map((t) => this.describe({ name: t.name, seconds: t.duration_s }, lang));
    const dup = (xs: string[]): boolean => new Set(xs).size !== xs.length;
    let out = base;
    if (dup(out)) out = ts.map((t, i) => (t.name ? (zh ? `${formatDuration(t.duration_s, 'zh')}的${t.name}计时器` : `${t.name} timer for ${formatDuration(t.duration_s, 'en')}`) : (base[i] as string)));
    if (dup(out)) {
      const withLeft = ts.map((t, i) => (zh ? `还剩${formatDuration(t.remaining_s, 'zh')}的${out[i]}` : `${out[i]} with ${formatDuration(t.remaining_s, 'en')} left`));
      // Still alike (two timers set together): by position, which "the first one" answers.
      if (!dup(withLeft)) out = withLeft;
      else return out.map((l, i) => (zh ? `第${i + 1}个${l}` : `the ${ORDINALS_EN[i] ?? `number ${i + 1}`} ${l}`));
    }
    return out.map((l) => (zh ? l : `the ${l}`));
  }

  private ask(intent: Op, s: IntentSlots, fits: TimerStatus[], channel: string, lang: Lang): string {
    const timeout = this.d.choiceTimeoutMs?.() ?? 15_000;
    this.pending = { intent, slots: s, ids: fits.map((t) => t.id), channel, until: this.d.clock.now() + timeout };
    const labels = this.labels(fits, lang);
    const last = labels.pop() as string;
    if (lang === 'zh') return `你说的是哪个计时器：${labels.join('、')}还是${last}？`;
    return `Which timer do you mean: ${labels.join(', ')} or ${last}?`;
  }

  private choice(s: IntentSlots, lang: Lang): string | undefined {
    const p = this.pending;
    if (!p || this.d.clock.now() > p.until) {
      this.pending = undefined;
      return undefined;
    }
    const svc = this.d.timers();
    const zh = lang === 'zh';
    if (!svc) {
      this.pending = undefined;
      return zh ? '计时器现在不可用。' : 'Timers are not available right now.';
    }
    const active = new Map(svc.find({}).map((t) => [t.id, t]));
    const asked = p.ids.map((id) => active.get(id)).filter((t): t is TimerStatus => t !== undefined);
    let picked: TimerStatus[];
    const ordinal = typeof s.ordinal === 'number' ? s.ordinal : undefined;
    if (ordinal !== undefined) {
      // Positions are those of the question, whose timers may have ended since.
      const id = ordinal === -1 ? p.ids.at(-1) : p.ids[ordinal - 1];
      picked = asked.filter((t) => t.id === id);
    } else {
      const name = str(s.timer_name)?.toLowerCase().replace(/\s+timer$/, '');
      const start = posNum(s.start_seconds);
      picked = asked.filter((t) => (name === undefined || t.name?.toLowerCase() === name) && (start === undefined || Math.round(t.duration_s) === Math.round(start)));
    }
    const op = p.intent as Op;
    if (picked.length === 1) {
      this.pending = undefined;
      return this.act(svc, op, picked[0] as TimerStatus, p.slots, lang);
    }
    if (asked.length === 0) {
      this.pending = undefined;
      return zh ? '那些计时器已经结束了。' : 'Those timers have ended.';
    }
    // Not one of them, or still more than one: ask again (the question stays open), never guess.
    const again = this.ask(op, p.slots, picked.length > 1 ? picked : asked, p.channel, lang);
    return picked.length > 1 ? again : zh ? `不是其中之一。${again}` : `That is not one of them. ${again}`;
  }

  private act(svc: TimerService, intent: Op, t: TimerStatus, s: IntentSlots, lang: Lang): string {
    const zh = lang === 'zh';
    const label = this.describe({ name: t.name, seconds: t.duration_s }, lang);
    const left = (x: TimerStatus): string => formatDuration(x.remaining_s, lang);
    switch (intent) {
      case 'HassCancelTimer':
        svc.cancel({ id: t.id });
        return zh ? `已取消${label}。` : `Cancelled the ${label}.`;
      case 'HassPauseTimer': {
        const p = svc.pause({ id: t.id });
        return p ? (zh ? `已暂停${label}，还剩${left(p)}。` : `Paused the ${label} with ${left(p)} left.`) : this.op(svc, intent, s, '', lang);
      }
      case 'HassUnpauseTimer': {
        const r = svc.resume({ id: t.id });
        return r ? (zh ? `${label}继续计时，还剩${left(r)}。` : `Resumed the ${label}: ${left(r)} left.`) : this.op(svc, intent, s, '', lang);
      }
      case 'HassIncreaseTimer':
      case 'HassDecreaseTimer': {
        const by = posNum(s.seconds);
        if (!by) return zh ? '要加减多长时间？' : 'By how much?';
        const up = intent === 'HassIncreaseTimer';
        if (!up && t.remaining_s <= by) {
          return zh
            ? `${label}只剩${left(t)}了，不能减去${formatDuration(by, 'zh')}。`
            : `The ${label} has only ${left(t)} left, so I can't take off ${formatDuration(by, 'en')}.`;
        }
        let n: TimerStatus | undefined;
        try {
          n = svc.adjust({ id: t.id }, up ? by : -by);
        } catch (err) {
          if (err instanceof TimerError) return zh ? '计时器最长7天。' : `I can't: ${err.message}.`;
          throw err;
        }
        if (!n) return zh ? `没有${label}。` : `There is no ${label}.`;
        if (zh) return `已给${label}${up ? '加' : '减'}了${formatDuration(by, 'zh')}，还剩${left(n)}。`;
        return up ? `Added ${formatDuration(by, 'en')} to the ${label}: ${left(n)} left.` : `Took ${formatDuration(by, 'en')} off the ${label}: ${left(n)} left.`;
      }
      case 'HassTimerStatus':
        return zh ? `${label}${t.state === 'paused' ? '暂停中，' : ''}还剩${left(t)}。` : `The ${label} has ${left(t)} left${t.state === 'paused' ? ' and is paused' : ''}.`;
    }
  }

  private statusAll(svc: TimerService, lang: Lang): string {
    const zh = lang === 'zh';
    const list = svc.status();
    if (!list.length) return zh ? '现在没有在运行的计时器。' : 'No timers are running.';
    const one = (t: TimerStatus): string => {
      const label = this.describe({ name: t.name, seconds: t.duration_s }, lang);
      const paused = t.state === 'paused';
      return zh ? `${label}${paused ? '暂停中，' : ''}还剩${formatDuration(t.remaining_s, 'zh')}` : `the ${label} has ${formatDuration(t.remaining_s, 'en')} left${paused ? ' (paused)' : ''}`;
    };
    if (list.length === 1) return zh ? `${one(list[0] as TimerStatus)}。` : `${cap(one(list[0] as TimerStatus))}.`;
    return zh ? `有${list.length}个计时器：${list.map(one).join('；')}。` : `You have ${list.length} timers: ${joinNames(list.map(one), lang)}.`;
  }
}
