/**
 * Logging: one pino root logger, namespaced children per module
 * (`homeagent:kernel`, `homeagent:mqtt`), level from HOMEAGENT_LOG_LEVEL.
 * Logs go to stderr so stdout stays free for the text console.
 */
import { pino } from 'pino';
import type { Logger } from './log-types.js';

let root: pino.Logger | undefined;

/** One remembered warning or error (for `homeagent status`). */
export interface RecentProblem {
  time: string;
  level: 'warn' | 'error' | 'fatal';
  ns: string;
  msg: string;
  err?: string;
}
const recent: RecentProblem[] = [];
const RECENT_MAX = 20;

const problemListeners = new Set<(p: RecentProblem) => void>();

/** Call `cb` with every warning and error logged from now on (`homeagent logs`); returns the unsubscribe function. */
export function onLogProblem(cb: (p: RecentProblem) => void): () => void {
  problemListeners.add(cb);
  return () => void problemListeners.delete(cb);
}

/** The last warnings and errors logged, newest last. */
export function recentProblems(): RecentProblem[] {
  return [...recent];
}

function remember(this: pino.Logger, args: unknown[], level: number): void {
  if (level < 40) return;
  let msg = '';
  let err: string | undefined;
  for (const a of args) {
    if (typeof a === 'string' && !msg) msg = a;
    else if (a && typeof a === 'object' && 'err' in a) err = String((a as { err: unknown }).err);
  }
  const ns = String((this.bindings() as { ns?: string }).ns ?? '');
  const problem: RecentProblem = { time: new Date().toISOString(), level: level >= 60 ? 'fatal' : level >= 50 ? 'error' : 'warn', ns, msg, ...(err ? { err } : {}) };
  recent.push(problem);
  if (recent.length > RECENT_MAX) recent.shift();
  for (const l of problemListeners) {
    try {
      l(problem);
    } catch {
      /* a listener's failure is its own */
    }
  }
}

function makeRoot(dest: pino.DestinationStream): pino.Logger {
  const level = process.env.HOMEAGENT_LOG_LEVEL ?? (process.env.NODE_ENV === 'test' ? 'silent' : 'info');
  return pino(
    {
      level,
      base: undefined,
      hooks: {
        logMethod(args, method, lvl) {
          remember.call(this, args as unknown[], lvl);
          return method.apply(this, args);
        },
      },
    },
    dest,
  );
}

function rootLogger(): pino.Logger {
  root ??= makeRoot(pino.destination({ fd: 2, sync: true }));
  return root;
}

/**
 * Send every log line to `file` (appended, synchronous writes, parent
 * directory created) instead of stderr, keeping the level and what `status`
 * remembers: used when the text console owns the terminal. Loggers made
 * before the call keep writing where they did, so call it first.
 */
export function logToFile(file: string): void {
  fileDest = pino.destination({ dest: file, sync: true, mkdir: true, append: true });
  logTo(fileDest);
}

let fileDest: ReturnType<typeof pino.destination> | undefined;

/**
 * Reopen the file `logToFile` writes (after the disk keeper moved it to
 * `<file>.1`): later lines go to a new file of the same name. No-op when the
 * logs do not go to a file.
 */
export function reopenLogFile(): void {
  fileDest?.reopen();
}

/**
 * Send every log line to `dest` (e.g. the journal, src/service/journal-stream.ts),
 * keeping the level and what `status` and `homeagent logs` see of warnings and
 * errors (unlike setRootLogger with a bare pino logger).
 */
export function logTo(dest: pino.DestinationStream): void {
  root = makeRoot(dest);
}

/** A logger for module `ns` (e.g. 'kernel', 'plugin:console'). */
export function createLogger(ns: string): Logger {
  return rootLogger().child({ ns: `homeagent:${ns}` }) as unknown as Logger;
}

/** Replace the root logger (tests capture logs; the service may log to the journal). */
export function setRootLogger(logger: pino.Logger): void {
  root = logger;
}

/** Change the level of every logger (e.g. 'warn' when a person uses the console in a terminal). */
export function setLogLevel(level: string): void {
  rootLogger().level = level;
}
