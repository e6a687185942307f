/**
 * The text console: typed lines reach the agent, streamed replies are printed
 * sentence by sentence, /stop and `stop` are the stop button (acknowledged
 * when idle too), a banner greets, the prompt comes back under messages nobody
 * asked for (a timer), the logs never reach the console (a file in the data
 * directory), and `homeagent run` shuts down cleanly on Ctrl-C (SIGINT):
 * plugins stopped, databases closed, exit 0.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import net from 'node:net';
import { ConfigRegistry } from '../../src/config/registry.js';
import { Kernel } from '../../src/kernel/kernel.js';
import { ConsolePlugin } from '../../src/plugins/console/index.js';
import { FakeProvider, deferred } from '../support/fake-provider.js';
import { waitUntil } from '../support/wait.js';

/** The log file of a console run in `dir` (routeLogsForConsole), '' while absent. */
function logOf(dir: string): string {
  const f = path.join(dir, 'homeagent.log');
  return existsSync(f) ? readFileSync(f, 'utf8') : '';
}

test('typed lines go to the agent; replies stream to the terminal; /stop cuts the reply', async () => {
  const input = new PassThrough();
  const output = new PassThrough();
  let printed = '';
  output.on('data', (d: Buffer) => (printed += d.toString()));
  const gate = deferred();
  const provider = new FakeProvider([{ content: 'The lights are on. Anything else?' }, { content: 'A very long story. ', pieces: ['A very long story. '], gate: gate.promise }]);
  const settings = new ConfigRegistry(':memory:', { env: {} });
  const dir = mkdtempSync(path.join(os.tmpdir(), 'homeagent-console-'));
  const kernel = new Kernel({ settings, dataDir: dir, provider });
  let quit = false;
  kernel.use(new ConsolePlugin({ input, output, onQuit: () => (quit = true) }));
  await kernel.start();
  try {
    // A line of invisible characters is no message (a tester's NUL and zero-width spaces went to the LLM).
    input.write('\u0000\u200b\ufeff\n');
    input.write('turn on the lights\n');
    while (!printed.includes('Anything else?\n')) await new Promise((r) => setTimeout(r, 5));
    assert.equal(printed, 'The lights are on. Anything else?\n');
    assert.equal(provider.requests.length, 1, 'only the visible line was asked');
    input.write('tell me a story\n');
    while (!printed.includes('A very long story.')) await new Promise((r) => setTimeout(r, 5));
    input.write('/stop\n');
    while (!printed.includes('[stopped]')) await new Promise((r) => setTimeout(r, 5));
    input.write('/quit\n');
    while (!quit) await new Promise((r) => setTimeout(r, 5));
    assert.equal(provider.aborted, 1);
  } finally {
    gate.resolve();
    await kernel.stop();
    settings.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the console is a channel, not a person: typed lines have no speaker until "this is Anna" says who types', async () => {
  const input = new PassThrough();
  const output = new PassThrough();
  let printed = '';
  output.on('data', (d: Buffer) => (printed += d.toString()));
  const provider = new FakeProvider([{ content: 'Hello.' }, { content: 'Hi Anna.' }, { content: 'Noted.' }]);
  const settings = new ConfigRegistry(':memory:', { env: {} });
  const dir = mkdtempSync(path.join(os.tmpdir(), 'homeagent-console-'));
  const kernel = new Kernel({ settings, dataDir: dir, provider });
  kernel.use(new ConsolePlugin({ input, output }));
  await kernel.start();
  try {
    for (const [line, reply] of [['good morning', 'Hello.'], ['this is Anna', 'Hi Anna.'], ['I live in Lisbon', 'Noted.']]) {
      input.write(`${line}\n`);
      await waitUntil(() => printed.includes(reply!), `the reply to "${line}"`);
    }
    const users = kernel.services.memory.timeline(100_000).filter((e) => e.kind === 'user');
    assert.deepEqual(users.map((e) => [e.input, e.speaker ?? null]), [['good morning', null], ['this is Anna', 'Anna'], ['I live in Lisbon', 'Anna']]);
    assert.match(String(provider.requests[0]!.messages.at(-2)!.content), /; speaker: someone in the household\]/);
  } finally {
    await kernel.stop();
    settings.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('homeagent run exits cleanly on SIGINT', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'homeagent-run-'));
  try {
    const child = spawn(process.execPath, ['--import', 'tsx', path.resolve('src/cli/main.ts'), '--data-dir', dir, 'run', '--console'], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, HOMEAGENT_LOG_LEVEL: 'info', NODE_ENV: 'production', HOMEAGENT__CORE__SERVICE__EMBEDDED_BROKER_PORT: '0', HOMEAGENT__PLUGIN__WEBUI__PORT: '0', HOMEAGENT__CORE__LLM__SOURCES__OLLAMA__BASE_URL: 'http://127.0.0.1:9' },
    });
    let err = '';
    let out = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    await waitUntil(() => child.exitCode !== null || (logOf(dir).includes('plugin started') && logOf(dir).includes('"console"')), 'the console plugin started (in the log file)', 120_000);
    assert.equal(child.exitCode, null, `exited early: ${err}${logOf(dir)}`);
    // The console shows the banner, and no log line reaches the terminal.
    await waitUntil(() => out.includes('/help'), 'the banner');
    assert.match(out, /HomeAgent .*text console/);
    assert.match(out, /Simulated here: .*microphone and speaker/);
    assert.match(out, /Try: "turn on the kitchen light", .*, .*\./);
    // How to talk to it by voice (a newcomer's: the banner did not say): on this machine nobody in the room can.
    assert.match(out, new RegExp(`By voice: nobody in the room can be heard: the microphone is simulated .*homeagent --data-dir ${dir.replace(/[.\\/]/g, '\\$&')} listen FILE\\.wav`));
    assert.match(out, new RegExp(`Logs: ${path.join(dir, 'homeagent.log').replace(/[.\\/]/g, '\\$&')}`));
    // /help names the data directory in its maintenance commands too (a newcomer's help left it out).
    child.stdin.write('/help\n');
    await waitUntil(() => out.includes('Maintenance in another terminal'), 'the help');
    assert.match(out, new RegExp(`Maintenance in another terminal: homeagent --data-dir ${dir.replace(/[.\\/]/g, '\\$&')} status \\| devices`));
    child.kill('SIGINT');
    const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
    assert.equal(code, 0, err);
    assert.match(logOf(dir), /"msg":"stopped"/);
    assert.doesNotMatch(out + err, /"level":\d+/, 'no pino JSON line on the terminal');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a SIGTERM while the service is still starting stops it cleanly once it is up (no default kill)', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'homeagent-run-'));
  try {
    const child = spawn(process.execPath, ['--import', 'tsx', path.resolve('src/cli/main.ts'), '--data-dir', dir, 'run', '--console'], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, HOMEAGENT_LOG_LEVEL: 'info', NODE_ENV: 'production', HOMEAGENT__CORE__SERVICE__EMBEDDED_BROKER_PORT: '0', HOMEAGENT__PLUGIN__WEBUI__PORT: '0', HOMEAGENT__CORE__LLM__SOURCES__OLLAMA__BASE_URL: 'http://127.0.0.1:9' },
    });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    // The first log line: the service is starting, its plugins are not up yet.
    await waitUntil(() => child.exitCode !== null || logOf(dir).includes('embedded MQTT broker'), 'the first log line', 120_000);
    assert.equal(child.exitCode, null, `exited early: ${err}${logOf(dir)}`);
    child.kill('SIGTERM');
    const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
    assert.equal(code, 0, err);
    assert.match(logOf(dir), /"msg":"stopped"/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('end of input (Ctrl-D or the end of a piped script) quits after what was typed is answered; /help answers locally', async () => {
  const input = new PassThrough();
  const output = new PassThrough();
  let printed = '';
  output.on('data', (d: Buffer) => (printed += d.toString()));
  const provider = new FakeProvider([{ content: 'Hello there.' }]);
  const settings = new ConfigRegistry(':memory:', { env: {} });
  const dir = mkdtempSync(path.join(os.tmpdir(), 'homeagent-console-'));
  const kernel = new Kernel({ settings, dataDir: dir, provider });
  let quit = false;
  kernel.use(new ConsolePlugin({ input, output, onQuit: () => (quit = true) }));
  await kernel.start();
  try {
    input.write('/help\n');
    input.write('/bogus\n');
    input.end('hi\n');
    while (!quit) await new Promise((r) => setTimeout(r, 5));
    assert.match(printed, /stop or \/stop +the stop button/);
    assert.match(printed, /unknown console command \/bogus/);
    assert.match(printed, /Hello there\./, 'the line before the end of input was answered');
    assert.match(printed, /end of input/);
    assert.equal(provider.requests.length, 1, '/help and /bogus never reached the model');
  } finally {
    await kernel.stop();
    settings.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('stop alone is the stop button; /stop and stop are acknowledged when nothing runs; the prompt comes back', async () => {
  const input = new PassThrough();
  const output = new PassThrough();
  let printed = '';
  output.on('data', (d: Buffer) => (printed += d.toString()));
  const gate = deferred();
  const provider = new FakeProvider([{ content: 'A very long story. ', pieces: ['A very long story. '], gate: gate.promise }]);
  const settings = new ConfigRegistry(':memory:', { env: {} });
  const dir = mkdtempSync(path.join(os.tmpdir(), 'homeagent-console-'));
  const kernel = new Kernel({ settings, dataDir: dir, provider });
  kernel.use(new ConsolePlugin({ input, output, prompt: true, banner: () => ({ title: 'HomeAgent 9.9.9', simulated: ['buttons and LEDs (no GPIO)'], examples: ['a', 'b', 'c'], logs: '/x/homeagent.log' }) }));
  await kernel.start();
  try {
    assert.equal(printed, 'HomeAgent 9.9.9: text console.\nSimulated here: buttons and LEDs (no GPIO).\nTry: "a", "b", "c".\nType stop (or /stop) to cut a reply, /help for help, /quit or Ctrl-D to end.\nLogs: /x/homeagent.log\n> ');
    printed = '';
    input.write('/stop\n');
    await waitUntil(() => printed.includes('(stopped)'), 'the idle /stop acknowledged');
    assert.equal(printed, '(stopped)\n> ');
    printed = '';
    input.write('tell me a story\n');
    await waitUntil(() => printed.includes('A very long story.'), 'the reply streaming');
    input.write('stop\n');
    await waitUntil(() => printed.includes('[stopped]') && printed.endsWith('> '), 'the reply cut and the prompt back');
    assert.equal(printed, 'A very long story. [stopped]\n> ');
    assert.equal(provider.aborted, 1, '"stop" typed alone is the stop button, not a message to the model');
    assert.equal(provider.requests.length, 1);
  } finally {
    gate.resolve();
    await kernel.stop();
    settings.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

/** A kernel with only the console plugin on piped input, answering from `provider`; `printed()` is what it wrote. */
async function consoleKernel(provider: FakeProvider, prompt = false): Promise<{ input: PassThrough; printed: () => string; kernel: Kernel; close: () => Promise<void> }> {
  const input = new PassThrough();
  const output = new PassThrough();
  let printed = '';
  output.on('data', (d: Buffer) => (printed += d.toString()));
  const settings = new ConfigRegistry(':memory:', { env: {} });
  const dir = mkdtempSync(path.join(os.tmpdir(), 'homeagent-console-'));
  const kernel = new Kernel({ settings, dataDir: dir, provider });
  kernel.use(new ConsolePlugin({ input, output, prompt }));
  await kernel.start();
  return {
    input,
    kernel,
    printed: () => printed,
    close: async () => {
      await kernel.stop();
      settings.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

test('a stop says how many lines typed before it were dropped unanswered (a newcomer\'s piped script lost six commands to a "stop" line with only "(stopped)" shown)', async () => {
  const gate = deferred();
  const box = await consoleKernel(new FakeProvider([{ content: 'First.', gate: gate.promise }, { content: 'Second.' }, { content: 'Third.' }]));
  try {
    box.input.write('tell me something\nand another thing\nand a third\nstop\n');
    await waitUntil(() => box.printed().includes('(stopped'), 'the stop acknowledged');
    assert.match(box.printed(), /\(stopped: 3 lines typed before it were dropped unanswered\)/);
    assert.doesNotMatch(box.printed(), /Second\.|Third\./, 'none of them was answered');
  } finally {
    gate.resolve();
    await box.close();
  }
});

test('a message nobody asked for (a timer) gets its own line and the prompt is drawn again', async () => {
  const box = await consoleKernel(new FakeProvider([]), true);
  try {
    assert.equal(box.printed(), '> ');
    await box.kernel.outputs.send({ channel: 'console', kind: 'full', content: 'Your 2 minute timer is done.', type: 'text', meta: {} });
    assert.equal(box.printed(), '> \nYour 2 minute timer is done.\n> ');
  } finally {
    await box.close();
  }
});

test("a box whose embedded broker's port is taken says so in its banner: it uses the broker already there and its devices (a tester's second box showed the first one's demo home without a word)", async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'homeagent-run-'));
  const taken = net.createServer();
  await new Promise<void>((r) => taken.listen(0, '127.0.0.1', r));
  const port = (taken.address() as net.AddressInfo).port;
  try {
    const child = spawn(process.execPath, ['--import', 'tsx', path.resolve('src/cli/main.ts'), '--data-dir', dir, 'run', '--console'], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, HOMEAGENT_LOG_LEVEL: 'info', NODE_ENV: 'production', HOMEAGENT__CORE__SERVICE__EMBEDDED_BROKER_PORT: String(port), HOMEAGENT__PLUGIN__WEBUI__PORT: '0', HOMEAGENT__CORE__LLM__SOURCES__OLLAMA__BASE_URL: 'http://127.0.0.1:9' },
    });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    await waitUntil(() => child.exitCode !== null || out.includes('/help'), 'the banner', 120_000);
    assert.match(out, new RegExp(`Devices: the embedded MQTT broker did not start \\(port ${port} is in use\\), so this box uses what listens on 127\\.0\\.0\\.1:${port} as its broker, with the devices announced there`));
    assert.doesNotMatch(out, /a demo home/, 'no demo home of its own: its broker is not the box\'s');
    child.kill('SIGINT');
    await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
  } finally {
    taken.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
