/**
 * Merging of streamed deltas into one CompletionResponse, the same for every
 * protocol (issue 3 "Division of work"): content and reasoning are appended;
 * tool-call deltas are merged by `index` (id and name kept from the first
 * delta that has them, argument fragments appended, parsed once at the end);
 * a delta without index that names a function, or carries whole (object)
 * arguments, is a new call (Ollama sends whole calls, several chunks mean
 * several calls, never overwritten); a delta without index and without a
 * name continues the call streamed last (an OpenAI-style fragment whose
 * index was lost).
 *
 * Adapters are scripts: what they return is checked here (`normalizeChunk`,
 * `normalizeResponse`), so a wrong-typed field is dropped, never merged.
 *
 * With tools declared, text that may be a JSON tool call is held back until
 * the end (raw JSON is never spoken); at the end it becomes tool calls when
 * it names declared tools, otherwise it is released as text. Held text is
 * released as text once it passes MAX_HELD_CHARS (no tool call is that long),
 * so a runaway reply that starts like JSON still reaches the caller piece by
 * piece, where its length limit applies.
 */
import { randomBytes } from 'node:crypto';
import type { CompletionResponse, StreamEvent, TokenUsage, ToolCall } from '../kernel/llm-types.js';
import { mayBeTextToolCall, parseTextToolCalls } from './text-tool-calls.js';
import { parseJson } from '../kernel/json.js';

/** One tool-call delta as adapters return it. `arguments` is a fragment (string) or a whole object. */
export interface ToolCallDelta {
  index?: number;
  id?: string;
  name?: string;
  arguments?: string | Record<string, unknown>;
}

/** A unified stream chunk (adapter `transform_stream_chunk` result). */
export interface UnifiedChunk {
  content?: string;
  reasoning?: string;
  tool_call_deltas?: ToolCallDelta[];
  done?: boolean;
  finish_reason?: string;
  usage?: TokenUsage;
  error?: string;
  model?: string;
}

/** A unified whole response (adapter `transform_response` result). */
export interface UnifiedResponse {
  content?: string;
  reasoning_content?: string;
  finish_reason?: string;
  token_usage?: TokenUsage;
  tool_calls?: Array<{ id?: string; name?: string; arguments?: string | Record<string, unknown> }>;
  error?: string;
  model?: string;
}

const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);
const count = (v: unknown): number | undefined => (typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : undefined);

function usageOf(v: unknown): TokenUsage | undefined {
  if (!isRecord(v)) return undefined;
  const p = count(v.prompt_tokens) ?? 0;
  const c = count(v.completion_tokens) ?? 0;
  return { prompt_tokens: p, completion_tokens: c, total_tokens: count(v.total_tokens) ?? p + c };
}

function argumentsOf(v: unknown): string | Record<string, unknown> | undefined {
  return typeof v === 'string' || isRecord(v) ? v : undefined;
}

/**
 * What an adapter's transform_stream_chunk returned, as a UnifiedChunk: each
 * field kept only with its declared type (strings, a non-negative whole
 * `index`, a `done` that is `true`), anything else dropped; null when the
 * value is not an object (the chunk is skipped). Never throws.
 */
export function normalizeChunk(raw: unknown): UnifiedChunk | null {
  if (!isRecord(raw)) return null;
  const c: UnifiedChunk = {};
  const content = str(raw.content);
  if (content) c.content = content;
  const reasoning = str(raw.reasoning);
  if (reasoning) c.reasoning = reasoning;
  if (Array.isArray(raw.tool_call_deltas)) {
    const deltas: ToolCallDelta[] = [];
    for (const d of raw.tool_call_deltas as unknown[]) {
      if (!isRecord(d)) continue;
      const out: ToolCallDelta = {};
      if (typeof d.index === 'number' && Number.isSafeInteger(d.index) && d.index >= 0) out.index = d.index;
      if (str(d.id)) out.id = d.id as string;
      if (str(d.name)) out.name = d.name as string;
      const a = argumentsOf(d.arguments);
      if (a !== undefined) out.arguments = a;
      deltas.push(out);
    }
    if (deltas.length) c.tool_call_deltas = deltas;
  }
  if (raw.done === true) c.done = true;
  if (str(raw.finish_reason)) c.finish_reason = raw.finish_reason as string;
  const usage = usageOf(raw.usage);
  if (usage) c.usage = usage;
  if (raw.error !== undefined && raw.error !== null && raw.error !== false && raw.error !== '') c.error = typeof raw.error === 'string' ? raw.error : JSON.stringify(raw.error);
  if (str(raw.model)) c.model = raw.model as string;
  return c;
}

/** What an adapter's transform_response returned, as a UnifiedResponse (the same rules as normalizeChunk). Never throws. */
export function normalizeResponse(raw: Record<string, unknown>): UnifiedResponse {
  const u: UnifiedResponse = {};
  if (str(raw.content) !== undefined) u.content = raw.content as string;
  if (str(raw.reasoning_content)) u.reasoning_content = raw.reasoning_content as string;
  if (str(raw.finish_reason)) u.finish_reason = raw.finish_reason as string;
  const usage = usageOf(raw.token_usage);
  if (usage) u.token_usage = usage;
  if (Array.isArray(raw.tool_calls)) {
    u.tool_calls = (raw.tool_calls as unknown[]).filter(isRecord).map((c) => ({
      ...(str(c.id) ? { id: c.id as string } : {}),
      ...(str(c.name) ? { name: c.name as string } : {}),
      ...(argumentsOf(c.arguments) !== undefined ? { arguments: argumentsOf(c.arguments) } : {}),
    }));
  }
  if (raw.error !== undefined && raw.error !== null && raw.error !== false && raw.error !== '') u.error = typeof raw.error === 'string' ? raw.error : JSON.stringify(raw.error);
  if (str(raw.model)) u.model = raw.model as string;
  return u;
}

/** The most text held back as a possible JSON tool call, characters (64 Ki). */
export const MAX_HELD_CHARS = 65536;

interface Slot {
  index: number;
  id?: string;
  name: string;
  text: string;
  obj?: Record<string, unknown>;
}

/** A made-up call id for protocols without ids (Ollama). */
export function newCallId(): string {
  return `call_${randomBytes(6).toString('hex')}`;
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Parses merged argument text; `warn` receives the reason when it is not a JSON object. */
export function parseArguments(text: string | Record<string, unknown> | undefined, warn?: (msg: string) => void): Record<string, unknown> {
  if (isRecord(text)) return text;
  if (text === undefined || text.trim() === '') return {};
  try {
    const v = parseJson(text);
    if (isRecord(v)) return v;
    warn?.(`tool call arguments are not a JSON object: ${text.slice(0, 200)}`);
  } catch {
    warn?.(`tool call arguments are not valid JSON: ${text.slice(0, 200)}`);
  }
  return {};
}

/** The merger of one streamed answer. */
export class StreamAccumulator {
  content = '';
  reasoning = '';
  finishReason?: string;
  usage?: TokenUsage;
  model?: string;
  done = false;
  private readonly slots = new Map<number, Slot>();
  private nextIndex = 0;
  /** The index of the call a delta touched last (a fragment without index continues it). */
  private lastIndex?: number;
  private held = '';
  private holding: boolean;
  private readonly declared: ReadonlySet<string>;
  private readonly warn?: (msg: string) => void;

  /** @param declared names of the tools offered in the request (text tool calls only for these). */
  constructor(declared: ReadonlySet<string>, warn?: (msg: string) => void) {
    this.declared = declared;
    this.holding = declared.size > 0;
    this.warn = warn;
  }

  /** Applies one chunk; returns the events to yield now. */
  apply(c: UnifiedChunk): StreamEvent[] {
    const ev: StreamEvent[] = [];
    if (c.model) this.model = c.model;
    if (c.reasoning) {
      this.reasoning += c.reasoning;
      ev.push({ type: 'reasoning', text: c.reasoning });
    }
    if (c.content) {
      this.content += c.content;
      if (this.holding) {
        this.held += c.content;
        if (this.held.length > MAX_HELD_CHARS || !mayBeTextToolCall(this.held)) {
          this.holding = false;
          ev.push({ type: 'content', text: this.held });
          this.held = '';
        }
      } else ev.push({ type: 'content', text: c.content });
    }
    if (c.tool_call_deltas) {
      for (const d of c.tool_call_deltas) ev.push(this.mergeDelta(d));
    }
    if (c.finish_reason) this.finishReason = c.finish_reason;
    if (c.usage) this.usage = c.usage;
    if (c.done) this.done = true;
    return ev;
  }

  private mergeDelta(d: ToolCallDelta): StreamEvent {
    let slot: Slot | undefined;
    let index: number;
    if (typeof d.index === 'number') {
      index = d.index;
      slot = this.slots.get(index);
    } else if (!d.name && typeof d.arguments === 'string' && this.lastIndex !== undefined) {
      index = this.lastIndex;
      slot = this.slots.get(index);
    } else {
      index = this.nextIndex;
    }
    this.lastIndex = index;
    if (!slot) {
      slot = { index, name: '', text: '' };
      this.slots.set(index, slot);
      if (index >= this.nextIndex) this.nextIndex = index + 1;
    }
    if (d.id && !slot.id) slot.id = d.id;
    if (d.name && !slot.name) slot.name = d.name;
    let argText: string | undefined;
    if (typeof d.arguments === 'string') {
      slot.text += d.arguments;
      argText = d.arguments;
    } else if (isRecord(d.arguments)) {
      slot.obj = d.arguments;
      argText = JSON.stringify(d.arguments);
    }
    const e: StreamEvent = { type: 'tool_call_delta', index };
    if (d.id) e.id = d.id;
    if (d.name) e.name = d.name;
    if (argText !== undefined) e.arguments = argText;
    return e;
  }

  /**
   * Ends the stream: releases held text (or turns it into tool calls) and
   * returns the final events (the last is `done`).
   */
  finish(): { events: StreamEvent[]; response: CompletionResponse } {
    const events: StreamEvent[] = [];
    const calls: ToolCall[] = [...this.slots.values()]
      .sort((a, b) => a.index - b.index)
      .filter((s) => s.name)
      .map((s) => ({
        id: s.id || newCallId(),
        type: 'function' as const,
        function: { name: s.name, arguments: s.obj ?? parseArguments(s.text, this.warn) },
      }));
    let content = this.content;
    if (this.held) {
      const text = calls.length ? null : parseTextToolCalls(this.held, this.declared);
      if (text) {
        text.forEach((t, i) => {
          const id = newCallId();
          calls.push({ id, type: 'function', function: { name: t.name, arguments: t.arguments } });
          events.push({ type: 'tool_call_delta', index: i, id, name: t.name, arguments: JSON.stringify(t.arguments) });
        });
        content = '';
      } else events.push({ type: 'content', text: this.held });
      this.held = '';
    }
    const response = buildResponse(content, this.reasoning, this.finishReason, this.usage, calls, this.model);
    events.push({ type: 'done', response });
    return { events, response };
  }
}

/** Normalises finish_reason (tool calls present and 'stop'/none -> 'tool_calls') and assembles the response. */
export function buildResponse(
  content: string,
  reasoning: string,
  finish: string | undefined,
  usage: TokenUsage | undefined,
  calls: ToolCall[],
  model: string | undefined,
): CompletionResponse {
  let finish_reason = finish || 'stop';
  if (calls.length && (finish_reason === 'stop' || finish_reason === 'end_turn')) finish_reason = 'tool_calls';
  const r: CompletionResponse = { content, finish_reason, tool_calls: calls };
  if (reasoning) r.reasoning_content = reasoning;
  if (usage) r.token_usage = usage;
  if (model) r.model = model;
  return r;
}

/** Turns a whole unified response into a CompletionResponse (text tool calls converted for declared tools). */
export function responseFromUnified(u: UnifiedResponse, declared: ReadonlySet<string>, warn?: (msg: string) => void): CompletionResponse {
  const calls: ToolCall[] = (u.tool_calls ?? [])
    .filter((c) => typeof c.name === 'string' && c.name)
    .map((c) => ({
      id: c.id || newCallId(),
      type: 'function' as const,
      function: { name: c.name as string, arguments: parseArguments(c.arguments, warn) },
    }));
  let content = typeof u.content === 'string' ? u.content : '';
  if (!calls.length && content) {
    const text = parseTextToolCalls(content, declared);
    if (text) {
      for (const t of text) calls.push({ id: newCallId(), type: 'function', function: { name: t.name, arguments: t.arguments } });
      content = '';
    }
  }
  return buildResponse(content, u.reasoning_content ?? '', u.finish_reason, u.token_usage, calls, u.model);
}
