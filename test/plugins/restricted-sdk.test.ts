/**
 * The restricted SDK (issue 17 "Restricted SDK"; seed 001 "Restricted
 * External Plugin API"): an external plugin gets only what its approved
 * capabilities allow; each refusal throws PERMISSION_DENIED naming the
 * plugin and the capability and is logged; L4 is clamped to L3 and an
 * interrupt above the grant is refused; settings are its own only;
 * awaitInput, stop and social writes are never given.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { restrictSdk, PermissionDeniedError, type DeviceAccess } from '../../src/plugins/external/restricted-sdk.js';
import { FakeSdk } from '../support/fake-sdk.js';
import { Cap } from '../../src/kernel/output-types.js';

const tool = { name: 't1', description: 'x', parameters: { type: 'object' }, handler: () => 'x' };

test('each capability opens exactly its calls; refusals name plugin and capability and are logged', async () => {
  const sdk = new FakeSdk({ name: 'ext', settings: { 'plugin.ext.host': 'inverter', 'core.llm.api_key': 'sk-secret' } });
  sdk.settingsApi.register({ key: 'plugin.ext.host', type: 'string', default: '', description: 'x' });
  sdk.settingsApi.register({ key: 'core.llm.api_key', type: 'secret', default: '', description: 'x' });
  try {
    const none = restrictSdk(sdk, 'ext', []);
    const refusals: Array<[string, () => unknown]> = [
      ['tools', () => none.registerTool(tool)],
      ['stage:before_toolcall', () => none.registerStage('before_toolcall', () => undefined)],
      ['events:subscribe', () => none.subscribe('system', () => undefined)],
      ['events:publish', () => none.publish('system', { kind: 'x', message: 'y' })],
      ['output', () => none.registerOutputChannel('ch', Cap.Text, 'x', () => undefined)],
      ['commands', () => none.registerCommand('ext.cmd', () => 'x')],
      ['inject:L0', () => none.injectInput('ch', 'hello')],
      ['social:read', () => none.social()],
      ['memory:read', () => none.memory().recall('x')],
      ['memory:write', () => none.memory().commit([])],
      ['memory:read', () => none.knowledge().search('x')],
      ['devices:read', () => none.devices().list()],
      ['devices:control', () => none.devices().control({ device: 'front door', action: 'unlock' })],
      ['settings:core.llm.api_key', () => none.settings().get('core.llm.api_key')],
      ['(built-in plugins only)', () => none.awaitInput({ timeout_ms: 10 })],
      ['(built-in plugins only)', () => none.stop('x')],
      ['(built-in plugins only)', () => none.socialWrite()],
    ];
    for (const [cap, call] of refusals) {
      assert.throws(call, (err: unknown) => err instanceof PermissionDeniedError && err.code === 'PERMISSION_DENIED' && err.capability === cap && /plugin "ext" may not/.test(err.message), cap);
    }
    assert.equal(sdk.log.messages('warn').filter((m) => m === 'plugin call refused: capability not approved').length, refusals.length, 'every refusal is logged');
    assert.equal(sdk.tools.size, 0);
    // Its own settings it may read.
    assert.equal(none.settings().get('plugin.ext.host'), 'inverter');
    assert.deepEqual(none.settings().list().map((r) => r.key), ['plugin.ext.host']);

    const devices: DeviceAccess = { list: () => [{ id: 'light.kitchen', name: 'Kitchen Light', component: 'light', available: true, state: { state: 'ON' } }], control: async (p, a) => `${p}: ${a.device} ${a.action}` };
    const all = restrictSdk(sdk, 'ext', ['tools', 'stage:before_toolcall', 'events:subscribe', 'devices:read', 'devices:control', 'inject:L2'], { devices: () => devices, stateDir: '/tmp/ext-state' });
    all.registerTool(tool);
    assert.ok(sdk.tools.has('t1'));
    all.registerStage('before_toolcall', () => undefined);
    all.subscribe('system', () => undefined);
    assert.equal(all.devices().list()[0]!.name, 'Kitchen Light');
    assert.equal(await all.devices().control({ device: 'kitchen light', action: 'turn_on' }), 'ext: kitchen light turn_on');
    assert.equal(all.dataDir, '/tmp/ext-state', 'its own state folder, not the data directory');
    assert.throws(() => all.registerStage('on_input', () => undefined), /capability "stage:on_input"/);
  } finally {
    await sdk.close?.();
  }
});

test('interrupts: up to the granted level; L4 is clamped to L3 and refused above the grant', async () => {
  const sdk = new FakeSdk({ name: 'ext' });
  try {
    const l2 = restrictSdk(sdk, 'ext', ['inject:L2']);
    void l2.injectInterrupt(2, 'ch', 'soon');
    assert.equal(sdk.interrupts.at(-1)!.level, 2);
    assert.throws(() => l2.injectInterrupt(3, 'ch', 'now'), /capability "inject:L3"/);
    assert.throws(() => l2.injectInterrupt(4, 'ch', 'panic'), /capability "inject:L3".*|raise an L3 interrupt/);
    const l3 = restrictSdk(sdk, 'ext', ['inject:L3']);
    void l3.injectInterrupt(4, 'ch', 'panic');
    assert.equal(sdk.interrupts.at(-1)!.level, 3, 'L4 clamped to L3');
    void l3.injectInput('ch', 'queued');
  } finally {
    await sdk.close?.();
  }
});
