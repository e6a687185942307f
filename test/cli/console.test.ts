/**
 * The text console: typed lines reach the agent, streamed replies are printed
 * sentence by sentence, /stop is the stop button, and `homeagent run` shuts
 * down cleanly on Ctrl-C (SIGINT): plugins stopped, databases closed, exit 0.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { ConfigRegistry } from '../../src/config/registry.js';
import { Kernel } from '../../src/kernel/kernel.js';
import { ConsolePlugin } from '../../src/plugins/console/index.js';
import { FakeProvider, deferred } from '../support/fake-provider.js';

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
    input.write('turn on the lights\n');
    while (!printed.includes('Anything else?\n')) await new Promise((r) => setTimeout(r, 5));
    assert.equal(printed, 'The lights are on. Anything else?\n');
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

test('homeagent run exits cleanly on SIGINT', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'homeagent-run-'));
  try {
    const child = spawn(process.execPath, ['--import', 'tsx', path.resolve('src/cli/main.ts'), '--data-dir', dir, 'run', '--console'], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, HOMEAGENT_LOG_LEVEL: 'info', NODE_ENV: 'production', HOMEAGENT__CORE__SERVICE__EMBEDDED_BROKER_PORT: '0', HOMEAGENT__CORE__LLM__SOURCES__OLLAMA__BASE_URL: 'http://127.0.0.1:9' },
    });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    while (!err.includes('plugin started') || !err.includes('"console"')) {
      if (child.exitCode !== null) assert.fail(`exited early: ${err}`);
      await new Promise((r) => setTimeout(r, 20));
    }
    child.kill('SIGINT');
    const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
    assert.equal(code, 0, err);
    assert.match(err, /"msg":"stopped"/);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('a SIGTERM while the service is still starting stops it cleanly once it is up (no default kill)', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'homeagent-run-'));
  try {
    const child = spawn(process.execPath, ['--import', 'tsx', path.resolve('src/cli/main.ts'), '--data-dir', dir, 'run', '--console'], {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, HOMEAGENT_LOG_LEVEL: 'info', NODE_ENV: 'production', HOMEAGENT__CORE__SERVICE__EMBEDDED_BROKER_PORT: '0', HOMEAGENT__CORE__LLM__SOURCES__OLLAMA__BASE_URL: 'http://127.0.0.1:9' },
    });
    let err = '';
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    // The first log line: the service is starting, its plugins are not up yet.
    while (!err.includes('embedded MQTT broker')) {
      if (child.exitCode !== null) assert.fail(`exited early: ${err}`);
      await new Promise((r) => setTimeout(r, 5));
    }
    child.kill('SIGTERM');
    const code = await new Promise<number | null>((r) => child.once('exit', (c) => r(c)));
    assert.equal(code, 0, err);
    assert.match(err, /"msg":"stopped"/);
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
    assert.match(printed, /\/stop is the stop button/);
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
