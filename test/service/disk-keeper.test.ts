/**
 * The disk keeper (issue 18 "Nothing grows without bound on an SD card"):
 * the run log stays within its size and age, log files are rotated and aged
 * out, what the box remembers is never removed but capped with a warning
 * before the cap, and `doctor` shows the sizes.
 */
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { FakeClock } from '../../src/kernel/clock.js';
import { SqliteRunLog, type RunEvent } from '../../src/kernel/run-log.js';
import { DiskKeeper } from '../../src/service/disk-keeper.js';
import { checkStorage } from '../../src/service/doctor.js';
import { MemoryFullError } from '../../src/memory/errors.js';
import { fakeSettings, makeMemory, quietLog, tempDir } from '../memory/helpers.js';
import type { Logger } from '../../src/kernel/log-types.js';

const DAY = 86_400_000;

function recordingLog(): Logger & { warns: string[]; infos: string[] } {
  const warns: string[] = [];
  const infos: string[] = [];
  const log: Logger & { warns: string[]; infos: string[] } = {
    warns,
    infos,
    debug: () => {},
    info: (_o: unknown, msg?: string) => {
      infos.push(String(msg));
    },
    warn: (_o: unknown, msg?: string) => {
      warns.push(String(msg));
    },
    error: () => {},
    child: () => log,
  } as Logger & { warns: string[]; infos: string[] };
  return log;
}

/** Append `n` turns of about 2 KB each. */
function fill(log: SqliteRunLog, from: number, n: number): void {
  const text = 'a reply that goes on for a while about the weather and the lights. '.repeat(30);
  for (let i = from; i < from + n; i++) {
    const turn = `t${i}`;
    log.append({ type: 'turn.started', turn, input: { id: turn, source: 'console', channel: 'console', text: 'hello', kind: 'queued', level: 0, received_at: 0 } } as RunEvent);
    log.append({ type: 'output', turn, channel: 'console', kind: 'full', content: `${i} ${text}` } as RunEvent);
    log.append({ type: 'turn.finished', turn, status: 'done', reply: 'ok' } as RunEvent);
  }
}

describe('disk keeper', () => {
  it('keeps the run log within core.storage.runlog_max_mb while turns keep coming: the file stops growing', () => {
    const { dir, cleanup } = tempDir('ha-disk-');
    const file = path.join(dir, 'runlog.db');
    const runLog = new SqliteRunLog(file);
    try {
      const settings = fakeSettings({ 'core.storage.runlog_max_mb': 1 });
      const keeper = new DiskKeeper({ dataDir: dir, settings, clock: new FakeClock(Date.now()), log: quietLog(), runLog: () => runLog });
      const sizes: number[] = [];
      for (let round = 0; round < 6; round++) {
        fill(runLog, round * 500, 500); // ~1 MB a round
        while (keeper.runOnce()) {
          /* a large prune is spread over passes */
        }
        assert.ok(runLog.usedBytes() <= 1_048_576, `round ${round}: ${runLog.usedBytes()} bytes in use`);
        sizes.push(fs.statSync(file).size + (fs.existsSync(`${file}-wal`) ? fs.statSync(`${file}-wal`).size : 0));
      }
      // Freed pages are reused: after the bound is first reached the file stays where it was (allowing for index pages).
      assert.ok(sizes[5]! <= sizes[2]! * 1.25 + 200_000, `the file stopped growing: ${sizes.join(', ')}`);
      assert.equal(runLog.turn('t2999').length, 3, 'the newest turn is kept');
      assert.deepEqual(runLog.turn('t0'), [], 'the oldest is gone');
      const st = keeper.status().areas.find((a) => a.name === 'runlog')!;
      assert.equal(st.max_mb, 1);
      assert.ok(st.used_mb <= 1);
    } finally {
      runLog.close();
      cleanup();
    }
  });

  it('removes run-log turns older than core.storage.runlog_max_days', () => {
    const { dir, cleanup } = tempDir('ha-disk-');
    const runLog = new SqliteRunLog(path.join(dir, 'runlog.db'));
    try {
      fill(runLog, 0, 20);
      const clock = new FakeClock(Date.now());
      const settings = fakeSettings({ 'core.storage.runlog_max_days': 2 });
      const keeper = new DiskKeeper({ dataDir: dir, settings, clock, log: quietLog(), runLog: () => runLog });
      keeper.runOnce();
      assert.equal(runLog.tail(1000).length, 60, 'a day-old log is kept');
      clock.advance(3 * DAY);
      keeper.runOnce();
      assert.equal(runLog.tail(1000).length, 0, 'three days later it is gone');
    } finally {
      runLog.close();
      cleanup();
    }
  });

  it('rotates homeagent.log past half its share and ages out old log files, oldest first; the live files stay', () => {
    const { dir, cleanup } = tempDir('ha-disk-');
    try {
      const sim = path.join(dir, 'speaker-sim');
      fs.mkdirSync(sim);
      const now = Date.now();
      fs.writeFileSync(path.join(dir, 'homeagent.log'), 'x'.repeat(600_000));
      fs.writeFileSync(path.join(sim, 'speaker.jsonl'), '{"text":"hi"}\n');
      const old = path.join(sim, 'old.wav');
      fs.writeFileSync(old, Buffer.alloc(1000));
      fs.utimesSync(old, new Date(now - 40 * DAY), new Date(now - 40 * DAY));
      const wavs = [0, 1, 2, 3].map((i) => {
        const f = path.join(sim, `u${i}.wav`);
        fs.writeFileSync(f, Buffer.alloc(200_000));
        fs.utimesSync(f, new Date(now - (10 - i) * 60_000), new Date(now - (10 - i) * 60_000));
        return f;
      });
      const settings = fakeSettings({ 'core.storage.logs_max_mb': 1 });
      const keeper = new DiskKeeper({ dataDir: dir, settings, clock: new FakeClock(now), log: quietLog(), runLog: () => undefined, speakerSimDir: () => sim });
      keeper.runOnce();
      assert.equal(fs.statSync(path.join(dir, 'homeagent.log.1')).size, 600_000, 'rotated to homeagent.log.1');
      assert.ok(!fs.existsSync(old), 'a 40-day-old file is gone (core.storage.logs_max_days 30)');
      assert.ok(fs.existsSync(path.join(sim, 'speaker.jsonl')), 'the live speaker.jsonl stays');
      // 600 KB rotated log + 800 KB of WAVs > 1 MB: the oldest go first until within the bound.
      const used = keeper.status().areas.find((a) => a.name === 'logs')!.used_mb;
      assert.ok(used <= 1, `logs within 1 MB (${used})`);
      assert.ok(fs.existsSync(wavs[3]!), 'the newest WAV stays');
      assert.ok(!fs.existsSync(path.join(dir, 'homeagent.log.1')) || !fs.existsSync(wavs[0]!), 'the oldest went first');
    } finally {
      cleanup();
    }
  });

  it('never removes what the box remembers: warns before the cap, marks the memory full at it, and has room again after forgetting', () => {
    const { dir, cleanup } = tempDir('ha-disk-');
    const settings = fakeSettings({ 'core.storage.memory_max_mb': 2, 'core.storage.memory_warn_percent': 75 });
    const memory = makeMemory({ dir, settings });
    try {
      const log = recordingLog();
      const keeper = new DiskKeeper({ dataDir: dir, settings, clock: new FakeClock(Date.now()), log, runLog: () => undefined, memory });
      keeper.runOnce();
      assert.equal(memory.full(), undefined);
      assert.equal(checkStorage(keeper.status()).ok, true);
      const kdir = path.join(dir, 'knowledge', 'manuals');
      fs.mkdirSync(kdir, { recursive: true });
      fs.writeFileSync(path.join(kdir, 'content.md'), 'manual text\n'.repeat(130_000)); // ~1.56 MB: past 75% of 2 MB
      keeper.runOnce();
      keeper.runOnce();
      assert.equal(memory.full(), undefined, 'below the cap there is room');
      assert.equal(log.warns.filter((w) => /memory at \d/.test(w)).length, 1, 'warned once, not on every pass');
      const warn = checkStorage(keeper.status());
      assert.equal(warn.ok, false);
      assert.match(warn.detail, /memory at \d+(\.\d)?% of its cap/);
      fs.writeFileSync(path.join(kdir, 'more.md'), 'more text\n'.repeat(60_000));
      keeper.runOnce();
      assert.match(memory.full() ?? '', /MB of 2 MB/);
      assert.throws(() => memory.commitDocument('note', 'the spare key is under the mat'), MemoryFullError);
      assert.ok(fs.existsSync(path.join(kdir, 'content.md')), 'nothing remembered was removed');
      fs.rmSync(path.join(kdir, 'more.md'));
      keeper.runOnce();
      assert.equal(memory.full(), undefined, 'room again');
      assert.ok(memory.commitDocument('note', 'the spare key is under the mat') > 0);
    } finally {
      memory.close();
      cleanup();
    }
  });

  it('runs in the background between turns: waits while a turn runs, then every core.storage.prune_interval_s', () => {
    const { dir, cleanup } = tempDir('ha-disk-');
    const runLog = new SqliteRunLog(path.join(dir, 'runlog.db'));
    try {
      fill(runLog, 0, 10);
      const clock = new FakeClock(Date.now());
      const settings = fakeSettings({ 'core.storage.runlog_max_days': 1, 'core.storage.prune_interval_s': 60 });
      let busy = true;
      const keeper = new DiskKeeper({ dataDir: dir, settings, clock, log: quietLog(), runLog: () => runLog, busy: () => busy });
      keeper.start();
      clock.advance(2 * DAY);
      assert.equal(runLog.tail(100).length, 30, 'nothing pruned while a turn runs');
      busy = false;
      clock.advance(1000);
      assert.equal(runLog.tail(100).length, 0, 'pruned once the box is idle');
      fill(runLog, 10, 1);
      clock.advance(59_000);
      assert.equal(runLog.tail(100).length, 3);
      keeper.stop();
    } finally {
      runLog.close();
      cleanup();
    }
  });
});
