/**
 * `plugins reload` (issue 17): new files are picked up without restarting
 * the service, and a plugin's tools disappear and reappear between turns,
 * never in the middle of one (Agent.betweenTurns).
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import { pluginsDir, startRig, writePlugin } from './rig.js';

const manifest = { name: 'swap', version: '1.0.0', kind: 'lua', entry: 'main.lua', capabilities: ['tools'] };
const ONE = 'sdk.register_tool{ name = "swap_one", description = "one", parameters = { type = "object", properties = {} }, handler = function() return "one" end }';
const TWO = 'sdk.register_tool{ name = "swap_two", description = "two", parameters = { type = "object", properties = {} }, handler = function() return "two" end }';

test('reload during a turn waits for its end: the turn keeps its tools, the next turn sees the new ones', async () => {
  let dir = '';
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const rig = await startRig({
    setup: (d) => {
      dir = writePlugin(pluginsDir(d), 'swap', manifest, { 'main.lua': ONE });
    },
    script: [{ tool_calls: [{ name: 'tools_call', arguments: { name: 'swap_one', arguments: {} } }], gate }, { content: 'used one' }, { content: 'second turn' }],
  });
  try {
    await rig.external.approve('swap');
    assert.ok(rig.kernel.tools.has('swap_one'));
    const turn1 = rig.kernel.injectInput('test', 'console', 'use the swap tool');
    await rig.provider.waitForRequests(1);
    // The turn is parked on its first LLM call: change the file and ask for a reload.
    writeFileSync(path.join(dir, 'main.lua'), TWO);
    let reloaded = false;
    const reload = rig.external.reload().then((r) => {
      reloaded = true;
      return r;
    });
    for (let i = 0; i < 20; i++) await new Promise((r) => setImmediate(r));
    assert.equal(reloaded, false, 'the reload waits for the turn');
    assert.ok(rig.kernel.tools.has('swap_one') && !rig.kernel.tools.has('swap_two'), 'no swap in the middle of the turn');
    release();
    const r1 = await turn1;
    assert.equal(r1.status, 'done');
    assert.equal(r1.tools[0]?.result, 'one', 'the turn called the tool it was offered');
    assert.equal(JSON.stringify(rig.provider.requests[0]!.tools), JSON.stringify(rig.provider.requests[1]!.tools), 'same tools within one turn');
    const rr = await reload;
    assert.deepEqual(rr.changed, ['swap']);
    assert.ok(rig.kernel.tools.has('swap_two') && !rig.kernel.tools.has('swap_one'));
    await rig.kernel.injectInput('test', 'console', 'again');
    assert.match(JSON.stringify(rig.provider.requests[2]!.tools), /swap_two/);
    assert.doesNotMatch(JSON.stringify(rig.provider.requests[2]!.tools), /swap_one/);
  } finally {
    release();
    await rig.close();
  }
});

test('reload picks up a new folder and drops a removed one without a restart', async () => {
  const rig = await startRig();
  try {
    writePlugin(pluginsDir(rig.dataDir), 'fresh', { name: 'fresh', version: '1.0.0', kind: 'skill', entry: 'SKILL.md' }, { 'SKILL.md': '---\nname: fresh\ndescription: New here.\n---\nDo it.\n' });
    const r = await rig.external.reload();
    assert.deepEqual(r.added, ['fresh']);
    assert.equal(rig.external.info('fresh').state, 'running');
    assert.ok(rig.skills.get('fresh'));
    rmSync(path.join(pluginsDir(rig.dataDir), 'fresh'), { recursive: true });
    const r2 = await rig.external.reload();
    assert.deepEqual(r2.removed, ['fresh']);
    assert.equal(rig.skills.get('fresh'), undefined);
    assert.equal(rig.kernel.host.status().find((s) => s.name === 'fresh'), undefined);
  } finally {
    await rig.close();
  }
});

test('reload with a manifest broken by hand keeps the loaded version and says why', async () => {
  let dir = '';
  const rig = await startRig({ setup: (d) => void (dir = writePlugin(pluginsDir(d), 'swap', manifest, { 'main.lua': ONE })) });
  try {
    await rig.external.approve('swap');
    writeFileSync(path.join(dir, 'plugin.json'), JSON.stringify({ ...manifest, version: 'two' }));
    const r = await rig.external.reload();
    assert.match(r.failed[0]!.error, /\/version: must match pattern/);
    assert.ok(rig.kernel.tools.has('swap_one'));
    const info = rig.external.info('swap');
    assert.equal(info.state, 'running');
    assert.match(info.message!, /new version is refused/);
  } finally {
    await rig.close();
  }
});
