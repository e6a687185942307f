/**
 * Nothing grows without bound on an SD card (issue 18). The disk keeper runs
 * in the background (at start, then every core.storage.prune_interval_s) and
 * between turns bounds what the box writes:
 *
 * - the run log (runlog.db): whole turns, oldest first, older than
 *   core.storage.runlog_max_days or beyond core.storage.runlog_max_mb (the
 *   compaction summary in force is kept; freed pages are reused, so the file
 *   stops growing at the bound);
 * - log files (`homeagent.log` when the console owns the terminal, the
 *   simulated speaker's WAVs and speaker.jsonl): a text log past half its
 *   share is rotated to `<file>.1`; files older than
 *   core.storage.logs_max_days or beyond core.storage.logs_max_mb go, oldest
 *   first;
 * - what the box remembers (memory.db, the knowledge folder) is never aged
 *   out: at core.storage.memory_warn_percent of core.storage.memory_max_mb a
 *   warning is logged and shown by `status` and `doctor`; at the cap the
 *   memory is marked full (MemorySystem.setFull: nothing new is remembered,
 *   nothing old removed) until something is forgotten or the cap is raised;
 * - further areas (pictures) join with `addArea`.
 *
 * Sizes are MB of 1,048,576 bytes (as core.memory.images_max_mb). Every step is guarded: a failure is
 * logged, never thrown into the service.
 */
import { existsSync, readdirSync, renameSync, rmSync, statSync, statfsSync } from 'node:fs';
import path from 'node:path';
import type { Clock, TimerHandle } from '../kernel/clock.js';
import type { Logger } from '../kernel/log-types.js';
import type { RunLog } from '../kernel/run-log.js';
import type { SettingsAPI } from '../kernel/settings-types.js';
import { errorMessage } from '../kernel/errors.js';
import { reopenLogFile } from '../kernel/log.js';

const MB = 1_048_576;
const DAY_MS = 86_400_000;

/** One part of the data directory the keeper watches. */
export interface DiskArea {
  /** Shown in `status` and `doctor` (e.g. "runlog", "pictures"). */
  name: string;
  /** Bytes it holds now. */
  usedBytes(): number;
  /** Its bound in bytes (0 = none). */
  maxBytes(): number;
  /** Bring it within its bound (may take several calls; resolves what was removed). Absent: a capped area the keeper only watches. */
  prune?(now: number): { removed: number; more: boolean };
}

/** One area as `status` shows it. */
export interface DiskAreaStatus {
  name: string;
  used_mb: number;
  max_mb: number;
  /** used / max, percent (0 when unbounded). */
  percent: number;
  /** A warning a person should read ("memory at 80% of its cap"), when there is one. */
  warning?: string;
}

/** What `status` and `doctor` show of the disk. */
export interface DiskStatus {
  areas: DiskAreaStatus[];
  /** Free space of the data directory's file system, MB (undefined when it cannot be read). */
  free_mb?: number;
  /** When the keeper last ran, ms since epoch. */
  last_run?: number;
}

/** What the keeper needs. */
export interface DiskKeeperOptions {
  dataDir: string;
  settings: SettingsAPI;
  clock: Clock;
  log: Logger;
  runLog: () => RunLog | undefined;
  /** The memory, to mark it full at its cap (MemorySystem.setFull); absent when the memory is off. */
  memory?: { setFull(reason: string | undefined): void };
  /** The simulated speaker's folder, when it writes one. */
  speakerSimDir?: () => string | undefined;
  /** Whether a turn runs now: pruning waits for a moment between turns. */
  busy?: () => boolean;
}

/** The core.storage.* settings (defaults sized for a 32 GB SD card). */
export function registerStorageSettings(s: SettingsAPI): void {
  const has = (k: string): boolean => s.list(k).some((x) => x.key === k);
  const reg = (key: string, def: number, min: number, max: number, description: string): void => {
    if (!has(key)) s.register({ key, type: 'integer', default: def, min, max, description });
  };
  reg('core.storage.runlog_max_days', 180, 0, 36500, 'Turns older than this are removed from the run log (runlog.db), days; 0 = no age limit.');
  reg('core.storage.runlog_max_mb', 1024, 0, 1_000_000, 'The run log is kept under this size, oldest turns removed first, MB; 0 = no size limit.');
  reg('core.storage.logs_max_mb', 64, 1, 100_000, 'Log files in the data directory (homeagent.log and its rotation, the simulated speaker\'s WAVs) are kept under this size, oldest first, MB.');
  reg('core.storage.logs_max_days', 30, 1, 36500, 'Log files older than this are removed, days.');
  reg('core.storage.memory_max_mb', 4096, 1, 1_000_000, 'What the box remembers (memory.db, knowledge) is never aged out; at this size nothing new is remembered until something is forgotten, MB.');
  reg('core.storage.memory_warn_percent', 75, 1, 100, 'A warning in the log, status and doctor when the memory reaches this share of core.storage.memory_max_mb, percent.');
  reg('core.storage.prune_interval_s', 600, 1, 86_400, 'How often the disk keeper bounds the run log and log files, seconds.');
}

/** Total size of the regular files under `p` (a file or a folder), bytes; 0 when absent. */
export function sizeOf(p: string): number {
  let st;
  try {
    st = statSync(p);
  } catch {
    return 0;
  }
  if (st.isFile()) return st.size;
  if (!st.isDirectory()) return 0;
  let n = 0;
  for (const e of readdirSync(p)) n += sizeOf(path.join(p, e));
  return n;
}

function filesUnder(dir: string): Array<{ file: string; size: number; mtime: number }> {
  const out: Array<{ file: string; size: number; mtime: number }> = [];
  const walk = (d: string): void => {
    let names: string[];
    try {
      names = readdirSync(d);
    } catch {
      return;
    }
    for (const n of names) {
      const f = path.join(d, n);
      try {
        const st = statSync(f);
        if (st.isDirectory()) walk(f);
        else if (st.isFile()) out.push({ file: f, size: st.size, mtime: st.mtimeMs });
      } catch {
        /* gone meanwhile */
      }
    }
  };
  walk(dir);
  return out;
}

/** The keeper. */
export class DiskKeeper {
  private readonly areas: DiskArea[] = [];
  private timer: TimerHandle | undefined;
  private lastRun: number | undefined;
  private warned = new Set<string>();
  private stopped = false;

  constructor(private readonly o: DiskKeeperOptions) {
    registerStorageSettings(o.settings);
    this.areas.push(this.runLogArea(), this.memoryArea(), this.logsArea());
  }

  private mb(key: string): number {
    return this.o.settings.get<number>(key) * MB;
  }

  private runLogArea(): DiskArea {
    return {
      name: 'runlog',
      usedBytes: () => this.o.runLog()?.usedBytes() ?? sizeOf(path.join(this.o.dataDir, 'runlog.db')) + sizeOf(path.join(this.o.dataDir, 'runlog.db-wal')),
      maxBytes: () => this.mb('core.storage.runlog_max_mb'),
      prune: (now) => {
        const log = this.o.runLog();
        if (!log) return { removed: 0, more: false };
        const days = this.o.settings.get<number>('core.storage.runlog_max_days');
        const r = log.prune({ before: days > 0 ? now - days * DAY_MS : 0, maxBytes: this.mb('core.storage.runlog_max_mb'), maxTurns: 200 });
        return { removed: r.turns, more: r.more };
      },
    };
  }

  private memoryFiles(): string[] {
    const d = this.o.dataDir;
    return [path.join(d, 'memory.db'), path.join(d, 'memory.db-wal'), path.join(d, 'knowledge')];
  }

  private memoryArea(): DiskArea {
    return {
      name: 'memory',
      usedBytes: () => this.memoryFiles().reduce((n, f) => n + sizeOf(f), 0),
      maxBytes: () => this.mb('core.storage.memory_max_mb'),
    };
  }

  /** The log files the keeper bounds: homeagent.log and its rotation, the simulated speaker's folder. */
  private logFiles(): Array<{ file: string; size: number; mtime: number }> {
    const d = this.o.dataDir;
    const out = ['homeagent.log', 'homeagent.log.1']
      .map((n) => path.join(d, n))
      .filter((f) => existsSync(f))
      .map((f) => {
        const st = statSync(f);
        return { file: f, size: st.size, mtime: st.mtimeMs };
      });
    const sim = this.o.speakerSimDir?.();
    if (sim) out.push(...filesUnder(sim));
    return out;
  }

  private logsArea(): DiskArea {
    return {
      name: 'logs',
      usedBytes: () => this.logFiles().reduce((n, f) => n + f.size, 0),
      maxBytes: () => this.mb('core.storage.logs_max_mb'),
      prune: (now) => this.pruneLogs(now),
    };
  }

  /**
   * Rotate a live text log (homeagent.log, speaker.jsonl) past half the
   * share to `<file>.1`, then remove files too old or beyond the size, oldest
   * first (the live files are only ever rotated).
   */
  private pruneLogs(now: number): { removed: number; more: boolean } {
    const max = this.mb('core.storage.logs_max_mb');
    const maxAge = this.o.settings.get<number>('core.storage.logs_max_days') * DAY_MS;
    let removed = 0;
    const live = (f: string): boolean => /(?:homeagent\.log|speaker\.jsonl)$/.test(f);
    for (const f of this.logFiles()) {
      if (live(f.file) && f.size > max / 2) {
        rotateInPlace(f.file);
        removed++;
      }
    }
    const files = this.logFiles().sort((a, b) => a.mtime - b.mtime);
    let total = files.reduce((n, f) => n + f.size, 0);
    for (const f of files) {
      if (live(f.file)) continue;
      if (now - f.mtime <= maxAge && total <= max) continue;
      try {
        rmSync(f.file, { force: true });
        total -= f.size;
        removed++;
      } catch (err) {
        this.o.log.warn({ file: f.file, err: errorMessage(err) }, 'disk keeper could not remove a log file');
      }
    }
    return { removed, more: false };
  }

  /** Add an area (pictures); it is pruned and shown like the others. */
  addArea(a: DiskArea): void {
    this.areas.push(a);
  }

  /** Start: run once now, then every core.storage.prune_interval_s. */
  start(): void {
    this.stopped = false;
    this.schedule(0);
  }

  private schedule(ms: number): void {
    if (this.stopped) return;
    this.o.clock.clearTimeout(this.timer);
    this.timer = this.o.clock.setTimeout(() => {
      this.timer = undefined;
      if (this.o.busy?.()) {
        this.schedule(1000);
        return;
      }
      const more = this.runOnce();
      this.schedule(more ? 50 : this.o.settings.get<number>('core.storage.prune_interval_s') * 1000);
    }, ms);
  }

  stop(): void {
    this.stopped = true;
    this.o.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  /**
   * One pass: prune every area one step, then check the memory's cap.
   * Returns true when an area has more to prune (the next pass comes soon,
   * so a large prune is spread between turns). Never throws.
   */
  runOnce(): boolean {
    const now = this.o.clock.now();
    let more = false;
    for (const a of this.areas) {
      if (!a.prune) continue;
      try {
        const r = a.prune(now);
        more ||= r.more;
        if (r.removed > 0) this.o.log.info({ area: a.name, removed: r.removed }, 'disk keeper pruned');
      } catch (err) {
        this.o.log.error({ area: a.name, err: errorMessage(err) }, 'disk keeper could not prune');
      }
    }
    this.checkMemory();
    this.lastRun = now;
    return more;
  }

  private checkMemory(): void {
    const st = this.statusOf(this.memoryArea());
    if (st.percent >= 100) this.o.memory?.setFull(`${st.used_mb} MB of ${st.max_mb} MB`);
    else this.o.memory?.setFull(undefined);
    if (st.warning && !this.warned.has('memory')) {
      this.warned.add('memory');
      this.o.log.warn({ used_mb: st.used_mb, max_mb: st.max_mb }, st.warning);
    } else if (!st.warning) this.warned.delete('memory');
  }

  private statusOf(a: DiskArea): DiskAreaStatus {
    let used = 0;
    let max = 0;
    try {
      used = a.usedBytes();
      max = a.maxBytes();
    } catch (err) {
      return { name: a.name, used_mb: 0, max_mb: 0, percent: 0, warning: `${a.name}: size unknown (${errorMessage(err)})` };
    }
    const percent = max > 0 ? Math.round((used / max) * 1000) / 10 : 0;
    const out: DiskAreaStatus = { name: a.name, used_mb: Math.round((used / MB) * 10) / 10, max_mb: Math.round(max / MB), percent };
    if (a.name === 'memory' && max > 0) {
      const warnAt = this.o.settings.get<number>('core.storage.memory_warn_percent');
      if (percent >= 100) out.warning = `memory is full (${out.used_mb} of ${out.max_mb} MB): nothing new is remembered; forget something or raise core.storage.memory_max_mb`;
      else if (percent >= warnAt) out.warning = `memory at ${percent}% of its cap (${out.used_mb} of ${out.max_mb} MB, core.storage.memory_max_mb); at the cap nothing new is remembered`;
    }
    return out;
  }

  /** Sizes for `status` and `doctor`. */
  status(): DiskStatus {
    let free: number | undefined;
    try {
      const s = statfsSync(this.o.dataDir);
      free = Math.round((s.bavail * s.bsize) / MB);
    } catch {
      free = undefined;
    }
    return { areas: this.areas.map((a) => this.statusOf(a)), ...(free !== undefined ? { free_mb: free } : {}), ...(this.lastRun !== undefined ? { last_run: this.lastRun } : {}) };
  }
}

/**
 * Rotate a text log: move it to `<file>.1` (replacing an older one) and ask
 * the logger to reopen its file (log.ts reopenLogFile), so it writes a new
 * `<file>`. The simulated speaker opens speaker.jsonl for every line, so a
 * rename is all it needs.
 */
function rotateInPlace(file: string): void {
  const old = `${file}.1`;
  rmSync(old, { force: true });
  renameSync(file, old);
  reopenLogFile();
}
