/**
 * Forgetting for real, outside the memory store (issue 18): when the memory
 * forgets (MemorySystem.forget, src/memory/memory-system.ts), the same goes
 * from the run log (its events replaced by tombstones, src/kernel/run-log.ts),
 * from the history the prompt shows (PromptHistory.forget) and from the
 * pre-update copies of the stores under `<dataDir>/backups` (scrubbed, or
 * removed when they cannot be) and from the line-based files of the data
 * directory (the simulated speaker's speaker.jsonl and its WAVs, logs). All of it happens before the memory's
 * forget returns, so the tool acknowledges only what is gone. The turn that
 * asked to forget is tombstoned in the run log when it ends (or, when the
 * process stopped before it ended, when the service starts again).
 */
import { closeSync, existsSync, fsyncSync, ftruncateSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeSync } from 'node:fs';
import path from 'node:path';
import type { Kernel } from '../kernel/kernel.js';
import type { Logger } from '../kernel/log-types.js';
import { errorMessage } from '../kernel/errors.js';
import { promptHistoryOf } from '../kernel/prompt.js';
import { mentionsAny, scrubSqliteFile } from '../memory/forget.js';
import { turnOfEvent, type ForgetResult, type MemorySystem } from '../memory/memory-system.js';

/** Every file under `dir` (recursively); none when it does not exist. */
function filesUnder(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const n of names) {
    const p = path.join(dir, n);
    const st = statSync(p, { throwIfNoEntry: false });
    if (st?.isDirectory()) out.push(...filesUnder(p));
    else if (st?.isFile()) out.push(p);
  }
  return out;
}

/** Whether the file's bytes hold one of `words` (ASCII case-insensitive; other text as UTF-8). */
export function fileHolds(file: string, words: readonly string[]): boolean {
  const buf = readFileSync(file);
  const latin = buf.toString('latin1').toLowerCase();
  const utf8 = buf.toString('utf8').toLowerCase();
  return words.some((w) => (/^[\x00-\x7f]*$/.test(w) ? latin.includes(w.toLowerCase()) : utf8.includes(w.toLowerCase())));
}

/**
 * Scrub the pre-update copies under `<dataDir>/backups` of `words`: a SQLite
 * copy holding one has the rows holding it deleted and is vacuumed
 * (scrubSqliteFile); a copy still holding one afterwards (or another kind of
 * file) is removed. Returns the copies scrubbed and removed.
 */
export function scrubBackups(dataDir: string, words: readonly string[], log?: Logger): { scrubbed: number; removed: number } {
  let scrubbed = 0;
  let removed = 0;
  if (words.length === 0) return { scrubbed, removed };
  // A database before its -wal: opening it takes its WAL in (and removes it), so a WAL is never scrubbed (or removed) alone.
  for (const f of filesUnder(path.join(dataDir, 'backups')).sort()) {
    if (!existsSync(f) || !fileHolds(f, words)) continue;
    const base = f.replace(/-(?:wal|shm|journal)$/, '');
    const target = base !== f && existsSync(base) ? base : f;
    try {
      if (readFileSync(target).subarray(0, 16).toString('latin1') === 'SQLite format 3\0') {
        scrubSqliteFile(target, words);
        scrubbed++;
      }
    } catch (err) {
      log?.warn({ file: target, err: errorMessage(err) }, 'a pre-update copy could not be scrubbed');
    }
    for (const g of new Set([target, f, `${target}-wal`, `${target}-journal`])) {
      if (existsSync(g) && fileHolds(g, words)) {
        rmSync(g, { force: true });
        removed++;
        log?.warn({ file: g }, 'a pre-update copy held something forgotten and could not be cleaned; it was removed');
      }
    }
  }
  return { scrubbed, removed };
}

/** Line-based files of the data directory that may hold what was said: the simulated speaker's speaker.jsonl, logs, text. */
const TEXT_FILE = /\.(?:jsonl|log|txt)$/i;

/**
 * Scrub the line-based files under `dataDir` (not the backups, which
 * {@link scrubBackups} handles): a line holding one of `words` (whole words)
 * is replaced by a tombstone — `{"forgotten_at": "<ISO time>"}` in a JSONL
 * file, `[forgotten <ISO time>]` in another — and a file inside the data
 * directory that a JSONL line names in its `file` field (the simulated
 * speaker's WAV of that reply) is removed. The file is rewritten in place
 * (a logger appending to it keeps its descriptor) and synced. Returns the
 * lines replaced.
 */
export function scrubTextFiles(dataDir: string, words: readonly string[], at: number): number {
  if (words.length === 0) return 0;
  const root = path.resolve(dataDir);
  const stamp = new Date(at).toISOString();
  let replaced = 0;
  for (const f of filesUnder(root)) {
    if (!TEXT_FILE.test(f) || path.relative(root, f).split(path.sep)[0] === 'backups' || !fileHolds(f, words)) continue;
    const jsonl = f.toLowerCase().endsWith('.jsonl');
    const lines = readFileSync(f, 'utf8').split('\n');
    let changed = 0;
    const out = lines.map((line) => {
      if (!mentionsAny(line, words)) return line;
      changed++;
      if (!jsonl) return `[forgotten ${stamp}]`;
      try {
        const rec = JSON.parse(line) as { file?: unknown };
        if (typeof rec.file === 'string') {
          const named = path.resolve(path.dirname(f), rec.file);
          if (!path.relative(root, named).startsWith('..')) rmSync(named, { force: true });
        }
      } catch {
        /* not JSON: the line is replaced all the same */
      }
      return JSON.stringify({ forgotten_at: stamp });
    });
    if (changed === 0) continue;
    const fd = openSync(f, 'r+');
    try {
      const text = Buffer.from(out.join('\n'), 'utf8');
      // In place: zero the old bytes first, so a shorter text leaves none of the old behind before the truncate.
      writeSync(fd, Buffer.alloc(statSync(f).size), 0, statSync(f).size, 0);
      writeSync(fd, text, 0, text.length, 0);
      ftruncateSync(fd, text.length);
      fsyncSync(fd);
    } finally {
      closeSync(fd);
    }
    replaced += changed;
  }
  return replaced;
}

/**
 * Wire forgetting into the service: the memory's forget also tombstones the
 * run log, drops the events from the prompt history and scrubs the copies;
 * a turn that asked to forget is tombstoned in the run log when it ends.
 */
export function wireForgetting(kernel: Kernel, memory: MemorySystem, dataDir: string, log: Logger): void {
  memory.addForgetListener((r: ForgetResult) => {
    const turns = new Set(r.turns);
    const ids = new Set(r.eventIds);
    promptHistoryOf(memory).forget((e) => ids.has(e.id) || turns.has(turnOfEvent(e.id)), r.rareWords);
    kernel.services.runLog.forget(r.turns, r.rareWords, r.at);
    scrubBackups(dataDir, r.rareWords, log);
    scrubTextFiles(dataDir, r.rareWords, r.at);
  });
  // Asking turns a previous process did not see end: their last events are tombstoned now.
  for (const turn of memory.unfinishedForgetting()) {
    try {
      kernel.services.runLog.forget([turn], [], kernel.services.clock.now());
      memory.doneForgetting(turn);
    } catch (err) {
      log.error({ err: errorMessage(err) }, 'the run log could not forget a turn that asked to forget');
    }
  }
  kernel.services.turnEvents.subscribe('forgetting', (ev) => {
    if (ev.type !== 'turn.finished' || !memory.isForgetting(ev.turn)) return;
    try {
      kernel.services.runLog.forget([ev.turn], [], kernel.services.clock.now());
    } catch (err) {
      log.error({ err: errorMessage(err) }, 'the run log could not forget the turn that asked to forget');
    }
    memory.doneForgetting(ev.turn);
  });
}
