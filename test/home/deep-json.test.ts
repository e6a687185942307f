/**
 * JSON from outside nested too deep (src/kernel/json.ts parseJson): a
 * breaking tester's retained discovery config of about 200 KB, 100,000 arrays
 * deep, made every rebuild of the device list throw "Maximum call stack size
 * exceeded", so a device announced after it was unknown and one removed was
 * kept. Now it is refused as malformed, and the list goes on.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { DeviceRegistry } from '../../src/home/registry.js';
import { parseDiscoveryMessage } from '../../src/home/discovery.js';
import { jsonDepth, MAX_JSON_DEPTH, parseJson } from '../../src/kernel/json.js';
import { MemoryLogger } from '../support/fake-sdk.js';

const deep = (n: number): string => `{"name":"Deep","uniq_id":"bad6","cmd_t":"bad6/set","zzz":${'['.repeat(n)}${']'.repeat(n)}}`;

test('parseJson refuses nesting deeper than MAX_JSON_DEPTH, by name, and counts no bracket inside a string', () => {
  assert.equal(jsonDepth('{"a":"[[[[{{{{\\"[[[","b":[[1]]}'), 3);
  assert.deepEqual(parseJson('{"a":[[1]]}'), { a: [[1]] });
  assert.throws(() => parseJson(deep(MAX_JSON_DEPTH)), (e: unknown) => e instanceof SyntaxError && /nested more than 64 levels deep/.test(e.message));
  assert.throws(() => parseJson('{"a":'), SyntaxError);
  const r = parseDiscoveryMessage('homeassistant/switch/bad6/config', deep(100_000), 'homeassistant');
  assert.equal(r.kind, 'invalid');
  assert.match(r.kind === 'invalid' ? r.reason : '', /nested more than 64 levels deep/);
});

test('a discovery config nested 100,000 deep leaves the device list working: a device announced after it is known, one removed is gone', () => {
  const log = new MemoryLogger();
  const reg = new DeviceRegistry({ log });
  reg.handleMessage('homeassistant/switch/tv/config', JSON.stringify({ name: 'TV', uniq_id: 'tv', cmd_t: 'tv/set' }));
  reg.handleMessage('homeassistant/switch/bad6/config', deep(100_000));
  reg.handleMessage('homeassistant/switch/coffee/config', JSON.stringify({ name: 'Coffee Maker', uniq_id: 'coffee', cmd_t: 'coffee/set' }));
  reg.handleMessage('homeassistant/switch/tv/config', '');
  assert.deepEqual(reg.entities().map((e) => e.name).sort(), ['Coffee Maker']);
});
