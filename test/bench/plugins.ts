/**
 * Benchmark (issue 17): process plugins.
 *
 * - plugins.rpc_tool_call_p50/p99: one tool call's round trip through a
 *   process plugin written with our TypeScript SDK (bundled by esbuild, run by
 *   plain node), in the bubblewrap sandbox when it works here, registered
 *   through the capability checks: ToolRegistry.execute (argument
 *   validation) → JSON-RPC over the pipes → the plugin's handler → back.
 *   2000 calls after 200 warm-up calls (HOMEAGENT_BENCH_RUNS overrides the
 *   count). Target p50 < 1 ms.
 * - plugins.restart_ms: the plugin's process is SIGKILLed; from the kill to
 *   its tool answering again (exit seen, registrations detached, the
 *   supervisor's back-off pinned at its 10 ms minimum, a new sandbox, handshake,
 *   registrations), p50 of 20 restarts.
 * - plugins.sandboxed: 1 when the plugin ran in the sandbox.
 */
import path from 'node:path';
import { startHarness } from '../support/kernel-harness.js';
import { pluginDir, processPlugin, sdkPluginFiles, tempRoot } from '../plugins/process-fixture.js';

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

/** Resolve on the next turn of the event loop (no wall-clock sleep). */
const tick = () => new Promise<void>((r) => setImmediate(r));

export async function run(): Promise<void> {
  const runs = Number(process.env.HOMEAGENT_BENCH_RUNS ?? 2000);
  const { root, cleanup } = tempRoot('ha-bench-plugins-');
  const files = sdkPluginFiles(`
    definePlugin({
      tools: {
        bench_echo: {
          description: 'Echo a number. Example: {"n": 1}',
          parameters: { type: 'object', properties: { n: { type: 'integer' } }, required: ['n'], additionalProperties: false },
          handler: (args) => 'n=' + args.n,
        },
      },
    });
  `);
  const { manifest, dir, stateDir } = pluginDir(root, { name: 'bench', entry: 'main.mjs', capabilities: ['tools'] }, files);
  const { plugin, proc } = processPlugin({ manifest, dir, stateDir: path.join(stateDir) });
  const h = await startHarness({
    beforeStart: (k) => {
      k.settings.set('core.plugins.restart_backoff_ms', 10);
      k.settings.set('core.plugins.restart_backoff_max_ms', 10);
      k.use(plugin);
    },
  });
  const ctx = { input: { id: 'bench', source: 'bench', channel: 'console', text: 'x', kind: 'queued', level: 0, received_at: 0 } as never, signal: new AbortController().signal, call_id: 'c' };
  const times: number[] = [];
  const restarts: number[] = [];
  try {
    if (h.kernel.host.status().find((s) => s.name === 'bench')?.state !== 'running') throw new Error('the bench plugin did not start');
    for (let i = 0; i < 200 + runs; i++) {
      const t0 = performance.now();
      const r = await h.kernel.tools.execute('bench_echo', { n: i }, ctx);
      const dt = performance.now() - t0;
      if (r.content !== `n=${i}`) throw new Error(`unexpected answer ${r.content}`);
      if (i >= 200) times.push(dt);
    }
    const running = () => h.kernel.host.status().find((s) => s.name === 'bench')?.state === 'running';
    for (let i = 0; i < 20; i++) {
      while (!running()) await tick();
      const pid = proc.pid!;
      const t0 = performance.now();
      process.kill(-pid, 'SIGKILL');
      // Wait for the crash to be seen, then for the tool to answer again.
      while (proc.pid === pid) await tick();
      for (;;) {
        if (h.kernel.tools.has('bench_echo') && proc.pid !== undefined) {
          const r = await h.kernel.tools.execute('bench_echo', { n: i }, ctx);
          if (!r.is_error) break;
        }
        await tick();
      }
      restarts.push(performance.now() - t0);
    }
  } finally {
    await h.close();
    cleanup();
  }
  console.log(`plugins.rpc_tool_call_p50: ${pct(times, 50).toFixed(3)} ms`);
  console.log(`plugins.rpc_tool_call_p99: ${pct(times, 99).toFixed(3)} ms`);
  console.log(`plugins.restart_ms: ${pct(restarts, 50).toFixed(1)} ms`);
  console.log(`plugins.sandboxed: ${proc.stats.sandboxed ? 1 : 0} bool`);
}
