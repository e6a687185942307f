/**
 * Attack: the stream fault matrix, for both adapters (issue 14 "A broken LLM
 * stream must not throw away what was said"). The service asks the LLM test
 * server through the Ollama adapter (/api/chat, NDJSON) and then, in a second
 * service, through the OpenAI-compatible adapter (/v1/chat/completions, SSE).
 * The streams are the test server's own bytes for a three-sentence answer,
 * then damaged here:
 *  truncated     the body ends in the middle of a line after two sentences
 *  reset         the connection is destroyed at that point
 *  stall         the server stops writing there and keeps the connection open
 *                (core.llm.idle_timeout_ms is 2000 for the attack)
 *  invalid_line  a line that is not JSON after the first sentence; the rest is good
 *  error_line    the server's own mid-stream error line after the text
 *  <field>=<v>   an extra chunk at a sentence boundary (content '') with one field
 *                replaced: null, missing, a number, a string, [] or {} for the
 *                chunk itself, message/choices/delta, content, role, thinking,
 *                tool_calls and its items and function; and the same on the
 *                final chunk's done_reason/finish_reason and usage counts
 *
 * Figures:
 *  stream_faults_text_lost       streams whose reply (`homeagent ask`) lacks a
 *                                sentence that arrived whole (pass 0)
 *  stream_faults_sources_failed  streams whose only fault is a malformed chunk
 *                                or line, after which `status` shows the source
 *                                failed (backoff or a failure count) (pass 0)
 */
import { startBox, type Box } from './box.js';
import { exactly, type Figure } from './report.js';
import type { LlmTestServer, Reply } from '../support/llm-test-server.js';
import { startWorld, type Scope } from './world.js';

const SENTENCES = ['The moon is bright tonight.', 'It circles the earth every month.', 'Tides follow its pull.'];
const TEXT = SENTENCES.join(' ');

type Proto = 'ollama' | 'openai';

/** One damaged stream: which sentences must reach the reply, and whether the source may be marked failed. */
interface Case {
  name: string;
  /** Sentences that arrived whole (the reply must hold each). */
  arrived: string[];
  /** Only a malformed chunk or line: the source must not be marked failed. */
  restGood: boolean;
  reply(t: Template): Reply;
}

/** The test server's undamaged stream of TEXT, split into its lines (NDJSON) or events (SSE), each with its terminator. */
interface Template {
  pieces: string[];
  /** Index of the first piece after sentence 1 / sentence 2 (content pieces whose text completes the sentence). */
  afterSentence: [number, number];
}

async function template(llm: LlmTestServer, proto: Proto): Promise<Template> {
  // Ask the test server itself, so the bytes are exactly what it sends (shapes, field order, usage).
  const path = proto === 'ollama' ? '/api/chat' : '/v1/chat/completions';
  const body = proto === 'ollama' ? { model: 'qwen2.5:3b', stream: true, messages: [{ role: 'user', content: 'template' }] } : { model: 'qwen2.5:3b', stream: true, stream_options: { include_usage: true }, messages: [{ role: 'user', content: 'template' }] };
  llm.script(() => ({ content: TEXT }));
  const res = await fetch(llm.url + path, { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: JSON.stringify(body) });
  const raw = await res.text();
  llm.script(null);
  const sep = proto === 'ollama' ? '\n' : '\n\n';
  const pieces = raw.split(sep).filter((p) => p !== '').map((p) => p + sep);
  let text = '';
  const after: number[] = [];
  pieces.forEach((p, i) => {
    text += contentOf(p, proto);
    if (after.length < 2 && text.includes(SENTENCES.slice(0, after.length + 1).join(' '))) after.push(i + 1);
  });
  if (after.length < 2) throw new Error(`the test server's ${proto} stream does not carry the expected text: ${JSON.stringify(raw.slice(0, 300))}`);
  return { pieces, afterSentence: [after[0]!, after[1]!] };
}

function parsePiece(p: string, proto: Proto): Record<string, unknown> | undefined {
  const json = proto === 'ollama' ? p.trim() : p.trim().replace(/^data: /, '');
  if (!json.startsWith('{')) return undefined;
  try {
    return JSON.parse(json) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}

function contentOf(p: string, proto: Proto): string {
  const o = parsePiece(p, proto) as { message?: { content?: unknown }; choices?: Array<{ delta?: { content?: unknown } }> } | undefined;
  const c = proto === 'ollama' ? o?.message?.content : o?.choices?.[0]?.delta?.content;
  return typeof c === 'string' ? c : '';
}

function serialize(o: unknown, proto: Proto): string {
  return proto === 'ollama' ? `${JSON.stringify(o)}\n` : `data: ${JSON.stringify(o)}\n\n`;
}

const MISSING = Symbol('missing');
const VALUES: Array<[string, unknown]> = [
  ['null', null],
  ['missing', MISSING],
  ['number', 5],
  ['string', 'x'],
  ['[]', []],
  ['{}', {}],
];

/** Set (or delete, for MISSING) the field at `path` of a deep copy of `o`. */
function withField(o: Record<string, unknown>, path: Array<string | number>, v: unknown): Record<string, unknown> {
  const copy = JSON.parse(JSON.stringify(o)) as Record<string, unknown>;
  let parent: Record<string | number, unknown> = copy;
  for (let i = 0; i < path.length - 1; i++) {
    const k = path[i]!;
    const next = parent[k];
    if (!next || typeof next !== 'object') parent[k] = typeof path[i + 1] === 'number' ? [] : {};
    parent = parent[k] as Record<string | number, unknown>;
  }
  const last = path[path.length - 1]!;
  if (v === MISSING) delete parent[last];
  else parent[last] = v;
  return copy;
}

/** Every case of one protocol. */
function cases(proto: Proto): Case[] {
  const all = SENTENCES;
  const two = SENTENCES.slice(0, 2);
  const out: Case[] = [];
  const raw = (pieces: string[], extra: Partial<Reply> = {}): Reply => ({ raw: pieces.join(''), contentType: proto === 'ollama' ? 'application/x-ndjson' : 'text/event-stream', ...extra });
  const cutBytes = (t: Template, extraChars: number): number => Buffer.byteLength(t.pieces.slice(0, t.afterSentence[1]).join('')) + extraChars;

  out.push({ name: 'truncated', arrived: two, restGood: false, reply: (t) => raw([...t.pieces.slice(0, t.afterSentence[1]), t.pieces[t.afterSentence[1]]!.slice(0, 25)]) });
  out.push({ name: 'reset', arrived: two, restGood: false, reply: (t) => raw(t.pieces, { dropAfterBytes: cutBytes(t, 25) }) });
  out.push({ name: 'stall', arrived: two, restGood: false, reply: (t) => raw(t.pieces, { stallAfterBytes: cutBytes(t, 25) }) });
  out.push({
    name: 'invalid_line',
    arrived: all,
    restGood: true,
    reply: (t) => raw([...t.pieces.slice(0, t.afterSentence[0]), proto === 'ollama' ? 'garbage%%{not json\n' : 'data: garbage%%{not json\n\n', ...t.pieces.slice(t.afterSentence[0])]),
  });
  out.push({ name: 'error_line', arrived: all, restGood: false, reply: () => ({ content: TEXT, streamError: 'model runner crashed' }) });

  // One damaged extra chunk at the first sentence boundary: a copy of a content chunk with content '' and one field replaced.
  const insertAt = (t: Template, damaged: string): Reply => raw([...t.pieces.slice(0, t.afterSentence[0]), damaged, ...t.pieces.slice(t.afterSentence[0])]);
  const base = (t: Template): Record<string, unknown> => {
    const o = parsePiece(t.pieces[0]!, proto)!;
    return proto === 'ollama' ? withField(o, ['message', 'content'], '') : withField(o, ['choices', 0, 'delta', 'content'], '');
  };
  const mid = (label: string, path: Array<string | number>, values = VALUES): void => {
    for (const [vn, v] of values) {
      out.push({ name: `${label}=${vn}`, arrived: all, restGood: true, reply: (t) => insertAt(t, serialize(withField(base(t), path, v), proto)) });
    }
  };
  // The chunk itself is a JSON value of the wrong type.
  for (const [vn, v] of VALUES.filter(([n]) => n !== 'missing')) {
    out.push({ name: `chunk=${vn}`, arrived: all, restGood: true, reply: (t) => insertAt(t, proto === 'ollama' ? `${JSON.stringify(v)}\n` : `data: ${JSON.stringify(v)}\n\n`) });
  }
  const badCalls: Array<[string, unknown]> = [
    ['[null]', [null]],
    ['[5]', [5]],
    ['[{}]', [{}]],
    ['[{function:null}]', [{ function: null }]],
    ['[{function:5}]', [{ function: 5 }]],
    ['[{function:{name:5,arguments:"x"}}]', [{ function: { name: 5, arguments: 'x' } }]],
    ['[{function:{name:null,arguments:5}}]', [{ function: { name: null, arguments: 5 } }]],
  ];
  if (proto === 'ollama') {
    mid('message', ['message']);
    mid('message.content', ['message', 'content'], VALUES.filter(([n]) => n !== 'string'));
    mid('message.role', ['message', 'role'], [['null', null], ['number', 5], ['{}', {}]]);
    mid('message.thinking', ['message', 'thinking'], [['number', 5], ['{}', {}], ['[]', []]]);
    mid('message.tool_calls', ['message', 'tool_calls'], [...VALUES.filter(([n]) => n !== 'missing'), ...badCalls]);
    mid('done', ['done'], [['null', null]]);
    // The final chunk's fields.
    const last = (label: string, path: string[], values: Array<[string, unknown]>): void => {
      for (const [vn, v] of values) {
        out.push({
          name: `final.${label}=${vn}`,
          arrived: all,
          restGood: true,
          reply: (t) => {
            const i = t.pieces.length - 1;
            return raw([...t.pieces.slice(0, i), serialize(withField(parsePiece(t.pieces[i]!, proto)!, path, v), proto)]);
          },
        });
      }
    };
    last('done_reason', ['done_reason'], [['number', 5], ['null', null], ['{}', {}]]);
    last('eval_count', ['eval_count'], [['string', 'x'], ['null', null], ['[]', []]]);
    last('message', ['message'], [['null', null], ['number', 5]]);
  } else {
    mid('choices', ['choices']);
    mid('choices[0]', ['choices', 0], VALUES.filter(([n]) => n !== 'missing'));
    mid('delta', ['choices', 0, 'delta']);
    mid('delta.content', ['choices', 0, 'delta', 'content'], VALUES.filter(([n]) => n !== 'string'));
    mid('delta.role', ['choices', 0, 'delta', 'role'], [['null', null], ['number', 5], ['{}', {}]]);
    mid('delta.reasoning_content', ['choices', 0, 'delta', 'reasoning_content'], [['number', 5], ['{}', {}], ['[]', []]]);
    mid('delta.tool_calls', ['choices', 0, 'delta', 'tool_calls'], [...VALUES.filter(([n]) => n !== 'missing'), ...badCalls]);
    // The finish_reason chunk and the usage chunk (the last two events before [DONE]).
    const nth = (label: string, fromEnd: number, path: Array<string | number>, values: Array<[string, unknown]>): void => {
      for (const [vn, v] of values) {
        out.push({
          name: `${label}=${vn}`,
          arrived: all,
          restGood: true,
          reply: (t) => {
            const i = t.pieces.length - fromEnd;
            return raw([...t.pieces.slice(0, i), serialize(withField(parsePiece(t.pieces[i]!, proto)!, path, v), proto), ...t.pieces.slice(i + 1)]);
          },
        });
      }
    };
    nth('final.finish_reason', 3, ['choices', 0, 'finish_reason'], [['number', 5], ['{}', {}], ['[]', []]]);
    nth('usage', 2, ['usage'], [['null', null], ['string', 'x'], ['number', 5], ['[]', []]]);
    nth('usage.completion_tokens', 2, ['usage', 'completion_tokens'], [['string', 'x'], ['null', null], ['{}', {}]]);
  }
  return out;
}

const norm = (s: string): string => s.replace(/\s+/g, ' ').trim();

async function runProto(scope: Scope, llm: LlmTestServer, box: Box, proto: Proto, lost: string[], failed: string[]): Promise<number> {
  const t = await template(llm, proto);
  const list = cases(proto);
  llm.script((req) => {
    const msgs = req.body?.messages ?? [];
    const lastMsg = msgs[msgs.length - 1];
    // Only the turn's own request: the last message is the user's, and it is the short ask (memory jobs quote it in longer prompts).
    const userText = lastMsg?.role === 'user' && typeof lastMsg.content === 'string' && lastMsg.content.length < 200 ? lastMsg.content : '';
    const m = /\[case (\d+)\]/.exec(userText);
    if (m) return list[Number(m[1])]!.reply(t);
    // A later round of the same turn (after a tool call that a damaged chunk produced) and everything else: a clean answer.
    return { content: TEXT };
  });
  for (let i = 0; i < list.length; i++) {
    const c = list[i]!;
    let reply = '';
    try {
      const r = (await box.call('ask', { text: `Tell me about the moon [case ${i}]` }, 60_000)) as { reply?: string };
      reply = String(r.reply ?? '');
    } catch (err) {
      reply = `(no answer: ${err instanceof Error ? err.message : String(err)})`;
    }
    if (!box.alive()) throw new Error(`the service died on the ${proto} stream "${c.name}"`);
    const missing = c.arrived.filter((s) => !norm(reply).includes(s));
    if (missing.length) lost.push(`${proto} ${c.name}: reply ${JSON.stringify(reply.slice(0, 160))} lacks ${JSON.stringify(missing[0])}`);
    if (c.restGood) {
      const st = await box.status();
      const src = st.llm.sources.find((s) => s.adapter === proto || s.name === (proto === 'ollama' ? 'ollama' : 'deepseek'));
      if (src && (src.state === 'backoff' || src.state === 'unusable' || src.failures > 0)) failed.push(`${proto} ${c.name}: source ${src.name} ${src.state}, ${src.failures} failures (${src.last_error ?? ''})`);
    }
  }
  llm.script(null);
  void scope;
  return list.length;
}

/** Run the attack. */
export async function run(scope: Scope, note: (s: string) => void): Promise<Figure[]> {
  // A stalled stream ends after 2 s of silence instead of the default 30 s (the attack's time budget).
  const common = { HOMEAGENT__CORE__LLM__IDLE_TIMEOUT_MS: '2000' };
  const world = await startWorld(scope, { home: false, env: { ...common, HOMEAGENT__CORE__LLM__SOURCES_ORDER: '["ollama"]' } });
  const lost: string[] = [];
  const failed: string[] = [];
  const nOllama = await runProto(scope, world.llm, world.box, 'ollama', lost, failed);
  await world.box.stop();
  // The OpenAI-compatible adapter: a second service whose one source speaks /v1/chat/completions.
  const box2 = await startBox({
    env: {
      ...world.env,
      ...common,
      HOMEAGENT__CORE__LLM__SOURCES__DEEPSEEK__ADAPTER: 'openai',
      HOMEAGENT__CORE__LLM__SOURCES__DEEPSEEK__BASE_URL: world.llm.url,
      HOMEAGENT__CORE__LLM__SOURCES__DEEPSEEK__MODEL: 'qwen2.5:3b',
      HOMEAGENT__CORE__LLM__SOURCES__DEEPSEEK__API_KEY: 'attack',
      HOMEAGENT__CORE__LLM__SOURCES_ORDER: '["deepseek"]',
    },
  });
  scope.defer(() => box2.close());
  const nOpenai = await runProto(scope, world.llm, box2, 'openai', lost, failed);
  note(`${nOllama} Ollama and ${nOpenai} OpenAI-compatible streams`);
  const list = (xs: string[]): string | undefined => (xs.length ? xs.slice(0, 12).join('\n') + (xs.length > 12 ? `\n... and ${xs.length - 12} more` : '') : undefined);
  return [exactly('stream_faults_text_lost', lost.length, 'streams', 0, list(lost)), exactly('stream_faults_sources_failed', failed.length, 'streams', 0, list(failed))];
}
