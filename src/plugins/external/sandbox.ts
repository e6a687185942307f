/**
 * The process-plugin sandbox (issue 17 "A real boundary"): bubblewrap
 * (`bwrap`, Debian package `bubblewrap`).
 *
 * Why bubblewrap and not a per-plugin systemd unit with DynamicUser=: the
 * service runs as an unprivileged user with NoNewPrivileges= and an empty
 * capability set, so it cannot ask systemd to start units (that needs polkit
 * rules or root), and a transient unit would live outside the service's
 * cgroup: it would not die with the service, and its stdin/stdout would have
 * to cross a socket instead of a pipe. bwrap runs as a plain child (an
 * unprivileged user namespace), keeps the pipes, dies with its parent
 * (--die-with-parent), and builds a file system view from nothing: only what
 * is bound in exists. The cost is opening the unit's RestrictNamespaces= to
 * the four namespaces bwrap uses (user mnt pid net) and allowing mount,
 * umount2 and pivot_root in its SystemCallFilter= (systemd/homeagent.service;
 * `systemd-analyze security` stays at 2.5).
 *
 * What a sandboxed plugin sees:
 * - /usr (and the /bin, /lib, /lib64, /sbin links to it) and a few files of
 *   /etc (ld.so.cache, alternatives, localtime; with `network` also
 *   resolv.conf, hosts, nsswitch.conf, ssl) read-only, so python3 and node run;
 * - the Node.js runtime's own folder read-only when it lives outside /usr;
 * - its own folder read-only at /plugin (the working directory);
 * - its private state folder read-write at /state ($HOME);
 * - /tmp as an empty tmpfs; /dev with null, zero, full, random, urandom, tty
 *   (and a private, empty /dev/pts and /dev/shm);
 *   /proc of its own PID namespace when the kernel allows mounting it;
 * - no data directory (settings.db, memory.db), no other plugin, no device,
 *   no /run (no CLI socket, no D-Bus), and no network unless the manifest's
 *   `network` capability is granted (--unshare-net: only a loopback).
 * It runs with no capabilities, a clean environment and its own PID
 * namespace (it cannot see or signal the service's processes).
 *
 * HOMEAGENT_BWRAP names another bwrap executable (tests: a missing one).
 *
 * Where bwrap is missing or cannot create namespaces (a laptop without it, a
 * container), `probeSandbox` says why and process plugins run unsandboxed:
 * their capabilities are then advisory (checked at the RPC boundary only),
 * and `plugins`, `install` and `doctor` say so.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, lstatSync, readlinkSync, realpathSync } from 'node:fs';
import path from 'node:path';

/** Sandbox mode (setting core.plugins.sandbox): auto = use bwrap when it works; off = never; required = refuse to run a process plugin without it. */
export type SandboxMode = 'auto' | 'off' | 'required';

/** What the probe found. */
export interface SandboxStatus {
  mechanism: 'bubblewrap';
  /** bwrap exists and ran `true` inside a sandbox like a plugin's. */
  available: boolean;
  /** The bwrap executable used, when found. */
  bwrap?: string;
  /** Whether a fresh /proc can be mounted in the sandbox (not under some hardened parents). */
  proc: boolean;
  /** Why it is not available (missing, the probe's error output). */
  reason?: string;
}

/** Where the plugin's folders appear inside the sandbox. */
export const SANDBOX_PLUGIN_DIR = '/plugin';
export const SANDBOX_STATE_DIR = '/state';

let cached: SandboxStatus | undefined;

/** Find an executable on PATH (plus /usr/bin, /bin). */
function which(name: string): string | undefined {
  const dirs = [...(process.env.PATH ?? '').split(':'), '/usr/bin', '/bin'].filter(Boolean);
  for (const d of dirs) {
    const f = path.join(d, name);
    if (existsSync(f)) return f;
  }
  return undefined;
}

/** The read-only system part of the sandbox: /usr, the merged-/usr links, what interpreters need from /etc. */
function systemArgs(network: boolean): string[] {
  const a: string[] = ['--ro-bind', '/usr', '/usr'];
  for (const top of ['/bin', '/sbin', '/lib', '/lib64', '/lib32', '/libx32']) {
    let st;
    try {
      st = lstatSync(top);
    } catch {
      continue;
    }
    if (st.isSymbolicLink()) a.push('--symlink', readlinkSync(top), top);
    else if (st.isDirectory()) a.push('--ro-bind', top, top);
  }
  const etc = ['/etc/ld.so.cache', '/etc/ld.so.conf', '/etc/ld.so.conf.d', '/etc/alternatives', '/etc/localtime', '/etc/mime.types'];
  if (network) etc.push('/etc/resolv.conf', '/etc/hosts', '/etc/nsswitch.conf', '/etc/ssl', '/etc/ca-certificates', '/etc/gai.conf');
  for (const f of etc) a.push('--ro-bind-try', f, f);
  // The Node.js runtime of the service, when it is not under /usr (/opt/homeagent/bin/node -> a tarball's folder).
  try {
    const node = realpathSync(process.execPath);
    if (!node.startsWith('/usr/')) {
      const root = path.dirname(path.dirname(node)); // <prefix>/bin/node -> <prefix>
      a.push('--ro-bind', root, root);
      if (process.execPath !== node) a.push('--ro-bind', process.execPath, process.execPath);
    }
  } catch {
    /* no runtime path: node plugins will fail visibly */
  }
  return a;
}

/** Namespaces and process options shared by the probe and real runs. */
function isolationArgs(network: boolean, proc: boolean): string[] {
  return [
    '--unshare-user-try',
    '--unshare-pid',
    ...(network ? [] : ['--unshare-net']),
    '--die-with-parent',
    '--cap-drop',
    'ALL',
    '--dev',
    '/dev',
    ...(proc ? ['--proc', '/proc'] : []),
    '--tmpfs',
    '/tmp',
  ];
}

/**
 * Probe bubblewrap by running `true` inside a sandbox like a plugin's (once;
 * cached; `fresh` probes again). Never throws.
 */
export function probeSandbox(fresh = false): SandboxStatus {
  if (cached && !fresh) return cached;
  const bwrap = process.env.HOMEAGENT_BWRAP ?? which('bwrap');
  if (!bwrap) {
    cached = { mechanism: 'bubblewrap', available: false, proc: false, reason: 'bwrap is not installed (Debian package bubblewrap)' };
    return cached;
  }
  const tryRun = (proc: boolean): { ok: boolean; err: string } => {
    const r = spawnSync(bwrap, [...systemArgs(false), ...isolationArgs(false, proc), '--', 'true'], { encoding: 'utf8', timeout: 10_000 });
    return { ok: r.status === 0, err: (r.stderr || r.error?.message || `exit ${r.status ?? r.signal}`).trim() };
  };
  const withProc = tryRun(true);
  if (withProc.ok) cached = { mechanism: 'bubblewrap', available: true, bwrap, proc: true };
  else {
    const noProc = tryRun(false);
    cached = noProc.ok ? { mechanism: 'bubblewrap', available: true, bwrap, proc: false } : { mechanism: 'bubblewrap', available: false, bwrap, proc: false, reason: `bwrap cannot create a sandbox here: ${noProc.err}` };
  }
  return cached;
}

/**
 * The sandbox's state for `plugins` and `doctor`: whether process plugins are
 * confined, and a sentence saying so plainly. `mode` is core.plugins.sandbox.
 */
export function sandboxStatus(mode: SandboxMode = 'auto'): SandboxStatus & { mode: SandboxMode; confined: boolean; summary: string } {
  if (mode === 'off') {
    return { mechanism: 'bubblewrap', available: false, proc: false, mode, confined: false, reason: 'core.plugins.sandbox is off', summary: 'process plugins are NOT sandboxed (core.plugins.sandbox=off): their capabilities are advisory, a plugin can read what the service can read' };
  }
  const s = probeSandbox();
  if (s.available) return { ...s, mode, confined: true, summary: `process plugins run in a bubblewrap sandbox (${s.bwrap}): own folder read-only, private state folder, no data dir, no devices, network only with the network capability` };
  if (mode === 'required') return { ...s, mode, confined: false, summary: `process plugins are refused: the sandbox is required (core.plugins.sandbox=required) but ${s.reason}` };
  return { ...s, mode, confined: false, summary: `process plugins are NOT sandboxed: ${s.reason}; their capabilities are advisory (checked at the RPC boundary only), a plugin can read what the service can read` };
}

/** What a sandboxed command needs. */
export interface SandboxSpec {
  /** The plugin's folder (bound read-only at /plugin). */
  dir: string;
  /** Its private state folder (bound read-write at /state). */
  stateDir: string;
  /** The `network` capability is granted. */
  network: boolean;
  /** The command as it runs inside (paths inside the sandbox). */
  argv: string[];
  /** Environment inside (nothing else is passed). */
  env: Record<string, string>;
}

/** The bwrap argv for `spec` (bwrap itself first). Call only when `probeSandbox().available`. */
export function sandboxArgv(spec: SandboxSpec): string[] {
  const s = probeSandbox();
  if (!s.available || !s.bwrap) throw new Error(`sandbox not available: ${s.reason}`);
  const a = [s.bwrap, ...systemArgs(spec.network), ...isolationArgs(spec.network, s.proc)];
  a.push('--ro-bind', spec.dir, SANDBOX_PLUGIN_DIR, '--bind', spec.stateDir, SANDBOX_STATE_DIR, '--chdir', SANDBOX_PLUGIN_DIR, '--clearenv');
  for (const [k, v] of Object.entries(spec.env)) a.push('--setenv', k, v);
  a.push('--', ...spec.argv);
  return a;
}
