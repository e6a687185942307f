/**
 * Schemas once for the device tools: each tool's JSON Schema (tools.ts, read
 * by src/kernel/tool-schema.ts for the handler's argument type) is what the
 * kernel's ToolRegistry validates with ajv, so the handlers carry no hand
 * re-checks: a call the schema refuses never reaches the handler and sends
 * nothing; a valid one is carried out. The before_toolcall stage, which runs
 * before the registry's check, asks the same schema (isDeviceControlArgs).
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { ToolRegistry } from '../../src/kernel/tool-registry.js';
import { schemaGuard } from '../../src/kernel/tool-schema.js';
import { actionFromArgs, isDeviceControlArgs } from '../../src/home/tools.js';
import { silentLogger } from '../support/quiet.js';
import { startRig, type Rig } from './harness.js';

describe('device tools: one schema for ajv and the argument types', () => {
  let rig: Rig;
  const tools = new ToolRegistry(silentLogger);
  let calls = 0;
  const run = (name: string, args: Record<string, unknown>) =>
    tools.execute(name, args, { input: rig.sdk.input('llm turn'), signal: new AbortController().signal, call_id: `call_${++calls}` });
  const sent = (): unknown[] => rig.sdk.events('plugin.home.command');

  before(async () => {
    rig = await startRig();
    for (const def of rig.sdk.tools.values()) tools.register('home', def);
  });
  after(async () => {
    await rig.close();
  });

  test('arguments the schema refuses are rejected by the registry before the handler, and nothing is sent', async () => {
    const before = sent().length;
    const bad: Array<[string, Record<string, unknown>, RegExp]> = [
      ['device_control', { device: 'TV', action: 'fly' }, /\/action must be equal to one of the allowed values \(turn_on, /],
      ['device_control', { device: 'Kitchen Lights', action: 'turn_on', brightness: 150 }, /\/brightness must be <= 100/],
      ['device_control', { device: 'Kitchen Lights', action: 'turn_on', brightness: '50' }, /\/brightness must be number/],
      ['device_control', { action: 'turn_on' }, /must have required property 'device'/],
      ['device_control', { device: 'TV', action: 'turn_on', volume: 3 }, /must NOT have additional properties/],
      ['device_state', { device: 42 }, /\/device must be string/],
      ['device_state', { type: 'toaster' }, /\/type must be equal to one of the allowed values/],
    ];
    for (const [name, args, why] of bad) {
      const r = await run(name, args);
      assert.equal(r.is_error, true, `${name} ${JSON.stringify(args)}`);
      assert.match(r.content, /invalid arguments for/);
      assert.match(r.content, why);
    }
    assert.equal(sent().length, before, 'no command for a refused call');
  });

  test('valid arguments reach the handler typed and are carried out', async () => {
    const r = await run('device_control', { device: 'Kitchen Lights', action: 'turn_on', brightness: 50, color: 'red' });
    assert.equal(r.is_error, false, r.content);
    // The model reads what was done; the MQTT topic and payload go to the bus (run log, `homeagent logs`), not the prompt (issue 19).
    assert.deepEqual(JSON.parse(r.content), { ok: true, name: 'Kitchen Lights', action: 'turn_on' });
    assert.deepEqual(sent().at(-1), { topic: 'home/kitchen/light/set', payload: JSON.stringify({ state: 'ON', brightness: 128, color: { r: 255, g: 0, b: 0 } }) });
    const list = await run('device_state', { type: 'lock' });
    assert.deepEqual(JSON.parse(list.content).devices.map((d: { name: string }) => d.name), ['Front Door']);
    // What the schema cannot say (a colour name it does not know) is still the handler's to refuse.
    const colour = await run('device_control', { device: 'Kitchen Lights', action: 'turn_on', color: 'plaid' });
    assert.equal(colour.is_error, true);
    assert.match(colour.content, /color must be a colour name/);
    // A word every plain object has is no colour either (it was taken for one: Object's own "constructor").
    for (const word of ['constructor', 'toString', '__proto__']) {
      const inherited = await run('device_control', { device: 'Kitchen Lights', action: 'turn_on', color: word });
      assert.equal(inherited.is_error, true, word);
      assert.match(inherited.content, /color must be a colour name/);
    }
  });

  test('before_toolcall asks the same schema: only a valid call can be risky', () => {
    assert.equal(isDeviceControlArgs({ device: 'Front Door', action: 'unlock' }), true);
    assert.equal(isDeviceControlArgs({ device: 'Front Door', action: 'unlock', bogus: 1 }), false);
    assert.equal(isDeviceControlArgs({ device: 'Front Door', action: 'open_sesame' }), false);
    assert.equal(isDeviceControlArgs({ action: 'unlock' }), false);
    const args: unknown = { device: 'Bed Light', action: 'turn_on', brightness: 30, color: '#00ff00' };
    assert.ok(isDeviceControlArgs(args));
    assert.deepEqual(actionFromArgs(args), { action: 'turn_on', brightness_pct: 30, color: { r: 0, g: 255, b: 0 } });
  });

  test('schemaGuard fills schema defaults as the registry does', () => {
    const guard = schemaGuard({ type: 'object', properties: { limit: { type: 'integer', minimum: 1, default: 5 } }, additionalProperties: false });
    const v: Record<string, unknown> = {};
    assert.ok(guard(v));
    assert.equal(v.limit, 5);
    assert.equal(guard({ limit: 0 }), false);
    assert.equal(guard({ limit: 2.5 }), false);
  });
});
