/**
 * `homeagent plugins ...` against the service started in-process (a real
 * Unix socket): install without --yes and without a terminal to ask on
 * installs nothing; with --yes it installs and runs; an update asking for
 * more is held even with --yes until `plugins approve`; the listing shows
 * kind, version, state, restarts, capabilities and the sandbox note; the
 * shipped example skill runs; reload, disable, enable and remove work
 * without restarting the service.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { deviceAccess, startApp, type App } from '../../src/service/app.js';
import { cli } from '../cli/run-cli.js';
import { writePlugin } from './rig.js';

describe('homeagent plugins against a running service', () => {
  let app: App;
  let dir: string;
  let src: string;
  let socket: string;
  const run = (...args: string[]) => cli(['--socket', socket, ...args]);

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'homeagent-plugcli-'));
    src = mkdtempSync(path.join(os.tmpdir(), 'homeagent-plugsrc-'));
    socket = path.join(dir, 'homeagent.sock');
    app = await startApp({ dataDir: dir, console: false, socketPath: socket, embeddedBrokerPort: 0, env: { HOMEAGENT__PLUGIN__WEBUI__PORT: '0', HOMEAGENT__CORE__LLM__SOURCES__OLLAMA__BASE_URL: 'http://127.0.0.1:9', HOMEAGENT__CORE__SERVICE__DEMO_HOME: 'off' } });
  });
  after(async () => {
    await app.stop();
    rmSync(dir, { recursive: true, force: true });
    rmSync(src, { recursive: true, force: true });
  });

  test('install asks, --yes approves, an update asking more is held until approve', async () => {
    const v1 = writePlugin(path.join(src, 'v1'), 'greeter', { name: 'greeter', version: '1.0.0', kind: 'lua', entry: 'main.lua', description: 'Says hello', capabilities: ['tools'] }, { 'main.lua': 'sdk.register_tool{ name = "greet", description = "hello", parameters = { type = "object", properties = {} }, handler = function() return "hello" end }' });
    const no = await run('plugins', 'install', v1);
    assert.equal(no.code, 1);
    assert.match(no.stdout, /greeter 1\.0\.0 \(lua\): Says hello\nIt asks for: tools/);
    assert.match(no.stderr, /not approved; nothing was installed \(no terminal to ask on: use --yes\)/);
    assert.ok(!existsSync(path.join(dir, 'plugins', 'greeter')));

    const yes = await run('plugins', 'install', '--yes', v1);
    assert.equal(yes.code, 0, yes.stderr);
    assert.match(yes.stdout, /greeter 1\.0\.0 installed \(running\)/);
    assert.ok(app.kernel.tools.has('greet'));

    const list = await run('plugins');
    assert.equal(list.code, 0, list.stderr);
    assert.match(list.stdout, /NAME\s+KIND\s+VERSION\s+STATE\s+RESTARTS\s+LAST ERROR\s+CAPABILITIES/);
    assert.match(list.stdout, /greeter\s+lua\s+1\.0\.0\s+running\s+0\s+-\s+tools/);
    assert.match(list.stdout, /household-routines\s+skill\s+1\.0\.0\s+running/, 'the shipped example skill');
    assert.match(list.stdout, /timers\s+built-in\s+-\s+running/);

    const v2 = writePlugin(path.join(src, 'v2'), 'greeter', { name: 'greeter', version: '1.1.0', kind: 'lua', entry: 'main.lua', capabilities: ['tools', 'events:subscribe'] }, { 'main.lua': 'sdk.register_tool{ name = "greet2", handler = function() return "hi" end }' });
    const upd = await run('plugins', 'install', '--yes', v2);
    assert.equal(upd.code, 0, upd.stderr);
    assert.match(upd.stdout, /New since the approved version: events:subscribe/);
    assert.match(upd.stdout, /greeter 1\.1\.0 is held: it asks for events:subscribe/);
    assert.ok(app.kernel.tools.has('greet') && !app.kernel.tools.has('greet2'), 'the approved version runs');
    const status = await run('status');
    assert.match(status.stdout, /greeter running: update 1\.1\.0 held: it asks for events:subscribe/);
    const ap = await run('plugins', 'approve', 'greeter');
    assert.equal(ap.code, 0, ap.stderr);
    assert.match(ap.stdout, /greeter: running/);
    assert.ok(app.kernel.tools.has('greet2') && !app.kernel.tools.has('greet'));

    assert.match((await run('plugins', 'disable', 'greeter')).stdout, /greeter: disabled/);
    assert.ok(!app.kernel.tools.has('greet2'));
    assert.match((await run('plugins', 'enable', 'greeter')).stdout, /greeter: running/);
    assert.match((await run('plugins', 'restart', 'greeter')).stdout, /greeter: running/);
    const rm = await run('plugins', 'remove', 'greeter');
    assert.equal(rm.code, 0, rm.stderr);
    assert.ok(!app.kernel.tools.has('greet2'));
    const unknown = await run('plugins', 'approve', 'greeter');
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /no plugin called "greeter"/);
  });

  test('reload picks up a folder copied by hand; a bad manifest is refused by name; status lists it', async () => {
    writePlugin(path.join(dir, 'plugins'), 'broken', { name: 'broken', version: '1.0.0', kind: 'skill', entry: 'SKILL.md', capabilities: ['everything'] });
    writePlugin(path.join(dir, 'plugins'), 'recipes', null, { 'SKILL.md': '---\nname: recipes\ndescription: Family recipes.\n---\nAsk which dish.\n' });
    const r = await run('plugins', 'reload');
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /added: recipes/);
    assert.match(r.stdout, /broken refused: .*broken\/plugin\.json: \/capabilities\/0: must be one of/);
    assert.ok(app.skills.get('recipes'));
    const st = await run('status');
    assert.match(st.stdout, /broken refused/);
  });

  test('devices for plugins: the list, and control through before_toolcall and the tool\'s own checks', async () => {
    const d = deviceAccess(app)!;
    assert.deepEqual(d.list(), [], 'no demo home here');
    await assert.rejects(d.control('solar', { device: 'kitchen light', action: 'turn_on' }), (err: Error & { code?: string }) => err.code === 'DEVICE_CONTROL' && /kitchen light/i.test(err.message));
    app.kernel.stages.register('guard', 'before_toolcall', (ctx) => {
      if (ctx.input.source === 'solar') {
        ctx.deny = true;
        ctx.deny_reason = 'plugins may not touch the lights';
      }
    });
    try {
      await assert.rejects(d.control('solar', { device: 'kitchen light', action: 'turn_on' }), /DEVICE_DENIED|denied: plugins may not touch the lights/);
    } finally {
      app.kernel.stages.removeOwner('guard');
    }
  });

  test('install on a terminal asks: no installs nothing, yes installs', async () => {
    const dir1 = writePlugin(path.join(src, 'tty'), 'asker', { name: 'asker', version: '1.0.0', kind: 'lua', entry: 'main.lua', capabilities: ['tools'] }, { 'main.lua': 'sdk.register_tool{ name = "ask_tool", handler = function() return "a" end }' });
    const no = await onTerminal(['plugins', 'install', dir1], 'n\n');
    assert.match(no.out, /Approve tools for asker\? \[y\/N\]/);
    assert.match(no.out, /not approved; nothing was installed/);
    assert.ok(!app.kernel.tools.has('ask_tool'));
    const yes = await onTerminal(['plugins', 'install', dir1], 'y\n');
    assert.match(yes.out, /asker 1\.0\.0 installed \(running\)/);
    assert.ok(app.kernel.tools.has('ask_tool'));
  });

  /** Run the CLI on a pseudo-terminal (util-linux `script`), typing `typed`. */
  function onTerminal(args: string[], typed: string): Promise<{ code: number | null; out: string }> {
    const cmd = [process.execPath, '--import', 'tsx', path.resolve('src/cli/main.ts'), '--socket', socket, ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(' ');
    return new Promise((resolve) => {
      const child = spawn('script', ['-qec', cmd, '/dev/null'], { stdio: ['pipe', 'pipe', 'pipe'] });
      let out = '';
      let sent = false;
      const onData = (d: Buffer) => {
        out += d.toString();
        // Answer once the question is on the screen.
        if (!sent && /\[y\/N\]/.test(out)) {
          sent = true;
          child.stdin.write(typed);
        }
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
      child.once('close', (code) => resolve({ code, out }));
    });
  }
});
