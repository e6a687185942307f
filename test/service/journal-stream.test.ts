/**
 * Journal priorities: pino lines written through journalDestination carry
 * the `<N>` prefix journald turns into PRIORITY= (SyslogLevelPrefix=yes), and
 * the prefix is only used when JOURNAL_STREAM names our stderr.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { closeSync, fstatSync, mkdtempSync, openSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pino } from 'pino';
import { isJournalStream, journalDestination, prefixLine, syslogPriority } from '../../src/service/journal-stream.js';

const dir = mkdtempSync(join(tmpdir(), 'ha-journal-'));
after(() => rmSync(dir, { recursive: true, force: true }));

test('pino levels map to syslog priorities', () => {
  assert.deepEqual([10, 20, 30, 40, 50, 60].map(syslogPriority), [7, 7, 6, 4, 3, 2]);
  assert.equal(prefixLine('{"level":40,"msg":"broker down"}'), '<4>{"level":40,"msg":"broker down"}');
  assert.equal(prefixLine('{"level":"error","msg":"x"}'), '<3>{"level":"error","msg":"x"}');
  assert.equal(prefixLine('not json'), '<6>not json');
});

test('a real pino logger writes prefixed lines through journalDestination', () => {
  const file = join(dir, 'stderr.log');
  const fd = openSync(file, 'w');
  try {
    const log = pino({ level: 'debug', base: undefined }, journalDestination(fd));
    log.debug('probing audio');
    log.info({ ns: 'homeagent:kernel' }, 'ready');
    log.warn('LLM unreachable');
    log.error({ err: 'ECONNREFUSED' }, 'broker\nlost');
    log.fatal('database corrupt');
  } finally {
    closeSync(fd);
  }
  const lines = readFileSync(file, 'utf8').split('\n').filter((l) => l !== '');
  assert.deepEqual(lines.map((l) => l.slice(0, 3)), ['<7>', '<6>', '<4>', '<3>', '<2>']);
  // The JSON after the prefix is intact, one line per record even with a newline in the message.
  const records = lines.map((l) => JSON.parse(l.slice(3)) as { msg: string });
  assert.equal(records[3]?.msg, 'broker\nlost');
});

test('isJournalStream checks JOURNAL_STREAM against the descriptor', () => {
  const fd = openSync(join(dir, 'probe'), 'w');
  try {
    const st = fstatSync(fd, { bigint: true });
    assert.equal(isJournalStream(fd, { JOURNAL_STREAM: `${st.dev}:${st.ino}` }), true);
    assert.equal(isJournalStream(fd, { JOURNAL_STREAM: `${st.dev}:${st.ino + 1n}` }), false);
    assert.equal(isJournalStream(fd, {}), false);
  } finally {
    closeSync(fd);
  }
  assert.equal(isJournalStream(987654, { JOURNAL_STREAM: '1:2' }), false, 'a closed descriptor is not the journal');
});
