/**
 * The loader (issue 17 "Loading"): a manifest that does not validate is
 * refused with a message naming the field and never stops the service; a
 * plugin for another platform is skipped and says why; manifest settings
 * join the registry as plugin.<name>.<key>; shipped plugins are trusted with
 * what they ask, installed ones are held until approved; an Agent Skills
 * folder with only SKILL.md is a skill; `plugins` lists kind, version,
 * state, restarts, last error and capabilities.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { pluginsDir, startRig, writePlugin } from './rig.js';
import { pluginRows } from '../../src/service/app.js';
import { pluginsText } from '../../src/cli/format.js';

const SKILL = (name: string, description = 'Does a thing.') => `---\nname: ${name}\ndescription: ${description}\n---\nStep one.\n`;

test('bad manifests are refused naming the field, another platform is skipped, and the rest load', async () => {
  const rig = await startRig({
    platform: 'linux',
    arch: 'arm64',
    setup: (d) => {
      const root = pluginsDir(d);
      writePlugin(root, 'badcap', { name: 'badcap', version: '1.0.0', kind: 'lua', entry: 'main.lua', capabilities: ['tools', 'root'] }, { 'main.lua': '' });
      writePlugin(root, 'badkind', { name: 'badkind', version: '1.0.0', kind: 'python', entry: 'x.py' });
      writePlugin(root, 'noversion', { name: 'noversion', kind: 'skill', entry: 'SKILL.md' }, { 'SKILL.md': SKILL('noversion') });
      writePlugin(root, 'wrongname', { name: 'othername', version: '1.0.0', kind: 'skill', entry: 'SKILL.md' }, { 'SKILL.md': SKILL('wrongname') });
      writePlugin(root, 'noentry', { name: 'noentry', version: '1.0.0', kind: 'lua', entry: 'main.lua' });
      writePlugin(root, 'notjson', null, { 'plugin.json': '{ "name": ' });
      writePlugin(root, 'mac', { name: 'mac', version: '1.0.0', kind: 'skill', entry: 'SKILL.md', platforms: ['darwin'] }, { 'SKILL.md': SKILL('mac') });
      writePlugin(root, 'armonly', { name: 'armonly', version: '1.0.0', kind: 'skill', entry: 'SKILL.md', platforms: ['linux-arm64'] }, { 'SKILL.md': SKILL('armonly') });
      writePlugin(root, 'good', { name: 'good', version: '2.1.0', kind: 'skill', entry: 'SKILL.md', settings: { units: { type: 'string', default: 'metric', description: 'units', enum: ['metric', 'imperial'] } } }, { 'SKILL.md': SKILL('good') });
    },
  });
  try {
    const by = Object.fromEntries(rig.external.list().map((p) => [p.name, p]));
    assert.equal(by.badcap!.state, 'refused');
    assert.match(by.badcap!.message!, /badcap\/plugin\.json: \/capabilities\/1: must be one of/);
    assert.match(by.badkind!.message!, /\/kind: must be one of process, lua, skill, mcp/);
    assert.match(by.noversion!.message!, /missing field "version"/);
    assert.match(by.wrongname!.message!, /\/name: "othername" differs from its folder's name "wrongname"/);
    assert.match(by.noentry!.message!, /\/entry: "main.lua" does not exist/);
    assert.match(by.notjson!.message!, /not JSON/);
    assert.equal(by.mac!.state, 'skipped');
    assert.match(by.mac!.message!, /for darwin; this is linux-arm64/);
    assert.equal(by.armonly!.state, 'running');
    assert.equal(by.good!.state, 'running');
    assert.equal(by.good!.version, '2.1.0');
    assert.equal(by.good!.kind, 'skill');
    // Manifest settings join the registry.
    assert.equal(rig.settings.get('plugin.good.units'), 'metric');
    assert.throws(() => rig.settings.set('plugin.good.units', 'furlongs'));
    // The service goes on: the kernel answers.
    const r = await rig.kernel.injectInput('test', 'console', 'hello');
    assert.equal(r.status, 'done');
    // `homeagent plugins` shows them all, with the reason.
    const text = pluginsText(pluginRows({ kernel: rig.kernel, external: rig.external }) as unknown as Array<Record<string, unknown>>, Date.now());
    assert.match(text, /NAME\s+KIND\s+VERSION\s+STATE\s+RESTARTS\s+LAST ERROR\s+CAPABILITIES/);
    assert.match(text, /badcap refused: .*\/capabilities\/1/);
    assert.match(text, /good\s+skill\s+2\.1\.0\s+running/);
    assert.match(text, /skills\s+built-in/);
  } finally {
    await rig.close();
  }
});

test('shipped plugins are trusted with what they ask; installed-by-hand ones are held until approved; a data plugin replaces a shipped one', async () => {
  const pkg = mkdtempSync(path.join(os.tmpdir(), 'homeagent-pkg-'));
  writePlugin(pkg, 'shipped', { name: 'shipped', version: '1.0.0', kind: 'lua', entry: 'main.lua', capabilities: ['tools'] }, { 'main.lua': 'sdk.register_tool{ name = "shipped_tool", handler = function() return "ok" end }' });
  writePlugin(pkg, 'replaced', { name: 'replaced', version: '1.0.0', kind: 'skill', entry: 'SKILL.md' }, { 'SKILL.md': SKILL('replaced', 'old') });
  const rig = await startRig({
    packageDir: pkg,
    setup: (d) => {
      writePlugin(pluginsDir(d), 'byhand', { name: 'byhand', version: '1.0.0', kind: 'lua', entry: 'main.lua', capabilities: ['tools'] }, { 'main.lua': 'sdk.register_tool{ name = "byhand_tool", handler = function() return "ok" end }' });
      writePlugin(pluginsDir(d), 'replaced', { name: 'replaced', version: '2.0.0', kind: 'skill', entry: 'SKILL.md' }, { 'SKILL.md': SKILL('replaced', 'new') });
      writePlugin(pluginsDir(d), 'agentskill', null, { 'SKILL.md': SKILL('agentskill', 'An Agent Skills folder without plugin.json') });
    },
  });
  try {
    assert.equal(rig.external.info('shipped').state, 'running');
    assert.ok(rig.kernel.tools.has('shipped_tool'));
    assert.equal(rig.external.info('byhand').state, 'held');
    assert.deepEqual(rig.external.info('byhand').missing, ['tools']);
    assert.ok(!rig.kernel.tools.has('byhand_tool'));
    assert.equal(rig.external.info('replaced').version, '2.0.0');
    assert.equal(rig.skills.get('replaced')?.description, 'new');
    assert.equal(rig.external.info('agentskill').state, 'running');
    assert.equal(rig.external.info('agentskill').kind, 'skill');
    await rig.external.approve('byhand');
    assert.equal(rig.external.info('byhand').state, 'running');
    assert.ok(rig.kernel.tools.has('byhand_tool'));
    assert.deepEqual(rig.approvals.get('byhand')?.capabilities, ['tools']);
    await assert.rejects(rig.external.remove('shipped'), /comes with the package/);
  } finally {
    await rig.close();
    rmSync(pkg, { recursive: true, force: true });
  }
});

test('disable and enable are kept across a restart of the service', async () => {
  let dataDir = '';
  const rig = await startRig({ setup: (d) => void writePlugin(pluginsDir((dataDir = d)), 'sk', { name: 'sk', version: '1.0.0', kind: 'skill', entry: 'SKILL.md' }, { 'SKILL.md': SKILL('sk') }) });
  try {
    await rig.external.setDisabled('sk', true);
    assert.equal(rig.external.info('sk').state, 'disabled');
    assert.equal(rig.skills.get('sk'), undefined);
    assert.equal(rig.approvals.get('sk')?.disabled, true);
    // A new service on the same data directory starts it disabled.
    const { ApprovalStore } = await import('../../src/plugins/external/approvals.js');
    assert.equal(new ApprovalStore(dataDir).get('sk')?.disabled, true);
    await rig.external.setDisabled('sk', false);
    assert.equal(rig.external.info('sk').state, 'running');
    assert.ok(rig.skills.get('sk'));
  } finally {
    await rig.close();
  }
});

test('a process plugin is listed with its sandbox: advisory where bubblewrap is not usable', async () => {
  const rig = await startRig({
    setup: (d) => {
      writePlugin(pluginsDir(d), 'solar', { name: 'solar', version: '0.3.0', kind: 'process', entry: ['python3', 'main.py'], capabilities: ['tools', 'network'] }, { 'main.py': 'print()' });
    },
  });
  try {
    await rig.external.approve('solar');
    const info = rig.external.info('solar');
    assert.equal(info.sandbox, 'advisory');
    assert.deepEqual(info.capabilities, ['network', 'tools']);
    const text = pluginsText(pluginRows({ kernel: rig.kernel, external: rig.external }) as unknown as Array<Record<string, unknown>>, Date.now());
    assert.match(text, /solar\s+process\s+0\.3\.0\s+\S+.*network, tools \[sandbox: advisory\]/);
    assert.match(text, /sandbox advisory: bubblewrap is not usable here/);
    const plugin = rig.external.get('solar')!;
    assert.equal(plugin.external, true);
    assert.equal(plugin.inner.constructor.name, 'ProcessPlugin');
  } finally {
    await rig.close();
  }
});
