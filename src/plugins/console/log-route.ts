/**
 * Where the logs go while the text console owns the terminal (issue 14: pino
 * JSON lines mixed into the conversation): to the journal when stderr is the
 * journal (systemd, src/service/journal-stream.ts), else to
 * `<dataDir>/homeagent.log`. Call before any module makes its logger
 * (`homeagent run` does, before it loads the service).
 */
import { renameSync, statSync } from 'node:fs';
import path from 'node:path';
import { logToFile } from '../../kernel/log.js';
import { isJournalStream } from '../../service/journal-stream.js';

/** A log file larger than this at start is moved to `<file>.1` (one old generation kept), bytes. */
export const CONSOLE_LOG_ROTATE_BYTES = 10 * 1024 * 1024;

/** The log file of data directory `dataDir` while the console is attached. */
export function consoleLogFile(dataDir: string): string {
  return path.join(dataDir, 'homeagent.log');
}

/**
 * Route the logs away from the console: returns the log file's path, or
 * undefined when stderr is the journal (the service logs there itself).
 */
export function routeLogsForConsole(dataDir: string, env: NodeJS.ProcessEnv = process.env): string | undefined {
  if (isJournalStream(2, env)) return undefined;
  const file = consoleLogFile(dataDir);
  try {
    if (statSync(file).size > CONSOLE_LOG_ROTATE_BYTES) renameSync(file, `${file}.1`);
  } catch {
    /* no file yet */
  }
  logToFile(file);
  return file;
}
