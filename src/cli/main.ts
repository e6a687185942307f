#!/usr/bin/env node
/**
 * `homeagent`: one executable. `homeagent run` is the service (systemd
 * ExecStart); every other subcommand is a client of the running service over
 * its Unix socket (see protocol.ts).
 */
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { Command } from 'commander';
import { defaultSocketPath, request } from './client.js';
import { resolveDataDir } from '../service/paths.js';
import { errorMessage, HomeAgentError } from '../kernel/errors.js';
import { INSTALL_ROOT } from '../kernel/kernel.js';
import { printResult } from './format.js';
import { MAX_REQUEST_BYTES } from './protocol.js';
import type { KeysResult } from '../service/update.js';

/** Raw bytes of recordings one `listen` may send (base64 grows them by a third). */
const MAX_LISTEN_BYTES = Math.floor((MAX_REQUEST_BYTES * 3) / 4) - 1024 * 1024;

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
  .option('--json', 'print raw JSON results');

function socketPath(): string {
  const o = program.opts<{ dataDir?: string; socket?: string }>();
  return o.socket ?? defaultSocketPath(resolveDataDir(o.dataDir));
}

/** Whether a command's result reports a failure (the exit code then says so too). */
function failed(cmd: string, result: unknown): boolean {
  const r = result as Record<string, unknown> | null;
  if (!r || typeof r !== 'object') return false;
  if (cmd === 'ask') return r.status === 'error';
  if (cmd === 'doctor') return r.ok === false;
  if (cmd === 'listen') return Array.isArray(r.utterances) && (r.utterances as Array<{ status?: string }>).some((u) => u.status === 'error');
  return false;
}

/** Run one client command and print its result. */
async function call(cmd: string, args: Record<string, unknown> = {}, onData?: (d: unknown) => void): Promise<void> {
  const json = program.opts<{ json?: boolean }>().json === true;
  try {
    const result = await request(socketPath(), cmd, args, onData ?? ((d) => printResult('data', d, json)));
    printResult(cmd, result, json);
    if (failed(cmd, result)) process.exitCode = 1;
  } catch (err) {
    process.stderr.write(`homeagent ${cmd}: ${errorMessage(err)}\n`);
    process.exitCode = err instanceof HomeAgentError && err.code === 'SERVICE_UNREACHABLE' ? 3 : 1;
  }
}

program
  .command('run')
  .description('run the voice box service (foreground; systemd ExecStart)')
  .option('--console', 'attach the text console even when stdin is not a terminal')
  .option('--no-console', 'do not attach the text console')
  .action(async (o: { console?: boolean }) => {
    const { runService } = await import('../service/app.js');
    const dataDir = resolveDataDir(program.opts<{ dataDir?: string }>().dataDir);
    await runService({ dataDir, console: o.console, socketPath: program.opts<{ socket?: string }>().socket });
  });

program.command('status').description('uptime, LLM source and model, broker, devices, last errors').action(() => call('status'));
program.command('say <text...>').description('speak TEXT on the speaker').action((t: string[]) => call('say', { text: t.join(' ') }));
program.command('ask <text...>').description('ask the agent and print its reply').action((t: string[]) => call('ask', { text: t.join(' ') }, () => undefined));
program.command('stop').description('the stop button: cut the reply, silence the speaker, drop queued inputs').action(() => call('stop'));
program
  .command('listen <files...>')
  .description('feed WAV recordings through the voice pipeline as if spoken; prints transcript, actions, reply and timings')
  .option('--realtime', 'feed the audio at the pace a microphone would (decoding runs while it arrives)')
  .action(async (files: string[], o: { realtime?: boolean }) => {
    const payload: Array<{ name: string; data_b64: string }> = [];
    let total = 0;
    for (const f of files) {
      let bytes: Buffer;
      try {
        bytes = readFileSync(f);
      } catch (err) {
        process.stderr.write(`homeagent listen: cannot read ${f}: ${errorMessage(err)}\n`);
        process.exitCode = 1;
        return;
      }
      total += bytes.length;
      if (total > MAX_LISTEN_BYTES) {
        process.stderr.write(`homeagent listen: ${f}: recordings over ${MAX_LISTEN_BYTES / 1048576} MB in one call are too large (a spoken command is a few hundred KB)\n`);
        process.exitCode = 1;
        return;
      }
      payload.push({ name: path.basename(f), data_b64: bytes.toString('base64') });
    }
    await call('listen', { files: payload, realtime: o.realtime === true }, (d) => {
      const p = d as { file?: string; transcript?: string };
      process.stderr.write(`listened to ${String(p.file)}: ${JSON.stringify(p.transcript ?? '')}\n`);
    });
  });
program.command('logs').description('follow live events (Ctrl-C to end)').action(() => call('logs', {}, (d) => printResult('log', d, program.opts<{ json?: boolean }>().json === true)));

const config = program.command('config').description('read and change settings');
config.command('get <key>').action((key: string) => call('config.get', { key }));
config.command('set <key> <value>').action((key: string, raw: string) => call('config.set', { key, raw }));
config.command('list [prefix]').action((prefix?: string) => call('config.list', { prefix: prefix ?? '' }));
config.command('delete <key>').description('remove a stored value (the default applies again)').action((key: string) => call('config.delete', { key }));

const memory = program.command('memory').description('inspect the memory');
memory.command('stats').action(() => call('memory.stats'));
memory.command('recall <query...>').action((q: string[]) => call('memory.recall', { query: q.join(' ') }));

program.command('devices').description('devices known from MQTT, with room, state and availability').action(() => call('devices'));
program.command('plugins').description('plugins and their state').action(() => call('plugins'));
program.command('doctor').description('check audio, GPIO, broker, LLM sources, disk and databases; say what to fix').action(() => call('doctor'));
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

program.parseAsync(process.argv).catch((err: unknown) => {
  process.stderr.write(`homeagent: ${errorMessage(err)}\n`);
  process.exitCode = 1;
});
