/**
 * The port between the kernel and the memory system (seed 001 "Three-Layer
 * Memory", seed 000 §7 "Agent 内部完整流程"). The kernel calls these at fixed
 * points of a turn; src/memory implements them over SQLite. `SimpleContextStore`
 * is a bounded in-memory fallback used when no memory system is wired (tests of
 * the kernel alone).
 */
import type { MemItem } from './memory-types.js';
import type { ToolDef } from './stage-types.js';
import type { CutReason } from './turn-types.js';

/**
 * One event of the context window (seed 001 RelevanceContext event).
 * Three-branch text for vectors: agent -> response, user -> input,
 * cold_storage -> input + response.
 */
export interface ContextEvent {
  id: string;
  /** ms since epoch: when it happened (archived docs keep their original time). */
  time: number;
  kind: 'user' | 'agent' | 'tool' | 'cold_storage';
  /** The plugin/channel it came from (`console`, `voice`, `_consolidation_`). */
  source: string;
  /** user: what was said; tool: the call as text; cold_storage: the archived input. */
  input: string;
  /** agent: the reply; tool: the tool output; cold_storage: the archived reply. */
  response: string;
  /** tool events: the tool's name (for per-tool cleaners and NoMemory). */
  tool?: string;
  /** Set on agent events whose reply was cut by stop. */
  interrupted?: boolean;
  /** Set on agent events whose reply ended early for another reason (the stream broke, a limit); `response` is the text that arrived. */
  cut?: CutReason;
  /** Who spoke (user events): a person's name, absent when nobody was identified (never a channel's name). */
  speaker?: string;
  /**
   * User events, in the prompt's history only (src/kernel/prompt.ts
   * PromptHistory; never stored): the turn context the event's turn was
   * sent with, shown again before it byte for byte so the prompt grows by
   * appending (issue 19). `head`: time, channel, speaker; `memory`: the
   * recall block ('' when none, or when masked or forgotten).
   */
  context?: { head: string; memory: string };
}

/** What the kernel asks of memory for one turn's prompt. */
export interface PromptMemory {
  /** Text block injected into the system prompt (read-only memory), '' when nothing relevant. */
  text: string;
  items: MemItem[];
}

/** The memory system as the kernel sees it. All methods must not throw on bad input; errors are logged inside. */
export interface KernelMemory {
  /** Record an event in the context window (persisted before it returns when `durable`). */
  append(event: ContextEvent): void;
  /** Prune the window against the current input (seed 001: protect last 10, keep topK-10 most relevant, archive the rest). */
  prune(currentInput: string): void;
  /** The window's events in time order, newest last, within `budgetTokens`. */
  timeline(budgetTokens: number): ContextEvent[];
  /**
   * Recall for the prompt: documents + graph, within `budgetTokens`, skipping
   * ids in `exclude`. `speaker`: who is speaking (absent: unidentified); one
   * person's sensitive facts are not recalled for another. `shown`: the
   * conversation text the prompt already shows (summary and history); an item
   * whose words are all in it is not repeated (issue 19: every recalled line is
   * new tokens every turn). `covered`: ids of the events a conversation
   * summary in the prompt covers (compacted away); a past conversation among
   * them is recalled word for word only when close to what was said
   * (core.memory.prompt_doc_min_similarity), else it is noise every later
   * prompt carries.
   */
  recallForPrompt(input: string, budgetTokens: number, exclude?: ReadonlySet<string>, speaker?: string, shown?: string, covered?: ReadonlySet<string>): Promise<PromptMemory>;
  /** Tools the memory system offers to the model (memory_*, doc_*, knowledge_*). */
  tools(): ToolDef[];
  /** Whether the household knows a person of this name (for "I'm Anna", src/kernel/people.ts). Optional. */
  isPerson?(name: string): boolean;
  /** Register a tool's NoMemory flag and cleaner (seed 001 ToolDef). */
  registerToolMemoryPolicy(tool: string, policy: { no_memory?: boolean; cleaner?: (s: string) => string }): void;
  close(): void;
}

/** Rough token estimate used for budgets: ~4 chars per token for Latin text, 1 per CJK character. */
export function estimateTokens(text: string): number {
  let cjk = 0;
  for (const ch of text) if (ch.charCodeAt(0) > 0x2e80) cjk++;
  return Math.ceil((text.length - cjk) / 4) + cjk;
}

/** A bounded in-memory context window with no recall: the kernel's fallback. */
export class SimpleContextStore implements KernelMemory {
  private events: ContextEvent[] = [];
  constructor(private readonly limit = 30) {}
  append(event: ContextEvent): void {
    this.events.push(event);
  }
  prune(): void {
    if (this.events.length > this.limit) this.events = this.events.slice(-this.limit);
  }
  timeline(budgetTokens: number): ContextEvent[] {
    const out: ContextEvent[] = [];
    let used = 0;
    for (let i = this.events.length - 1; i >= 0; i--) {
      const e = this.events[i]!;
      used += estimateTokens(e.input) + estimateTokens(e.response);
      if (used > budgetTokens && out.length > 0) break;
      out.unshift(e);
    }
    return out;
  }
  async recallForPrompt(): Promise<PromptMemory> {
    return { text: '', items: [] };
  }
  tools(): ToolDef[] {
    return [];
  }
  registerToolMemoryPolicy(): void {}
  close(): void {}
}
