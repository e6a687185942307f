/**
 * Process plugins that misbehave (issue 17 "Bad input and load"): a plugin
 * that exits at once, crashes in a loop (the back-off grows; the box keeps
 * answering), hangs in a stage (before_toolcall fails closed; the plugin is
 * restarted; stop is not delayed), writes garbage or a 100 MB line, asks for
 * capabilities it was not granted, registers a taken tool name, ignores
 * SIGTERM (killed with its grandchildren). Timing rules run on the FakeClock;
 * real child processes are waited for by their events and state, never by
 * sleeping.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { FakeClock } from '../../src/kernel/clock.js';
import type { Plugin } from '../../src/kernel/sdk.js';
import { startHarness, type Harness } from '../support/kernel-harness.js';
import { waitUntil } from '../support/wait.js';
import { pluginDir, processGone, processPlugin, tempRoot } from './process-fixture.js';
import { pyPlugin, toolReg, type PyPlugin } from './process-py.js';

const { root, cleanup } = tempRoot('ha-procfault-');
after(cleanup);

const ctx = () => ({ input: { id: 'i1', source: 'test', channel: 'console', text: 'x', kind: 'queued', level: 0, received_at: 0 } as never, signal: new AbortController().signal, call_id: 'c1' });

function py(name: string, p: PyPlugin, caps: string[] = ['tools'], extra: { granted?: string[]; clock?: FakeClock; sandbox?: 'off' | 'auto'; call_timeout_ms?: number } = {}) {
  const { manifest, dir, stateDir } = pluginDir(root, { name, entry: 'main.py', capabilities: caps, ...(extra.call_timeout_ms ? { call_timeout_ms: extra.call_timeout_ms } : {}) }, { 'main.py': pyPlugin(p) });
  return processPlugin({ manifest, dir, stateDir, ...(extra.granted ? { granted: extra.granted } : {}), ...(extra.clock ? { clock: extra.clock } : {}), ...(extra.sandbox ? { sandbox: extra.sandbox } : {}) });
}

const status = (h: Harness, name: string) => h.kernel.host.status().find((s) => s.name === name)!;

test('a plugin that exits at once fails its start, is retried with back-off, and the box keeps answering', async () => {
  const clock = new FakeClock();
  const { plugin, proc } = py('quitter', { prelude: 'sys.exit(3)' }, ['tools'], { clock });
  const h = await startHarness({ clock, script: [{ content: 'Still here.' }], beforeStart: (k) => k.use(plugin) });
  try {
    const s = status(h, 'quitter');
    assert.equal(s.state, 'failed');
    assert.match(s.error!, /exited with code 3/);
    assert.equal(s.next_restart_at! - clock.now(), 1000);
    const r = await h.kernel.injectInput('test', 'console', 'hello');
    assert.equal(r.reply, 'Still here.');
    clock.advance(1000);
    await waitUntil(() => status(h, 'quitter').restarts === 1 && status(h, 'quitter').next_restart_at !== undefined, 'the second failed start');
    assert.equal(status(h, 'quitter').next_restart_at! - clock.now(), 2000);
    assert.equal(proc.stats.spawns, 2);
  } finally {
    await h.close();
  }
});

test('a plugin that crashes in a loop: everything it registered goes at once, the back-off doubles, turns go on', async () => {
  const clock = new FakeClock();
  const { plugin, proc } = py('crashy', { register: [toolReg('crashy_tool')], afterStart: 'sys.exit(1)' }, ['tools'], { clock });
  const replies = Array.from({ length: 4 }, (_, i) => ({ content: `Answer ${i}.` }));
  const h = await startHarness({ clock, script: replies, beforeStart: (k) => k.use(plugin) });
  try {
    const gaps: number[] = [];
    for (let i = 0; i < 4; i++) {
      await waitUntil(() => status(h, 'crashy').state === 'failed' && status(h, 'crashy').next_restart_at !== undefined && status(h, 'crashy').restarts === i, `crash ${i + 1}`);
      assert.equal(h.kernel.tools.has('crashy_tool'), false, 'its tool is gone while it is down');
      assert.match(status(h, 'crashy').last_error!, /exited with code 1/);
      gaps.push(status(h, 'crashy').next_restart_at! - clock.now());
      const r = await h.kernel.injectInput('test', 'console', `question ${i}`);
      assert.equal(r.reply, `Answer ${i}.`);
      if (i < 3) clock.advance(gaps[i]!);
    }
    assert.deepEqual(gaps, [1000, 2000, 4000, 8000]);
    assert.ok(proc.stats.spawns >= 4);
  } finally {
    await h.close();
  }
});

test('a plugin that hangs in before_toolcall: the call is denied (fail closed), the plugin restarted, a stop is not delayed', async () => {
  const clock = new FakeClock();
  const { plugin, proc } = py('hanger', { register: [['register_stage', { stage: 'before_toolcall' }]], stage: 'time.sleep(100000)' }, ['stage:before_toolcall'], { clock });
  const acted: string[] = [];
  const lamp: Plugin = {
    name: 'lamp',
    start(sdk) {
      sdk.registerTool({ name: 'lamp_on', description: 'x', parameters: { type: 'object', properties: {}, additionalProperties: false }, handler: () => void acted.push('on') });
    },
  };
  const h = await startHarness({
    clock,
    script: [{ tool_calls: [{ name: 'lamp_on', arguments: {} }] }, { tool_calls: [{ name: 'lamp_on', arguments: {} }] }],
    beforeStart: (k) => k.use(lamp).use(plugin),
  });
  try {
    const turn = h.kernel.injectInput('test', 'console', 'turn on the lamp');
    await waitUntil(() => proc.pendingCalls === 1, 'the stage call to hang');
    clock.advance(5000); // core.agent.stage_timeout_ms
    const r = await turn;
    assert.equal(r.status, 'done', 'the turn is not lost');
    assert.deepEqual(acted, [], 'the tool did not run: a hung veto denies');
    assert.equal(r.tools?.[0]?.denied, true);
    assert.match(String(r.tools?.[0]?.result), /safety check \(hanger\) failed: .*timed out after 5000 ms/);
    await waitUntil(() => status(h, 'hanger').state === 'failed', 'the hung plugin to be taken down');
    assert.match(status(h, 'hanger').last_error!, /stage before_toolcall timed out/);
    clock.advance(status(h, 'hanger').next_restart_at! - clock.now());
    await waitUntil(() => status(h, 'hanger').state === 'running', 'the restart');
    // Hung again; this time the user presses stop: the turn ends at once, no clock advance needed.
    const turn2 = h.kernel.injectInput('test', 'console', 'turn on the lamp again');
    await waitUntil(() => proc.pendingCalls === 1, 'the stage call to hang again');
    h.kernel.stopNow('test');
    const r2 = await turn2;
    assert.equal(r2.status, 'interrupted');
    assert.deepEqual(acted, []);
  } finally {
    await h.close();
  }
});

test('garbage on stdout is logged and counted; a flood of it counts as a crash', async () => {
  const { plugin, proc } = py('noisy', {
    register: [toolReg('noisy_once'), toolReg('noisy_flood')],
    afterStart: 'print("hello there"); print("{not json"); print(json.dumps({"jsonrpc": "1.0"})); sys.stdout.flush()',
    tool: 'if name == "noisy_flood":\n    for i in range(500):\n        print("garbage %d" % i)\n    sys.stdout.flush()\nreturn "ok"',
  });
  const h = await startHarness({ beforeStart: (k) => k.use(plugin) });
  try {
    assert.equal((await h.kernel.tools.execute('noisy_once', {}, ctx())).content, 'ok');
    assert.equal(proc.stats.garbage_lines, 3);
    assert.equal(status(h, 'noisy').state, 'running');
    await h.kernel.tools.execute('noisy_flood', {}, ctx());
    await waitUntil(() => status(h, 'noisy').state === 'failed', 'the flood to take it down');
    assert.match(status(h, 'noisy').last_error!, /flood of garbage/);
    assert.equal(h.kernel.tools.has('noisy_once'), false);
  } finally {
    await h.close();
  }
});

test('a 100 MB line on stdout: the plugin is killed as soon as the line passes the cap, nothing near 100 MB is held', async () => {
  const { plugin } = py('bigline', {
    register: [toolReg('bigline_go')],
    tool: 'chunk = "x" * (1 << 20)\nfor i in range(100):\n    sys.stdout.write(chunk)\nsys.stdout.write("\\n")\nsys.stdout.flush()\nreturn "ok"',
  });
  const h = await startHarness({ beforeStart: (k) => k.use(plugin) });
  try {
    const before = process.memoryUsage().arrayBuffers;
    const r = await h.kernel.tools.execute('bigline_go', {}, ctx());
    assert.equal(r.is_error, true);
    await waitUntil(() => status(h, 'bigline').state === 'failed', 'the plugin to be taken down');
    assert.match(status(h, 'bigline').last_error!, /longer than core\.plugins\.max_line_bytes \(1048576 bytes\)/);
    assert.ok(process.memoryUsage().arrayBuffers - before < 32 << 20, 'the kernel did not buffer the line');
    const again = await h.kernel.injectInput('test', 'console', 'hello');
    assert.equal(again.status, 'done');
  } finally {
    await h.close();
  }
});

test('a capability it was not granted is refused and logged, and the plugin goes on', async () => {
  const { plugin, proc } = py(
    'greedy',
    {
      register: [toolReg('greedy_tool'), ['register_stage', { stage: 'on_input' }], ['subscribe', { event: 'raw_input' }], ['register_output_channel', { name: 'greedy-out', caps: ['text'], description: 'x' }]],
      tool: 'send({"jsonrpc": "2.0", "id": 77, "method": "inject", "params": {"channel": "console", "text": "hi", "level": 4}})\nr = rd()\nreturn r.get("error", {}).get("message", "no error")',
    },
    ['tools', 'stage:on_input', 'events:subscribe'],
    { granted: ['tools'] },
  );
  const h = await startHarness({ beforeStart: (k) => k.use(plugin) });
  try {
    assert.equal(status(h, 'greedy').state, 'running');
    assert.equal(proc.stats.refused_calls, 3);
    assert.equal(h.kernel.stages.countOwner('greedy'), 0);
    const r = await h.kernel.tools.execute('greedy_tool', {}, ctx());
    assert.match(r.content, /needs the capability "inject:L3"/);
    assert.equal(proc.stats.refused_calls, 4);
    assert.equal(status(h, 'greedy').state, 'running');
  } finally {
    await h.close();
  }
});

test('a tool name already taken is refused; its other tools work', async () => {
  const other: Plugin = { name: 'first', start: (sdk) => sdk.registerTool({ name: 'weather', description: 'x', parameters: { type: 'object' }, handler: () => 'sunny' }) };
  const { plugin, proc } = py('copycat', { register: [toolReg('weather'), toolReg('copycat_tool')], tool: 'return "copycat " + name' });
  const h = await startHarness({ beforeStart: (k) => k.use(other).use(plugin) });
  try {
    assert.equal(status(h, 'copycat').state, 'running');
    assert.equal(proc.stats.refused_calls, 1);
    assert.equal(h.kernel.tools.ownerOf('weather'), 'first');
    assert.equal((await h.kernel.tools.execute('weather', {}, ctx())).content, 'sunny');
    assert.equal((await h.kernel.tools.execute('copycat_tool', {}, ctx())).content, 'copycat copycat_tool');
  } finally {
    await h.close();
  }
});

/** PIDs (outside any namespace) of processes whose command line holds `marker`. */
function pidsWith(marker: string): number[] {
  const out: number[] = [];
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      if (readFileSync(`/proc/${d}/cmdline`, 'utf8').includes(marker)) out.push(Number(d));
    } catch {
      /* gone */
    }
  }
  return out;
}

for (const sandbox of ['auto', 'off'] as const) {
  test(`a plugin that ignores SIGTERM is killed with its grandchildren (sandbox ${sandbox})`, async () => {
    const marker = `ha-grandchild-${sandbox}-${process.pid}`;
    const { plugin, proc } = py(
      `stubborn-${sandbox}`,
      {
        prelude: `signal.signal(signal.SIGTERM, signal.SIG_IGN)\nGRAND = subprocess.Popen([sys.executable, "-c", "import signal, time; signal.signal(signal.SIGTERM, signal.SIG_IGN); time.sleep(100000)", "${marker}"], stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)`,
        onShutdown: 'time.sleep(100000)',
      },
      ['tools'],
      { sandbox },
    );
    const h = await startHarness({
      beforeStart: (k) => {
        k.settings.set('core.plugins.kill_grace_ms', 100);
        k.use(plugin);
      },
    });
    try {
      assert.equal(status(h, `stubborn-${sandbox}`).state, 'running');
      const leader = proc.pid!;
      await waitUntil(() => pidsWith(marker).length === 1, 'the grandchild to run');
      const grand = pidsWith(marker);
      await h.kernel.host.stop(`stubborn-${sandbox}`);
      assert.equal(processGone(leader), true, 'the plugin is gone');
      await waitUntil(() => grand.every(processGone), 'the grandchild to be gone');
    } finally {
      await h.close();
    }
  });
}

test('a plugin that dies while a grandchild holds its stdout open is seen dead at once (no waiting for EOF), and the grandchild goes too', async () => {
  const marker = `ha-holder-${process.pid}`;
  const { plugin } = py('leaver', {
    register: [toolReg('leaver_tool')],
    prelude: `GRAND = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(100000)", "${marker}"], stdin=subprocess.DEVNULL)`,
    afterStart: 'os._exit(1)',
  }, ['tools'], { sandbox: 'off' });
  const h = await startHarness({ beforeStart: (k) => k.use(plugin) });
  try {
    await waitUntil(() => status(h, 'leaver').state === 'failed', 'the crash to be seen');
    assert.match(status(h, 'leaver').last_error!, /exited with code 1/);
    await waitUntil(() => pidsWith(marker).every(processGone), 'the grandchild to be gone');
  } finally {
    await h.close();
  }
});

test('a tool call that hangs past call_timeout_ms fails and the plugin is restarted; the turn goes on', async () => {
  const clock = new FakeClock();
  const { plugin, proc } = py('slowpoke', { register: [toolReg('slowpoke_tool')], tool: 'time.sleep(100000)' }, ['tools'], { clock, call_timeout_ms: 3000 });
  const h = await startHarness({ clock, script: [{ tool_calls: [{ name: 'slowpoke_tool', arguments: {} }] }, { content: 'The plugin did not answer.' }], beforeStart: (k) => k.use(plugin) });
  try {
    const turn = h.kernel.injectInput('test', 'console', 'ask the slow plugin');
    await waitUntil(() => proc.pendingCalls === 1, 'the tool call to hang');
    clock.advance(3000);
    const r = await turn;
    assert.equal(r.reply, 'The plugin did not answer.');
    assert.match(String(r.tools?.[0]?.result), /tool slowpoke_tool: tool\.call timed out after 3000 ms/);
    await waitUntil(() => status(h, 'slowpoke').state === 'failed', 'the restart to be scheduled');
    clock.advance(1000);
    await waitUntil(() => status(h, 'slowpoke').state === 'running' && h.kernel.tools.has('slowpoke_tool'), 'the restart');
    assert.equal(proc.stats.spawns, 2);
  } finally {
    await h.close();
  }
});

test('an entry that cannot run fails the start with its reason, sandboxed or not', async () => {
  const a = pluginDir(root, { name: 'nointerp', entry: ['no-such-interpreter', 'main.x'], capabilities: ['tools'] }, {});
  const b = pluginDir(root, { name: 'nointerp-sb', entry: ['no-such-interpreter', 'main.x'], capabilities: ['tools'] }, {});
  const pa = processPlugin({ ...a, sandbox: 'off' });
  const pb = processPlugin({ ...b, sandbox: 'auto' });
  const h = await startHarness({ beforeStart: (k) => k.use(pa.plugin).use(pb.plugin) });
  try {
    assert.equal(status(h, 'nointerp').state, 'failed');
    // Through setpriv (PDEATHSIG) when it has --pdeathsig, else spawned directly.
    assert.match(status(h, 'nointerp').error!, /exited with code 127 \(its last stderr line: setpriv: failed to execute no-such-interpreter: No such file or directory\)|cannot run no-such-interpreter: .*ENOENT/);
    assert.equal(status(h, 'nointerp-sb').state, 'failed');
    assert.match(status(h, 'nointerp-sb').error!, /exited with code 1 \(its last stderr line: bwrap: execvp no-such-interpreter: No such file or directory\)/);
  } finally {
    await h.close();
  }
});

test('when the service process exits without stopping its plugins, their process groups are killed on the way out', async () => {
  const marker = `ha-orphan-${process.pid}`;
  const p = pluginDir(root, { name: 'orphan', entry: 'main.py', capabilities: ['tools'] }, {
    'main.py': pyPlugin({ prelude: `GRAND = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(100000)", "${marker}"], stdin=subprocess.DEVNULL)` }),
  });
  const script = `
    import { ProcessPlugin } from ${JSON.stringify(new URL('../../src/plugins/external/process.ts', import.meta.url).pathname)};
    import { FakeSdk } from ${JSON.stringify(new URL('../support/fake-sdk.ts', import.meta.url).pathname)};
    const plugin = new ProcessPlugin({ manifest: ${JSON.stringify(p.manifest)}, dir: ${JSON.stringify(p.dir)}, stateDir: ${JSON.stringify(p.stateDir)}, sandbox: 'off' });
    await plugin.start(new FakeSdk({ name: 'orphan' }));
    console.log(String(plugin.pid));
    process.exit(0);
  `;
  const { spawn } = await import('node:child_process');
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  await new Promise<void>((r) => child.on('exit', () => r()));
  const pid = Number(out.trim());
  assert.ok(pid > 0, `the service printed the plugin's pid: ${out}`);
  await waitUntil(() => processGone(pid) && pidsWith(marker).every(processGone), 'the plugin and its grandchild to be gone');
});

test('stderr is logged line by line under a rate cap; the rest is counted, and the plugin goes on', async () => {
  const clock = new FakeClock();
  const { plugin, proc } = py('chatty', { register: [toolReg('chatty_tool')], afterStart: 'for i in range(1000):\n    sys.stderr.write("line %d\\n" % i)\nsys.stderr.flush()' }, ['tools'], { clock });
  const h = await startHarness({ clock, beforeStart: (k) => k.use(plugin) });
  try {
    // One second on the FakeClock: 20 lines (core.plugins.stderr_lines_per_s) are logged, 980 dropped.
    await waitUntil(() => proc.stats.stderr_dropped === 980, 'the stderr lines to be counted');
    assert.equal(status(h, 'chatty').state, 'running');
    assert.equal((await h.kernel.tools.execute('chatty_tool', {}, ctx())).content, 'ok');
  } finally {
    await h.close();
  }
});

test('an unsandboxed plugin dies with a SIGKILLed service (PDEATHSIG through setpriv)', async () => {
  const p = pluginDir(root, { name: 'pdeath', entry: 'main.py', capabilities: ['tools'] }, { 'main.py': pyPlugin({}) });
  const script = `
    import { ProcessPlugin } from ${JSON.stringify(new URL('../../src/plugins/external/process.ts', import.meta.url).pathname)};
    import { FakeSdk } from ${JSON.stringify(new URL('../support/fake-sdk.ts', import.meta.url).pathname)};
    const plugin = new ProcessPlugin({ manifest: ${JSON.stringify(p.manifest)}, dir: ${JSON.stringify(p.dir)}, stateDir: ${JSON.stringify(p.stateDir)}, sandbox: 'off' });
    await plugin.start(new FakeSdk({ name: 'pdeath' }));
    process.stdout.write(String(plugin.pid) + '\\n', () => process.kill(process.pid, 'SIGKILL'));
  `;
  const { spawn } = await import('node:child_process');
  const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  const how = await new Promise<string | null>((r) => child.on('exit', (_c, sig) => r(sig)));
  assert.equal(how, 'SIGKILL');
  const pid = Number(out.trim());
  assert.ok(pid > 0, `the service printed the plugin's pid: ${out}`);
  await waitUntil(() => processGone(pid), 'the plugin to be gone');
});

test('a plugin that stops reading its events never holds up the publisher: past the backlog cap it counts as hung', async () => {
  const { plugin, proc } = py('deaf', { register: [toolReg('deaf_tool'), ['subscribe', { event: 'plugin.deaf.ping' }]] }, ['tools', 'events:subscribe']);
  const h = await startHarness({ beforeStart: (k) => k.use(plugin) });
  try {
    process.kill(-proc.pid!, 'SIGSTOP'); // the whole sandbox stops: it reads nothing any more
    const big = 'x'.repeat(10_000);
    for (let i = 0; i < 1000; i++) h.kernel.bus.publish('plugin.deaf.ping' as never, { i, big } as never); // ~10 MB, none of it waits here
    await waitUntil(() => status(h, 'deaf').state === 'failed', 'the backlog to take it down');
    assert.match(status(h, 'deaf').last_error!, /does not read its input \(\d+ bytes waiting\)/);
    // A burst in one tick past the event queue's cap is the same verdict, without encoding anything.
    await waitUntil(() => status(h, 'deaf').state === 'running', 'the restart');
    for (let i = 0; i < 10_001; i++) h.kernel.bus.publish('plugin.deaf.ping' as never, { i } as never);
    assert.equal(status(h, 'deaf').state, 'failed');
    assert.match(status(h, 'deaf').last_error!, /does not keep up with its events \(10000 waiting\)/);
  } finally {
    await h.close();
  }
});
