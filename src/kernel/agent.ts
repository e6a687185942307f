/**
 * The agent: one persistent session fed by an inbox, run one turn at a time
 * under the input scheduler (seed 001 "Input Scheduler & Interrupt
 * Mechanism", seed 000 §18).
 *
 * - injectInput -> inbox -> (pumped on the next tick) -> scheduler.
 * - An interrupt that outranks the running turn preempts it at the LLM
 *   boundary (path a: the in-flight LLM request is aborted); the preempted
 *   turn resumes later from its frame with "[interrupt] ..." notes (path b);
 *   when idle the interrupt simply runs (path c).
 * - stop(): aborts the in-flight LLM call and the running turn's stage
 *   signal, publishes `stop` (the speaker silences itself), and cancels every
 *   input queued at that moment — the scheduler's waiting tasks plus those
 *   still in the inbox: they run no stage at all, so none of them commands a
 *   device, calls a tool or starts a timer (issue 13). Inputs arriving later
 *   run normally. Stop is never held back by the preemption cooldown.
 * - Backlog feedback: when the running turn has been busy longer than
 *   core.scheduler.busy_feedback_ms, waiting inputs get an immediate short
 *   "busy" message on their own channel (once each).
 * - The kernel's own self-input queue: internal tasks on `_consolidation_`.
 */
import { randomUUID } from 'node:crypto';
import { isSelfInput, type InjectOptions, type InputMessage, type Level, type TurnResult } from './turn-types.js';
import type { KernelServices } from './services.js';
import { Scheduler, type Task } from './scheduler.js';
import { Turn } from './turn.js';
import { TurnResultCollector } from './turn-subscribers.js';
import { SpeakerSessions, normalisePersonName, validatePersonName } from './people.js';
import type { TimerHandle } from './clock.js';
import { errorMessage } from './errors.js';
import { charCount } from './visible-text.js';

interface Waiter {
  channel?: string;
  accept?: (text: string) => boolean;
  resolve: (input: InputMessage | null) => void;
}

interface Pending {
  turn: Turn;
  /** Folds the turn's events into its TurnResult (subscribed to the turn stream while the turn lives). */
  collector: TurnResultCollector;
  unsubscribe: () => void;
  resolve: (r: TurnResult) => void;
  busyNotified: boolean;
  /** Monotonic clock time its turn first started running, ms. */
  startedAt?: number;
}

/** The agent. */
export class Agent {
  private readonly scheduler: Scheduler<Pending>;
  private readonly inbox: Task<Pending>[] = [];
  private pumpScheduled = false;
  private looping = false;
  private recheckTimer?: TimerHandle;
  private busyTimer?: TimerHandle;
  private closed = false;
  private readonly waiters: Waiter[] = [];
  /** Callers of whenIdle() waiting for the loop to run out of turns. */
  private idleWaiters: Array<() => void> = [];
  /** Work that must run between turns (betweenTurns), in order. */
  private readonly betweenJobs: Array<() => Promise<void>> = [];
  /** Who is speaking on each channel or session (src/kernel/people.ts). */
  readonly speakers: SpeakerSessions;

  constructor(private readonly k: KernelServices) {
    this.scheduler = new Scheduler<Pending>(k.clock, k.settings.get<number>('core.scheduler.preempt_cooldown_ms'));
    this.speakers = new SpeakerSessions(
      () => k.clock.now(),
      () => k.settings.get<number>('core.people.speaker_ttl_min') * 60_000,
      (name) => k.memory.isPerson?.(name) === true,
    );
  }

  /**
   * Queue an input. `kind` 'queued' (level 0) or 'interrupt' (level 1-4,
   * already clamped by the caller). Resolves when its turn finishes.
   */
  submit(source: string, channel: string, rawText: string, kind: 'queued' | 'interrupt', level: Level, opts: InjectOptions = {}): Promise<TurnResult> {
    const max = this.k.settings.get<number>('core.agent.max_input_chars');
    let text = typeof rawText === 'string' ? rawText : String(rawText);
    const chars = charCount(text);
    if (chars > max) {
      this.k.log.warn({ source, channel, chars, max }, 'input too long; cut to core.agent.max_input_chars');
      // Cut at a code point, never inside a surrogate pair.
      text = Array.from(text).slice(0, max).join('');
    }
    const input: InputMessage = {
      id: randomUUID(),
      source,
      channel,
      text,
      kind,
      level: kind === 'queued' ? 0 : level,
      received_at: this.k.clock.now(),
      ...(opts.images ? { images: opts.images } : {}),
      ...(opts.meta ? { meta: opts.meta } : {}),
      ...(opts.announcement ? { announcement: true as const } : {}),
    };
    // Who is speaking: given, said ("this is Anna"), or the session's; the kernel's own inputs and announcements have nobody.
    if (!isSelfInput(input) && !input.announcement) Object.assign(input, this.speakers.resolve(input, this.givenSpeaker(source, opts)));
    if (this.closed) return Promise.resolve({ input_id: input.id, reply: '', status: 'cancelled', tools: [], error: 'agent is shutting down' });
    try {
      opts.onAccepted?.(input.id);
    } catch (err) {
      this.k.log.warn({ err: errorMessage(err) }, 'onAccepted callback failed');
    }
    // An announcement is the box's own words, never a person's answer to a running turn's question.
    const waiter = input.announcement ? undefined : this.waiters.find((w) => (!w.channel || w.channel === input.channel) && (!w.accept || safeAccept(w.accept, text)));
    if (waiter) {
      // The running turn asked for this answer: hand it over instead of queueing a new turn.
      this.waiters.splice(this.waiters.indexOf(waiter), 1);
      this.k.bus.publish('raw_input', input);
      if (!isSelfInput(input)) this.k.memory.append({ id: `${input.id}:user`, time: input.received_at, kind: 'user', source: input.source, input: text, response: '', ...(input.user ? { speaker: input.user } : {}) });
      waiter.resolve(input);
      return Promise.resolve({ input_id: input.id, reply: '', status: 'short_circuit', tools: [] });
    }
    this.k.bus.publish('raw_input', input);
    return new Promise<TurnResult>((resolve) => {
      const collector = new TurnResultCollector(input.id);
      const unsubscribe = this.k.turnEvents.subscribe(`result:${input.id}`, collector.listener);
      const payload: Pending = { turn: new Turn(input, this.k), collector, unsubscribe, resolve, busyNotified: false };
      const task: Task<Pending> = { id: input.id, level: input.level, kind, payload, preemptions: 0, submittedAt: input.received_at };
      if (opts.signal) this.dropWhenCallerGone(task, opts.signal);
      this.inbox.push(task);
      this.schedulePump();
    });
  }

  /**
   * The speaker an injector gave, checked: a name that is no person's (empty,
   * too long, a channel's name such as `console`) is logged and dropped, so
   * the input counts as unidentified rather than filing facts under a channel.
   */
  private givenSpeaker(source: string, opts: InjectOptions): { user?: string; user_via?: InjectOptions['user_via'] } {
    if (opts.user === undefined) return {};
    try {
      return { user: normalisePersonName(validatePersonName(opts.user, 'user')), ...(opts.user_via ? { user_via: opts.user_via } : {}) };
    } catch (err) {
      this.k.log.warn({ source, err: errorMessage(err) }, 'input speaker ignored: not a person\'s name');
      return {};
    }
  }

  /** See PluginSDK.awaitInput. */
  awaitInput(opts: { channel?: string; timeout_ms: number; accept?: (text: string) => boolean; signal?: AbortSignal }): Promise<InputMessage | null> {
    return new Promise((resolve) => {
      let timer: TimerHandle | undefined;
      const w: Waiter = {
        ...(opts.channel ? { channel: opts.channel } : {}),
        ...(opts.accept ? { accept: opts.accept } : {}),
        resolve: (v) => {
          if (timer) this.k.clock.clearTimeout(timer);
          resolve(v);
        },
      };
      const drop = () => {
        const i = this.waiters.indexOf(w);
        if (i >= 0) {
          this.waiters.splice(i, 1);
          w.resolve(null);
        }
      };
      if (opts.signal?.aborted) return resolve(null);
      opts.signal?.addEventListener('abort', drop, { once: true });
      timer = this.k.clock.setTimeout(drop, opts.timeout_ms);
      this.waiters.push(w);
    });
  }

  /** The kernel's self-input queue: an internal task on `_consolidation_` (seed 000 §13). */
  submitSelf(text: string): Promise<TurnResult> {
    return this.submit('_kernel_', '_consolidation_', text, 'queued', 0);
  }

  /**
   * Stop (seed 001 "Stop"): cancel the in-flight LLM call, silence output,
   * cancel inputs queued now (scheduler + inbox) before any of their stages
   * runs. Returns how many queued inputs were cancelled.
   */
  stop(source: string): number {
    const running = this.scheduler.current;
    running?.payload.turn.stop();
    for (const w of this.waiters.splice(0)) w.resolve(null);
    let cancelled = 0;
    for (const t of [...this.scheduler.waiting(), ...this.inbox]) {
      if (isSelfInput(t.payload.turn.input)) continue;
      t.payload.turn.cancelledByStop = true;
      // A turn not yet started runs no stage; a suspended one (preempted earlier) is stopped.
      t.payload.turn.stop();
      cancelled++;
    }
    this.k.log.info({ source, cancelled, running: !!running }, 'stop');
    this.k.bus.publish('stop', { source, cancelled_inputs: cancelled });
    return cancelled;
  }

  /** Inputs waiting (inbox included), for status and tests. */
  pendingInputs(): number {
    return this.inbox.length + this.scheduler.waiting().length;
  }

  /**
   * Resolves when no turn runs and no input waits in the inbox: at once when idle, else when the loop runs out of turns
   * (PluginSDK.whenIdle: tools change between turns, issue 17).
   */
  whenIdle(): Promise<void> {
    if (!this.looping && !this.pumpScheduled && this.inbox.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.idleWaiters.push(resolve));
  }

  /**
   * Run `fn` between turns, never during one: at once when the agent is idle
   * (no turn running, none suspended by a preemption), else right after the
   * running turn ends and before the next one begins. Turns that arrive
   * meanwhile wait until `fn` has settled. How `plugins reload` swaps a
   * plugin's tools (issue 17: "its tools disappear and reappear between
   * turns, never in the middle of one"). Resolves or rejects with `fn`'s
   * outcome.
   */
  betweenTurns<T>(fn: () => T | Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.betweenJobs.push(async () => {
        try {
          resolve(await fn());
        } catch (err) {
          reject(err);
        }
      });
      if (!this.looping) void this.loop();
    });
  }

  /** Whether a turn is running. */
  get busy(): boolean {
    return !!this.scheduler.current;
  }

  stats(): ReturnType<Scheduler<Pending>['stats']> & { inbox: number } {
    return { ...this.scheduler.stats(), inbox: this.inbox.length };
  }

  /** Refuse new inputs, stop the running turn, cancel the rest; resolves when the loop is idle. */
  async close(): Promise<void> {
    this.closed = true;
    this.stop('shutdown');
    for (let i = 0; i < 200 && (this.looping || this.pumpScheduled); i++) await new Promise((r) => setTimeout(r, 10));
    if (this.recheckTimer) this.k.clock.clearTimeout(this.recheckTimer);
    if (this.busyTimer) this.k.clock.clearTimeout(this.busyTimer);
  }

  // ---- internals ------------------------------------------------------------

  private schedulePump(): void {
    if (this.pumpScheduled) return;
    this.pumpScheduled = true;
    setImmediate(() => {
      this.pumpScheduled = false;
      this.pump();
    });
  }

  /** Move inbox items into the scheduler, acting on its decisions. */
  private pump(): void {
    while (this.inbox.length > 0) {
      const task = this.inbox.shift()!;
      const d = this.scheduler.submit(task);
      if (d.action === 'preempt') {
        this.k.log.info({ victim: d.victim.id, by: task.id, level: task.level }, 'preempting');
        (d.victim as Task<Pending>).payload.turn.requestPreempt(task.payload.turn.input.text);
      } else if (d.action === 'wait') {
        if (d.retryAt !== undefined) this.scheduleRecheck(d.retryAt);
        this.maybeBusyFeedback(task);
      }
    }
    if (!this.looping) void this.loop();
  }

  private scheduleRecheck(at: number): void {
    if (this.recheckTimer) this.k.clock.clearTimeout(this.recheckTimer);
    this.recheckTimer = this.k.clock.setTimeout(() => {
      this.recheckTimer = undefined;
      const d = this.scheduler.recheck();
      if (d.action === 'preempt') {
        const cur = this.scheduler.current;
        cur?.payload.turn.requestPreempt();
      } else if (d.action === 'wait' && d.retryAt !== undefined) this.scheduleRecheck(d.retryAt);
    }, Math.max(0, at - this.k.clock.monotonic()));
  }

  private async loop(): Promise<void> {
    this.looping = true;
    try {
      for (;;) {
        await this.runBetweenJobs();
        let task = this.scheduler.current;
        if (!task) task = this.scheduler.next();
        if (!task) break;
        task.payload.startedAt ??= this.k.clock.monotonic();
        this.armBusyTimer();
        // The turn emits turn.started / turn.finished on the bus itself (the assistant state follows them).
        const outcome = await task.payload.turn.run();
        if (outcome.kind === 'preempted') {
          this.scheduler.suspend(task);
          // The preempting input's text reaches the suspended turn as an [interrupt] note (seed 001 path b).
          continue;
        }
        this.scheduler.finish(task);
        this.settle(task);
        // Inputs that arrived during the turn are in the inbox: pump them before choosing.
        if (this.inbox.length > 0) this.pump();
      }
    } finally {
      this.looping = false;
      if (this.busyTimer) this.k.clock.clearTimeout(this.busyTimer);
      this.busyTimer = undefined;
      // A betweenTurns job queued while the loop was ending still runs.
      if (this.betweenJobs.length > 0) void this.loop();
      // Idle unless inputs arrived while the loop wound down (then the next loop resolves the waiters).
      else if (!this.pumpScheduled && this.inbox.length === 0) for (const w of this.idleWaiters.splice(0)) w();
    }
  }

  /**
   * Run the betweenTurns jobs while no turn has begun: nothing running (or
   * the chosen task not started yet) and no preempted turn waiting to resume.
   */
  private async runBetweenJobs(): Promise<void> {
    for (;;) {
      const cur = this.scheduler.current;
      if (this.betweenJobs.length === 0 || (cur && cur.payload.startedAt !== undefined) || this.scheduler.stats().stack > 0) return;
      await this.betweenJobs.shift()!();
    }
  }

  /** Resolve a finished task's promise with its collected result. */
  private settle(task: Task<Pending>): void {
    task.payload.unsubscribe();
    try {
      task.payload.resolve(task.payload.collector.result);
    } catch {
      /* resolver never throws */
    }
  }

  /**
   * InjectOptions.signal: when the caller goes away before the turn has
   * begun, the input is taken out of the inbox or the scheduler's queue and
   * ends `cancelled` at once, running no stage (a device command queued
   * behind a long turn must not act minutes later for nobody). A turn
   * already begun, or suspended by a preemption, runs to its end.
   */
  private dropWhenCallerGone(task: Task<Pending>, signal: AbortSignal): void {
    const turn = task.payload.turn;
    const onGone = (): void => {
      if (turn.begun) return;
      turn.cancelledByCaller = true;
      const i = this.inbox.indexOf(task);
      const removed = i >= 0 ? (this.inbox.splice(i, 1), true) : this.scheduler.withdraw(task);
      this.k.log.info({ input: turn.input.id, channel: turn.input.channel }, 'input dropped before it began: its caller is gone');
      // Removed from the queue: end it here (no stage runs). Otherwise the loop has just picked it and ends it the same way.
      if (removed) void turn.run().then(() => this.settle(task));
    };
    if (signal.aborted) onGone();
    else {
      signal.addEventListener('abort', onGone, { once: true });
      const prev = task.payload.unsubscribe;
      task.payload.unsubscribe = () => {
        signal.removeEventListener('abort', onGone);
        prev();
      };
    }
  }

  private armBusyTimer(): void {
    if (this.busyTimer) this.k.clock.clearTimeout(this.busyTimer);
    const after = this.k.settings.get<number>('core.scheduler.busy_feedback_ms');
    if (after <= 0) return;
    this.busyTimer = this.k.clock.setTimeout(() => {
      this.busyTimer = undefined;
      for (const t of this.scheduler.waiting()) this.maybeBusyFeedback(t);
    }, after);
  }

  /** Tell a waiting input's channel that the agent is busy, once, when the running turn is past the threshold. */
  private maybeBusyFeedback(task: Task<Pending>): void {
    const after = this.k.settings.get<number>('core.scheduler.busy_feedback_ms');
    const cur = this.scheduler.current;
    if (after <= 0 || !cur || cur === task || task.payload.busyNotified) return;
    const since = cur.payload.startedAt;
    if (since === undefined || this.k.clock.monotonic() - since < after) return;
    const input = task.payload.turn.input;
    if (input.channel === '_consolidation_' || !this.k.outputs.get(input.channel)) return;
    task.payload.busyNotified = true;
    const msg = this.k.settings.get<string>('core.scheduler.busy_message');
    void this.k.outputs
      .send({ channel: input.channel, kind: 'full', content: msg, type: 'text', meta: { busy_feedback: true }, input_id: input.id })
      .catch((err: unknown) => this.k.log.warn({ err: errorMessage(err) }, 'busy feedback failed'));
  }
}

function safeAccept(fn: (text: string) => boolean, text: string): boolean {
  try {
    return fn(text);
  } catch {
    return false;
  }
}
