/**
 * Confirmation of risky actions (DESIGN.md "Waterfall veto"; seed 002): the
 * box asks, and only a "yes" (spoken or typed, English or Chinese) or the
 * button within the timeout lets the action run. No answer is a no, and the
 * box says the question timed out (not the reply to a "no"). Every
 * decision is logged with who asked and what for. One question is open at a
 * time; a new one supersedes (denies) the older.
 */
import type { Logger } from '../kernel/log-types.js';
import type { Clock, TimerHandle } from '../kernel/clock.js';
import type { Entity } from './entities.js';
import type { ActionName } from './commands.js';
import { NO_PHRASES_EN, YES_PHRASES_EN } from '../intents/answers.js';

/** How a question was settled. */
export type Decision = 'confirmed' | 'denied' | 'timeout' | 'superseded';

/** One logged decision. */
export interface DecisionRecord {
  /** Who asked: the user/source of the input ("voice", "console", "llm:<call id>"). */
  who: string;
  /** What for: "unlock Front Door". */
  what: string;
  decision: Decision;
  /**
   * How the answer came: 'input' (a spoken or typed yes/no on the question's
   * channel, named in `channel`), 'button', 'api' (confirm()), 'stop' (the stop button or command), 'timer' (no
   * answer in time) or 'gate' (superseded, undeliverable, the person moved on).
   */
  by: 'input' | 'button' | 'api' | 'stop' | 'timer' | 'gate';
  /** The channel the answering input came on ('voice', 'console', 'webui:…'); only when `by` is 'input'. */
  channel?: string;
  /** ms since epoch. */
  at: number;
}

/** A question to ask. */
export interface ConfirmRequest {
  who: string;
  what: string;
  /** Channel the question is spoken/written to. */
  channel: string;
  /** The question text. */
  question: string;
  /** 'en' | 'zh': language of the default acknowledgements. */
  lang?: string;
  /**
   * `what` as the box says it ("unlock the Front Door", "解锁前门"), in the
   * "I did not ..." it says when nobody answered (unansweredReply); default
   * `what`. A tester heard "so I did not unlock Front Door."
   */
  spoken?: string;
  /**
   * False when the caller delivers the question itself (the local-intent
   * path answers its turn with it); default true: sent with `ask`.
   */
  deliver?: boolean;
  /**
   * Runs once the question is settled; its text is the reply to the answer
   * (the "yes" turn, or sent to `channel` when the button answered).
   */
  followUp?: (ok: boolean) => Promise<string | undefined>;
}

interface Pending extends ConfirmRequest {
  resolve(ok: boolean): void;
  timer: TimerHandle;
  /** When it was asked and when it times out, ms since the epoch (Clock.now). */
  askedAt: number;
  expiresAt: number;
  result?: Promise<string | undefined>;
}

/** A whole answer that is one of `phrases` (src/intents/answers.ts, which the answer grammar is made of). */
const phraseRe = (phrases: readonly string[]): RegExp => new RegExp(`^(${phrases.map((p) => p.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join('|')})$`);
const YES_EN = phraseRe(YES_PHRASES_EN);
const NO_EN = phraseRe(NO_PHRASES_EN);
const YES_ZH = /^(是|是的|对|对的|好|好的|确认|确定|可以|行|嗯|要|开吧|没问题)$/;
const NO_ZH = /^(不|不要|不是|不用|取消|别|算了|否|不行|不可以)$/;

/** Read a yes/no answer (English or Chinese); undefined when the text is not one. */
export function parseYesNo(text: string): boolean | undefined {
  const t = text.trim().toLowerCase().replace(/[.!?,。！？，、\s]+$/g, '').replace(/^[\s,，]+/, '').replace(/[,，]?\s*(please|thanks|thank you|吧|啊|呀)$/u, '').trim();
  if (YES_EN.test(t) || YES_ZH.test(t)) return true;
  if (NO_EN.test(t) || NO_ZH.test(t)) return false;
  return undefined;
}

/**
 * Whether an action needs confirmation: unlocking (or opening) a lock,
 * opening a garage/gate cover, disarming an alarm, or any command to a device
 * listed in the risky setting (by id, name or alias, case-insensitive).
 */
export function isRiskyAction(entity: Entity, action: ActionName | 'disarm', risky: readonly string[]): boolean {
  const names = [entity.id, entity.name, ...entity.aliases].map((n) => n.toLowerCase());
  if (risky.some((r) => names.includes(r.toLowerCase()))) return true;
  if (entity.component === 'lock' && action === 'unlock') return true;
  if (entity.component === 'cover' && (action === 'open' || action === 'set_position') && ['garage', 'gate'].includes(entity.device_class ?? '')) return true;
  if (action === 'disarm') return true;
  return false;
}

/**
 * The names of `risky` (plugin.home.risky_devices) that fit none of
 * `entities` as isRiskyAction matches them (id, name or alias,
 * case-insensitive): such a name protects nothing.
 */
export function unknownRiskyNames(risky: readonly string[], entities: ReadonlyArray<Pick<Entity, 'id' | 'name' | 'aliases'>>): string[] {
  const known = new Set(entities.flatMap((e) => [e.id, e.name, ...e.aliases].map((n) => n.toLowerCase())));
  return risky.filter((r) => !known.has(r.toLowerCase()));
}

/**
 * What the box says when a question was not answered by a yes or no:
 * `timedOut` (nobody answered within plugin.home.confirm_timeout_ms) says that
 * the question timed out, which a "no" never does; otherwise the question was
 * dropped (the person moved on, or it could not be asked).
 */
export function unansweredReply(what: string, timedOut: boolean, zh: boolean): string {
  if (timedOut) return zh ? `确认的问题超时了，没有人回答，所以没有执行：${what}。` : `The question timed out with no answer, so I did not ${what}.`;
  return zh ? `没有得到确认，所以没有执行：${what}。` : `No confirmation, so I did not ${what}.`;
}

/** An open question as `homeagent status` shows it (ConfirmationGate.describeOpen). */
export interface OpenQuestion {
  question: string;
  channel: string;
  who: string;
  what: string;
  /** ms since the epoch. */
  asked_at: number;
  /** ms since the epoch: unanswered by then, nothing is done. */
  expires_at: number;
}

/** Options of ConfirmationGate. */
export interface ConfirmationGateOptions {
  log: Logger;
  clock: Clock;
  /** Seconds to wait for an answer (read at every question). */
  timeoutMs: () => number;
  /** Deliver the question to a channel (marked as a yes/no question: the voice box listens for the answer). */
  ask: (channel: string, question: string) => Promise<void>;
  /**
   * Deliver what came of a question (done, not done, timed out) to its
   * channel: no question, so nobody listens for a yes. Default: `ask`.
   */
  tell?: (channel: string, text: string) => Promise<void>;
  /** Told of every settled question, after it is logged (the home plugin publishes plugin.home.decision); a throw is logged, never lost into the gate. */
  onDecision?: (rec: DecisionRecord) => void;
}

/** See module comment. */
export class ConfirmationGate {
  private current: Pending | undefined;
  /** The most recent decisions (newest last, at most 100). */
  readonly decisions: DecisionRecord[] = [];

  constructor(private readonly opts: ConfirmationGateOptions) {}

  /** True while a question waits for its answer. */
  get pending(): boolean {
    return this.current !== undefined;
  }

  /** True while a question asked on `channel` waits for its answer. */
  pendingOn(channel: string): boolean {
    return this.current?.channel === channel;
  }

  /** The open question's request, if any. */
  get open(): ConfirmRequest | undefined {
    if (!this.current) return undefined;
    const { who, what, channel, question } = this.current;
    return { who, what, channel, question };
  }

  /**
   * The open question for `homeagent status`: its text, channel, who asked
   * for what, and when it was asked and times out (ms since the epoch);
   * undefined when none waits.
   */
  describeOpen(): OpenQuestion | undefined {
    const p = this.current;
    if (!p) return undefined;
    return { question: p.question, channel: p.channel, who: p.who, what: p.what, asked_at: p.askedAt, expires_at: p.expiresAt };
  }

  /**
   * Ask and wait. Resolves true only on a yes within the timeout; false on
   * no, timeout, supersession or when the question cannot be delivered.
   */
  async request(req: ConfirmRequest): Promise<boolean> {
    if (this.current) this.settle(false, 'superseded', 'gate');
    const result = new Promise<boolean>((resolve) => {
      const timer = this.opts.clock.setTimeout(() => {
        if (this.current?.timer === timer) this.settle(false, 'timeout', 'timer');
      }, this.opts.timeoutMs());
      const askedAt = this.opts.clock.now();
      this.current = { ...req, resolve, timer, askedAt, expiresAt: askedAt + this.opts.timeoutMs() };
    });
    const mine = this.current;
    if (req.deliver === false) return result;
    try {
      await this.opts.ask(req.channel, req.question);
    } catch (err) {
      this.opts.log.warn({ err: (err as Error).message, channel: req.channel }, 'cannot deliver confirmation question');
      if (this.current === mine) this.settle(false, 'denied', 'gate');
    }
    return result;
  }

  /**
   * The open question on `channel` has been spoken (the voice box's
   * `plugin.voice.question_spoken`, also after "Please say yes or no."): its
   * timeout starts again from now, so the person has the whole
   * plugin.home.confirm_timeout_ms to answer; it ran from when the question
   * was written, and a question that took 5 s to speak left 10 s of 15 (a
   * tester's finding). It never ends later than twice the timeout after the
   * question was asked (a "Please say yes or no." starts it again too).
   * Nothing happens when no question is open on `channel`.
   */
  listening(channel: string): void {
    const p = this.current;
    if (!p || p.channel !== channel) return;
    const timeout = this.opts.timeoutMs();
    const now = this.opts.clock.now();
    const expiresAt = Math.min(now + timeout, p.askedAt + 2 * timeout);
    if (expiresAt <= p.expiresAt) return;
    this.opts.clock.clearTimeout(p.timer);
    const timer = this.opts.clock.setTimeout(() => {
      if (this.current?.timer === timer) this.settle(false, 'timeout', 'timer');
    }, expiresAt - now);
    p.timer = timer;
    p.expiresAt = expiresAt;
  }

  /**
   * Answer the open question (button or API). A follow-up's reply text is
   * delivered to the question's channel. Returns false when none was open.
   */
  confirm(yes: boolean, by: 'button' | 'api' = 'api'): boolean {
    const p = this.current;
    if (!p) return false;
    this.settle(yes, yes ? 'confirmed' : 'denied', by);
    void p.result?.then(async (text) => {
      if (text) await (this.opts.tell ?? this.opts.ask)(p.channel, text);
    }).catch((err: unknown) => this.opts.log.warn({ err: (err as Error).message }, 'cannot deliver confirmation result'));
    return true;
  }

  /**
   * Treat an input text as the answer when a question is open and the text
   * is a yes/no. Returns undefined when the text is not one (the question
   * stays open); otherwise the answer and the reply for that turn (the
   * follow-up's text, or a short acknowledgement). `channel`: the input's;
   * a yes/no on another channel than the question's is no answer to it (a
   * "yes" typed on the console to something else never unlocks the door the
   * voice asked about). Omitted: any channel (the caller already checked).
   */
  answer(text: string, channel?: string): { yes: boolean; reply: Promise<string> } | undefined {
    const p = this.current;
    if (!p) return undefined;
    if (channel !== undefined && channel !== p.channel) return undefined;
    const yn = parseYesNo(text);
    if (yn === undefined) return undefined;
    this.settle(yn, yn ? 'confirmed' : 'denied', 'input', channel ?? p.channel);
    const zh = p.lang === 'zh';
    const ack = yn ? (zh ? '好的。' : 'OK.') : zh ? '好的，不做了。' : 'OK, I won\'t do it.';
    const reply = (p.result ?? Promise.resolve(undefined)).then((t) => t ?? ack, () => ack);
    return { yes: yn, reply };
  }

  /** Deny the open question (plugin stop, or the person said something else). `quiet`: say nothing (a stop). */
  cancel(quiet = false): void {
    if (!this.current) return;
    if (quiet) {
      const p = this.current;
      p.followUp = undefined;
      this.settle(false, 'denied', 'stop');
    } else this.settle(false, 'denied', 'gate');
  }

  private settle(ok: boolean, decision: Decision, by: DecisionRecord['by'], channel?: string): void {
    const p = this.current;
    if (!p) return;
    this.current = undefined;
    this.opts.clock.clearTimeout(p.timer);
    const rec: DecisionRecord = { who: p.who, what: p.what, decision, by, ...(channel !== undefined ? { channel } : {}), at: this.opts.clock.now() };
    this.decisions.push(rec);
    if (this.decisions.length > 100) this.decisions.shift();
    this.opts.log.info(rec, `risky action ${decision}`);
    try {
      this.opts.onDecision?.(rec);
    } catch (err) {
      this.opts.log.warn({ err: (err as Error).message }, 'cannot report a risky action decision');
    }
    p.resolve(ok);
    if (p.followUp) p.result = p.followUp(ok);
    else p.result = undefined;
    // Nobody answered (or the person moved on): say that nothing was done, and why.
    if (decision === 'timeout' || (decision === 'denied' && by === 'gate')) {
      const fallback = unansweredReply(p.spoken ?? p.what, decision === 'timeout', p.lang === 'zh');
      // A timeout is not a "no": the follow-up's reply to a no ("OK, I did not ...") is not what happened.
      void (p.result ?? Promise.resolve(undefined))
        .then((t) => (this.opts.tell ?? this.opts.ask)(p.channel, decision === 'timeout' ? fallback : (t ?? fallback)))
        .catch((err: unknown) => this.opts.log.warn({ err: (err as Error).message }, 'cannot deliver confirmation result'));
    }
  }
}
