/** The run log contract (test/kernel/contracts/run-log.ts) against MemoryRunLog and SqliteRunLog (a file and `:memory:`). */
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { MemoryRunLog, SqliteRunLog } from '../../src/kernel/run-log.js';
import { runLogContract } from './contracts/run-log.js';

runLogContract('MemoryRunLog', () => ({ log: new MemoryRunLog(), cleanup: () => {} }));

runLogContract('SqliteRunLog (file)', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ha-runlog-contract-'));
  const file = path.join(dir, 'runlog.db');
  return { log: new SqliteRunLog(file), reopen: () => new SqliteRunLog(file), cleanup: () => rmSync(dir, { recursive: true, force: true }) };
});

runLogContract('SqliteRunLog (:memory:)', () => ({ log: new SqliteRunLog(':memory:'), cleanup: () => {} }));
