/**
 * Forgetting for real, outside the memory store (issue 18): when the memory
 * forgets (MemorySystem.forget, src/memory/memory-system.ts), the same goes
 * from the run log (its events replaced by tombstones, src/kernel/run-log.ts),
 * from the history the prompt shows (PromptHistory.forget) and from the
 * pre-update copies of the stores under `<dataDir>/backups` (scrubbed, or
 * removed when they cannot be). All of it happens before the memory's
 * forget returns, so the tool acknowledges only what is gone. The turn that
 * asked to forget is tombstoned in the run log when it ends.
 */
import { readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import path from 'node:path';
import type { Kernel } from '../kernel/kernel.js';
import type { Logger } from '../kernel/log-types.js';
import { errorMessage } from '../kernel/errors.js';
import { promptHistoryOf } from '../kernel/prompt.js';
import { scrubSqliteFile } from '../memory/forget.js';
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
  for (const f of filesUnder(path.join(dataDir, 'backups'))) {
    if (!fileHolds(f, words)) continue;
    try {
      if (readFileSync(f).subarray(0, 16).toString('latin1') === 'SQLite format 3\0') {
        scrubSqliteFile(f, words);
        scrubbed++;
        for (const side of [`${f}-wal`, `${f}-shm`, `${f}-journal`]) rmSync(side, { force: true });
      }
    } catch (err) {
      log?.warn({ file: f, err: errorMessage(err) }, 'a pre-update copy could not be scrubbed');
    }
    if (fileHolds(f, words)) {
      rmSync(f, { force: true });
      removed++;
      log?.warn({ file: f }, 'a pre-update copy held something forgotten and could not be cleaned; it was removed');
    }
  }
  return { scrubbed, removed };
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
  });
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
