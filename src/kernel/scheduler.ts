/**
 * The input scheduler (seed 001 "Input Scheduler & Interrupt Mechanism"):
 * pure bookkeeping, no IO, time from an injected clock.
 *
 * - Two task classes: queued tasks (level 0) and interrupts (L1-L4).
 * - Default L1; L4 from an external plugin is clamped to L3 (clampPluginLevel).
 * - Preemption only by a strictly higher level than the running task's
 *   effective level; effective level = level + min(preemptions, 2), capped at 4
 *   (starvation guard).
 * - A preempted task goes on a LIFO interrupt stack with its frame and is
 *   resumed later; the stack is never re-sorted.
 * - The interrupt that won a preemption runs next, even though the victim's
 *   effective level rose when it was suspended.
 * - Preemption cooldown: a task preempted less than `cooldownMs` ago cannot be
 *   preempted again (default 2 s). Stop bypasses the scheduler entirely.
 */
import type { Level } from './turn-types.js';
import type { Clock } from './clock.js';

/** A schedulable unit. `payload` is the kernel's turn. */
export interface Task<P> {
  readonly id: string;
  readonly level: Level;
  readonly kind: 'queued' | 'interrupt';
  readonly payload: P;
  /** Times this task has been preempted. */
  preemptions: number;
  /** Monotonic clock time of the last preemption, ms (undefined when never preempted). */
  lastPreemptedAt?: number;
  /** Wall time it was submitted, ms since the epoch. */
  readonly submittedAt: number;
}

/** What submit() decided. */
export type SubmitDecision =
  | { action: 'run' } // idle: the caller should start running
  | { action: 'preempt'; victim: Task<unknown> } // the caller must preempt the running task
  | { action: 'wait'; retryAt?: number }; // queued; retryAt: monotonic clock time when a cooldown ends and preemption may be retried

/** L4 declared by a non-kernel plugin becomes L3 (seed 001 clampPluginLevel). */
export function clampPluginLevel(level: number, kernelLevel: boolean): Level {
  const l = Math.max(1, Math.min(4, Math.round(level))) as Level;
  return !kernelLevel && l === 4 ? 3 : l;
}

/** Effective level for preemption decisions (starvation guard). */
export function effectiveLevel(t: { level: Level; preemptions: number }): number {
  return Math.min(4, t.level + Math.min(t.preemptions, 2));
}

/** The scheduler. */
export class Scheduler<P> {
  private running?: Task<P>;
  private readonly queue: Task<P>[] = [];
  private readonly pending: Task<P>[] = [];
  private readonly stack: Task<P>[] = [];
  /** The interrupt that won a preemption: it runs as soon as the victim has yielded. */
  private preemptor?: Task<P>;

  constructor(
    private readonly clock: Clock,
    public cooldownMs = 2000,
  ) {}

  /** The task running now. */
  get current(): Task<P> | undefined {
    return this.running;
  }

  /** Add a task; decides whether it runs now, preempts, or waits. */
  submit(task: Task<P>): SubmitDecision {
    if (!this.running && this.stack.length === 0 && this.pending.length === 0 && this.queue.length === 0) {
      this.running = task;
      return { action: 'run' };
    }
    if (task.kind === 'queued') {
      this.queue.push(task);
      return { action: 'wait' };
    }
    this.insertPending(task);
    const cur = this.running;
    if (!cur) return { action: 'wait' };
    if (task.level <= effectiveLevel(cur)) return { action: 'wait' };
    const cooldownEnds = cur.lastPreemptedAt !== undefined ? cur.lastPreemptedAt + this.cooldownMs : -Infinity;
    if (this.clock.monotonic() < cooldownEnds) return { action: 'wait', retryAt: cooldownEnds };
    this.preemptor = task;
    return { action: 'preempt', victim: cur };
  }

  /**
   * Re-check whether the highest waiting interrupt may now preempt the running
   * task (after a cooldown ended). Same result shape as submit().
   */
  recheck(): SubmitDecision {
    const cur = this.running;
    const top = this.pending[0];
    if (!cur || !top) return { action: 'wait' };
    if (top.level <= effectiveLevel(cur)) return { action: 'wait' };
    const cooldownEnds = cur.lastPreemptedAt !== undefined ? cur.lastPreemptedAt + this.cooldownMs : -Infinity;
    if (this.clock.monotonic() < cooldownEnds) return { action: 'wait', retryAt: cooldownEnds };
    this.preemptor = top;
    return { action: 'preempt', victim: cur };
  }

  /** The running task stopped at a preemption point: push it on the interrupt stack with its frame. */
  suspend(task: Task<P>): void {
    if (this.running === task) this.running = undefined;
    task.preemptions += 1;
    task.lastPreemptedAt = this.clock.monotonic();
    this.stack.push(task);
  }

  /**
   * Take a task that waits (queued or a pending interrupt) out of the
   * scheduler; false when it is running, suspended on the stack, or unknown.
   */
  withdraw(task: Task<P>): boolean {
    for (const list of [this.queue, this.pending]) {
      const i = list.indexOf(task);
      if (i >= 0) {
        list.splice(i, 1);
        if (this.preemptor === task) this.preemptor = undefined;
        return true;
      }
    }
    return false;
  }

  /** The running task finished. */
  finish(task: Task<P>): void {
    if (this.running === task) this.running = undefined;
  }

  /**
   * Pick the next task and mark it running: a waiting interrupt that outranks
   * the top of the stack, else the top of the stack (LIFO), else the highest
   * waiting interrupt, else the oldest queued task.
   */
  next(): Task<P> | undefined {
    if (this.running) return undefined;
    const top = this.stack[this.stack.length - 1];
    const p = this.pending[0];
    let t: Task<P> | undefined;
    const winner = this.preemptor;
    this.preemptor = undefined;
    if (winner && this.pending.includes(winner)) {
      this.pending.splice(this.pending.indexOf(winner), 1);
      this.running = winner;
      return winner;
    }
    if (top && p && p.level > effectiveLevel(top)) t = this.pending.shift();
    else if (top) t = this.stack.pop();
    else if (p) t = this.pending.shift();
    else t = this.queue.shift();
    this.running = t;
    return t;
  }

  /** Every task not running: interrupt stack, waiting interrupts, queue (the stop budget). */
  waiting(): Task<P>[] {
    return [...this.stack, ...this.pending, ...this.queue];
  }

  /** Remove a waiting task (e.g. cancelled). */
  remove(task: Task<P>): boolean {
    for (const list of [this.stack, this.pending, this.queue]) {
      const i = list.indexOf(task);
      if (i >= 0) {
        list.splice(i, 1);
        return true;
      }
    }
    return false;
  }

  /** Sizes, for status output. */
  stats(): { running: boolean; stack: number; pending: number; queue: number } {
    return { running: !!this.running, stack: this.stack.length, pending: this.pending.length, queue: this.queue.length };
  }

  /** Pending interrupts stay ordered by level (highest first), FIFO within a level. */
  private insertPending(task: Task<P>): void {
    let i = 0;
    while (i < this.pending.length && this.pending[i]!.level >= task.level) i++;
    this.pending.splice(i, 0, task);
  }
}
