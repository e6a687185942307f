/**
 * Logging: one pino root logger, namespaced children per module
 * (`homeagent:kernel`, `homeagent:mqtt`), level from HOMEAGENT_LOG_LEVEL.
 * Logs go to stderr so stdout stays free for the text console.
 */
import { pino } from 'pino';
import type { Logger } from './types.js';

let root: pino.Logger | undefined;

function rootLogger(): pino.Logger {
  if (!root) {
    const level = process.env.HOMEAGENT_LOG_LEVEL ?? (process.env.NODE_ENV === 'test' ? 'silent' : 'info');
    root = pino({ level, base: undefined }, pino.destination({ fd: 2, sync: true }));
  }
  return root;
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
