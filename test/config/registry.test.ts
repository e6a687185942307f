/**
 * ConfigRegistry: defaults, persistence across reopen, validation errors
 * naming the key and the expected type, environment overrides, pattern keys,
 * and an acknowledged set surviving kill -9.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { spawn } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { ConfigRegistry, envNameFor } from '../../src/config/registry.js';
import { ConfigError } from '../../src/kernel/errors.js';
import { registerCoreSettings } from '../../src/kernel/core-settings.js';

function tmp(): string {
  return mkdtempSync(path.join(os.tmpdir(), 'homeagent-config-'));
}

test('defaults, set, get, list, delete, persistence across reopen', () => {
  const dir = tmp();
  try {
    const db = path.join(dir, 'settings.db');
    let c = new ConfigRegistry(db, { env: {} });
    registerCoreSettings(c);
    assert.equal(c.get('core.agent.max_tool_rounds'), 10);
    c.set('core.agent.max_tool_rounds', 4);
    c.set('core.output.mode', 'explicit');
    c.close();
    c = new ConfigRegistry(db, { env: {} });
    registerCoreSettings(c);
    assert.equal(c.get('core.agent.max_tool_rounds'), 4);
    const row = c.list('core.agent.').find((r) => r.key === 'core.agent.max_tool_rounds')!;
    assert.equal(row.source, 'stored');
    assert.equal(row.type, 'integer');
    assert.match(row.description, /tool loop/);
    c.delete('core.agent.max_tool_rounds');
    assert.equal(c.get('core.agent.max_tool_rounds'), 10);
    c.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('validation errors name the key and the expected type', () => {
  const c = new ConfigRegistry(':memory:', { env: {} });
  registerCoreSettings(c);
  const expectErr = (fn: () => void, re: RegExp) => assert.throws(fn, (e: unknown) => e instanceof ConfigError && e.code === 'CONFIG_INVALID' && re.test(e.message));
  expectErr(() => c.set('core.agent.max_tool_rounds', 'ten'), /core\.agent\.max_tool_rounds: value must be an integer, got "ten"/);
  expectErr(() => c.set('core.agent.max_tool_rounds', 2.5), /must be an integer/);
  expectErr(() => c.set('core.agent.max_tool_rounds', 0), /must be >= 1/);
  expectErr(() => c.set('core.output.mode', 'loud'), /must be one of auto, explicit/);
  expectErr(() => c.set('core.no.such_key', 1), /unknown setting/);
  expectErr(() => c.get('plugin.ghost.key'), /unknown setting/);
  expectErr(() => c.set('badkey', 1), /keys look like/);
  expectErr(() => c.setFromString('core.agent.max_tool_rounds', 'x'), /expected integer/);
  // Decimal only: Number() took these (a newcomer's "0x10" became 16, "1e3" 1000).
  for (const bad of ['0x10', '1e1', '0b1', 'Infinity', '1.5', '']) expectErr(() => c.setFromString('core.agent.max_tool_rounds', bad), /expected integer \(decimal digits\)/);
  c.setFromString('core.agent.max_tool_rounds', ' 7 ');
  assert.equal(c.get('core.agent.max_tool_rounds'), 7, 'spaces around are dropped');
  c.register({ key: 'plugin.t.threshold', type: 'number', default: 1, description: 'a number' });
  for (const [raw, v] of [['1e-30', 1e-30], ['.5', 0.5], ['-2.25', -2.25], ['3.', 3]] as const) {
    c.setFromString('plugin.t.threshold', raw);
    assert.equal(c.get('plugin.t.threshold'), v, raw);
  }
  for (const bad of ['0x10', 'Infinity', 'NaN', '1e', '--1']) expectErr(() => c.setFromString('plugin.t.threshold', bad), /expected number \(decimal/);
  c.setFromString('core.agent.max_tool_rounds', '7');
  assert.equal(c.get('core.agent.max_tool_rounds'), 7);
  // A JSON setting given a bare word (a newcomer's "config set core.llm.sources_order deepseek"): what to type instead.
  c.register({ key: 'plugin.t.order', type: 'json', default: ['ollama'], description: 'a list' });
  c.register({ key: 'plugin.t.map', type: 'json', default: { a: 1 }, description: 'a map' });
  expectErr(() => c.setFromString('plugin.t.order', 'deepseek'), /plugin\.t\.order: expected JSON \(a list: '\["deepseek"\]', quoted for the shell\), got "deepseek"/);
  // A name with a space is one item (a newcomer's "Kitchen Light" was suggested as ["Kitchen","Light"], which protected no device).
  expectErr(() => c.setFromString('plugin.t.order', 'Kitchen Light'), /expected JSON \(a list: '\["Kitchen Light"\]'/);
  expectErr(() => c.setFromString('plugin.t.order', 'deepseek, ollama'), /expected JSON \(a list: '\["deepseek","ollama"\]'/);
  expectErr(() => c.setFromString('plugin.t.map', 'a=1'), /expected JSON like '\{"a":1\}', got "a=1"/);
  c.close();
});

test('environment overrides win over stored values; pattern keys; onChange', () => {
  const env = { [envNameFor('core.agent.max_tool_rounds')]: '3' };
  assert.equal(envNameFor('core.agent.max_tool_rounds'), 'HOMEAGENT__CORE__AGENT__MAX_TOOL_ROUNDS');
  const c = new ConfigRegistry(':memory:', { env });
  registerCoreSettings(c);
  c.set('core.agent.max_tool_rounds', 8);
  assert.equal(c.get('core.agent.max_tool_rounds'), 3);
  assert.equal(c.list('core.agent.max').find((r) => r.key === 'core.agent.max_tool_rounds')!.source, 'env');
  c.register({ key: 'core.llm.sources.*.base_url', type: 'string', default: '', description: 'base URL of an LLM source' });
  c.set('core.llm.sources.home.base_url', 'http://10.0.0.2:11434');
  assert.equal(c.get('core.llm.sources.home.base_url'), 'http://10.0.0.2:11434');
  assert.deepEqual(c.children('core.llm.sources.'), ['home']);
  const seen: string[] = [];
  const off = c.onChange('core.llm.', (k) => seen.push(k));
  c.set('core.llm.sources.home.base_url', 'http://x');
  off();
  c.set('core.llm.sources.home.base_url', 'http://y');
  assert.deepEqual(seen, ['core.llm.sources.home.base_url']);
  c.close();
});

test('an acknowledged set survives kill -9', async () => {
  const dir = tmp();
  try {
    const db = path.join(dir, 'settings.db');
    const script = `
      import { ConfigRegistry } from ${JSON.stringify(path.resolve('src/config/registry.ts'))};
      const c = new ConfigRegistry(${JSON.stringify(db)}, { env: {} });
      c.register({ key: 'plugin.test.counter', type: 'integer', default: 0, description: 'counter' });
      for (let i = 1; ; i++) { c.set('plugin.test.counter', i); process.stdout.write(i + '\\n'); }
    `;
    const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
    let acked = 0;
    await new Promise<void>((resolve) => {
      child.stdout.on('data', (b: Buffer) => {
        const lines = b.toString().trim().split('\n');
        acked = Number(lines[lines.length - 1]);
        if (acked >= 200) {
          child.kill('SIGKILL');
          resolve();
        }
      });
    });
    await new Promise((r) => child.once('exit', r));
    const c = new ConfigRegistry(db, { env: {} });
    c.register({ key: 'plugin.test.counter', type: 'integer', default: 0, description: 'counter' });
    assert.ok(c.get<number>('plugin.test.counter') >= acked, `stored ${c.get('plugin.test.counter')} >= acknowledged ${acked}`);
    c.close();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
