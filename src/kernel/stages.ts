/**
 * The stage pipeline host (seed 000 §3, seed 001 "7 Stage Hooks"): handlers per
 * stage, run concurrently on one shared context; each handler sees a view that
 * enforces the stage's write rights; a handler that throws, writes what it may
 * not, or hangs past the timeout is logged and the others' effects stand —
 * except in before_toolcall, where such a failure denies the call (fail
 * closed: a crashed veto must not approve a risky action by omission).
 */
import type { Logger } from './log-types.js';
import { systemClock, type Clock, type TimerHandle } from './clock.js';
import type { MemItem } from './memory-types.js';
import type { StageContext, StageHandler, StageName } from './stage-types.js';
import type { InputMessage } from './turn-types.js';
import { STAGE_WRITE_RIGHTS } from './stage-types.js';
import { StageAccessError, errorMessage } from './errors.js';

interface Registered {
  owner: string;
  handler: StageHandler;
  /** Per-handler time limit, ms (default: the host's). */
  timeoutMs?: number;
}

/** Fields of a fresh stage context that are not derived from the input. */
export type StageInit = Partial<Omit<StageContext, 'stage' | 'input' | 'partial' | 'memory' | 'signal'>> & {
  partial?: boolean;
  memory?: readonly MemItem[];
  /** The turn's stop signal (default: one that never aborts). */
  signal?: AbortSignal;
};

const NEVER_ABORTED = new AbortController().signal;

/** Build a stage context for `stage` and `input` with defaults. */
export function newStageContext(stage: StageName, input: InputMessage, init: StageInit = {}): StageContext {
  return {
    stage,
    input,
    raw_message: init.raw_message ?? input.text,
    context_messages: init.context_messages ?? [],
    llm_text: init.llm_text ?? '',
    tool_calls: init.tool_calls ?? [],
    tool_call: init.tool_call,
    deny: init.deny ?? false,
    deny_reason: init.deny_reason,
    tool_result: init.tool_result,
    final_text: init.final_text ?? '',
    partial: init.partial ?? false,
    skip_output: init.skip_output ?? false,
    response: init.response,
    ...(init.response_meta ? { response_meta: init.response_meta } : {}),
    memory: init.memory ?? [],
    signal: init.signal ?? NEVER_ABORTED,
    extra: init.extra ?? {},
  };
}

/**
 * A view of `ctx` for one handler: reads pass through; writes to fields the
 * stage does not allow throw StageAccessError (seed 000 §3 rights table).
 * Object-valued fields the stage may not write (context_messages outside
 * pre/post_action) are handed out frozen copies so in-place edits fail too.
 */
function guardedView(ctx: StageContext): { view: StageContext; revoke: () => void } {
  const allowed = new Set<string>([...STAGE_WRITE_RIGHTS[ctx.stage], 'extra']);
  let revoked = false;
  const view = new Proxy(ctx, {
    get(target, prop, receiver) {
      const v: unknown = Reflect.get(target, prop, receiver);
      // The abort signal is handed out as is: it cannot be cloned, and it has nothing to write.
      if (typeof prop === 'string' && !allowed.has(prop) && v !== null && typeof v === 'object' && !(v instanceof AbortSignal)) {
        return deepFreezeCopy(v);
      }
      return v;
    },
    set(target, prop, value, receiver) {
      // A handler that outlived its timeout no longer writes to the shared context.
      if (revoked) throw new StageAccessError(ctx.stage, `${String(prop)} (handler timed out)`);
      if (typeof prop !== 'string' || !allowed.has(prop)) throw new StageAccessError(ctx.stage, String(prop));
      return Reflect.set(target, prop, value, receiver);
    },
    deleteProperty(_target, prop) {
      throw new StageAccessError(ctx.stage, String(prop));
    },
  });
  return { view, revoke: () => (revoked = true) };
}

function deepFreezeCopy<T>(v: T): T {
  const copy = structuredClone(v);
  const freeze = (o: unknown): void => {
    if (o && typeof o === 'object' && !Object.isFrozen(o)) {
      Object.freeze(o);
      for (const k of Object.keys(o)) freeze((o as Record<string, unknown>)[k]);
    }
  };
  freeze(copy);
  return copy;
}

/** Registry and runner of stage handlers. */
export class StageHost {
  private readonly handlers = new Map<StageName, Registered[]>();
  constructor(
    private readonly log: Logger,
    /** Per-handler time limit, ms. */
    public timeoutMs = 5000,
    /** Time source of the handler time limit (tests: FakeClock). */
    private readonly clock: Clock = systemClock,
  ) {}

  register(owner: string, stage: StageName, handler: StageHandler, timeoutMs?: number): void {
    const list = this.handlers.get(stage) ?? [];
    list.push({ owner, handler, ...(timeoutMs ? { timeoutMs } : {}) });
    this.handlers.set(stage, list);
  }

  removeOwner(owner: string): void {
    for (const [stage, list] of this.handlers) this.handlers.set(stage, list.filter((h) => h.owner !== owner));
  }

  countOwner(owner: string): number {
    let n = 0;
    for (const list of this.handlers.values()) n += list.filter((h) => h.owner === owner).length;
    return n;
  }

  has(stage: StageName): boolean {
    return (this.handlers.get(stage)?.length ?? 0) > 0;
  }

  /**
   * Run every handler of `ctx.stage` concurrently on `ctx`. Resolves when all
   * have finished or timed out; never rejects. Returns the failures.
   */
  async run(ctx: StageContext): Promise<Array<{ owner: string; error: string }>> {
    const list = this.handlers.get(ctx.stage);
    if (!list || list.length === 0) return [];
    const failures: Array<{ owner: string; error: string }> = [];
    await Promise.all(
      list.map(async ({ owner, handler, timeoutMs }) => {
        const limit = timeoutMs ?? this.timeoutMs;
        let timer: TimerHandle | undefined;
        const { view, revoke } = guardedView(ctx);
        try {
          await Promise.race([
            Promise.resolve().then(() => handler(view)),
            new Promise<never>((_, reject) => {
              // keepAlive: a hung handler must still time out when nothing else holds the process open.
              timer = this.clock.setTimeout(() => reject(new Error(`handler timed out after ${limit} ms`)), limit, { keepAlive: true });
            }),
          ]);
        } catch (err) {
          failures.push({ owner, error: errorMessage(err) });
          this.log.warn({ stage: ctx.stage, owner, err: errorMessage(err) }, 'stage handler failed');
          // Fail closed: a veto handler that crashed or hung cannot approve a tool call by omission.
          if (ctx.stage === 'before_toolcall' && !ctx.deny) {
            ctx.deny = true;
            ctx.deny_reason = `a safety check (${owner}) failed: ${errorMessage(err)}`;
          }
        } finally {
          this.clock.clearTimeout(timer);
          revoke();
        }
      }),
    );
    return failures;
  }
}
