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

/**
 * The level lines are written at (pino's numeric levels: 30 info, 40 warn,
 * 50 error, Infinity silent). Pino itself runs at no higher than warn, so
 * warnings and errors always reach `remember` (what `status` and `logs`
 * show) even when the output is quieter, e.g. the test runner's `silent`
 * or HOMEAGENT_LOG_LEVEL=error.
 */
let printLevel = 30;

/** Pino's numeric value of level name `name` (Infinity for silent); throws on an unknown name, as pino would. */
function levelValue(name: string): number {
  if (name === 'silent') return Infinity;
  const v = pino.levels.values[name];
  if (v === undefined) throw new Error(`unknown log level "${name}" (one of ${Object.keys(pino.levels.values).join(', ')}, silent)`);
  return v;
}

/** Set the written level to `name`; returns the level pino must run at so warnings are still remembered. */
function applyLevel(name: string): string {
  printLevel = levelValue(name);
  return printLevel > 40 ? 'warn' : name;
}

function makeRoot(dest: pino.DestinationStream): pino.Logger {
  const level = applyLevel(process.env.HOMEAGENT_LOG_LEVEL ?? (process.env.NODE_ENV === 'test' ? 'silent' : 'info'));
  return pino(
    {
      level,
      base: undefined,
      hooks: {
        logMethod(args, method, lvl) {
          remember.call(this, args as unknown[], lvl);
          if (lvl < printLevel) return;
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
  const logger = rootLogger();
  logger.level = applyLevel(level);
}
