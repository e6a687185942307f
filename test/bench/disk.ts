/**
 * Disk bench (issue 18 "Nothing grows without bound on an SD card"): what
 * the box writes per turn, and whether the bounds hold.
 *
 * A kernel with the real stores in a temporary data directory (SqliteRunLog
 * runlog.db, MemorySystem memory.db with its context window archiving into
 * documents) and a scripted model; ordinary household turns of varied text
 * (device questions, things to remember, a tool call every fifth turn).
 *
 * Figures:
 *   memory.disk_per_1000_turns_mb     growth of the data directory (runlog.db, memory.db, WAL files) per 1000 turns
 *   memory.disk_runlog_per_1000_turns_mb   the run log's share of it
 *   memory.disk_bounded_runlog_mb     run log size after 3000 turns with core.storage.runlog_max_mb 2 and the disk keeper
 *   memory.disk_unbounded_runlog_mb   the same turns without the keeper (the baseline); the ratio follows
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigRegistry } from '../../src/config/registry.js';
import { Kernel } from '../../src/kernel/kernel.js';
import { SqliteRunLog } from '../../src/kernel/run-log.js';
import { Cap } from '../../src/kernel/output-types.js';
import { MemorySystem } from '../../src/memory/index.js';
import { DiskKeeper, registerStorageSettings } from '../../src/service/disk-keeper.js';
import { FakeProvider } from '../support/fake-provider.js';
import { silentLogger } from '../support/quiet.js';
import { prng } from '../support/prng.js';

const SAYINGS = [
  'what is the temperature in the bedroom',
  'remember that the plumber comes on Thursday at ten',
  'my sister Anna is visiting next weekend with her two kids',
  'how long until the pasta is done',
  'the spare key is with the neighbour at number twelve',
  'what did I say about the plumber',
  'turn the living room lamp down a bit',
  'we are out of oat milk and coffee filters',
  'Paul prefers the heating at twenty one degrees in the evening',
  'who is coming this weekend',
];

function dirBytes(dir: string): number {
  let n = 0;
  for (const f of fs.readdirSync(dir)) {
    const p = path.join(dir, f);
    const st = fs.statSync(p);
    n += st.isDirectory() ? dirBytes(p) : st.size;
  }
  return n;
}

async function world(): Promise<{ dir: string; kernel: Kernel; runLog: SqliteRunLog; memory: MemorySystem; settings: ConfigRegistry; close(): Promise<void> }> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'homeagent-disk-'));
  const settings = new ConfigRegistry(':memory:', { env: {} });
  const memory = new MemorySystem({ dataDir: dir, settings, log: silentLogger, knowledgeSeedDir: path.join(dir, 'no-seeds') });
  const runLog = new SqliteRunLog(path.join(dir, 'runlog.db'));
  const rand = prng(7);
  const provider = new FakeProvider([], (req, n) => {
    const last = req.messages[req.messages.length - 1];
    if (n % 5 === 0 && last?.role === 'user') return { tool_calls: [{ name: 'memory_recall', arguments: { query: String(last.content).slice(0, 40) } }] };
    return { content: `Noted. ${SAYINGS[Math.floor(rand() * SAYINGS.length)]} — is there anything else you would like me to do?` };
  });
  const kernel = new Kernel({ settings, dataDir: dir, provider, memory, memoryApi: () => memory.api(), knowledgeApi: () => memory.knowledge.api(), socialApi: () => memory.socialApi(), runLog, log: silentLogger });
  kernel.registerOutputChannel('_bench_', 'console', Cap.Text, 'bench console', () => {});
  await kernel.start();
  return {
    dir,
    kernel,
    runLog,
    memory,
    settings,
    async close() {
      await kernel.stop();
      memory.close();
      settings.close();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}

async function turns(w: Awaited<ReturnType<typeof world>>, n: number, from: number, between?: () => void): Promise<void> {
  for (let i = from; i < from + n; i++) {
    await w.kernel.injectInput('bench', 'console', `${SAYINGS[i % SAYINGS.length]} (${i})`);
    if (i % 20 === 0) await w.memory.runLoopOnce('distill');
    between?.();
  }
}

/** Run the bench; prints the figures. */
export async function run(): Promise<void> {
  // Growth per 1000 turns, after 100 turns of warm-up (schema, first pages).
  const a = await world();
  await turns(a, 100, 0);
  const before = dirBytes(a.dir);
  const t0 = performance.now();
  const runBefore = a.runLog.usedBytes();
  await turns(a, 1000, 100);
  const grew = (dirBytes(a.dir) - before) / 1e6;
  const took = performance.now() - t0;
  const runGrew = (a.runLog.usedBytes() - runBefore) / 1e6;
  console.log(`memory.disk_per_1000_turns_mb: ${grew.toFixed(2)} MB`);
  console.log(`memory.disk_runlog_per_1000_turns_mb: ${runGrew.toFixed(2)} MB`);
  console.log(`memory.disk_bench_turn_ms: ${(took / 1000).toFixed(1)} ms (a scripted turn with both stores, for scale)`);
  await a.close();

  // Bounded against unbounded, 3000 turns each.
  const sizeOf = (w: Awaited<ReturnType<typeof world>>): number => ['runlog.db', 'runlog.db-wal'].reduce((n, f) => n + (fs.existsSync(path.join(w.dir, f)) ? fs.statSync(path.join(w.dir, f)).size : 0), 0) / 1e6;
  const u = await world();
  await turns(u, 3000, 0);
  const unbounded = sizeOf(u);
  await u.close();
  const b = await world();
  registerStorageSettings(b.settings);
  b.settings.set('core.storage.runlog_max_mb', 2);
  const pruneRand = prng(11);
  const keeper = new DiskKeeper({ dataDir: b.dir, settings: b.settings, clock: b.kernel.services.clock, log: silentLogger, runLog: () => b.runLog, memory: b.memory });
  await turns(b, 3000, 0, () => {
    if (pruneRand() < 0.05) while (keeper.runOnce()) {}
  });
  while (keeper.runOnce()) {}
  const bounded = sizeOf(b);
  await b.close();
  console.log(`memory.disk_bounded_runlog_mb: ${bounded.toFixed(2)} MB (core.storage.runlog_max_mb 2, 3000 turns)`);
  console.log(`memory.disk_unbounded_runlog_mb: ${unbounded.toFixed(2)} MB (baseline, same turns, no keeper)`);
  console.log(`memory.disk_bounded_ratio: ${(bounded / unbounded).toFixed(2)} x`);
}
