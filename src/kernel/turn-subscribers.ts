/**
 * The subscribers of the turn event stream (src/kernel/turn-events.ts): each
 * turns the one stream into what it keeps, so no fact of a turn is written by
 * two call sites.
 * - `runLogSubscriber`: the append-only run log (seed 002 §3) gets every
 *   event but `llm.delta` (a completed round is persisted, not each token);
 *   images as `sha256:` references to the picture store (withImageRefs).
 * - `memoryWindowSubscriber`: the memory's context window gets the user's
 *   words (turn.started), each executed tool (tool.executed, denied calls
 *   excepted) and the agent's words (turn.finished) — of conversation turns
 *   only: the kernel's own (`isSelfInput`, the `_consolidation_` merge and
 *   review prompts and their answers) are never recorded.
 * - `busSubscriber`: every event on the bus under its own name (`llm.delta`
 *   included: the bus is the live view).
 * - `TurnResultCollector`: the `ask` result of one turn (tools in order,
 *   reply and status).
 */
import type { Logger } from './log-types.js';
import { isSelfInput, type TurnResult } from './turn-types.js';
import type { KernelMemory } from './memory-port.js';
import type { Clock } from './clock.js';
import type { RunLog } from './run-log.js';
import type { EventBus } from './event-bus.js';
import type { TurnEvent, TurnEventListener } from './turn-events.js';
import { errorMessage } from './errors.js';
import { createHash } from 'node:crypto';
import type { ChatMessage } from './llm-types.js';

/** The run log's stand-in for an image: `sha256:<hex of the decoded bytes>` (the picture store's name for it). */
export function imageRef(base64: string): string {
  return `sha256:${createHash('sha256').update(Buffer.from(base64, 'base64')).digest('hex')}`;
}

/** `ms` with each message's images replaced by {@link imageRef}s (the same array when none has images). */
function refMessages(ms: ChatMessage[]): ChatMessage[] {
  return ms.some((m) => m.images?.length) ? ms.map((m) => (m.images?.length ? { ...m, images: m.images.map(imageRef) } : m)) : ms;
}

/**
 * An event as the run log keeps it: images (base64, in an input, a projected
 * context or an LLM request) become `sha256:<hex>` references, so a picture
 * is stored once, by the memory's picture store (src/memory/pictures.ts,
 * `<data dir>/images/<hex[0..2]>/<hex>.<ext>`; issue 18 "Pictures"), and not
 * again in every request that carried it. deriveContext returns the references.
 */
export function withImageRefs<E extends TurnEvent>(ev: E): E {
  switch (ev.type) {
    case 'turn.started':
      return ev.input.images?.length ? { ...ev, input: { ...ev.input, images: ev.input.images.map(imageRef) } } : ev;
    case 'context.projected':
      return { ...ev, messages: refMessages(ev.messages) };
    case 'llm.requested':
      return { ...ev, appended: refMessages(ev.appended) };
    default:
      return ev;
  }
}

/** Persist every event but `llm.delta` (images as references: withImageRefs); a failing log is logged and never breaks the turn. */
export function runLogSubscriber(runLog: () => RunLog, log: Logger): TurnEventListener {
  return (ev) => {
    if (ev.type === 'llm.delta') return;
    try {
      runLog().append(withImageRefs(ev));
    } catch (err) {
      log.warn({ err: errorMessage(err), event: ev.type }, 'run log append failed');
    }
  };
}

/**
 * Record the turn in the memory window (src/kernel/memory-port.ts
 * ContextEvent ids `<turn>:user`, `<turn>:tool:<call id>`, `<turn>:agent`).
 * The user event carries what was said (`input.text`); an on_input rewrite
 * reaches only this turn's model. An agent event is recorded when the agent
 * said something or the turn was interrupted (then marked so); a reply cut
 * short carries its reason (`cut`), never the user's stop mark. The user
 * event's `speaker` is the person speaking (absent when unidentified).
 *
 * Self-input turns (`isSelfInput`: consolidation prompts, their tool calls
 * and answers) record nothing: housekeeping is not conversation, so it never
 * reaches later prompts, the rule distiller's queue (which reads user
 * events), the recall state or the prune query.
 */
export function memoryWindowSubscriber(memory: () => KernelMemory, clock: Clock): TurnEventListener {
  const sources = new Map<string, string>();
  const self = new Set<string>();
  return (ev) => {
    if (ev.type === 'turn.started' && isSelfInput(ev.input)) self.add(ev.turn);
    if (self.has(ev.turn)) {
      if (ev.type === 'turn.finished') self.delete(ev.turn);
      return;
    }
    switch (ev.type) {
      case 'turn.started': {
        const input = ev.input;
        sources.set(ev.turn, input.source);
        // An announcement (a timer going off, a device that did not report back) was said by the box, not to it: it is
        // kept as what the box said (the agent record at turn.finished), never as a person's words (a tester found a
        // notice in memory as a user document).
        if (input.announcement) return;
        memory().append({ id: `${ev.turn}:user`, time: input.received_at, kind: 'user', source: input.source, input: input.text, response: '', ...(input.user ? { speaker: input.user } : {}) });
        return;
      }
      case 'tool.executed': {
        if (ev.denied) return;
        // A call made through tools_call is kept as the model made it (`input`), so the history shows it the same
        // way; `tool` names the tool that ran, whose memory policy (no_memory, cleaner) applies.
        const called = ev.via ? { name: ev.via, arguments: { name: ev.name, arguments: ev.arguments } } : { name: ev.name, arguments: ev.arguments };
        memory().append({
          id: `${ev.turn}:tool:${ev.call_id}`,
          time: clock.now(),
          kind: 'tool',
          source: sources.get(ev.turn) ?? '',
          input: `${called.name}(${JSON.stringify(called.arguments)})`,
          response: ev.result,
          tool: ev.name,
        });
        return;
      }
      case 'turn.finished': {
        const source = sources.get(ev.turn) ?? '';
        sources.delete(ev.turn);
        const interrupted = ev.outcome.kind === 'interrupted';
        const cut = ev.outcome.kind === 'cut_short' ? ev.outcome.reason : undefined;
        if (!ev.said && !interrupted && !cut) return;
        memory().append({ id: `${ev.turn}:agent`, time: clock.now(), kind: 'agent', source, input: '', response: ev.said, interrupted, ...(cut ? { cut } : {}) });
        return;
      }
      default:
        return;
    }
  };
}

/** Publish every turn event on the bus under its `type` (the payload is the event itself). */
export function busSubscriber(bus: EventBus): TurnEventListener {
  return (ev) => bus.publish(ev.type, ev as never);
}

/** Folds one turn's events into the TurnResult its injector gets. */
export class TurnResultCollector {
  private readonly value: TurnResult;
  constructor(readonly turn: string) {
    this.value = { input_id: turn, reply: '', status: 'done', tools: [] };
  }

  /** The listener to subscribe; ignores other turns' events. */
  readonly listener: TurnEventListener = (ev: TurnEvent) => {
    if (ev.turn !== this.turn) return;
    if (ev.type === 'tool.executed') {
      this.value.tools.push({ name: ev.name, arguments: ev.arguments, result: ev.result, is_error: ev.is_error, ...(ev.denied ? { denied: true } : {}) });
    } else if (ev.type === 'turn.finished') {
      this.value.status = ev.status;
      this.value.reply = ev.reply;
      if (ev.outcome.kind === 'error') this.value.error = ev.outcome.message;
      if (ev.outcome.kind === 'cut_short') {
        this.value.cut_reason = ev.outcome.reason;
        this.value.error = ev.outcome.message;
      }
    }
  };

  /** The result so far (final once `turn.finished` was seen). */
  get result(): TurnResult {
    return this.value;
  }
}
