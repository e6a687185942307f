/**
 * Supervision of built-in plugins (issue 17 "Built-in plugins get the same
 * supervision: a failed start is retried with back-off and shown in
 * status"): the back-off starts at core.plugins.restart_backoff_ms and
 * doubles, on the kernel's clock (FakeClock here); `status` shows the failed
 * plugin, its error, the next try and the restarts; a crash reported by a
 * running plugin detaches it at once and restarts it.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { FakeClock } from '../../src/kernel/clock.js';
import type { Plugin, PluginSDK } from '../../src/kernel/sdk.js';
import { statusPlugins } from '../../src/service/app.js';
import { printResult } from '../../src/cli/format.js';
import { startRig } from './rig.js';

/** A built-in plugin whose first `failures` starts throw. `started` resolves on each start attempt. */
function flaky(failures: number) {
  let attempts = 0;
  let waiters: Array<() => void> = [];
  let sdk: PluginSDK | undefined;
  const plugin: Plugin = {
    name: 'flaky',
    start(s) {
      attempts++;
      const w = waiters;
      waiters = [];
      queueMicrotask(() => w.forEach((f) => f()));
      if (attempts <= failures) throw new Error(`no serial port (attempt ${attempts})`);
      sdk = s;
      s.registerTool({ name: 'flaky_tool', description: 'x', parameters: { type: 'object' }, handler: () => 'x' });
    },
  };
  return {
    plugin,
    attempts: () => attempts,
    sdk: () => sdk,
    nextAttempt: () => new Promise<void>((r) => waiters.push(r)),
  };
}

/** Let the host's async start finish (it awaits a few promises). */
async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
}

test('a built-in plugin whose start fails is retried with a doubling back-off and shown in status', async () => {
  const clock = new FakeClock();
  const f = flaky(2);
  const rig = await startRig({ clock, builtins: [f.plugin] });
  try {
    const base = rig.settings.get<number>('core.plugins.restart_backoff_ms');
    let st = rig.kernel.host.status().find((s) => s.name === 'flaky')!;
    assert.equal(st.state, 'failed');
    assert.equal(st.next_restart_at, clock.now() + base);
    const lines: string[] = [];
    printResult('status', { plugins: statusPlugins(rig.kernel.host.status()) }, false, (l) => lines.push(l), clock.now());
    assert.match(lines.join('\n'), /flaky failed \(no serial port \(attempt 1\)\) — next try in 1 s/);
    // Not before the back-off.
    clock.advance(base - 1);
    await settle();
    assert.equal(f.attempts(), 1);
    let next = f.nextAttempt();
    clock.advance(1);
    await next;
    await settle();
    st = rig.kernel.host.status().find((s) => s.name === 'flaky')!;
    assert.equal(f.attempts(), 2);
    assert.equal(st.state, 'failed');
    assert.equal(st.restarts, 1);
    assert.equal(st.next_restart_at, clock.now() + 2 * base, 'the back-off doubles');
    next = f.nextAttempt();
    clock.advance(2 * base);
    await next;
    await settle();
    st = rig.kernel.host.status().find((s) => s.name === 'flaky')!;
    assert.equal(st.state, 'running');
    assert.equal(st.restarts, 2);
    assert.match(st.last_error!, /attempt 2/);
    assert.ok(rig.kernel.tools.has('flaky_tool'));
    const lines2: string[] = [];
    printResult('status', { plugins: statusPlugins(rig.kernel.host.status()) }, false, (l) => lines2.push(l), clock.now());
    assert.match(lines2.join('\n'), /restarted: flaky 2x \(last error: no serial port \(attempt 2\)\)/);
    // A crash while running: detached at once, restarted after the back-off.
    f.sdk()!.crashed('lost the port');
    assert.ok(!rig.kernel.tools.has('flaky_tool'), 'detached at once');
    assert.equal(rig.kernel.host.status().find((s) => s.name === 'flaky')!.state, 'failed');
    next = f.nextAttempt();
    clock.advance(clock.nextDelay()!);
    await next;
    await settle();
    assert.equal(rig.kernel.host.status().find((s) => s.name === 'flaky')!.state, 'running');
    assert.ok(rig.kernel.tools.has('flaky_tool'));
  } finally {
    await rig.close();
  }
});
