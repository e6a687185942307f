/**
 * Inputs and turns: what enters the agent (seed 001 `InjectInput(source,
 * channel, payload)`, interrupt levels of seed 001 "Input Scheduler &
 * Interrupt Mechanism") and what a finished turn reports back to whoever
 * injected it. No IO here.
 */

/** Interrupt levels (seed 001 "Four interrupt levels"): 0 is a queued task, 1-4 interrupts. */
export type Level = 0 | 1 | 2 | 3 | 4;

/** An input as it enters the agent (seed 001 `InjectInput(source, channel, payload)`). */
export interface InputMessage {
  /** Unique id, assigned by the kernel. */
  id: string;
  /** The plugin that injected it (`console`, `voice`, `timers`, `_kernel_`). */
  source: string;
  /** The output channel a reply goes to (`console`, `speaker`, `_consolidation_`). */
  channel: string;
  text: string;
  /** 'queued' tasks have level 0; interrupts L1-L4 (seed 001 "Two task classes"). */
  kind: 'queued' | 'interrupt';
  level: Level;
  /** Who spoke, when known. */
  user?: string;
  /** Wall-clock time of arrival, ms since epoch (from the kernel's clock). */
  received_at: number;
  /** Base64-encoded images attached to this input. */
  images?: string[];
  /** Free routing metadata (e.g. the voice pipeline's utterance id). */
  meta?: Record<string, unknown>;
}

/** Options of injectInput / injectInterrupt. */
export interface InjectOptions {
  user?: string;
  images?: string[];
  meta?: Record<string, unknown>;
}

/** What a finished turn reports to whoever injected the input. */
export interface TurnResult {
  input_id: string;
  /** The reply text delivered to the input's channel ('' when none). */
  reply: string;
  /** 'done' normally; 'interrupted' when stop cut it; 'short_circuit' when a stage answered; 'error' on failure; 'cancelled' when stop dropped it before it ran. */
  status: 'done' | 'interrupted' | 'short_circuit' | 'error' | 'cancelled';
  /** Tools the turn executed, in order. */
  tools: Array<{ name: string; arguments: Record<string, unknown>; result: string; is_error: boolean; denied?: boolean }>;
  error?: string;
}

