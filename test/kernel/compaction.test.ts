/**
 * Compaction of the prompt history (issue 19 "Compaction", seed 002 §7):
 * the cut-point rules as properties over random histories (a seeded PRNG,
 * many cases), the summary's sections, a 500-turn conversation whose prompt
 * never exceeds the band (FakeProvider, FakeClock), the summary surviving a
 * restart (SQLite run log), and a process killed in the middle of a
 * compaction leaving the old history and summary in force (a real SIGKILL of
 * a child process; the test waits for its "asking" line, never on the clock).
 */
import { describe, it, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { ChatMessage, CompletionRequest } from '../../src/kernel/llm-types.js';
import type { ContextEvent } from '../../src/kernel/memory-port.js';
import { SimpleContextStore, estimateTokens } from '../../src/kernel/memory-port.js';
import {
  capSections,
  compactedOriginal,
  COMPACTION_REQUEST_MARK,
  findCut,
  legalCut,
  messageTokens,
  parseSummary,
  restoreCompaction,
  sectionsTokens,
  SUMMARY_MARK,
  summaryMessage,
} from '../../src/kernel/compaction.js';
import { PromptHistory, requestTokens, timelineMessages, TURN_CONTEXT_MARK } from '../../src/kernel/prompt.js';
import { MemoryRunLog, SqliteRunLog } from '../../src/kernel/run-log.js';
import { Kernel } from '../../src/kernel/kernel.js';
import { ConfigRegistry } from '../../src/config/registry.js';
import { Cap } from '../../src/kernel/output-types.js';
import { FakeClock } from '../../src/kernel/clock.js';
import { FakeProvider, type FakeReply } from '../support/fake-provider.js';
import { silentLogger } from '../support/quiet.js';
import { startLlmRig } from './llm-rig.js';
import { prng } from '../support/prng.js';


const words = (rnd: () => number, n: number): string => Array.from({ length: n }, () => ['lamp', 'door', 'pasta', 'Anna', 'twenty', 'kitchen', 'warm', '好的'][Math.floor(rnd() * 8)]).join(' ');

/**
 * A random chat history: user and assistant messages, assistant messages
 * with 1-3 tool calls followed by their results (sometimes out of order,
 * sometimes with a user message in between, sometimes with the last results
 * still missing), random lengths.
 */
function randomHistory(rnd: () => number): ChatMessage[] {
  const out: ChatMessage[] = [];
  const n = 1 + Math.floor(rnd() * 40);
  let id = 0;
  while (out.length < n) {
    const r = rnd();
    if (r < 0.35) out.push({ role: 'user', content: words(rnd, 1 + Math.floor(rnd() * 30)) });
    else if (r < 0.6) out.push({ role: 'assistant', content: words(rnd, 1 + Math.floor(rnd() * 30)) });
    else {
      const calls = Array.from({ length: 1 + Math.floor(rnd() * 3) }, () => ({ id: `call_${++id}`, type: 'function' as const, function: { name: 'device_state', arguments: { device: words(rnd, 1) } } }));
      out.push({ role: 'assistant', content: '', tool_calls: calls });
      const results = calls.map((c) => ({ role: 'tool' as const, tool_call_id: c.id, name: 'device_state', content: words(rnd, Math.floor(rnd() * 40)) }));
      if (rnd() < 0.3) results.reverse();
      if (rnd() < 0.1) out.push({ role: 'user', content: words(rnd, 3) });
      out.push(...results.slice(0, rnd() < 0.1 ? Math.floor(rnd() * results.length) : results.length));
    }
  }
  return out;
}

const tailTokens = (msgs: ChatMessage[], cut: number): number => msgs.slice(cut).reduce((s, m) => s + messageTokens(m), 0);

describe('cut points (properties over 3000 random histories)', () => {
  it('a tool result is never a cut point, a call and its results stay on one side, the tail fits its budget where a legal cut allows, and a turn start is preferred (within twice the budget when none fits)', () => {
    for (let seed = 1; seed <= 3000; seed++) {
      const rnd = prng(seed);
      const msgs = randomHistory(rnd);
      const budget = Math.floor(rnd() * 400);
      const cut = findCut(msgs, budget);
      const where = `seed ${seed}, budget ${budget}, cut ${cut}`;
      assert.ok(cut >= 0 && cut <= msgs.length, where);
      if (cut === 0) {
        // Nothing could be taken: no legal cut after the start.
        for (let i = 1; i <= msgs.length; i++) assert.ok(!legalCut(msgs, i), `${where}: ${i} was legal`);
        continue;
      }
      if (cut < msgs.length) assert.notEqual(msgs[cut]!.role, 'tool', `${where}: the tail starts with a tool result`);
      // A call and its results stay together: no result in the tail answers a call in the summarised part.
      const before = new Set(msgs.slice(0, cut).flatMap((m) => (m.tool_calls ?? []).map((c) => c.id)));
      for (const m of msgs.slice(cut)) if (m.role === 'tool') assert.ok(!before.has(m.tool_call_id!), `${where}: result ${m.tool_call_id} parted from its call`);
      const fits = (i: number): boolean => tailTokens(msgs, i) <= budget;
      const legalUserFits = [...Array(msgs.length).keys()].filter((i) => i >= 1 && legalCut(msgs, i) && msgs[i]!.role === 'user' && fits(i));
      const legalUserNear = [...Array(msgs.length).keys()].filter((i) => i >= 1 && legalCut(msgs, i) && msgs[i]!.role === 'user' && tailTokens(msgs, i) <= 2 * budget);
      if (legalUserFits.length) {
        // A turn start that fits: the earliest one (the longest tail within the budget).
        assert.equal(cut, legalUserFits[0], where);
      } else if (legalUserNear.length) {
        // None fits: the latest turn start within twice the budget (the last exchange stays whole).
        assert.equal(cut, legalUserNear.at(-1), where);
      } else if ([...Array(msgs.length + 1).keys()].some((i) => i >= 1 && legalCut(msgs, i) && fits(i))) {
        assert.ok(fits(cut), `${where}: a legal cut within the budget existed, the tail has ${tailTokens(msgs, cut)} tokens`);
      }
    }
  });

  it('compacting random event histories leaves a history whose first message is never a tool result and whose calls all have their results', async () => {
    for (let seed = 1; seed <= 300; seed++) {
      const rnd = prng(seed);
      const events: ContextEvent[] = [];
      for (let t = 0; t < 5 + rnd() * 30; t++) {
        events.push({ id: `t${t}:user`, time: t, kind: 'user', source: 'console', input: words(rnd, 1 + Math.floor(rnd() * 20)), response: '' });
        for (let c = 0; c < Math.floor(rnd() * 3); c++) events.push({ id: `t${t}:tool:call_${c}`, time: t, kind: 'tool', source: 'console', tool: 'device_state', input: `device_state({"device":"lamp"})`, response: words(rnd, Math.floor(rnd() * 50)) });
        events.push({ id: `t${t}:agent`, time: t, kind: 'agent', source: 'console', input: '', response: words(rnd, 1 + Math.floor(rnd() * 20)) });
      }
      const h = new PromptHistory();
      h.update(events, 1e9);
      const provider = new FakeProvider([], { content: 'Background: a test.\nFacts: lamp is on' });
      const r = await h.compact({ runLog: new MemoryRunLog(), turn: 'x', now: 0, provider, system: { role: 'system', content: 's' }, tools: [], tailTokens: Math.floor(rnd() * 300), summaryTokens: 100 });
      const shown = timelineMessages(h.events());
      if (r.status === 'none') continue;
      assert.equal(r.status, 'summarised');
      if (shown.length) assert.notEqual(shown[0]!.role, 'tool', `seed ${seed}`);
      const calls = new Set(shown.flatMap((m) => (m.tool_calls ?? []).map((c) => c.id)));
      for (const m of shown) if (m.role === 'tool') assert.ok(calls.has(m.tool_call_id!), `seed ${seed}: result without its call`);
      assert.equal(h.events().length + r.covered, events.length);
    }
  });
});

describe('when the model cannot summarise, or the turn is stopped', () => {
  const history = (): ContextEvent[] =>
    Array.from({ length: 10 }, (_, t) => [
      { id: `t${t}:user`, time: t, kind: 'user' as const, source: 'console', input: `please do thing number ${t} for me now`, response: '' },
      { id: `t${t}:agent`, time: t, kind: 'agent' as const, source: 'console', input: '', response: `done with thing ${t}, anything else?` },
    ]).flat();
  const base = { turn: 'x', now: 5, system: { role: 'system' as const, content: 's' }, tools: [], tailTokens: 40, summaryTokens: 100 };

  it('a failed summary drops the older part, keeps the previous summary and logs it as dropped', async () => {
    const h = new PromptHistory();
    const log = new MemoryRunLog();
    h.update(history(), 1e9);
    await h.compact({ ...base, runLog: log, provider: new FakeProvider([], { content: 'Facts: first' }) });
    const first = h.summary!;
    const before = h.events().length;
    const r = await h.compact({ ...base, runLog: log, tailTokens: 10, provider: new FakeProvider([], { error: new Error('connection refused') }) });
    assert.equal(r.status, 'dropped');
    assert.deepEqual(h.summary!.sections, first.sections);
    assert.ok(h.events().length < before);
    const fin = log.ofTypes(['compaction.finished'], 10).at(-1)!;
    assert.ok(fin.type === 'compaction.finished' && fin.status === 'dropped' && fin.reason === 'connection refused');
    // A model that calls a tool instead of writing is a failure too, never a summary.
    const h2 = new PromptHistory();
    h2.update(history(), 1e9);
    const r2 = await h2.compact({ ...base, runLog: log, provider: new FakeProvider([], { tool_calls: [{ name: 'device_state', arguments: {} }] }) });
    assert.equal(r2.status, 'dropped');
    assert.equal(h2.summary!.sections.background, '');
  });

  it('forgetting rewrites the summary without the sentences holding a forgotten word, and drops the forgotten events', async () => {
    const h = new PromptHistory();
    const log = new MemoryRunLog();
    h.update(history(), 1e9);
    await h.compact({ ...base, runLog: log, provider: new FakeProvider([], { content: 'Facts: The bike lock code is zorbulax. Anna likes tea.\nDecisions: Keep zorbulax private. Buy milk.' }) });
    const before = JSON.stringify(h.summary!.sections);
    assert.match(before, /zorbulax/);
    const shown = h.events().map((e) => e.id);
    h.forget((e) => e.id === shown[0], ['zorbulax']);
    const after = JSON.stringify(h.summary!.sections);
    assert.doesNotMatch(after, /zorbulax/i);
    assert.match(after, /Anna likes tea/);
    assert.match(after, /Buy milk/);
    assert.ok(!h.events().some((e) => e.id === shown[0]));
  });

  it('a stop in the middle changes nothing: the history and summary stay, the compaction is logged as abandoned', async () => {
    const h = new PromptHistory();
    const log = new MemoryRunLog();
    h.update(history(), 1e9);
    const ids = h.events().map((e) => e.id);
    const stop = new AbortController();
    let release!: () => void;
    const provider = new FakeProvider([{ content: 'Facts: never', gate: new Promise<void>((r) => (release = r)) }]);
    const run = h.compact({ ...base, runLog: log, provider, signal: stop.signal });
    await provider.waitForRequests(1);
    stop.abort(new Error('stopped'));
    release();
    const r = await run;
    assert.equal(r.status, 'abandoned');
    assert.deepEqual(h.events().map((e) => e.id), ids);
    assert.equal(h.summary, undefined);
    assert.deepEqual(restoreCompaction(log), {});
  });
});

describe('summary sections', () => {
  it('reads the five sections in English or with the seed\'s Chinese names, continuation lines included', () => {
    const s = parseSummary('Background: a family evening\nFacts: Anna is allergic to peanuts\n- Tom likes tea\n**Relations**: Anna is Tom\'s sister\nOpen items: plumber Thursday\nDecisions: none');
    assert.deepEqual(s, { background: 'a family evening', facts: 'Anna is allergic to peanuts Tom likes tea', relations: "Anna is Tom's sister", open_items: 'plumber Thursday', decisions: 'none' });
    const zh = parseSummary('背景：晚上在家\n事实：安娜对花生过敏\n关系：\n未决事项：周四水管工\n关键决定：无');
    assert.equal(zh?.background, '晚上在家');
    assert.equal(zh?.open_items, '周四水管工');
    assert.equal(parseSummary('just some text')?.background, 'just some text');
    assert.equal(parseSummary('  \n '), undefined);
  });

  it('is capped to its budget, every section keeping its start', () => {
    const long = (w: string) => Array(200).fill(w).join(' ');
    const capped = capSections({ background: long('home'), facts: long('fact'), relations: 'Anna sister of Tom', open_items: long('open'), decisions: 'none' }, 120);
    assert.ok(sectionsTokens(capped) <= 120, `${sectionsTokens(capped)} tokens`);
    assert.ok(capped.background.startsWith('home home') && capped.facts.startsWith('fact fact') && capped.open_items.startsWith('open'));
    assert.equal(capped.relations, 'Anna sister of Tom');
    assert.ok(summaryMessage(capped).content.startsWith(SUMMARY_MARK));
  });
});

/** A kernel with the given run log and memory, a FakeProvider, a console channel and a device_state tool whose results have `size` words. */
async function kernelWith(opts: { runLog: MemoryRunLog | SqliteRunLog; memory: SimpleContextStore; provider: FakeProvider; env: Record<string, string>; clock: FakeClock }) {
  const settings = new ConfigRegistry(':memory:', { env: opts.env });
  const dataDir = mkdtempSync(path.join(os.tmpdir(), 'homeagent-compaction-'));
  const kernel = new Kernel({ settings, dataDir, provider: opts.provider, clock: opts.clock, memory: opts.memory, runLog: opts.runLog, log: silentLogger });
  kernel.registerOutputChannel('_test_', 'console', Cap.Text, 'test console', () => undefined);
  kernel.use({
    name: 'devices',
    start(sdk) {
      sdk.registerTool({ name: 'device_state', description: 'State of a device. Example: {"device":"lamp"}', parameters: { type: 'object', properties: { device: { type: 'string' }, size: { type: 'integer' } } }, handler: (a) => ({ device: a.device, state: Array(Number(a.size ?? 5)).fill('on').join(' ') }) });
    },
  });
  await kernel.start();
  return {
    kernel,
    async close() {
      await kernel.stop();
      settings.close();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}

const isSummaryRequest = (r: CompletionRequest): boolean => String(r.messages.at(-1)?.content ?? '').startsWith(COMPACTION_REQUEST_MARK);
const BAND = { HOMEAGENT__CORE__AGENT__PROMPT_BAND: '1400', HOMEAGENT__CORE__AGENT__COMPACTION_TAIL_TOKENS: '150', HOMEAGENT__CORE__AGENT__COMPACTION_SUMMARY_TOKENS: '120' };

/** The fake model: a summary for a summary request (longer than its cap, to be cut), else a tool call or an answer of random length. */
function fakeModel(rnd: () => number, summaries: { n: number }) {
  return (req: CompletionRequest): FakeReply => {
    if (isSummaryRequest(req)) {
      summaries.n++;
      return { content: `Background: turn ${summaries.n} ${words(rnd, 30)}\nFacts: ${words(rnd, 40)}\nRelations: Anna sister of Tom\nOpen items: ${words(rnd, 20)}\nDecisions: none` };
    }
    const last = req.messages.at(-1)!;
    if (last.role === 'user' && rnd() < 0.4) return { tool_calls: [{ name: 'device_state', arguments: { device: 'lamp', size: Math.floor(rnd() * 60) } }] };
    return { content: words(rnd, 1 + Math.floor(rnd() * 40)) };
  };
}

test('a 500-turn conversation never exceeds the band; each summary continues the previous one', async () => {
  const rnd = prng(19);
  const summaries = { n: 0 };
  const provider = new FakeProvider([], fakeModel(rnd, summaries));
  const runLog = new MemoryRunLog(100000);
  const k = await kernelWith({ runLog, memory: new SimpleContextStore(60), provider, env: BAND, clock: new FakeClock(Date.UTC(2026, 11, 1)) });
  try {
    let seen = 0;
    let worst = 0;
    for (let t = 0; t < 500; t++) {
      const r = await k.kernel.injectInput('console', 'console', `turn ${t}: ${words(rnd, 1 + Math.floor(rnd() * 25))}`);
      assert.equal(r.status, 'done', `turn ${t}: ${r.status} ${r.error ?? ''}`);
      const reqs = provider.requests.slice(seen);
      seen = provider.requests.length;
      const first = reqs.find((q) => !isSummaryRequest(q))!;
      const tokens = requestTokens(first.messages) + estimateTokens(JSON.stringify(first.tools ?? []));
      worst = Math.max(worst, tokens);
      assert.ok(tokens <= 1400, `turn ${t}: the prompt has ${tokens} tokens, over the band`);
      // The summary sits right after the system message, and nowhere else.
      const at = first.messages.findIndex((m) => m.content.startsWith(SUMMARY_MARK));
      assert.ok(at === -1 || at === 1, `turn ${t}: summary at ${at}`);
      for (const q of reqs.filter(isSummaryRequest)) {
        // The summary request repeats the prompt's start (system, tools, the summary in force) and ends in the instruction.
        assert.deepEqual(q.messages[0], first.messages[0]);
        assert.deepEqual(q.tools, first.tools);
        if (summaries.n > 1) assert.ok(q.messages[1]!.content.startsWith(SUMMARY_MARK), `turn ${t}: the summary request does not continue the previous summary`);
      }
    }
    const finished = runLog.ofTypes(['compaction.finished'], 10000);
    assert.ok(summaries.n >= 20, `${summaries.n} compactions in 500 turns`);
    assert.equal(finished.length, summaries.n);
    assert.equal(runLog.ofTypes(['compaction.started'], 10000).length, summaries.n);
    assert.ok(finished.every((e) => e.type === 'compaction.finished' && e.status === 'summarised'));
    assert.ok(worst > 1000, `the band was approached (${worst})`);
  } finally {
    await k.close();
  }
});

test('the summary survives a restart: the first turn after it shows the same summary and none of what it covers', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'homeagent-compaction-restart-'));
  const file = path.join(dir, 'runlog.db');
  const rnd = prng(7);
  const clock = new FakeClock(Date.UTC(2026, 11, 1));
  const summaries = { n: 0 };
  const memory = new SimpleContextStore(200);
  try {
    const provider = new FakeProvider([], fakeModel(rnd, summaries));
    const a = await kernelWith({ runLog: new SqliteRunLog(file), memory, provider, env: BAND, clock });
    for (let t = 0; summaries.n < 2; t++) {
      await a.kernel.injectInput('console', 'console', `turn ${t}: ${words(rnd, 20)}`);
      clock.advance(1000);
    }
    // The prompt of the next turn before the restart: the summary, then the history.
    await a.kernel.injectInput('console', 'console', 'what now');
    const before = provider.requests.at(-1)!.messages;
    await a.close();

    // A new process: a new run log connection, a new memory object with the persisted window.
    const memory2 = new SimpleContextStore(200);
    for (const e of memory.timeline(Number.MAX_SAFE_INTEGER)) memory2.append(e);
    const provider2 = new FakeProvider([], { content: 'fine' });
    const b = await kernelWith({ runLog: new SqliteRunLog(file), memory: memory2, provider: provider2, env: BAND, clock });
    try {
      await b.kernel.injectInput('console', 'console', 'and after the restart?');
      const after = provider2.requests[0]!.messages;
      assert.equal(after[1]!.content, before[1]!.content, 'the same summary after the system message');
      assert.ok(after[1]!.content.startsWith(SUMMARY_MARK));
      // The history after the summary is the one before the restart, grown by the last turn only.
      const hist = (ms: ChatMessage[]) => ms.slice(2).filter((m) => !m.content.startsWith(TURN_CONTEXT_MARK));
      assert.deepEqual(hist(after).slice(0, hist(before).length - 1), hist(before).slice(0, -1));
      assert.equal(provider2.requests.filter(isSummaryRequest).length, 0);
    } finally {
      await b.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('killed in the middle of a compaction: the old summary and history stay in force, the cut-off one is detected, its original text retrievable', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'homeagent-compaction-kill-'));
  const file = path.join(dir, 'runlog.db');
  try {
    const child = spawn(process.execPath, ['--import', 'tsx', path.join(path.dirname(fileURLToPath(import.meta.url)), 'compaction-child.ts'), file], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    await new Promise<void>((resolve, reject) => {
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        if (out.includes('asking\n')) resolve();
      });
      child.on('exit', (code) => reject(new Error(`the child ended (${code}) before asking: ${out}`)));
    });
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    const firstShown = JSON.parse(/^shown (.*)$/m.exec(out)![1]!) as string[];
    const window = JSON.parse(/^window (.*)$/m.exec(out)![1]!) as ContextEvent[];

    const log = new SqliteRunLog(file);
    try {
      const r = restoreCompaction(log);
      assert.ok(r.summary && r.orphan, JSON.stringify(r));
      assert.equal(r.summary.sections.facts, 'first summary');
      assert.notEqual(r.orphan, r.summary.id);
      // The history is the one after the first compaction, not half of the second.
      const h = new PromptHistory();
      h.restore(r);
      assert.deepEqual(h.update(window, 1e9).map((e) => e.id), firstShown);
      // The text the cut-off compaction was taking out is in its start event.
      const original = compactedOriginal(log, r.orphan);
      assert.ok(original && original.length > 0 && original.every((e) => firstShown.includes(e.id)));
    } finally {
      log.close();
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

for (const adapter of ['ollama', 'openai'] as const) {
  test(`${adapter}: compaction through the provider and the LLM test server: the summary request repeats the prompt's start and the tools, its answer is the next prompt's summary`, async () => {
    const rig = await startLlmRig(adapter, { 'core.agent.prompt_band': 1100, 'core.agent.compaction_tail_tokens': 100, 'core.agent.compaction_summary_tokens': 80 });
    try {
      let n = 0;
      rig.srv.script((req) => {
        const last = String(req.body?.messages?.at(-1)?.content ?? '');
        if (last.startsWith(COMPACTION_REQUEST_MARK)) return { content: `Background: an evening at home\nFacts: summary number ${++n}\nOpen items: none` };
        return { content: `Here is a fairly long answer to "${last}", so that the history grows turn by turn.` };
      });
      for (let t = 0; t < 14; t++) assert.equal((await rig.kernel.injectInput('console', 'console', `question number ${t} about the house and the garden`)).status, 'done');
      const reqs = rig.srv.chatRequests();
      const at = reqs.findIndex((q) => String(q.body?.messages?.at(-1)?.content ?? '').startsWith(COMPACTION_REQUEST_MARK));
      assert.ok(at > 0 && n >= 1, `${n} compactions`);
      const summaryReq = reqs[at]!.body!;
      const before = reqs[at - 1]!.body!;
      assert.equal(summaryReq.stream, false);
      assert.deepEqual(summaryReq.messages![0], before.messages![0], 'the same system message');
      assert.deepEqual(summaryReq.tools, before.tools, 'the same tools');
      // Its history part starts as the previous request's did (system, history, that turn's message: the prefix a cache holds).
      const older = summaryReq.messages!.slice(1, -1);
      // (This turn's context and message are not history: earlier turns' contexts are.)
      const prev = before.messages!.slice(1, -2);
      const k = Math.min(older.length, prev.length);
      assert.ok(k >= 4, `${k} messages in common`);
      assert.deepEqual(older.slice(0, k), prev.slice(0, k));
      const next = reqs[at + 1]!.body!;
      assert.equal(next.messages![1]!.content, `${SUMMARY_MARK}\nBackground: an evening at home\nFacts: summary number 1\nOpen items: none`);
      const done = rig.kernel.services.runLog.ofTypes(['compaction.started', 'compaction.finished'], 100);
      assert.deepEqual(done.slice(0, 2).map((e) => e.type), ['compaction.started', 'compaction.finished']);
      assert.ok(done.every((e) => e.type !== 'compaction.finished' || e.status === 'summarised'));
    } finally {
      await rig.close();
    }
  });
}
