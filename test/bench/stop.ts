/**
 * Benchmark (issue 4): stop latency while a reply is streaming from the LLM
 * and being spoken. The real service runs with the Ollama adapter against our
 * LLM test server (a long reply at 20 tokens/s) and the real speaker driver,
 * its `aplay` a stand-in that takes audio in real time as a sound card does
 * (test/support/paced-aplay.py; `aplay -D null` took a sentence in 15 ms,
 * so most stops found no player playing). Each run waits until the first sentence is
 * playing, presses stop, and measures from the stop to
 *  (a) the LLM test server seeing its socket closed (server side), and
 *  (b) the aplay process having exited, seen from outside the service by
 *      a pidfd watcher (test/support/exit-watcher.ts: the moment the room
 *      goes quiet, not the moment the service's busy event loop hears of
 *      it; that one is stop.speaker_seen_p50/p99).
 * Prints stop.llm_abort_p50/p99 and stop.speaker_p50/p99 in ms (200 runs;
 * HOMEAGENT_BENCH_RUNS overrides).
 *
 * The LLM test server runs in a process of its own, as Ollama does, and
 * stamps the close with the shared monotonic clock: an in-process server
 * sees the close only once the service's event loop is free again (the run
 * log's writes for the stopped turn, the speaker's exit), which is not when
 * the model stops. HOMEAGENT_BENCH_LLM_IN_PROCESS=1 runs it in-process (the
 * figure before this change: p50 ~8.5 ms, p99 ~24 ms on this machine).
 *
 * Then as many runs again queue local commands before the stop (issue 13):
 * two device commands and a timer, some in the scheduler and one still in the
 * inbox. The service talks to a real Mosquitto with the fixture home's device
 * simulator; stop.queued_actions_after_stop counts, over all those runs, the
 * queued commands that still reached the broker plus the timers they started
 * (must be 0). A command given after the last run is the barrier: it goes
 * through the same MQTT client, so once it arrives every earlier publish
 * would have too. The latency figures come from the first runs only, so they
 * compare with the figures before issue 13.
 *
 * All runs go with a hung process plugin loaded (issue 17): written with our
 * TypeScript SDK, sandboxed, subscribed to every turn's events (per-token
 * llm.delta included) and to raw_input/output, its process blocked for good
 * at the first turn it hears of (Atomics.wait: it reads nothing and answers nothing).
 * Its input backs up until the kernel treats it as hung, kills it and
 * restarts it, and it hangs again; stop.hung_plugin_restarts counts those.
 * HOMEAGENT_BENCH_NO_HUNG_PLUGIN=1 runs without it (for comparison).
 *
 * HOMEAGENT_BENCH_ACTIVITY_PAGES=N (issue 16) first opens N pages of Debian's
 * Chromium on the WebUI's Activity page (every turn event live, with the
 * per-token deltas), signed in by links, and keeps them watching during all
 * the runs; stop.activity_pages says how many watched. Before it opens them
 * it makes the same stops without pages (both phases): `_no_pages` figures of the same run,
 * and `_ratio` (with pages / without). On the device the pages run on
 * phones and laptops; here they would share the machine's cores with the
 * service, so Chromium runs under `nice -n 19` and SCHED_IDLE, on the last
 * CPU only (stop.activity_browser_niced; test/webui/helpers.ts
 * BACKGROUND_CHROMIUM), and Playwright drives them from a process of its
 * own (test/support/activity-pages-process.ts), put in the background the
 * same way once the pages are open, not from the bench's process, which is
 * the service's: what is measured is the service's own cost per page
 * (serialising, writing, TLS), not how fast this machine renders ten pages.
 * Even so the browser shares the machine: with ten pages on all CPUs, the
 * service waited up to 17 ms for a CPU inside stopNow's synchronous 0.3 ms.
 *
 * stop.sync_p99 is stopNow's own time (it closes the LLM socket and kills
 * the player synchronously) and stop.sync_runqueue_wait_p99 how much of it
 * the service was runnable but waiting for a CPU (/proc/thread-self/
 * schedstat): a tail there is the machine's scheduling, not the service's
 * work. stop.cpu_after_stop_p50/p99: the CPU time the service's event-loop
 * thread spent in the 50 ms after the stop, its own work at a stop (with
 * pages: telling ten pages), which the dying player and the LLM server
 * wait behind when they share its CPU.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import os from 'node:os';
import { constants, monitorEventLoopDelay, PerformanceObserver } from 'node:perf_hooks';
import path from 'node:path';
import { startApp } from '../../src/service/app.js';
import { startLlmTestServer } from '../support/llm-test-server.js';
import { startLlmTestServerProcess } from '../support/llm-test-server-process.js';
import { startMosquitto } from '../support/mosquitto.js';
import { DeviceSimulator } from '../support/device-simulator.js';
import { request } from '../../src/cli/client.js';
import type { App } from '../../src/service/app.js';
import { pluginDir, processPlugin, sdkPluginFiles } from '../plugins/process-fixture.js';
import type { ProcessPlugin } from '../../src/plugins/external/process.js';
import type { ProcessSpeaker } from '../../hal/speaker/process-speaker.js';
import { startExitWatcher, type ProcessEnd } from '../support/exit-watcher.js';
import { BACKGROUND_CHROMIUM, certificateSpki } from '../webui/helpers.js';
import { startActivityPages } from '../support/activity-pages-process.js';

/** Load a process plugin that hangs at the first turn it hears of (see the header). */
async function loadHungPlugin(app: App, dir: string): Promise<ProcessPlugin> {
  const files = sdkPluginFiles(`
    const events = ['raw_input', 'output', 'assistant_state', 'turn.started', 'llm.requested', 'llm.delta', 'llm.completed', 'turn.finished', 'turn.interrupted'];
    definePlugin({
      tools: { hung_tool: { description: 'Never answers. Example: {}', parameters: { type: 'object', properties: {}, additionalProperties: false }, handler: () => 'never' } },
      // Blocks for good at the first turn it hears of (not on a timer after its start: a start slower than
      // the timer on a loaded machine hung it before the host had seen it start).
      events: Object.fromEntries(events.map((e) => [e, e === 'turn.started' ? () => Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0) : () => undefined])),
    });
  `);
  const p = pluginDir(dir, { name: 'hung', entry: 'main.mjs', capabilities: ['tools', 'events:subscribe'] }, files);
  const { plugin, proc } = processPlugin(p);
  app.kernel.host.add(plugin);
  if (!(await app.kernel.host.start('hung'))) throw new Error('the hung plugin did not start');
  return proc;
}

/**
 * Open `n` Chromium pages on the WebUI's Activity page (signed in by links),
 * the browser in the background (BACKGROUND_CHROMIUM) and driven from a
 * process of its own (test/support/activity-pages-process.ts), so that
 * Playwright's messages with ten pages do not run on the service's event
 * loop, as they would not on the device; returns a function that closes them.
 */
async function watchActivity(app: App, n: number): Promise<() => Promise<void>> {
  const base = `https://localhost:${app.webui.port}`;
  const links: string[] = [];
  for (let i = 0; i < n; i++) links.push(((await request(app.socketPath, 'webui.link', {})) as { url: string }).url.replace(/^https:\/\/[^/]+/, base));
  const pages = await startActivityPages(links, certificateSpki(app.webui.certificate!.cert), true);
  if (app.webui.eventClients !== n) {
    await pages.close();
    throw new Error(`${app.webui.eventClients} activity streams open, expected ${n}`);
  }
  return () => pages.close();
}

function pct(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
}

/**
 * The `Nice=` of systemd/homeagent.service (undefined when it sets none), given to this thread, which runs the
 * service; HOMEAGENT_BENCH_NICE=0 keeps the default priority (for comparison). Returns what was applied, or why not.
 */
function applyServiceNice(): string {
  const unit = readFileSync(fileURLToPath(new URL('../../systemd/homeagent.service', import.meta.url)), 'utf8');
  const fromUnit = /^Nice=(-?\d+)\s*$/m.exec(unit)?.[1];
  const want = process.env.HOMEAGENT_BENCH_NICE ?? fromUnit;
  if (want === undefined) return 'none (the unit sets no Nice=)';
  try {
    os.setPriority(Number(want));
    return `${want}${process.env.HOMEAGENT_BENCH_NICE !== undefined ? ' (HOMEAGENT_BENCH_NICE)' : " (the unit's Nice=)"}`;
  } catch (err) {
    return `0 (cannot set ${want}: ${(err as Error).message}; lowering it needs root or CAP_SYS_NICE)`;
  }
}

export async function run(): Promise<void> {
  const runs = Number(process.env.HOMEAGENT_BENCH_RUNS ?? 200);
  const dir = mkdtempSync(path.join(os.tmpdir(), 'homeagent-bench-stop-'));
  const story = Array.from({ length: 40 }, (_, i) => `This is sentence number ${i + 1} of a long story that keeps going.`).join(' ');
  const inProcess = process.env.HOMEAGENT_BENCH_LLM_IN_PROCESS === '1';
  const llmOpts = { defaultReply: { content: story, tokensPerSecond: 20 } };
  const llm = inProcess ? await startLlmTestServer(llmOpts) : await startLlmTestServerProcess(llmOpts);
  // `aplay` on the PATH: the paced stand-in (see the header), for the service's player processes only.
  const pacedDir = mkdtempSync(path.join(os.tmpdir(), 'homeagent-bench-aplay-'));
  writeFileSync(path.join(pacedDir, 'aplay'), `#!/bin/sh\nexec ${existsSync('/usr/bin/python3') ? '/usr/bin/python3' : 'python3'} ${fileURLToPath(new URL('../support/paced-aplay.py', import.meta.url))} "$@"\n`, { mode: 0o755 });
  const pathBefore = process.env.PATH;
  process.env.PATH = `${pacedDir}:${pathBefore ?? ''}`;
  const broker = await startMosquitto();
  const sim = new DeviceSimulator(broker.url);
  await sim.start();
  // The service's priority as systemd gives it on the device (Nice= of systemd/homeagent.service), set after the
  // LLM server and the broker started (peers at the default priority, as Ollama and Mosquitto run there): the
  // service's event-loop thread and what it spawns from now on (players, decoders, plugins).
  const nice = applyServiceNice();
  const app = await startApp({
    dataDir: dir,
    console: false,
    socketPath: path.join(dir, 'homeagent.sock'),
    embeddedBrokerPort: 0,
    env: {
      HOMEAGENT__CORE__LLM__SOURCES__OLLAMA__BASE_URL: llm.url,
      HOMEAGENT__PLUGIN__SPEAKER__DRIVER: 'real',
      HOMEAGENT__PLUGIN__SPEAKER__DEVICE: 'null',
      HOMEAGENT__PLUGIN__GPIO__DRIVER: 'sim',
      HOMEAGENT__PLUGIN__MIC__DRIVER: 'sim',
      HOMEAGENT__CORE__SERVICE__DEMO_HOME: 'off',
      HOMEAGENT__PLUGIN__WEBUI__PORT: '0',
      HOMEAGENT__CORE__AGENT__CONTEXT_WINDOW: '8192',
      HOMEAGENT__PLUGIN__MQTT__URL: broker.url,
    },
  });
  const speaker = app.voice?.speaker;
  if (!speaker) throw new Error('no voice pipeline');
  /** Stop figures of one set of runs; `sync`: stopNow's own (synchronous) time, `syncWait`: of it, waiting for a CPU. */
  type Figures = { llm: number[]; spk: number[]; seen: number[]; sync: number[]; syncWait: number[]; cpuAfter: number[]; endedBefore: number };
  const figures = (): Figures => ({ llm: [], spk: [], seen: [], sync: [], syncWait: [], cpuAfter: [], endedBefore: 0 });
  const main = figures();
  const baseline = figures();
  const watcher = await startExitWatcher();
  let homeCommands = 0;
  app.kernel.bus.subscribe('_bench_', 'plugin.home.command', () => void homeCommands++);
  let queuedActions = 0;
  const pages = Number(process.env.HOMEAGENT_BENCH_ACTIVITY_PAGES ?? 0);
  // How late the service's event loop ran during the stops (a stall there delays every stop).
  const loopDelay = monitorEventLoopDelay({ resolution: 1 });
  // Garbage-collection pauses during the runs (the longest, and its kind), to tell a GC from other event-loop stalls.
  let gcPhase: 'baseline' | 'main' | undefined;
  const gcMax = { baseline: { ms: 0, kind: 0 }, main: { ms: 0, kind: 0 } };
  const gcObserver = new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const slot = gcPhase && gcMax[gcPhase];
      if (slot && e.duration > slot.ms) Object.assign(slot, { ms: e.duration, kind: (e as PerformanceEntry & { detail?: { kind?: number } }).detail?.kind ?? 0 });
    }
  });
  gcObserver.observe({ entryTypes: ['gc'] });
  let baselineLoop: { p99: number; max: number } | undefined;
  let closePages: (() => Promise<void>) | undefined;
  let hung: ProcessPlugin | undefined;
  try {
    // Outside <data dir>/plugins: loaded here by hand, never by a loader.
    if (process.env.HOMEAGENT_BENCH_NO_HUNG_PLUGIN !== '1') hung = await loadHungPlugin(app, path.join(dir, 'bench-hung'));
    await waitUntil(() => (app.home.registry?.entities().length ?? 0) >= 14 && app.home.connected && app.home.registry?.view('kitchen_light')?.available === true);
    // With pages: first `runs` runs without them, the baseline of the same run (printed beside, with ratios).
    const stopOnce = async (i: number, queue: boolean, into: Figures): Promise<void> => {
      const started = new Promise<void>((resolve) => speaker.once('start', () => resolve()));
      const turn = app.kernel.injectInput('bench', 'speaker', `tell me story ${i}`);
      await started;
      // The player's end, seen from outside the service (test/support/exit-watcher.ts), armed before the stop.
      // (One player per sentence: if the one watched ended meanwhile, watch the one playing now.)
      let ended: Promise<ProcessEnd> | undefined;
      for (let tries = 0; tries < 600 && !ended; tries++) {
        const pid = (speaker as Partial<ProcessSpeaker>).playerPid;
        if (pid === undefined) {
          await new Promise((r) => setTimeout(r, 5));
          continue;
        }
        const w = await watcher.watch(pid);
        if ((speaker as Partial<ProcessSpeaker>).playerPid === pid) ended = w.ended;
      }
      if (!ended) throw new Error(`run ${i}: no player to watch (the speaker is not a process speaker playing aplay)`);
      const queued: Array<Promise<{ status: string }>> = [];
      if (queue) {
        queued.push(
          app.kernel.injectInput('bench', 'speaker', i % 2 ? 'turn off the kitchen light' : 'turn on the kitchen light'),
          app.kernel.injectInput('bench', 'speaker', 'set a timer for 5 minutes'),
        );
        await new Promise((r) => setImmediate(r)); // those two wait in the scheduler
        queued.push(app.kernel.injectInput('bench', 'speaker', i % 2 ? 'turn off office/desk lamp' : 'turn on office/desk lamp')); // this one in the inbox
      }
      const closed = llm.nextSocketClosed();
      const exited = new Promise<bigint>((resolve) => speaker.once('stopped', () => resolve(process.hrtime.bigint())));
      const wait0 = runQueueWaitNs();
      const cpu0 = cpuNs();
      // The service's CPU time over the 50 ms after the stop (its event loop's thread): its own work at a stop.
      const cpuAfter = new Promise<number | undefined>((resolve) => setTimeout(() => {
        const cpu1 = cpuNs();
        resolve(cpu0 !== undefined && cpu1 !== undefined ? (cpu1 - cpu0) / 1e6 : undefined);
      }, 50));
      const t0 = process.hrtime.bigint();
      app.kernel.stopNow('bench');
      const t1 = process.hrtime.bigint();
      const wait1 = runQueueWaitNs();
      const [c, e, gone, cpu] = await Promise.all([closed, exited, ended, cpuAfter]);
      if (gone.gone) throw new Error(`run ${i}: the player had ended before the stop`);
      if (!queue) {
        into.llm.push(Number(c.at - t0) / 1e6);
        // A sentence that ended on its own just before the stop (its player watched, the next one cut) is not a stop figure.
        if (gone.at >= t0) into.spk.push(Number(gone.at - t0) / 1e6);
        else into.endedBefore++;
        into.seen.push(Number(e - t0) / 1e6);
        into.sync.push(Number(t1 - t0) / 1e6);
        if (wait0 !== undefined && wait1 !== undefined) into.syncWait.push((wait1 - wait0) / 1e6);
        if (cpu !== undefined) into.cpuAfter.push(cpu);
      }
      await turn;
      for (const q of queued) {
        const r = await q;
        if (r.status !== 'cancelled') throw new Error(`run ${i}: an input queued at the stop ended ${r.status}, not cancelled`);
      }
    };
    // Phase 1 (`runs` runs, as before issue 13): stop latency alone. Phase 2 (`runs` more): local commands queued before each stop.
    // With pages, the baseline has the same two phases, before the pages open.
    if (pages > 0) {
      loopDelay.enable();
      gcPhase = 'baseline';
      for (let i = 0; i < 2 * runs; i++) await stopOnce(2 * runs + i, i >= runs, baseline);
      gcPhase = undefined;
      loopDelay.disable();
      baselineLoop = { p99: loopDelay.percentile(99) / 1e6, max: loopDelay.max / 1e6 };
      loopDelay.reset();
      closePages = await watchActivity(app, pages);
    }
    loopDelay.enable();
    gcPhase = 'main';
    for (let i = 0; i < 2 * runs; i++) await stopOnce(i, i >= runs, main);
    gcPhase = undefined;
    loopDelay.disable();
    // The barrier: one command after the last stop; the broker sees it after anything sent before it.
    const before = sim.commands.length;
    await app.kernel.injectInput('bench', 'speaker', 'turn off the bed light');
    await sim.waitForCommands(before + 1);
    // Commands seen by the broker or sent by the box's own account (whichever is more), plus timers started; the barrier is not one of them.
    queuedActions = Math.max(sim.commands.length, homeCommands) - 1 + (app.timers.service?.status().length ?? 0);
  } finally {
    gcObserver.disconnect();
    await closePages?.();
    await app.stop();
    await sim.stop();
    await broker.stop();
    await llm.close();
    watcher.close();
    rmSync(dir, { recursive: true, force: true });
    process.env.PATH = pathBefore;
    rmSync(pacedDir, { recursive: true, force: true });
  }
  /** Print the p-th percentile of `key` (with pages: beside the baseline's and their ratio). */
  const figure = (name: string, key: Exclude<keyof Figures, 'endedBefore'>, p: number, note = ''): void => {
    const v = pct(main[key], p);
    console.log(`stop.${name}: ${v.toFixed(2)} ms${note}`);
    if (pages === 0) return;
    const b = pct(baseline[key], p);
    console.log(`stop.${name}_no_pages: ${b.toFixed(2)} ms (the same run's first ${2 * runs} runs, before the pages opened)`);
    if (b > 0) console.log(`stop.${name}_ratio: ${(v / b).toFixed(2)} (with ${pages} pages / without)`);
  };
  console.log(`stop.event_loop_delay_p99: ${(loopDelay.percentile(99) / 1e6).toFixed(2)} ms (max ${(loopDelay.max / 1e6).toFixed(2)} ms; the service's event loop during the runs${pages > 0 ? `; without pages ${baselineLoop!.p99.toFixed(2)} ms, max ${baselineLoop!.max.toFixed(2)} ms` : ''})`);
  const gcKind = (k: number): string => ({ [constants.NODE_PERFORMANCE_GC_MAJOR]: 'mark-compact', [constants.NODE_PERFORMANCE_GC_MINOR]: 'scavenge', [constants.NODE_PERFORMANCE_GC_INCREMENTAL]: 'incremental marking', [constants.NODE_PERFORMANCE_GC_WEAKCB]: 'weak callbacks' })[k] ?? `kind ${k}`;
  console.log(`stop.gc_pause_max: ${gcMax.main.ms.toFixed(2)} ms (${gcKind(gcMax.main.kind)}; the longest garbage collection during the runs${pages > 0 ? `; without pages ${gcMax.baseline.ms.toFixed(2)} ms, ${gcKind(gcMax.baseline.kind)}` : ''})`);
  figure('llm_abort_p50', 'llm', 50);
  figure('llm_abort_p99', 'llm', 99);
  figure('speaker_p50', 'spk', 50);
  figure('speaker_p99', 'spk', 99);
  console.log(`stop.speaker_runs: ${main.spk.length} runs (${main.endedBefore} left out: the sentence watched ended on its own just before the stop)`);
  figure('speaker_seen_p50', 'seen', 50, " (the player's exit as the service's event loop hears it)");
  figure('speaker_seen_p99', 'seen', 99);
  figure('sync_p99', 'sync', 99, ' (stopNow itself: the LLM socket closed, the player killed, queued inputs cancelled)');
  if (main.cpuAfter.length) {
    figure('cpu_after_stop_p50', 'cpuAfter', 50, " (the service's event-loop thread's CPU time in the 50 ms after the stop)");
    figure('cpu_after_stop_p99', 'cpuAfter', 99);
  }
  if (main.syncWait.length) figure('sync_runqueue_wait_p99', 'syncWait', 99, " (of stopNow's time, the service runnable but waiting for a CPU: /proc/thread-self/schedstat)");
  console.log(`stop.queued_actions_after_stop: ${queuedActions} actions`);
  console.log(`stop.runs: ${runs} runs, and ${runs} with queued commands`);
  console.log(`stop.llm_server: ${inProcess ? 'in the service process (its close seen only when the service\'s event loop is free)' : 'own process, as Ollama'}`);
  console.log(`stop.hung_plugin: ${hung ? 1 : 0} plugins (sandboxed: ${hung?.stats.sandboxed ? 'yes' : 'no'})`);
  console.log(`stop.hung_plugin_restarts: ${Math.max(0, (hung?.stats.spawns ?? 1) - 1)} restarts`);
  console.log(`stop.service_nice: ${nice} (the service's thread, as systemd runs it; peers at the default)`);
  if (pages > 0) {
    console.log(`stop.activity_pages: ${pages} Chromium pages on the WebUI's Activity page`);
    console.log(`stop.activity_browser_niced: 1 (Chromium runs under \`${BACKGROUND_CHROMIUM}\`: on a real deployment the pages render on phones and laptops, not on the box's cores; Playwright drives them from its own process, in the background too once they are open)`);
  }
  if (queuedActions !== 0) throw new Error(`${queuedActions} queued actions ran after stop`);
}

/**
 * Nanoseconds this thread has waited on a run queue so far (the second
 * field of /proc/thread-self/schedstat: runnable, but another task had the
 * CPU); undefined where the file is missing (kernel without schedstats).
 */
function runQueueWaitNs(): number | undefined {
  return schedstat(1);
}

/** Nanoseconds this thread has run on a CPU so far (the first field of /proc/thread-self/schedstat); undefined without the file. */
function cpuNs(): number | undefined {
  return schedstat(0);
}

function schedstat(field: 0 | 1): number | undefined {
  try {
    return Number(readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[field]);
  } catch {
    return undefined;
  }
}

/** Resolve once `cond` holds, polled every 50 ms (start-up only: device discovery has no single event); 30 s deadline. */
async function waitUntil(cond: () => boolean): Promise<void> {
  const end = Date.now() + 30_000;
  while (!cond()) {
    if (Date.now() > end) throw new Error('the fixture home was not discovered within 30 s');
    await new Promise((r) => setTimeout(r, 50));
  }
}
