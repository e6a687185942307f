/**
 * Prompt assembly: system prompt (persona, time, output rules, recalled
 * memory), the context window's timeline as messages, and the token budget of
 * seed 001 "Context Budget": working band = min(window x 0.8, 600000); memory
 * gets (band - fixed) / 3, the timeline the other 2/3. Budgets are ceilings.
 */
import type { ChatMessage } from './llm-types.js';
import type { ContextEvent } from './memory-port.js';
import type { CutReason } from './turn-types.js';
import { estimateTokens } from './memory-port.js';

/** Token budget of one turn. */
export interface TokenBudget {
  window: number;
  band: number;
  fixed: number;
  memory: number;
  context: number;
}

/** Seed 001 ComputeTokenBudget. `window` in tokens; `fixed` = persona + tools + rules. */
export function computeTokenBudget(window: number, fixed: number): TokenBudget {
  const band = Math.min(Math.floor(window * 0.8), 600000);
  const free = Math.max(0, band - fixed);
  const memory = Math.floor(free / 3);
  return { window, band, fixed, memory, context: free - memory };
}

/** Rules appended to the persona, by output mode (DESIGN.md "Output"). */
export function outputRules(mode: 'auto' | 'explicit', channel: string, channels: string[]): string {
  const list = channels.filter((c) => !c.startsWith('_')).join(', ');
  if (mode === 'explicit') {
    return `Output rule: nothing you write reaches anyone unless you call an output_send__<channel> tool. The current input came from channel "${channel}"; answer there with output_send__${channel}. Channels: ${list}.`;
  }
  return `Your plain text reply goes back to the channel the input came from ("${channel}"); keep it short and speakable. To send something to another channel, call output_send__<channel>. Channels: ${list}. To call a tool, use the tool-calling interface; never write tool calls as text.`;
}

/** What the model reads after a reply of its own that was cut short: the true reason, never "interrupted by the user". */
const CUT_MARKS: Record<CutReason, string> = {
  connection_lost: '[cut off: the connection to the language model was lost]',
  reply_limit: '[cut off: the reply reached the length limit]',
  tool_call_limit: '[cut off: too many tool calls at once; none of them ran]',
};

/** Render the timeline as chat messages (past turns; tool events as compact notes). */
export function timelineMessages(events: ContextEvent[]): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (const e of events) {
    switch (e.kind) {
      case 'user':
        out.push({ role: 'user', content: e.speaker ? `${e.speaker}: ${e.input}` : e.input });
        break;
      case 'agent':
        if (e.response) out.push({ role: 'assistant', content: e.interrupted ? `${e.response} [interrupted by the user]` : e.cut ? `${e.response} ${CUT_MARKS[e.cut]}` : e.response });
        break;
      case 'tool':
        out.push({ role: 'system', content: `[tool ${e.tool ?? ''}] ${e.input} -> ${truncate(e.response, 600)}` });
        break;
      case 'cold_storage':
        out.push({ role: 'system', content: `[recalled, ${new Date(e.time).toISOString()}] ${e.input}${e.response ? ` -> ${e.response}` : ''}` });
        break;
    }
  }
  return out;
}

/** Tokens of a message list (rough). */
export function messagesTokens(msgs: ChatMessage[]): number {
  let n = 0;
  for (const m of msgs) n += estimateTokens(m.content) + 4;
  return n;
}

function truncate(s: string, n: number): string {
  return s.length > n ? s.slice(0, n) + '…' : s;
}
