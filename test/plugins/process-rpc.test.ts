/**
 * The process-plugin protocol's pieces without a child process: NDJSON
 * framing with its line cap (src/plugins/external/rpc.ts LineReader), the
 * JSON-RPC peer (call time limits on the FakeClock, cancel, close, garbage,
 * errors), and the author SDK talking to the peer over in-memory streams.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { FakeClock, type TimerHandle } from '../../src/kernel/clock.js';
import { LineReader, RpcError, RpcPeer } from '../../src/plugins/external/rpc.js';
import { RPC_ERRORS } from '../../src/plugins/external/protocol.js';
import { definePlugin } from '../../src/plugin-sdk/index.js';

test('LineReader: lines split across chunks, CRLF, and a line over the cap stops it without holding the line', () => {
  const lines: string[] = [];
  const r = new LineReader(10, (l) => lines.push(l));
  assert.equal(r.push(Buffer.from('ab')), 'ok');
  assert.equal(r.push(Buffer.from('c\r\nde\n\nf')), 'ok');
  assert.deepEqual(lines, ['abc', 'de', '']);
  assert.equal(r.push(Buffer.from('0123456789')), 'overflow', '"f" + 10 bytes without a newline passes the 10-byte cap');
  assert.equal(r.push(Buffer.from('\nok\n')), 'overflow', 'it stays stopped');
  assert.deepEqual(lines, ['abc', 'de', '']);
  const r2 = new LineReader(4, () => undefined);
  assert.equal(r2.push(Buffer.from('12345\n')), 'overflow', 'a complete line over the cap');
});

function pair(clock: FakeClock) {
  const timers = { setTimeout: (fn: () => void, ms: number) => clock.setTimeout(fn, ms), clearTimeout: (h: unknown) => clock.clearTimeout(h as TimerHandle) };
  const garbage: string[] = [];
  const notes: Array<[string, unknown]> = [];
  let b: RpcPeer;
  const a: RpcPeer = new RpcPeer((l) => queueMicrotask(() => b.receive(l)), { request: () => ({}), notification: (m, p) => void notes.push([m, p]), garbage: (l) => void garbage.push(l) }, timers);
  const handlers = {
    request: async (method: string, params: unknown) => {
      if (method === 'echo') return params;
      if (method === 'hang') return new Promise(() => undefined);
      if (method === 'fail') throw new RpcError(RPC_ERRORS.PERMISSION_DENIED, 'not granted', { capability: 'x' });
      if (method === 'boom') throw Object.assign(new Error('broke'), { code: 'SOME_CODE' });
      throw new RpcError(RPC_ERRORS.METHOD_NOT_FOUND, `unknown method "${method}"`);
    },
    notification: () => undefined,
    garbage: (l: string) => void garbage.push(l),
  };
  b = new RpcPeer((l) => queueMicrotask(() => a.receive(l)), handlers, timers);
  return { a, b, garbage, notes };
}

test('RpcPeer: results, typed errors, time limits on the clock, cancel, close, garbage', async () => {
  const clock = new FakeClock();
  const { a, b, garbage, notes } = pair(clock);
  assert.deepEqual(await a.call('echo', { x: 1 }), { x: 1 });
  await assert.rejects(a.call('fail'), (e: RpcError) => e.rpcCode === RPC_ERRORS.PERMISSION_DENIED && e.data?.capability === 'x');
  await assert.rejects(a.call('boom'), (e: RpcError) => e.rpcCode === RPC_ERRORS.FAILED && e.message === 'broke' && e.data?.code === 'SOME_CODE');
  await assert.rejects(a.call('nope'), (e: RpcError) => e.rpcCode === RPC_ERRORS.METHOD_NOT_FOUND);
  const hung = a.call('hang', {}, { timeoutMs: 500 });
  clock.advance(499);
  assert.equal(a.pendingCount, 1);
  clock.advance(1);
  await assert.rejects(hung, (e: RpcError) => e.rpcCode === RPC_ERRORS.TIMEOUT && /hang timed out after 500 ms/.test(e.message));
  assert.equal(a.pendingCount, 0);
  const ac = new AbortController();
  const cancelled = a.call('hang', {}, { signal: ac.signal });
  ac.abort();
  await assert.rejects(cancelled, (e: RpcError) => e.rpcCode === RPC_ERRORS.CANCELLED);
  b.receive('not json');
  b.receive('{"jsonrpc":"1.0","id":1}');
  b.receive('[1,2]');
  assert.equal(garbage.length, 3);
  b.notify('event', { type: 't' });
  await new Promise((r) => setImmediate(r));
  assert.deepEqual(notes, [['event', { type: 't' }]]);
  const pending = a.call('hang');
  a.close('the plugin exited');
  await assert.rejects(pending, /the plugin exited/);
  await assert.rejects(a.call('echo'), /the plugin exited/);
});

test('the SDK over in-memory streams: handshake, registrations in the start window, tool errors, stage changes, shutdown', async () => {
  const toPlugin = new PassThrough();
  const fromPlugin = new PassThrough();
  let exited = -1;
  const ready = definePlugin(
    {
      tools: {
        t_ok: { description: 'x', parameters: { type: 'object' }, handler: (args) => ({ got: args }) },
        t_err: { description: 'x', parameters: { type: 'object' }, handler: () => { throw new Error('offline'); } },
      },
      stages: { before_toolcall: (ctx) => { ctx.deny = true; ctx.deny_reason = 'no'; } },
    },
    { input: toPlugin, output: fromPlugin, exit: (c) => (exited = c) },
  );
  const registered: Array<[string, unknown]> = [];
  const clock = new FakeClock();
  const kernel: RpcPeer = new RpcPeer(
    (l) => void toPlugin.write(l + '\n'),
    { request: (m, p) => void registered.push([m, p]), notification: () => undefined, garbage: () => undefined },
    { setTimeout: (fn, ms) => clock.setTimeout(fn, ms), clearTimeout: (h) => clock.clearTimeout(h as TimerHandle) },
  );
  const reader = new LineReader(1 << 20, (l) => kernel.receive(l));
  fromPlugin.on('data', (c: Buffer) => reader.push(c));
  assert.deepEqual(await kernel.call('initialize', { protocol: 1, plugin: 'p', homeagent: 't', capabilities: [], settings: { a: 1 }, state_dir: '/s', plugin_dir: '/p', sandboxed: false }), { protocol: 1, name: 'p' });
  await kernel.call('start', {});
  assert.deepEqual(registered.map(([m, p]) => `${m}:${(p as { name?: string; stage?: string }).name ?? (p as { stage: string }).stage}`).sort(), ['register_stage:before_toolcall', 'register_tool:t_err', 'register_tool:t_ok']);
  const k = await ready;
  assert.deepEqual(k.settings, { a: 1 });
  assert.deepEqual(await kernel.call('tool.call', { name: 't_ok', args: { n: 1 }, call_id: 'c', input: { id: 'i', channel: 'c', text: 't' } }), { content: { got: { n: 1 } } });
  assert.deepEqual(await kernel.call('tool.call', { name: 't_err', args: {}, call_id: 'c', input: { id: 'i', channel: 'c', text: 't' } }), { content: 'offline', is_error: true });
  const res = await kernel.call('stage.run', { stage: 'before_toolcall', input: { id: 'i', channel: 'c', text: 't' }, raw_message: 't', context_messages: [], llm_text: '', tool_calls: [], deny: false, final_text: '', partial: false, skip_output: false, memory: [], extra: {} });
  assert.deepEqual(res, { set: { deny: true, deny_reason: 'no' } });
  await assert.rejects(kernel.call('initialize', { protocol: 2 }), /speaks protocol 1, not 2/);
  assert.deepEqual(await kernel.call('shutdown', {}), {});
  await new Promise((r) => setImmediate(r));
  assert.equal(exited, 0);
});
