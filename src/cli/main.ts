#!/usr/bin/env node
/**
 * `homeagent`: one executable. `homeagent run` is the service (systemd
 * ExecStart); every other subcommand is a client of the running service over
 * its Unix socket (see protocol.ts). `config` and `doctor` also work while
 * the service is down (local.ts: settings.db directly). Output to a closed
 * pipe (`homeagent config list | head`) ends the command quietly.
 */
import { closeSync, constants, existsSync, openSync, readFileSync, readSync, statSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import path from 'node:path';
import { Command } from 'commander';
import { defaultSocketPath, probeService, request, ServiceUnreachableError } from './client.js';
import { otherServicesHint, runningServices, serviceOnDataDir } from './find-service.js';
import { resolveDataDir } from '../service/paths.js';
import { errorMessage, HomeAgentError } from '../kernel/errors.js';
import { INSTALL_ROOT } from '../kernel/kernel.js';
import { askDetails, printResult } from './format.js';
import { MAX_REQUEST_BYTES } from './protocol.js';
import type { KeysResult } from '../service/update.js';
import type { InstallPreview } from '../plugins/external/loader.js';
import { wavToVoicePcm } from '../../hal/mic/file-mic.js';
import { pluginApplying } from '../config/plugin-restart.js';

/** Raw bytes of recordings one `listen` may send (base64 grows them by a third). */
const MAX_LISTEN_BYTES = Math.floor((MAX_REQUEST_BYTES * 3) / 4) - 1024 * 1024;

/** Longest wait for a pipe's writer to send more, ms (`listen` on a named pipe whose writer stalls). */
const PIPE_IDLE_MS = 10_000;

/**
 * The bytes of file `f`, at most `max` of them: a device or a pipe (`/dev/zero`, `/dev/stdin`) is read only
 * that far, never to its end. Opened without blocking, so a named pipe nobody writes to reads as empty at once
 * (a tester's `listen FIFO` hung for ever in open); a pipe whose writer sends nothing for PIPE_IDLE_MS is an
 * error. Throws RangeError when `f` holds more than `max` bytes; the fs errors of open/read (ENOENT, EISDIR,
 * EACCES) otherwise.
 */
function readBounded(f: string, max: number): Buffer {
  const fd = openSync(f, constants.O_RDONLY | constants.O_NONBLOCK);
  const nap = new Int32Array(new SharedArrayBuffer(4));
  try {
    const chunks: Buffer[] = [];
    let got = 0;
    let idle = 0;
    for (;;) {
      const buf = Buffer.alloc(Math.min(1 << 20, Math.max(1, max + 1 - got)));
      let n: number;
      try {
        n = readSync(fd, buf, 0, buf.length, null);
      } catch (err) {
        // A pipe with a writer that has sent nothing yet: wait for it, a little at a time, synchronously (the CLI
        // has nothing else to do).
        if ((err as NodeJS.ErrnoException).code !== 'EAGAIN') throw err;
        if (idle >= PIPE_IDLE_MS) throw new Error(`${f}: its writer sent nothing for ${PIPE_IDLE_MS / 1000} s`);
        Atomics.wait(nap, 0, 0, 20);
        idle += 20;
        continue;
      }
      if (n === 0) break;
      idle = 0;
      chunks.push(buf.subarray(0, n));
      got += n;
      if (got > max) throw new RangeError(`${f} holds more than ${max} bytes`);
    }
    return Buffer.concat(chunks, got);
  } finally {
    closeSync(fd);
  }
}

// A reader that went away (`| head`) ends a client command quietly: what it wanted was printed. The service
// (`run`, whose console writes to stdout) ignores it: losing the console must not stop the box.
let serving = false;
for (const stream of [process.stdout, process.stderr]) {
  stream.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code !== 'EPIPE') throw err;
    if (!serving) process.exit(process.exitCode ?? 0);
  });
}

const program = new Command();
const version = (() => {
  try {
    return (JSON.parse(readFileSync(path.join(INSTALL_ROOT, 'package.json'), 'utf8')) as { version: string }).version;
  } catch {
    return '0.0.0';
  }
})();

program
  .name('homeagent')
  .description('HomeAgent voice box: the service and its maintenance commands')
  .version(version)
  .option('--data-dir <dir>', 'data directory (default: $HOMEAGENT_DATA_DIR, /var/lib/homeagent on the device, ./data-local in development)')
  .option('--socket <path>', 'maintenance socket of the running service')
  .option('--json', 'print raw JSON results')
  .configureHelp({ showGlobalOptions: true });

function socketPath(): string {
  const o = program.opts<{ dataDir?: string; socket?: string }>();
  if (o.socket) return o.socket;
  const dir = resolveDataDir(o.dataDir);
  const sock = defaultSocketPath(dir);
  // A service on this data directory whose socket is elsewhere (started with --socket): its socket.
  return existsSync(sock) ? sock : (serviceOnDataDir(dir)?.socket ?? sock);
}

/** Whether a command's result reports a failure (the exit code then says so too). */
function failed(cmd: string, result: unknown): boolean {
  const r = result as Record<string, unknown> | null;
  if (!r || typeof r !== 'object') return false;
  if (cmd === 'ask') return r.status === 'error';
  if (cmd === 'doctor') return r.ok === false;
  if (cmd === 'listen') return Array.isArray(r.utterances) && (r.utterances as Array<{ status?: string }>).some((u) => u.status === 'error');
  // A prefix no setting has (a typo): the formatter says so, and a script sees it failed.
  if (cmd === 'config.list') return Array.isArray(r) && r.length === 0;
  return false;
}

function json(): boolean {
  return program.opts<{ json?: boolean }>().json === true;
}

/** Whether the data directory or socket was named (an option or the environment), rather than the default taken. */
function placeNamed(): boolean {
  const o = program.opts<{ dataDir?: string; socket?: string }>();
  return o.dataDir !== undefined || o.socket !== undefined || Boolean(process.env.HOMEAGENT_SOCKET) || Boolean(process.env.HOMEAGENT_DATA_DIR);
}

function dataDir(): string {
  return resolveDataDir(program.opts<{ dataDir?: string }>().dataDir);
}

/** Print an error of `cmd` (named as typed: "config set", not the request "config.set") and set the exit code (3: the service is unreachable). */
function fail(cmd: string, err: unknown): void {
  // Nothing answers here, but a service runs with another data directory or socket: say where (not when one was named:
  // a newcomer who gave --data-dir for their stopped box was pointed at another user's).
  const elsewhere = err instanceof ServiceUnreachableError && !placeNamed() ? otherServicesHint(runningServices(err.socketPath)) : undefined;
  process.stderr.write(`homeagent ${cmd.replace(/\./g, ' ')}: ${errorMessage(err)}${elsewhere ? `; ${elsewhere}` : ''}\n`);
  process.exitCode = err instanceof HomeAgentError && err.code === 'SERVICE_UNREACHABLE' ? 3 : 1;
}

/** Run one client command and print its result. */
async function call(cmd: string, args: Record<string, unknown> = {}, onData?: (d: unknown) => void): Promise<void> {
  await callResult(cmd, args, onData);
}

/** Run one client command and print its result (`print`: how; default printResult). Resolves with the result, undefined after an error. */
async function callResult(cmd: string, args: Record<string, unknown> = {}, onData?: (d: unknown) => void, print: (result: unknown) => void = (r) => printResult(cmd, r, json())): Promise<unknown> {
  try {
    const result = await request(socketPath(), cmd, args, onData ?? ((d) => printResult('data', d, json())));
    print(result);
    if (failed(cmd, result)) process.exitCode = 1;
    return result;
  } catch (err) {
    fail(cmd, err);
    return undefined;
  }
}

/**
 * A settings or doctor command: through the service when it runs (its
 * listeners see the change at once), else on settings.db directly.
 */
async function serviceOrLocal(cmd: string, args: Record<string, unknown> = {}): Promise<void> {
  const sock = socketPath();
  const state = await probeService(sock);
  if (state === 'no-access') return fail(cmd, new HomeAgentError('SERVICE_UNREACHABLE', `the service's socket ${sock} exists but this user may not open it; run with sudo or join the homeagent group`));
  if (state === 'running') {
    if (cmd !== 'config.set') return void (await call(cmd, args));
    const result = await callResult(cmd, args, undefined, () => undefined);
    if (result === undefined) return;
    // Say when the running service will not use the new value until it restarts.
    const rows = await request(sock, 'config.list', { prefix: String(args.key) }).catch(() => []);
    const restart = Array.isArray(rows) && (rows as Array<{ key?: string; restart?: boolean }>).some((r) => r.key === args.key && r.restart);
    const r = result as { note?: string; source?: string };
    // An environment variable overrides the stored value: a restart would not apply it either, so only that is said.
    const plugin = pluginApplying(String(args.key));
    const how = `sudo systemctl restart homeagent${plugin ? `, or homeagent plugins restart ${plugin}` : ''}`;
    const note = [r.note, restart && r.source !== 'env' ? `${String(args.key)} is read when the service starts: the running service keeps the old value until a restart (${how})` : undefined].filter(Boolean).join('; ');
    return printResult(cmd, { ...r, ...(note ? { note } : {}) }, json());
  }
  // Not running here, but elsewhere (another --data-dir or --socket) and none was named: changing this data
  // directory's settings.db would not reach it.
  const elsewhere = placeNamed() ? undefined : otherServicesHint(runningServices(sock));
  if (elsewhere && (cmd === 'config.set' || cmd === 'config.delete')) {
    return fail(cmd, new HomeAgentError('SERVICE_UNREACHABLE', `nothing answers on ${sock}, and ${elsewhere} (or --data-dir ${dataDir()} to change this data directory's settings.db while its service is stopped)`));
  }
  // Reading: what this data directory holds, with a note on the service that runs elsewhere.
  if (elsewhere) process.stderr.write(`homeagent ${cmd.replace(/\./g, ' ')}: note: nothing answers on ${sock}, but ${elsewhere}\n`);
  try {
    const { localConfig, localDoctor } = await import('./local.js');
    const result = cmd === 'doctor' ? await localDoctor(dataDir(), sock) : localConfig(dataDir(), cmd, args);
    printResult(cmd, result, json());
    if (failed(cmd, result)) process.exitCode = 1;
  } catch (err) {
    fail(cmd, err);
  }
}

program
  .command('run')
  .description('run the voice box service (foreground; systemd ExecStart)')
  .option('--console', 'attach the text console even when stdin is not a terminal')
  .option('--no-console', 'do not attach the text console')
  .action(async (o: { console?: boolean }) => {
    serving = true;
    const dir = dataDir();
    // With the console attached, logs go to the journal or a file, set before any module makes its logger.
    const { routeLogsForConsole } = await import('../plugins/console/log-route.js');
    const useConsole = o.console ?? !!process.stdin.isTTY;
    const logFile = useConsole ? routeLogsForConsole(dir) : undefined;
    const { runService } = await import('../service/app.js');
    await runService({ dataDir: dir, console: o.console, socketPath: program.opts<{ socket?: string }>().socket, ...(logFile ? { logFile } : {}) });
  });

program.command('status').description('uptime, LLM sources, broker, devices, voice, plugins, settings awaiting a restart, last problems (--json: everything)').action(() => call('status'));
program.command('say <text...>').description('speak TEXT on the speaker').action((t: string[]) => call('say', { text: t.join(' ') }));
program
  .command('ask <text...>')
  .description('ask the agent and print its reply as it streams')
  .option('--as <name>', 'who is asking (a person of the household); without it the box does not know who is speaking')
  .action(async (t: string[], o: { as?: string }) => {
    // The reply arrives sentence by sentence on the `cli` channel; print each as it comes.
    let streamed = false;
    let midLine = false;
    // What the box said meanwhile that is not this reply (the control socket marks it `aside`): printed under the
    // reply as `listen` prints it, never as the reply's first line.
    const asides: string[] = [];
    const onData = (d: unknown) => {
      if (json()) return;
      const m = d as { kind?: string; content?: string; aside?: boolean };
      if (m.aside) {
        if ((m.kind === 'sentence' || m.kind === 'full') && m.content) asides.push(m.content);
        return;
      }
      if (m.kind === 'sentence' && m.content) {
        process.stdout.write((midLine ? ' ' : '') + m.content);
        midLine = streamed = true;
      } else if (m.kind === 'end' || m.kind === 'full') {
        if (m.kind === 'full' && m.content) process.stdout.write((midLine ? '\n' : '') + m.content);
        if (midLine || (m.kind === 'full' && m.content)) process.stdout.write('\n');
        streamed = streamed || (m.kind === 'full' && !!m.content);
        midLine = false;
      }
    };
    await callResult('ask', { text: t.join(' '), ...(o.as !== undefined ? { as: o.as } : {}) }, onData, (result) => {
      if (midLine) process.stdout.write('\n');
      const also = asides.length ? `  also said: ${JSON.stringify(asides.join(' '))}\n` : '';
      if (json() || !streamed) {
        printResult('ask', result, json());
        if (!json()) process.stdout.write(also);
        return;
      }
      const r = result as { status?: string; error?: string };
      for (const line of askDetails(result as Record<string, unknown>)) process.stdout.write(`${line}\n`);
      process.stdout.write(also);
      if (r.status === 'error' && r.error) process.stderr.write(`homeagent ask: ${r.error}\n`);
    });
  });
program.command('stop').description('the stop button: cut the reply, silence the speaker, drop queued inputs').action(() => call('stop'));
program
  .command('listen <files...>')
  .description('feed WAV recordings through the voice pipeline as if spoken; prints transcript, actions, reply and timings')
  .option('--realtime', 'feed the audio at the pace a microphone would (decoding runs while it arrives)')
  .option('--as <name>', 'who is speaking (a person of the household), as `ask --as`')
  .action(async (files: string[], o: { realtime?: boolean; as?: string }) => {
    // Each file is checked here, before anything is sent: a file that cannot be read, is not a WAV, or is a WAV with
    // no samples is an error of this command (said, exit 1), not a recording the pipeline did not understand. The
    // other files of the call still run (one bad file of a batch lost the rest); none usable: nothing is sent.
    const payload: Array<{ name: string; data_b64: string }> = [];
    let total = 0;
    const bad = (message: string): void => {
      process.stderr.write(`homeagent listen: ${message}\n`);
      process.exitCode = 1;
    };
    for (const f of files) {
      let bytes: Buffer;
      try {
        bytes = readBounded(f, MAX_LISTEN_BYTES - total);
      } catch (err) {
        bad(err instanceof RangeError ? `${f}: recordings over ${MAX_LISTEN_BYTES / 1048576} MB in one call are too large (a spoken command is a few hundred KB)` : `cannot read ${f}: ${errorMessage(err)}`);
        continue;
      }
      let samples: number;
      try {
        samples = wavToVoicePcm(bytes).length / 2;
      } catch (err) {
        bad(`${f} is not a usable WAV file: ${errorMessage(err)}`);
        continue;
      }
      if (samples === 0) {
        bad(`${f} has no audio (a WAV header with no samples); nothing was sent`);
        continue;
      }
      total += bytes.length;
      payload.push({ name: path.basename(f), data_b64: bytes.toString('base64') });
    }
    if (payload.length === 0) return;
    if (payload.length < files.length) process.stderr.write(`homeagent listen: sending the other ${payload.length} of ${files.length} files\n`);
    await call('listen', { files: payload, realtime: o.realtime === true, ...(o.as !== undefined ? { user: o.as } : {}) }, (d) => {
      // Progress while several files run, one line per file (one file's result says it all: a newcomer saw the
      // line twice), a file with no transcript too (a newcomer missed the rejected ones).
      const p = d as { file?: string; transcript?: string };
      if (p.file !== undefined && payload.length > 1) process.stderr.write(`listened to ${String(p.file)}: ${p.transcript ? JSON.stringify(p.transcript) : '(nothing understood)'}\n`);
    });
  });
program.command('logs').description('follow live events: inputs, replies, MQTT commands sent, risky actions settled, warnings and errors (Ctrl-C to end)').action(() => call('logs', {}, (d) => printResult('log', d, json())));

const config = program.command('config').description('read and change settings (through the service, or settings.db directly when it is not running)');
config.command('get <key>').description('the value of one setting').action((key: string) => serviceOrLocal('config.get', { key }));
config.command('set <key> <value>').description('validate and store a value; says when it needs a restart').action((key: string, raw: string) => serviceOrLocal('config.set', { key, raw }));
config.command('list [prefix]').description('settings, their values and where they come from').action((prefix?: string) => serviceOrLocal('config.list', { prefix: prefix ?? '' }));
config.command('delete <key>').description('remove a stored value (the default applies again)').action((key: string) => serviceOrLocal('config.delete', { key }));

const memory = program.command('memory').description('inspect the memory');
memory.command('stats').description('how much the memory holds, one count per line, and the most mentioned entities').action(() => call('memory.stats'));
memory.command('recall <query...>').description('what the memory recalls for QUERY, as the agent would (score, kind, when, text)').action((q: string[]) => call('memory.recall', { query: q.join(' ') }));
memory
  .command('export')
  .description('everything stored about a person, as JSON (to stdout, or --out FILE, readable by its owner only)')
  .requiredOption('--person <name>', 'the person (a name the household knows)')
  .option('--out <file>', 'write the JSON to FILE instead of stdout')
  .action(async (o: { person: string; out?: string }) => {
    await callResult('memory.export', { person: o.person }, undefined, (result) => {
      const text = `${JSON.stringify(result, null, 2)}\n`;
      if (o.out === undefined) return void process.stdout.write(text);
      writeFileSync(o.out, text, { mode: 0o600 });
      const r = result as { person?: string; relations?: unknown[]; said?: { context_events?: unknown[]; documents?: unknown[] } };
      const said = (r.said?.context_events?.length ?? 0) + (r.said?.documents?.length ?? 0);
      process.stdout.write(`wrote ${o.out}: ${String(r.person)}, ${r.relations?.length ?? 0} fact(s), ${said} thing(s) said\n`);
    });
  });

const webui = program.command('webui').description('the WebUI: one-time sign-in links, sessions (see README "WebUI")');
webui
  .command('link')
  .description("print a one-time link that signs a browser in, and the certificate's SHA-256 fingerprint")
  .option('--person <name>', 'what is typed on that browser is said by NAME')
  .action((o: { person?: string }) => call('webui.link', o.person !== undefined ? { person: o.person } : {}));
webui.command('sessions').description('browsers and scripts signed in, and links not opened yet').action(() => call('webui.sessions'));
webui.command('revoke <id>').description('end a session or cancel a link (ids from webui sessions)').action((id: string) => call('webui.revoke', { id }));

program.command('timers').description('the timers running or paused, with what is left').action(() => call('timers'));
program.command('lists').description('what is on the shopping and to-do lists (not yet done)').action(() => call('lists'));
program.command('devices').description('devices known from MQTT, with room, state and availability (--json: raw, brightness also in percent)').action(() => call('devices'));
const plugins = program
  .command('plugins')
  .description('plugins (built-in and from outside): kind, version, state, restarts, last error, capabilities; see docs/PLUGINS.md')
  .action(() => call('plugins'));
plugins
  .command('install <source>')
  .description('install a plugin folder or .tgz into <data dir>/plugins/<name>/: lists the capabilities it asks for and asks you to approve them')
  .option('--yes', 'approve what it asks for without asking (scripts); an update that asks for more is still held until "plugins approve NAME"')
  .action(async (source: string, o: { yes?: boolean }) => {
    let archive: string;
    try {
      archive = pluginArchive(path.resolve(source));
    } catch (err) {
      return fail('plugins install', err);
    }
    const preview = (await callResult('plugins.preview', { archive_b64: archive }, undefined, () => undefined)) as InstallPreview | undefined;
    if (!preview) return;
    if (!json()) process.stdout.write(installPreviewText(preview));
    let approve = false;
    if (preview.missing.length > 0) {
      if (o.yes) approve = !preview.update;
      else if (process.stdin.isTTY) approve = await askYesNo(`Approve ${preview.missing.join(', ')} for ${preview.name}? [y/N] `);
      if (!approve && !preview.update) {
        process.stderr.write(`homeagent plugins install: not approved; nothing was installed${process.stdin.isTTY || o.yes ? '' : ' (no terminal to ask on: use --yes)'}\n`);
        process.exitCode = 1;
        return;
      }
    }
    await call('plugins.install', { archive_b64: archive, approve });
  });
plugins.command('approve <name>').description('approve the capabilities NAME asks for (a held install or update then starts)').action((name: string) => call('plugins.approve', { name }));
plugins.command('remove <name>').description('stop NAME and delete its folder and approval').action((name: string) => call('plugins.remove', { name }));
plugins.command('enable <name>').description('turn NAME on again (kept across restarts)').action((name: string) => call('plugins.enable', { name }));
plugins.command('disable <name>').description('turn NAME off: stopped, not restarted (kept across restarts)').action((name: string) => call('plugins.disable', { name }));
plugins.command('restart <name>').description('stop and start NAME now (between turns); its back-off starts over').action((name: string) => call('plugins.restart', { name }));
plugins.command('reload').description('rescan the plugin folders: new, changed and removed plugins are picked up without restarting the service').action(() => call('plugins.reload'));
program.command('doctor').description('check the service, audio, GPIO, listening, espeak-ng and pocketsphinx, broker, LLM sources, disk and databases; say what to fix (works with the service down)').action(() => serviceOrLocal('doctor'));
program
  .command('update <bundle>')
  .description('install a release bundle signed by a trusted key (with automatic rollback)')
  .option('--allow-unsigned', 'DEVELOPMENT ONLY: install a bundle that is unsigned or not signed by a trusted key')
  .action(async (bundle: string, o: { allowUnsigned?: boolean }) => {
    const { runUpdate } = await import('../service/update.js');
    const json = program.opts<{ json?: boolean }>().json === true;
    if (o.allowUnsigned) {
      process.stderr.write(
        '!!! homeagent update --allow-unsigned: the signature check is OFF. A bundle from anyone runs as root on this box.\n' +
          '!!! Development only; never on a box in real use. Keys inside this bundle are not trusted.\n',
      );
    }
    const r = await runUpdate(path.resolve(bundle), { allowUnsigned: o.allowUnsigned === true, onProgress: json ? undefined : (line) => process.stderr.write(`${line}\n`) });
    if (json) printResult('update', r, true);
    else process.stdout.write(`${r.message}\n`);
    if (!r.ok) process.exitCode = 1;
  });
program
  .command('update-spool')
  .description('root helper (systemd/homeagent-update.service): carry out the install or roll-back the WebUI asked for in the update spool; progress in its status.json')
  .option('--spool <dir>', 'the spool folder', '/var/lib/homeagent/update-spool')
  .action(async (o: { spool: string }) => {
    const { processSpool } = await import('../service/update-spool.js');
    const s = await processSpool(path.resolve(o.spool), { onProgress: (line) => process.stderr.write(`${line}\n`) });
    process.stdout.write(s ? `${s.state}: ${s.message ?? s.step}\n` : 'nothing requested\n');
    if (s && s.state === 'failed') process.exitCode = 1;
  });
program.command('rollback').description('switch back to the previous release').action(async () => {
  const { runRollback } = await import('../service/update.js');
  const json = program.opts<{ json?: boolean }>().json === true;
  const r = await runRollback({ onProgress: json ? undefined : (line) => process.stderr.write(`${line}\n`) });
  if (json) printResult('rollback', r, true);
  else process.stdout.write(`${r.message}\n`);
  if (!r.ok) process.exitCode = 1;
});

const keys = program
  .command('keys')
  .description('release keys this box trusts for updates (/etc/homeagent/keys; $HOMEAGENT_KEYS_DIR)')
  .option('--keys-dir <dir>', 'trusted keys directory (default: $HOMEAGENT_KEYS_DIR, else /etc/homeagent/keys)');
/** Print a `homeagent keys` result: the message, then the trusted keys (or JSON). */
async function keysAction(run: (opts: { keysDir?: string }) => Promise<KeysResult>, showList: boolean): Promise<void> {
  const r = await run({ keysDir: keys.opts<{ keysDir?: string }>().keysDir });
  if (program.opts<{ json?: boolean }>().json === true) {
    printResult('keys', r, true);
  } else {
    for (const w of r.warnings) process.stderr.write(`warning: ${w}\n`);
    (r.ok ? process.stdout : process.stderr).write(`${r.message}\n`);
    if (showList) for (const k of r.keys) process.stdout.write(`${k.id}  ${k.file}\n`);
  }
  if (!r.ok) process.exitCode = 1;
}
keys
  .command('add <files...>')
  .description('trust the ed25519 public key(s) in FILE (PEM, from npm run keygen) for release signatures')
  .action(async (files: string[]) => {
    const { addTrustedKeys } = await import('../service/update.js');
    await keysAction((o) => addTrustedKeys(files.map((f) => path.resolve(f)), o), false);
  });
keys
  .command('list')
  .description('the trusted release keys')
  .action(async () => {
    const { listTrustedKeys } = await import('../service/update.js');
    await keysAction((o) => listTrustedKeys(o), true);
  });
keys
  .command('remove <id>')
  .description('stop trusting release key ID')
  .action(async (id: string) => {
    const { removeTrustedKey } = await import('../service/update.js');
    await keysAction((o) => removeTrustedKey(id, o), false);
  });

/**
 * A plugin folder (tarred here) or .tgz as base64, for the service: it may
 * not be allowed to read the user's files (as with `listen`). Throws
 * PLUGIN_INSTALL when the source is unreadable or too large for a request.
 */
function pluginArchive(source: string): string {
  let bytes: Buffer;
  try {
    bytes = statSync(source).isDirectory() ? execFileSync('tar', ['-czf', '-', '-C', source, '.'], { maxBuffer: MAX_LISTEN_BYTES + 1, stdio: ['ignore', 'pipe', 'pipe'] }) : readFileSync(source);
  } catch (err) {
    throw new HomeAgentError('PLUGIN_INSTALL', `cannot read ${source}: ${errorMessage(err)}`);
  }
  if (bytes.length > MAX_LISTEN_BYTES) throw new HomeAgentError('PLUGIN_INSTALL', `${source} is larger than ${MAX_LISTEN_BYTES / 1048576} MB packed; a plugin is far smaller (leave out node_modules and build output)`);
  return bytes.toString('base64');
}

/** The lines `plugins install` prints before it asks. */
function installPreviewText(p: InstallPreview): string {
  const lines = [`${p.name} ${p.version} (${p.kind})${p.update ? `, an update of ${p.installed_version ?? 'the installed one'}` : ''}${p.description ? `: ${p.description}` : ''}`];
  lines.push(p.asks.length ? `It asks for: ${p.asks.join(', ')}` : 'It asks for no capabilities.');
  if (p.update && p.missing.length) lines.push(`New since the approved version: ${p.missing.join(', ')}`);
  if (p.sandbox === 'advisory') lines.push('NOTE: no sandbox here (bubblewrap is not usable): a process plugin runs as the service\'s user and its capabilities are advisory.');
  return lines.join('\n') + '\n';
}

/** Ask a yes/no question on the terminal; resolves true for y/yes. */
async function askYesNo(question: string): Promise<boolean> {
  const { createInterface } = await import('node:readline/promises');
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return /^y(es)?$/i.test((await rl.question(question)).trim());
  } finally {
    rl.close();
  }
}

program.parseAsync(process.argv).catch((err: unknown) => {
  process.stderr.write(`homeagent: ${errorMessage(err)}\n`);
  process.exitCode = 1;
});
