/**
 * Kernel memory contract suite (src/kernel/memory-port.ts `KernelMemory`):
 * every implementation (the memory system of src/memory, the kernel's
 * SimpleContextStore fallback) must pass it. What the port promises (seed 001
 * "Three-Layer Memory"; the interface's docs): `timeline` gives appended
 * events oldest first, newest last, as a newest-first suffix within the token
 * budget and always the newest event; `prune` never drops the protected tail
 * (the newest 10); `recallForPrompt` resolves, never rejects, with text within
 * its budget; `tools()` are well formed with unique names; no method throws on
 * odd input. Durable implementations keep the window across a reopen.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { estimateTokens, type ContextEvent, type KernelMemory } from '../../../src/kernel/memory-port.js';

/** A fresh, empty memory; `reopen` (durable ones) opens the same store again after `memory.close()`. */
export interface KernelMemoryHarness {
  memory: KernelMemory;
  reopen?: () => KernelMemory;
  cleanup(): void;
}

const T0 = Date.UTC(2026, 10, 30, 12, 0, 0);

/** n user/agent events, a minute apart, Chinese and English. */
function conversation(prefix: string, n: number): ContextEvent[] {
  const out: ContextEvent[] = [];
  for (let i = 0; i < n; i++) {
    const user = i % 2 === 0;
    out.push({
      id: `${prefix}-${i}`,
      time: T0 + i * 60_000,
      kind: user ? 'user' : 'agent',
      source: 'console',
      input: user ? (i % 4 === 0 ? `第${i}个问题：厨房灯开着吗？` : `question ${i}: is the hallway door locked?`) : '',
      response: user ? '' : `answer ${i}: yes, 已经处理好了`,
      ...(user && i % 4 === 0 ? { speaker: 'Anna' } : {}),
    });
  }
  return out;
}

const cost = (e: ContextEvent): number => estimateTokens(e.input) + estimateTokens(e.response);

/** Register the kernel memory contract for one implementation. */
export function kernelMemoryContract(name: string, factory: () => KernelMemoryHarness): void {
  describe(`KernelMemory contract: ${name}`, () => {
    async function withMemory(fn: (m: KernelMemory) => void | Promise<void>): Promise<void> {
      const h = factory();
      try {
        await fn(h.memory);
      } finally {
        h.memory.close();
        h.cleanup();
      }
    }

    it('starts empty', () =>
      withMemory((m) => {
        assert.deepEqual(m.timeline(10_000), []);
      }));

    it('timeline gives the appended events oldest first, with their fields', () =>
      withMemory((m) => {
        const events = conversation('c', 6);
        events.push({ id: 'tool-1', time: T0 + 7 * 60_000, kind: 'tool', source: 'console', input: 'home_control {"entity":"light.kitchen"}', response: 'ok', tool: 'home_control' });
        events.push({ id: 'cut', time: T0 + 8 * 60_000, kind: 'agent', source: 'speaker', input: '', response: 'The weather tomorrow is', interrupted: true });
        for (const e of events) m.append(e);
        const got = m.timeline(100_000);
        assert.deepEqual(got.map((e) => e.id), events.map((e) => e.id));
        for (const e of events) {
          const g = got.find((x) => x.id === e.id)!;
          assert.equal(g.kind, e.kind);
          assert.equal(g.source, e.source);
          assert.equal(g.input, e.input);
          assert.equal(g.response, e.response);
          assert.equal(g.time, e.time);
          assert.equal(g.tool, e.tool);
          assert.equal(g.speaker, e.speaker);
          assert.equal(g.interrupted === true, e.interrupted === true);
        }
      }));

    it('timeline keeps to the budget: a newest-first suffix, always the newest event, more budget never fewer events', () =>
      withMemory((m) => {
        const events = conversation('b', 12);
        for (const e of events) m.append(e);
        let previous = 0;
        for (const budget of [0, 5, 20, 40, 80, 160, 100_000]) {
          const got = m.timeline(budget);
          assert.ok(got.length >= 1, `budget ${budget}: the newest event at least`);
          assert.deepEqual(got.map((e) => e.id), events.slice(-got.length).map((e) => e.id), `budget ${budget}: a suffix`);
          if (got.length > 1) assert.ok(got.reduce((s, e) => s + cost(e), 0) <= budget, `budget ${budget}: within it`);
          assert.ok(got.length >= previous, `budget ${budget}: not fewer than with less`);
          previous = got.length;
        }
        assert.equal(previous, events.length);
      }));

    it('prune never drops the newest 10 events', () =>
      withMemory((m) => {
        const events = conversation('p', 60);
        for (const e of events) m.append(e);
        m.prune('is the kitchen light on?');
        const ids = m.timeline(1_000_000).map((e) => e.id);
        for (const e of events.slice(-10)) assert.ok(ids.includes(e.id), `${e.id} kept`);
        assert.equal(ids.at(-1), events.at(-1)!.id);
      }));

    it('recallForPrompt resolves with text within its budget, also for empty and odd input', async () =>
      withMemory(async (m) => {
        for (const e of conversation('r', 8)) m.append(e);
        for (const [input, budget] of [['厨房灯开着吗', 200], ['', 200], ['x'.repeat(5000), 50], ['hallway door', 0]] as const) {
          const r = await m.recallForPrompt(input, budget, new Set(['r-0']));
          assert.equal(typeof r.text, 'string');
          assert.ok(Array.isArray(r.items));
          assert.ok(estimateTokens(r.text) <= Math.max(budget, 0), `"${input.slice(0, 12)}" budget ${budget}: ${estimateTokens(r.text)} tokens`);
        }
      }));

    it('tools are well formed with unique names; a tool memory policy can be registered', () =>
      withMemory((m) => {
        const tools = m.tools();
        assert.equal(new Set(tools.map((t) => t.name)).size, tools.length);
        for (const t of tools) {
          assert.match(t.name, /^[a-zA-Z0-9_-]{1,64}$/);
          assert.equal(typeof t.description, 'string');
          assert.equal((t.parameters as { type?: string }).type, 'object');
        }
        m.registerToolMemoryPolicy('home_control', { cleaner: (s) => s.slice(0, 10) });
        m.registerToolMemoryPolicy('secret_tool', { no_memory: true });
        m.append({ id: 's1', time: T0, kind: 'tool', source: 'console', input: 'secret_tool {}', response: 'hunter2', tool: 'secret_tool' });
        m.append({ id: 'u1', time: T0 + 1, kind: 'user', source: 'console', input: 'hello', response: '' });
        assert.equal(m.timeline(10_000).at(-1)?.id, 'u1');
      }));

    it('odd input does not throw', () =>
      withMemory((m) => {
        m.append({ id: 'empty', time: T0, kind: 'user', source: '', input: '', response: '' });
        m.append({ id: 'big', time: T0 + 1, kind: 'agent', source: 'console', input: '', response: '长'.repeat(20_000) });
        m.prune('');
        assert.equal(m.timeline(0).at(-1)?.id, 'big');
        assert.ok(m.timeline(-5).length <= 1);
      }));

    it('a durable memory keeps the window across a reopen', (t) => {
      const h = factory();
      if (!h.reopen) {
        h.memory.close();
        h.cleanup();
        t.skip('not durable');
        return;
      }
      let again: KernelMemory | undefined;
      try {
        const events = conversation('d', 5);
        for (const e of events) h.memory.append(e);
        h.memory.close();
        again = h.reopen();
        assert.deepEqual(again.timeline(100_000).map((e) => e.id), events.map((e) => e.id));
      } finally {
        again?.close();
        h.cleanup();
      }
    });
  });
}
