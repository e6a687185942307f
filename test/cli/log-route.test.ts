/**
 * With the console attached the logs go to `<data dir>/homeagent.log` (or the
 * journal), never to the terminal, and still feed `status` and `homeagent
 * logs` (the warnings and errors); a big old log file is moved aside once.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, fstatSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { CONSOLE_LOG_ROTATE_BYTES, routeLogsForConsole } from '../../src/plugins/console/log-route.js';
import { createLogger, logTo, onLogProblem, recentProblems, setLogLevel } from '../../src/kernel/log.js';

test('console logs go to a file in the data directory and still reach status and homeagent logs', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'homeagent-logroute-'));
  const level = process.env.HOMEAGENT_LOG_LEVEL;
  process.env.HOMEAGENT_LOG_LEVEL = 'info'; // the runner's NODE_ENV=test would silence them
  const seen: string[] = [];
  const off = onLogProblem((p) => seen.push(p.msg));
  try {
    writeFileSync(path.join(dir, 'homeagent.log'), 'x'.repeat(CONSOLE_LOG_ROTATE_BYTES + 1));
    const file = routeLogsForConsole(dir, {});
    assert.equal(file, path.join(dir, 'homeagent.log'));
    assert.ok(existsSync(`${file}.1`), 'the big old log moved aside');
    const log = createLogger('test');
    log.info('an info line');
    log.error({ err: 'boom' }, 'an error line');
    const text = readFileSync(file!, 'utf8');
    assert.match(text, /"msg":"an info line"/);
    assert.match(text, /"msg":"an error line"/);
    assert.deepEqual(seen, ['an error line'], 'homeagent logs gets the error');
    assert.equal(recentProblems().at(-1)?.msg, 'an error line', 'status remembers it');
    // The journal destination keeps the same hooks.
    const lines: string[] = [];
    logTo({ write: (s: string) => void lines.push(s) });
    createLogger('test').warn('to the journal');
    assert.match(lines.join(''), /to the journal/);
    assert.equal(seen.at(-1), 'to the journal');
    const st = fstatSync(2, { bigint: true });
    assert.equal(routeLogsForConsole(dir, { JOURNAL_STREAM: `${st.dev}:${st.ino}` }), undefined, 'stderr is the journal (systemd): the service logs there');
  } finally {
    off();
    if (level === undefined) delete process.env.HOMEAGENT_LOG_LEVEL;
    else process.env.HOMEAGENT_LOG_LEVEL = level;
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a quieter log level (the test runner\'s silent, HOMEAGENT_LOG_LEVEL=error) writes less but status and homeagent logs still get every warning', () => {
  const level = process.env.HOMEAGENT_LOG_LEVEL;
  const seen: string[] = [];
  const off = onLogProblem((p) => seen.push(`${p.level}:${p.msg}`));
  try {
    for (const quiet of ['silent', 'error']) {
      process.env.HOMEAGENT_LOG_LEVEL = quiet;
      const lines: string[] = [];
      logTo({ write: (s: string) => void lines.push(s) });
      const log = createLogger('test');
      log.info(`${quiet}: info`);
      log.warn(`${quiet}: warn`);
      log.error(`${quiet}: error`);
      assert.deepEqual(lines.map((l) => JSON.parse(l).msg), quiet === 'silent' ? [] : [`${quiet}: error`], `written at ${quiet}`);
      assert.deepEqual(seen.splice(0), [`warn:${quiet}: warn`, `error:${quiet}: error`], `remembered at ${quiet}`);
      assert.equal(recentProblems().at(-1)?.msg, `${quiet}: error`);
    }
    process.env.HOMEAGENT_LOG_LEVEL = 'info';
    const lines: string[] = [];
    logTo({ write: (s: string) => void lines.push(s) });
    createLogger('test').info('written');
    assert.equal(lines.length, 1);
    lines.length = 0;
    setLogLevel('error');
    createLogger('test').warn('not written');
    assert.deepEqual(lines, [], 'setLogLevel quiets the output');
    assert.deepEqual(seen.splice(0), ['warn:not written'], 'and still remembers');
    assert.throws(() => setLogLevel('loud'), /unknown log level "loud"/);
  } finally {
    off();
    if (level === undefined) delete process.env.HOMEAGENT_LOG_LEVEL;
    else process.env.HOMEAGENT_LOG_LEVEL = level;
    logTo({ write: () => undefined });
  }
});
