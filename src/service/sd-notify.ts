/**
 * systemd service notifications (sd_notify(3)): READY=1, WATCHDOG=1,
 * STOPPING=1 and STATUS= for `Type=notify` + `WatchdogSec=` in
 * systemd/homeagent.service.
 *
 * Node.js has no AF_UNIX datagram sockets, so every notification is sent by
 * spawning `systemd-notify(1)`; the unit sets `NotifyAccess=all` so systemd
 * accepts messages from that child. systemd-notify (systemd >= 246) waits until
 * the manager has processed the message (BARRIER=1), so the child's PID is still
 * alive when systemd looks up its cgroup.
 *
 * Rules (after zigbee2mqtt's lib/util/sd-notify.ts):
 * - nothing is spawned when NOTIFY_SOCKET is unset (development, tests, CLI);
 * - nothing here throws: a failed notification is logged and reported as
 *   `false`, because supervision must never take the service down.
 */
import { execFile } from 'node:child_process';
import { createLogger } from '../kernel/log.js';
import { errorMessage } from '../kernel/errors.js';
import type { Logger } from '../kernel/log-types.js';

/** Options for {@link createNotifier}; every field has a production default. */
export interface NotifierOptions {
  /** Environment read for NOTIFY_SOCKET, WATCHDOG_USEC and WATCHDOG_PID. Default: `process.env`, read at each call. */
  env?: NodeJS.ProcessEnv;
  /** The systemd-notify executable. Default: `systemd-notify` on PATH. */
  command?: string;
  /** Where failures are logged. Default: `createLogger('sd-notify')`. */
  log?: Logger;
  /** Kill systemd-notify after this many ms (it may wait for the manager). Default 10 000. */
  timeoutMs?: number;
  /** The PID compared with WATCHDOG_PID. Default: `process.pid`. */
  pid?: number;
}

/** A running watchdog pinger from {@link Notifier.startWatchdog}. */
export interface WatchdogHandle {
  /** Ping period in ms (WATCHDOG_USEC / 2 / 1000). */
  readonly intervalMs: number;
  /** Stop pinging (idempotent). */
  stop(): void;
}

/** The notification API; every method resolves `true` when systemd-notify reported success. */
export interface Notifier {
  /** True when NOTIFY_SOCKET is set, i.e. the process runs under a notify-type unit. */
  enabled(): boolean;
  /** READY=1 (optionally with STATUS=): start-up finished, the unit becomes "active". */
  notifyReady(status?: string): Promise<boolean>;
  /** WATCHDOG=1: the event loop is alive. */
  notifyWatchdog(): Promise<boolean>;
  /** STOPPING=1 (optionally with STATUS=): a graceful stop has begun. */
  notifyStopping(status?: string): Promise<boolean>;
  /** STATUS=text: free-form status shown by `systemctl status homeagent`. */
  notifyStatus(text: string): Promise<boolean>;
  /**
   * Ping WATCHDOG=1 every WATCHDOG_USEC/2. Returns undefined (and does nothing)
   * when NOTIFY_SOCKET or WATCHDOG_USEC is unset or invalid, or WATCHDOG_PID
   * names another process. The timer is unref'd: it never keeps the process alive.
   * A ping is skipped while the previous one is still in flight.
   */
  startWatchdog(): WatchdogHandle | undefined;
}

/**
 * The watchdog ping period for `env`: half of WATCHDOG_USEC (µs) in ms, as
 * sd_watchdog_enabled(3) recommends; undefined when the watchdog is off for
 * this process (unset/invalid WATCHDOG_USEC, or WATCHDOG_PID set to another PID).
 */
export function watchdogIntervalMs(env: NodeJS.ProcessEnv, pid: number = process.pid): number | undefined {
  const raw = env.WATCHDOG_USEC;
  if (raw === undefined || !/^\d+$/.test(raw)) return undefined;
  const usec = Number(raw);
  if (!Number.isSafeInteger(usec) || usec <= 0) return undefined;
  const forPid = env.WATCHDOG_PID;
  if (forPid !== undefined && forPid !== '' && Number(forPid) !== pid) return undefined;
  return Math.max(1, Math.floor(usec / 2000));
}

/** One line, no control characters: a newline would start a new VARIABLE= assignment. */
function statusText(text: string): string {
  return text.replace(/[\u0000-\u001f\u007f]+/g, ' ').trim();
}

/** Build a notifier (tests pass a fake env/command; the service uses the module functions). */
export function createNotifier(options: NotifierOptions = {}): Notifier {
  const env = (): NodeJS.ProcessEnv => options.env ?? process.env;
  const command = options.command ?? 'systemd-notify';
  const timeoutMs = options.timeoutMs ?? 10_000;
  let log: Logger | undefined = options.log;
  const logger = (): Logger => (log ??= createLogger('sd-notify'));

  const enabled = (): boolean => {
    const socket = env().NOTIFY_SOCKET;
    return socket !== undefined && socket !== '';
  };

  const send = (args: string[]): Promise<boolean> => {
    if (!enabled()) return Promise.resolve(false);
    return new Promise<boolean>((resolve) => {
      try {
        execFile(command, args, { env: env(), timeout: timeoutMs, windowsHide: true }, (err, _stdout, stderr) => {
          if (err) {
            logger().warn({ err: errorMessage(err), args, stderr: String(stderr).trim() }, 'systemd-notify failed');
            resolve(false);
          } else {
            resolve(true);
          }
        });
      } catch (err) {
        // execFile throws synchronously only for invalid arguments.
        logger().warn({ err: errorMessage(err), args }, 'systemd-notify could not be spawned');
        resolve(false);
      }
    });
  };

  const withStatus = (base: string[], status: string | undefined): string[] =>
    status === undefined ? base : [...base, `--status=${statusText(status)}`];

  return {
    enabled,
    notifyReady: (status) => send(withStatus(['--ready'], status)),
    notifyWatchdog: () => send(['WATCHDOG=1']),
    // `--stopping` only exists since systemd 253; the variable form works everywhere.
    notifyStopping: (status) => send(withStatus(['STOPPING=1'], status)),
    notifyStatus: (text) => send([`--status=${statusText(text)}`]),
    startWatchdog() {
      if (!enabled()) return undefined;
      const intervalMs = watchdogIntervalMs(env(), options.pid ?? process.pid);
      if (intervalMs === undefined) return undefined;
      let inFlight = false;
      let stopped = false;
      const timer = setInterval(() => {
        if (inFlight || stopped) return;
        inFlight = true;
        void send(['WATCHDOG=1']).finally(() => {
          inFlight = false;
        });
      }, intervalMs);
      timer.unref();
      return {
        intervalMs,
        stop() {
          stopped = true;
          clearInterval(timer);
        },
      };
    },
  };
}

let defaultNotifier: Notifier | undefined;
const notifier = (): Notifier => (defaultNotifier ??= createNotifier());

/** READY=1 (+ STATUS=) via systemd-notify; no-op resolving false when NOTIFY_SOCKET is unset. Never rejects. */
export function notifyReady(status?: string): Promise<boolean> {
  return notifier().notifyReady(status);
}

/** WATCHDOG=1 via systemd-notify; no-op resolving false when NOTIFY_SOCKET is unset. Never rejects. */
export function notifyWatchdog(): Promise<boolean> {
  return notifier().notifyWatchdog();
}

/** STOPPING=1 (+ STATUS=) via systemd-notify; no-op resolving false when NOTIFY_SOCKET is unset. Never rejects. */
export function notifyStopping(status?: string): Promise<boolean> {
  return notifier().notifyStopping(status);
}

/** STATUS=text via systemd-notify (shown by `systemctl status`); no-op when NOTIFY_SOCKET is unset. Never rejects. */
export function notifyStatus(text: string): Promise<boolean> {
  return notifier().notifyStatus(text);
}

/**
 * Ping WATCHDOG=1 every WATCHDOG_USEC/2 (systemd sets WATCHDOG_USEC from
 * WatchdogSec=30 -> every 15 s). Returns undefined when the watchdog is off.
 * Call `stop()` on shutdown. Never throws.
 */
export function startWatchdog(): WatchdogHandle | undefined {
  return notifier().startWatchdog();
}
