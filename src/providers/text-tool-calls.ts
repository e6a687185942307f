/**
 * Tool calls written as JSON text in `content` (issue 3 "Must survive": small
 * local models often answer `{"name": "write_log", "parameters": {...}}`
 * instead of using the protocol's tool_calls). Text that is nothing but such
 * JSON, naming only declared tools, becomes tool calls; JSON naming an
 * undeclared tool stays text. Accepted wrappers: a ```json fence and
 * Qwen/Hermes-style `<tool_call>...</tool_call>` tags; accepted shapes:
 * `{name, parameters|arguments}`, `{function: {name, arguments}}`,
 * `{tool_calls: [...]}`, an array of those, or one object per line.
 * Parsing is real JSON parsing, so braces inside strings ("}A") are safe.
 */
import { parseJson } from '../kernel/json.js';

/** One call recovered from text. */
export interface TextToolCall {
  name: string;
  arguments: Record<string, unknown>;
}

const FENCE = /^```[a-zA-Z]*\s*\n?([\s\S]*?)\n?```$/;
const TAGGED = /<tool_call>([\s\S]*?)(?:<\/tool_call>|$)/g;

/**
 * Whether `text` (the reply so far) might still turn out to be a text tool
 * call: it starts (after whitespace) with `{`, `[`, a code fence or
 * `<tool_call>`, or is a prefix of one of those. Used to hold streamed text
 * back so raw JSON is never spoken.
 */
export function mayBeTextToolCall(text: string): boolean {
  const t = text.trimStart();
  if (t === '') return true;
  if (t[0] === '{' || t[0] === '[') return true;
  for (const opener of ['```', '<tool_call>']) {
    if (t.startsWith(opener) || opener.startsWith(t)) return true;
  }
  return false;
}

/**
 * The calls in `text` when the whole text is a tool call naming declared
 * tools only; otherwise null (the text stays text).
 */
export function parseTextToolCalls(text: string, declared: ReadonlySet<string>): TextToolCall[] | null {
  if (declared.size === 0) return null;
  let t = text.trim();
  if (!t) return null;
  const fence = FENCE.exec(t);
  if (fence) t = fence[1]!.trim();
  const candidates: unknown[] = [];
  if (t.startsWith('<tool_call>')) {
    for (const m of t.matchAll(TAGGED)) {
      const v = tryParse(m[1]!.trim());
      if (v === undefined) return null;
      candidates.push(v);
    }
    const rest = t.replace(TAGGED, '').trim();
    if (rest) return null;
  } else {
    const v = tryParse(t);
    if (v !== undefined) candidates.push(v);
    else {
      // one JSON object per line
      for (const line of t.split('\n')) {
        const l = line.trim();
        if (!l) continue;
        const lv = tryParse(l);
        if (lv === undefined) return null;
        candidates.push(lv);
      }
    }
  }
  const calls: TextToolCall[] = [];
  for (const c of candidates) {
    if (!collect(c, calls)) return null;
  }
  if (!calls.length) return null;
  for (const c of calls) if (!declared.has(c.name)) return null;
  return calls;
}

function tryParse(s: string): unknown {
  if (!s || (s[0] !== '{' && s[0] !== '[')) return undefined;
  try {
    return parseJson(s);
  } catch {
    return undefined;
  }
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function argsOf(v: unknown): Record<string, unknown> | null {
  if (v === undefined || v === null) return {};
  if (isRecord(v)) return v;
  if (typeof v === 'string') {
    const p = tryParse(v.trim());
    return isRecord(p) ? p : null;
  }
  return null;
}

function collect(v: unknown, out: TextToolCall[]): boolean {
  if (Array.isArray(v)) {
    if (!v.length) return false;
    return v.every((x) => collect(x, out));
  }
  if (!isRecord(v)) return false;
  if (Array.isArray(v.tool_calls)) return collect(v.tool_calls, out);
  const fn = isRecord(v.function) ? v.function : v;
  const name = fn.name;
  if (typeof name !== 'string' || !name) return false;
  const known = new Set(['name', 'parameters', 'arguments', 'function', 'type', 'id']);
  if (fn === v && Object.keys(v).some((k) => !known.has(k))) return false;
  const args = argsOf(fn.arguments !== undefined ? fn.arguments : fn.parameters);
  if (!args) return false;
  out.push({ name, arguments: args });
  return true;
}
