/**
 * Log priorities in the journal. Under systemd, stderr is a stream to
 * journald (StandardError=journal) and journald reads a leading `<N>` on each
 * line as its syslog priority (SyslogLevelPrefix=yes in
 * systemd/homeagent.service), so `journalctl -u homeagent -p warning` works.
 * This module is a pino destination that prefixes each JSON line accordingly,
 * used only when stderr really is the journal ($JOURNAL_STREAM matches fd 2,
 * see systemd.exec(5) "JOURNAL_STREAM"); on a terminal the lines stay plain.
 *
 * Mapping (pino level -> syslog priority, sd-daemon(3) prefixes):
 *   trace 10, debug 20 -> <7> debug    info 30 -> <6> info
 *   warn 40 -> <4> warning             error 50 -> <3> err     fatal 60 -> <2> crit
 */
import { fstatSync, writeSync } from 'node:fs';

const LABELS: Record<string, number> = { trace: 10, debug: 20, info: 30, warn: 40, error: 50, fatal: 60 };

/** Syslog priority (0-7) for a pino level number (10..60). */
export function syslogPriority(pinoLevel: number): number {
  if (pinoLevel >= 60) return 2;
  if (pinoLevel >= 50) return 3;
  if (pinoLevel >= 40) return 4;
  if (pinoLevel >= 30) return 6;
  return 7;
}

/** `<N>` + line, N from the line's pino `"level"` (number or label); unknown levels get <6> (info). */
export function prefixLine(line: string): string {
  const m = /"level":(?:(\d+)|"(\w+)")/.exec(line);
  const level = m ? (m[1] !== undefined ? Number(m[1]) : (LABELS[m[2] ?? ''] ?? 30)) : 30;
  return `<${syslogPriority(level)}>${line}`;
}

/**
 * True when file descriptor `fd` is the journal stream systemd connected
 * ($JOURNAL_STREAM is "<device>:<inode>" of that stream).
 */
export function isJournalStream(fd = 2, env: NodeJS.ProcessEnv = process.env): boolean {
  const value = env.JOURNAL_STREAM;
  if (!value) return false;
  const [dev, ino] = value.split(':');
  try {
    const st = fstatSync(fd, { bigint: true });
    return String(st.dev) === dev && String(st.ino) === ino;
  } catch {
    return false;
  }
}

/** A pino destination (anything with `write(string)`) writing synchronously to `fd`. */
export interface JournalDestination {
  write(chunk: string): boolean;
}

/**
 * Pino destination for the journal: each (newline-terminated) JSON line gets
 * its `<N>` priority prefix and is written synchronously to `fd` (default 2).
 * Use: `setRootLogger(pino({ level }, journalDestination()))` when
 * `isJournalStream()`. Write errors are swallowed: logging must not crash the service.
 */
export function journalDestination(fd = 2): JournalDestination {
  return {
    write(chunk: string): boolean {
      const out = chunk
        .split('\n')
        .filter((l) => l !== '')
        .map((l) => `${prefixLine(l)}\n`)
        .join('');
      try {
        writeSync(fd, out);
      } catch {
        // EAGAIN/EPIPE on a closed journal stream: drop the line rather than crash.
      }
      return true;
    },
  };
}
