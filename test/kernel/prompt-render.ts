/**
 * A recorded chat request rendered the way a chat template reads it (issue
 * 19): the system message, then the tool schemas, then every other message in
 * order, each as `<|im_start|>role ... <|im_end|>` (ChatML, the Qwen family's
 * format). System messages after the first are rendered where they stand,
 * tool calls as their name and arguments (a JSON string of OpenAI's is
 * parsed, so both protocols render the same bytes), tool results with their
 * tool name. What a model server re-reads after a change is the rendered text
 * from the first byte that differs.
 */
import type { ReceivedBody, ReceivedMessage } from '../support/llm-test-server.js';

/** Marker that opens the turn-context block (src/kernel/prompt.ts turnContext). */
export { TURN_CONTEXT_MARK } from '../../src/kernel/prompt.js';
import { TURN_CONTEXT_MARK } from '../../src/kernel/prompt.js';

function args(a: unknown): unknown {
  if (typeof a !== 'string') return a ?? {};
  try {
    return JSON.parse(a);
  } catch {
    return a;
  }
}

/** One message as ChatML text. */
export function renderMessage(m: ReceivedMessage): string {
  const role = m.role ?? 'user';
  let body = typeof m.content === 'string' ? m.content : m.content === undefined || m.content === null ? '' : JSON.stringify(m.content);
  if (m.tool_calls?.length) body += m.tool_calls.map((c) => `\n<tool_call>${JSON.stringify({ name: c.function?.name, arguments: args(c.function?.arguments) })}</tool_call>`).join('');
  if (role === 'tool') body = `<tool_response name="${m.tool_name ?? m.name ?? ''}">\n${body}\n</tool_response>`;
  return `<|im_start|>${role}\n${body}<|im_end|>\n`;
}

/** The tool schemas block (names, descriptions and parameters, as the request carried them). */
export function renderTools(body: ReceivedBody): string {
  const tools = body.tools ?? [];
  if (!tools.length) return '';
  return `<|im_start|>system\n# Tools\n<tools>\n${tools.map((t) => JSON.stringify(t)).join('\n')}\n</tools><|im_end|>\n`;
}

/** The whole prompt text of a chat request: first system message, tools, then the rest in order, then the assistant header. */
export function renderRequest(body: ReceivedBody): string {
  const msgs = body.messages ?? [];
  const first = msgs[0]?.role === 'system' ? msgs[0] : undefined;
  const rest = first ? msgs.slice(1) : msgs;
  return (first ? renderMessage(first) : '') + renderTools(body) + rest.map(renderMessage).join('') + '<|im_start|>assistant\n';
}

/** Rendered text up to (not including) this turn's context message (the last one; earlier turns' stay in the history): system, tools and the history. Undefined without one. */
export function renderUpToHistoryEnd(body: ReceivedBody): string | undefined {
  const msgs = body.messages ?? [];
  const i = msgs.findLastIndex((m) => typeof m.content === 'string' && m.content.startsWith(TURN_CONTEXT_MARK));
  if (i < 0) return undefined;
  return renderRequest({ ...body, messages: msgs.slice(0, i) }).slice(0, -'<|im_start|>assistant\n'.length);
}

/** Length of the longest common prefix of two strings (UTF-16 code units). */
export function commonPrefixLength(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a.charCodeAt(i) === b.charCodeAt(i)) i++;
  return i;
}
