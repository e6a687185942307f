/**
 * Process plugins end to end (issue 17 "Process plugins"): the Python example
 * (standard library only) and a plugin written with our TypeScript SDK, run
 * as child processes in the bubblewrap sandbox, called by a real turn of the
 * kernel: tools, a stage handler, event subscriptions. And the sandbox itself:
 * a sandboxed plugin cannot read the data dir's settings.db, cannot open a
 * socket unless `network` is granted, and sees no devices.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { cpSync, writeFileSync } from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { startHarness } from '../support/kernel-harness.js';
import { readManifest } from '../../src/plugins/external/manifest.js';
import { probeSandbox, sandboxStatus } from '../../src/plugins/external/sandbox.js';
import { pluginDir, processPlugin, repoRoot, sdkPluginFiles, tempRoot } from './process-fixture.js';

const { root, cleanup } = tempRoot();
after(cleanup);

test('the sandbox probe works here (CI runs as root; bwrap is installed by scripts/setup.sh)', () => {
  const s = probeSandbox();
  assert.equal(s.available, true, `bwrap not usable: ${s.reason}`);
  assert.equal(sandboxStatus('auto').confined, true);
  assert.match(sandboxStatus('off').summary, /NOT sandboxed/);
});

test('the Python example plugin: a tool call and a before_output stage through a real turn, sandboxed', async () => {
  const dir = path.join(root, 'plugins', 'python-hello');
  cpSync(path.join(repoRoot, 'examples', 'plugins', 'python-hello'), dir, { recursive: true });
  const manifest = readManifest(dir, 'python-hello');
  const { plugin, proc } = processPlugin({ manifest, dir, stateDir: path.join(root, 'state', 'python-hello') });
  const h = await startHarness({
    script: [{ tool_calls: [{ name: 'hello_greet', arguments: { name: 'Ada' } }] }, { content: ':wave: I greeted Ada.' }],
    beforeStart: (k) => {
      k.settings.register({ key: 'plugin.python-hello.greeting', type: 'string', default: 'Hello', description: 'x' });
      k.settings.set('plugin.python-hello.greeting', 'Good evening');
      k.use(plugin);
    },
  });
  try {
    assert.equal(h.kernel.host.status().find((s) => s.name === 'python-hello')?.state, 'running');
    assert.equal(proc.stats.sandboxed, true);
    assert.ok(h.kernel.tools.has('hello_greet'));
    const r = await h.kernel.injectInput('test', 'console', 'greet Ada');
    assert.equal(r.status, 'done');
    const toolMsg = h.provider.requests[1]!.messages.find((m) => m.role === 'tool');
    assert.equal(toolMsg?.content, 'Good evening, Ada!');
    assert.equal(r.reply, '(waves) I greeted Ada.');
  } finally {
    await h.close();
  }
  assert.equal(proc.pid, undefined);
});

test('a plugin written with the TypeScript SDK: tool, on_input stage, event subscription, output channel, inject, publish of its own events only', async () => {
  const files = sdkPluginFiles(`
    const seen = [];
    const delivered = [];
    definePlugin({
      outputs: { 'sdk-out': { caps: ['text'], description: 'a test channel', deliver: (m) => { delivered.push(m.content); } } },
      tools: {
        sdk_echo: {
          description: 'Echo. Example: {"text":"hi"}',
          parameters: { type: 'object', properties: { text: { type: 'string' } }, required: ['text'], additionalProperties: false },
          handler: async (args, ctx) => ({ echo: args.text, seen, sandboxed: ctx.kernel.init.sandboxed }),
        },
        sdk_fail: { description: 'x', parameters: { type: 'object' }, handler: () => { throw new Error('the inverter is offline'); } },
        sdk_delivered: { description: 'x', parameters: { type: 'object' }, handler: () => delivered },
        sdk_inject: {
          description: 'x', parameters: { type: 'object' },
          handler: async (_a, ctx) => ctx.kernel.inject('console', 'ping'),
        },
        sdk_publish: {
          description: 'x', parameters: { type: 'object', properties: { type: { type: 'string' } } },
          handler: async (args, ctx) => { try { await ctx.kernel.publish(args.type, { n: 1 }); return 'published'; } catch (e) { return 'refused: ' + e.message; } },
        },
      },
      stages: { on_input: (ctx) => { if (ctx.raw_message === 'ping') ctx.response = 'pong from the plugin'; } },
      events: { 'plugin.timers.changed': (p) => { seen.push(p.id); } },
    });
  `);
  const { manifest, dir, stateDir } = pluginDir(root, { name: 'sdkdemo', entry: 'main.mjs', capabilities: ['tools', 'stage:on_input', 'events:subscribe', 'events:publish', 'output', 'inject:L0'] }, files);
  const { plugin } = processPlugin({ manifest, dir, stateDir });
  const h = await startHarness({ beforeStart: (k) => k.use(plugin) });
  try {
    const r = await h.kernel.injectInput('test', 'console', 'ping');
    assert.equal(r.status, 'short_circuit');
    assert.equal(r.reply, 'pong from the plugin');
    h.kernel.bus.publish('plugin.timers.changed', { change: 'started', id: 't1', seconds: 60, ends_at: 0 });
    const ctx = { input: { id: 'i1', source: 'test', channel: 'console', text: 'x', kind: 'queued', level: 0, received_at: 0 } as never, signal: new AbortController().signal, call_id: 'c1' };
    let out = '';
    // The event is a notification; the next call is answered after it was handled (one pipe, in order).
    out = (await h.kernel.tools.execute('sdk_echo', { text: 'hi' }, ctx)).content;
    assert.deepEqual(JSON.parse(out), { echo: 'hi', seen: ['t1'], sandboxed: true });
    const fail = await h.kernel.tools.execute('sdk_fail', {}, ctx);
    assert.equal(fail.is_error, true);
    assert.match(fail.content, /the inverter is offline/);
    const got: unknown[] = [];
    h.kernel.bus.subscribe('_t_', 'plugin.sdkdemo.reading' as never, (p) => void got.push(p));
    assert.equal((await h.kernel.tools.execute('sdk_publish', { type: 'plugin.sdkdemo.reading' }, ctx)).content, 'published');
    assert.deepEqual(got, [{ n: 1 }]);
    assert.match((await h.kernel.tools.execute('sdk_publish', { type: 'stop' }, ctx)).content, /refused: .*only events named plugin\.sdkdemo\./);
    // Its output channel: output_send__sdk-out delivers through the plugin.
    assert.equal((await h.kernel.tools.execute('output_send__sdk-out', { payload: 'dinner is ready' }, ctx)).content, 'sent to sdk-out');
    assert.deepEqual(JSON.parse((await h.kernel.tools.execute('sdk_delivered', {}, ctx)).content), ['dinner is ready']);
    // An injected input runs as a turn; the plugin gets its result.
    const injected = JSON.parse((await h.kernel.tools.execute('sdk_inject', {}, ctx)).content) as { status: string; reply: string };
    assert.deepEqual([injected.status, injected.reply], ['short_circuit', 'pong from the plugin']);
  } finally {
    await h.close();
  }
});

const probeFiles = sdkPluginFiles(`
  import { readFileSync, readdirSync } from 'node:fs';
  import net from 'node:net';
  definePlugin({
    tools: {
      probe_read: {
        description: 'x', parameters: { type: 'object', properties: { file: { type: 'string' } }, required: ['file'] },
        handler: (args) => { try { return 'read ' + readFileSync(args.file, 'utf8').length + ' bytes'; } catch (e) { return 'error ' + e.code; } },
      },
      probe_connect: {
        description: 'x', parameters: { type: 'object', properties: { port: { type: 'integer' } }, required: ['port'] },
        handler: (args) => new Promise((resolve) => {
          const s = net.connect({ host: '127.0.0.1', port: args.port });
          s.on('connect', () => { s.destroy(); resolve('connected'); });
          s.on('error', (e) => resolve('error ' + e.code));
        }),
      },
      probe_ls: {
        description: 'x', parameters: { type: 'object', properties: { dir: { type: 'string' } }, required: ['dir'] },
        handler: (args) => { try { return readdirSync(args.dir).sort().join(' '); } catch (e) { return 'error ' + e.code; } },
      },
      probe_write: {
        description: 'x', parameters: { type: 'object', properties: { file: { type: 'string' } }, required: ['file'] },
        handler: async (args) => { const fs = await import('node:fs'); try { fs.writeFileSync(args.file, 'x'); return 'written'; } catch (e) { return 'error ' + e.code; } },
      },
    },
  });
`);

test('the sandbox: no settings.db, no socket without the network capability, no devices, own folder read-only, state writable', async () => {
  const server = net.createServer((s) => s.destroy());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', () => r()));
  const port = (server.address() as net.AddressInfo).port;
  const closed = pluginDir(root, { name: 'probe', entry: 'main.mjs', capabilities: ['tools'] }, probeFiles);
  const open = pluginDir(root, { name: 'probenet', entry: 'main.mjs', capabilities: ['tools', 'network'] }, probeFiles);
  const a = processPlugin({ ...closed });
  const h = await startHarness({ beforeStart: (k) => k.use(a.plugin) });
  const settingsDb = path.join(h.dataDir, 'settings.db');
  writeFileSync(settingsDb, 'SQLite format 3\0 api_key=sk-secret');
  const ctx = { input: { id: 'i1', source: 'test', channel: 'console', text: 'x', kind: 'queued', level: 0, received_at: 0 } as never, signal: new AbortController().signal, call_id: 'c1' };
  const call = async (tool: string, args: Record<string, unknown>) => (await h.kernel.tools.execute(tool, args, ctx)).content;
  try {
    // The service itself can read it; the plugin cannot even see the data dir.
    assert.equal(await call('probe_read', { file: settingsDb }), 'error ENOENT');
    assert.equal(await call('probe_ls', { dir: h.dataDir }), 'error ENOENT');
    assert.equal(await call('probe_connect', { port }), 'error ECONNREFUSED'); // its own empty network namespace
    assert.equal(await call('probe_ls', { dir: '/dev' }).then((s) => s.split(' ').includes('snd')), false);
    assert.equal(await call('probe_ls', { dir: '/' }).then((s) => s.split(' ').includes('root')), false);
    assert.equal(await call('probe_write', { file: '/plugin/x' }), 'error EROFS');
    assert.equal(await call('probe_write', { file: '/state/x' }), 'written');
    assert.equal(await call('probe_read', { file: path.join(root, 'plugins', 'probenet', 'plugin.json') }), 'error ENOENT'); // no other plugin
    // With `network` granted the same plugin reaches the socket.
    await h.kernel.host.remove('probe');
    const b = processPlugin({ ...open });
    h.kernel.host.add(b.plugin);
    assert.equal(await h.kernel.host.start('probenet'), true);
    assert.equal(await call('probe_connect', { port }), 'connected');
    assert.equal(await call('probe_read', { file: settingsDb }), 'error ENOENT');
  } finally {
    await h.close();
    server.close();
  }
});
