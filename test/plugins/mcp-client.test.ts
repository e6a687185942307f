/**
 * MCP client plugins (issue 17 "MCP") against real servers installed from
 * npm and started from node_modules (never downloaded): server-everything
 * over stdio and Streamable HTTP, server-filesystem on a temporary folder;
 * plus a small SDK-built server (test/fixtures/mcp/changing-server.mjs) whose
 * tool list changes and which can disappear in the middle of a call.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { McpClientPlugin, isRiskyMcpTool, mcpResult, mcpToolName } from '../../src/plugins/external/mcp-client.js';
import { validateManifest } from '../../src/plugins/external/manifest.js';
import { startHarness, type Harness } from '../support/kernel-harness.js';
import { waitUntil } from '../support/wait.js';
import type { ToolContext } from '../../src/kernel/stage-types.js';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const EVERYTHING = path.join(ROOT, 'node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const FILESYSTEM = path.join(ROOT, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');
const CHANGING = path.join(ROOT, 'test/fixtures/mcp/changing-server.mjs');

function plugin(name: string, mcp: Record<string, unknown>, dir = ROOT, extra: Record<string, unknown> = {}): McpClientPlugin {
  const manifest = validateManifest({ name, version: '1.0.0', kind: 'mcp', mcp, ...extra }, `${name}/plugin.json`);
  return new McpClientPlugin({ manifest, dir, reconnect: { attempts: 3, baseMs: 20 } });
}

function ctx(channel = 'console', text = 'test'): ToolContext {
  return { input: { id: 'i1', source: 'test', channel, text, kind: 'queued', level: 0, received_at: Date.now() }, signal: new AbortController().signal, call_id: 'c1' };
}

async function withKernel(plugins: McpClientPlugin[], fn: (h: Harness) => Promise<void>, env: Record<string, string> = {}, before?: (k: Harness['kernel']) => void): Promise<void> {
  const h = await startHarness({
    beforeStart: (k) => {
      before?.(k);
      plugins.forEach((p) => k.use(p));
    },
    env,
  });
  try {
    await fn(h);
  } finally {
    await h.close();
  }
}

test('names: <server>__<tool>, sanitised to the registry pattern, cut to 64 with a hash', () => {
  assert.equal(mcpToolName('everything', 'get-sum'), 'everything__get-sum');
  assert.equal(mcpToolName('fs', 'read file.v2'), 'fs__read_file_v2');
  const long = mcpToolName('srv', 'x'.repeat(100));
  assert.equal(long.length, 64);
  assert.match(long, /^[A-Za-z0-9_-]{1,64}$/);
  assert.notEqual(long, mcpToolName('srv', `${'x'.repeat(99)}y`));
});

test('risky: the server, a listed tool, or a destructive one (not a read-only one)', () => {
  assert.equal(isRiskyMcpTool({ risky: true }, { name: 'a' }), true);
  assert.equal(isRiskyMcpTool({ risky_tools: ['a'] }, { name: 'a' }), true);
  assert.equal(isRiskyMcpTool({}, { name: 'a', annotations: { destructiveHint: true } }), true);
  assert.equal(isRiskyMcpTool({}, { name: 'a', annotations: { destructiveHint: true, readOnlyHint: true } }), false);
  assert.equal(isRiskyMcpTool({ risky_tools: ['b'] }, { name: 'a' }), false);
});

test('results: text, structured content without text, resources, images; isError throws', () => {
  assert.equal(mcpResult('s t', { content: [{ type: 'text', text: 'a' }, { type: 'text', text: 'b' }] }), 'a\nb');
  assert.equal(mcpResult('s t', { content: [], structuredContent: { t: 1 } }), '{"t":1}');
  assert.equal(mcpResult('s t', { content: [{ type: 'resource', resource: { uri: 'file:///x', text: 'hi' } }] }), '[resource file:///x]\nhi');
  const img = mcpResult('s t', { content: [{ type: 'image', data: 'AAAA', mimeType: 'image/png' }] });
  assert.deepEqual(img, { kind: 'tool_output', text: '[image image/png]', images: ['AAAA'] });
  assert.throws(() => mcpResult('s t', { content: [{ type: 'text', text: 'nope' }], isError: true }), /s t failed: nope/);
});

test('stdio server-everything: its tools in its group with their schemas; a call through tools_call in a turn; the child ends with the plugin', async () => {
  const p = plugin('everything', { transport: 'stdio', command: ['node', EVERYTHING, 'stdio'], env: { GREETING: 'hello ${greeting}' } });
  process.env.HOMEAGENT_TEST_SECRET = 'must-not-leak';
  let pid: number | undefined;
  await withKernel([p], async (h) => {
    pid = p.pid;
    // Only the safe environment and the manifest's env (with the plugin's setting) reach the server.
    const env = JSON.parse((await h.kernel.services.tools.execute('everything__get-env', {}, ctx())).content) as Record<string, string>;
    assert.equal(env.GREETING, 'hello world');
    assert.equal(env.HOMEAGENT_TEST_SECRET, undefined);
    const tools = h.kernel.services.tools;
    assert.ok(tools.has('everything__get-sum'), `tools: ${tools.names().join(', ')}`);
    assert.equal(tools.groupOf('everything__get-sum'), 'everything');
    assert.deepEqual(tools.get('everything__get-sum')!.parameters.required, ['a', 'b']);
    assert.equal(h.kernel.host.status().find((s) => s.name === 'everything')?.state, 'running');

    // Structured content comes back (as the text the server sent with it).
    const s = await tools.execute('everything__get-structured-content', { location: 'Chicago' }, ctx());
    assert.equal(s.is_error, false);
    assert.deepEqual(JSON.parse(s.content), { temperature: 36, conditions: 'Light rain / drizzle', humidity: 82 });
    // Arguments are checked against the server's inputSchema before the call.
    const bad = await tools.execute('everything__get-sum', { a: 'x', b: 1 }, ctx());
    assert.equal(bad.is_error, true);
    assert.match(bad.content, /invalid arguments/);

    // The model brings the group in and calls the tool with tools_call, as with any plugin's tools.
    h.provider.enqueue({ tool_calls: [{ name: 'tools_call', arguments: { name: 'everything__get-sum', arguments: { a: 2, b: 3 } } }] }, { content: 'five' });
    const r = await h.kernel.injectInput('test', 'console', 'what is 2 plus 3');
    assert.equal(r.status, 'done');
    const fed = h.provider.requests[1]!.messages.find((m) => m.role === 'tool');
    assert.match(String(fed?.content), /The sum of 2 and 3 is 5/);
    assert.ok(h.kernel.host.status().find((x) => x.name === 'everything')!.tools.includes('everything__get-sum'));
  }, {}, (k) => k.settings.register({ key: 'plugin.everything.greeting', type: 'string', default: 'world', description: 'test' }));
  delete process.env.HOMEAGENT_TEST_SECRET;
  assert.ok(pid);
  assert.throws(() => process.kill(pid!, 0), /ESRCH/, 'the server process ended with the plugin');
});

test('stdio server-filesystem on a temporary folder: reads; an error result; write_file (destructive) waits for the household\'s yes', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'homeagent-mcp-fs-'));
  writeFileSync(path.join(dir, 'a.txt'), 'hello from a file\n');
  const p = plugin('files', { transport: 'stdio', command: ['node', FILESYSTEM, dir] });
  try {
    await withKernel([p], async (h) => {
      const tools = h.kernel.services.tools;
      const read = await tools.execute('files__read_text_file', { path: path.join(dir, 'a.txt') }, ctx());
      assert.equal(read.is_error, false, read.content);
      assert.match(read.content, /hello from a file/);
      // Outside the allowed folder: the server answers isError, the model gets a tool error.
      const outside = await tools.execute('files__read_text_file', { path: '/etc/hostname' }, ctx());
      assert.equal(outside.is_error, true);
      assert.match(outside.content, /^error: files read_text_file failed: .*(denied|outside)/i);
      assert.match(tools.get('files__write_file')!.description, /asks the household first/);

      // A yes on the same channel lets it write.
      const target = path.join(dir, 'note.txt');
      h.provider.enqueue({ tool_calls: [{ name: 'tools_call', arguments: { name: 'files__write_file', arguments: { path: target, content: 'milk' } } }] }, { content: 'written' });
      const turn = h.kernel.injectInput('test', 'console', 'write a note');
      await waitUntil(() => h.outputs.some((o) => /Shall I run write_file of files/.test(o.content)), 'the question');
      assert.equal(existsSync(target), false, 'nothing written before the yes');
      await h.kernel.injectInput('test', 'console', 'yes');
      assert.equal((await turn).status, 'done');
      assert.equal(readFileSync(target, 'utf8'), 'milk');

      // A no: not written, and the model reads why.
      const other = path.join(dir, 'other.txt');
      const asked = h.outputs.length;
      h.provider.enqueue({ tool_calls: [{ name: 'tools_call', arguments: { name: 'files__write_file', arguments: { path: other, content: 'x' } } }] }, { content: 'not written' });
      const turn2 = h.kernel.injectInput('test', 'console', 'write another');
      await waitUntil(() => h.outputs.slice(asked).some((o) => /Shall I run write_file/.test(o.content)), 'the second question');
      await h.kernel.injectInput('test', 'console', 'no');
      await turn2;
      assert.equal(existsSync(other), false);
      const refused = h.provider.requests.at(-1)!.messages.filter((m) => m.role === 'tool').at(-1);
      assert.match(String(refused?.content), /did not confirm/);

      // The box's button answers too (a press of the talk button is a yes).
      const third = path.join(dir, 'third.txt');
      const asked3 = h.outputs.length;
      h.provider.enqueue({ tool_calls: [{ name: 'files__write_file', arguments: { path: third, content: 'eggs' } }] }, { content: 'written' });
      const turn3 = h.kernel.injectInput('test', 'console', 'write a third');
      await waitUntil(() => h.outputs.slice(asked3).some((o) => /Shall I run write_file/.test(o.content)), 'the third question');
      h.kernel.services.bus.publish('plugin.gpio.button', { button: 'ptt', action: 'press', held_ms: 0 });
      await turn3;
      assert.equal(readFileSync(third, 'utf8'), 'eggs');
    });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('tools/list_changed: the tools change between turns, never in the middle of one', async () => {
  const p = plugin('changing', { transport: 'stdio', command: ['node', CHANGING] });
  await withKernel([p], async (h) => {
    const tools = h.kernel.services.tools;
    assert.ok(tools.has('changing__ping'));
    assert.equal(tools.has('changing__extra'), false);
    let release!: () => void;
    const gate = new Promise<void>((r) => (release = r));
    // Round 1 asks the server to add a tool (it sends list_changed); round 2 is held open: the turn is still running.
    h.provider.enqueue({ tool_calls: [{ name: 'changing__add_tool', arguments: {} }] }, { content: 'held', gate });
    const turn = h.kernel.injectInput('test', 'console', 'add a tool');
    await h.provider.waitForRequests(2);
    // The plugin has read the new list (it waits for the end of the turn to apply it).
    await waitUntil(() => p.pendingRefresh, 'the new list read');
    assert.equal(tools.has('changing__extra'), false, 'not in the middle of a turn');
    release();
    await turn;
    await waitUntil(() => tools.has('changing__extra'), 'the new tool after the turn');
    const r = await tools.execute('changing__extra', { n: 7 }, ctx());
    assert.equal(r.content, 'extra 7');
    // Removed on the server: gone here too (no turn runs, so at once).
    await tools.execute('changing__remove_tool', {}, ctx());
    await waitUntil(() => !tools.has('changing__extra'), 'the tool removed');
  });
});

test('a server that disappears mid-call: a clear tool error, the turn goes on, the plugin reconnects', async () => {
  const p = plugin('changing', { transport: 'stdio', command: ['node', CHANGING] });
  await withKernel([p], async (h) => {
    const tools = h.kernel.services.tools;
    const pid = p.pid;
    assert.ok(pid);
    h.provider.enqueue({ tool_calls: [{ name: 'changing__vanish', arguments: {} }] }, { content: 'the server went away' });
    const r = await h.kernel.injectInput('test', 'console', 'vanish');
    assert.equal(r.status, 'done');
    assert.equal(r.reply, 'the server went away');
    const fed = h.provider.requests[1]!.messages.filter((m) => m.role === 'tool').at(-1);
    assert.match(String(fed?.content), /^error: the MCP server of changing went away during changing vanish/);
    await waitUntil(() => p.connected && p.connections === 2, 'the reconnection');
    assert.notEqual(p.pid, pid);
    const again = await tools.execute('changing__ping', {}, ctx());
    assert.equal(again.content, `pong ${p.pid}`);
  });
});

test('a server that cannot come back: the plugin reports crashed, its tools go, the host restarts it later', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'homeagent-mcp-gone-'));
  const p = plugin('changing', { transport: 'stdio', command: ['node', CHANGING] }, dir);
  try {
    await withKernel(
      [p],
      async (h) => {
        const tools = h.kernel.services.tools;
        const r = await tools.execute('changing__vanish', { stay_away: true }, ctx());
        assert.equal(r.is_error, true);
        assert.match(r.content, /went away during/);
        await waitUntil(() => h.kernel.host.status().find((s) => s.name === 'changing')?.state === 'failed', 'the crash report');
        const st = h.kernel.host.status().find((s) => s.name === 'changing')!;
        assert.match(st.last_error ?? '', /did not come back after 3 attempts/);
        assert.equal(tools.has('changing__ping'), false, 'its tools are detached');
        // The server can start again: the host's restart brings the tools back.
        rmSync(path.join(dir, 'refuse'));
        await waitUntil(() => tools.has('changing__ping'), 'the restart');
      },
      { HOMEAGENT__CORE__PLUGINS__RESTART_BACKOFF_MS: '50' },
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => resolve(port));
    });
  });
}

async function startHttpEverything(): Promise<{ child: ChildProcess; url: string }> {
  const port = await freePort();
  const child = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], { env: { PATH: process.env.PATH ?? '', PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
  let err = '';
  await new Promise<void>((resolve, reject) => {
    child.stderr!.on('data', (d: Buffer) => {
      err += d.toString();
      if (/listening on port/.test(err)) resolve();
    });
    child.once('exit', (code) => reject(new Error(`server-everything exited ${code}: ${err}`)));
  });
  return { child, url: `http://127.0.0.1:${port}/mcp` };
}

test('Streamable HTTP server-everything: tools and calls; when it stops, a clear error and a crash report', async () => {
  const { child, url } = await startHttpEverything();
  const p = plugin('everyweb', { transport: 'http', url });
  try {
    await withKernel(
      [p],
      async (h) => {
        const tools = h.kernel.services.tools;
        const r = await tools.execute('everyweb__get-sum', { a: 40, b: 2 }, ctx());
        assert.equal(r.content, 'The sum of 40 and 2 is 42.');
        const echo = await tools.execute('everyweb__echo', { message: 'hi' }, ctx());
        assert.match(echo.content, /hi/);
        // The server stops: the call fails clearly, reconnection fails, the plugin reports crashed.
        const exited = new Promise((r2) => child.once('exit', r2));
        child.kill('SIGKILL');
        await exited;
        const gone = await tools.execute('everyweb__get-sum', { a: 1, b: 1 }, ctx());
        assert.equal(gone.is_error, true);
        assert.match(gone.content, /went away during everyweb get-sum/);
        await waitUntil(() => h.kernel.host.status().find((s) => s.name === 'everyweb')?.state === 'failed', 'the crash report');
      },
      { HOMEAGENT__CORE__PLUGINS__RESTART_BACKOFF_MS: '600000' },
    );
  } finally {
    child.kill('SIGKILL');
  }
});
