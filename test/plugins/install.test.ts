/**
 * `homeagent plugins install` (issue 17 "Restricted SDK"): a folder or a
 * .tgz is copied into <data dir>/plugins/<name>/ with the capabilities
 * approved (--yes or an interactive yes); without approval a new plugin is
 * held; an update that asks for more is held in .held while the approved
 * version goes on running, until `plugins approve`; remove takes it away;
 * symbolic links are refused. The CLI end (ask / --yes) runs against a real
 * service in test/plugins/cli.test.ts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { pluginsDir, startRig, writePlugin } from './rig.js';

const luaManifest = (version: string, caps: string[]) => ({ name: 'counter', version, kind: 'lua', entry: 'main.lua', capabilities: caps });
const V1 = 'sdk.register_tool{ name = "count_v1", handler = function() return "v1" end }';
const V2 = 'sdk.register_tool{ name = "count_v2", handler = function() return "v2" end }\nsdk.subscribe("system", function(p) end)';

function src(): string {
  return mkdtempSync(path.join(os.tmpdir(), 'homeagent-src-'));
}

test('install with approval runs it; an update asking for more is held until approved, the old version running meanwhile', async () => {
  const s = src();
  const rig = await startRig();
  try {
    const dir1 = writePlugin(s, 'counter', luaManifest('1.0.0', ['tools']), { 'main.lua': V1 });
    const preview = rig.external.preview(dir1);
    assert.deepEqual(preview.asks, ['tools']);
    assert.deepEqual(preview.missing, ['tools']);
    assert.equal(preview.update, false);
    const r1 = await rig.external.install(dir1, true);
    assert.equal(r1.outcome, 'installed');
    assert.equal(r1.state, 'running');
    assert.ok(existsSync(path.join(pluginsDir(rig.dataDir), 'counter', 'main.lua')));
    assert.ok(rig.kernel.tools.has('count_v1'));
    // The update asks for events:subscribe as well: held, v1 still runs with its files.
    const s2 = src();
    const dir2 = writePlugin(s2, 'counter', luaManifest('1.1.0', ['tools', 'events:subscribe']), { 'main.lua': V2 });
    const p2 = rig.external.preview(dir2);
    assert.equal(p2.update, true);
    assert.deepEqual(p2.missing, ['events:subscribe']);
    const r2 = await rig.external.install(dir2, false);
    assert.equal(r2.outcome, 'held');
    assert.match(r2.message, /asks for events:subscribe/);
    assert.ok(rig.kernel.tools.has('count_v1') && !rig.kernel.tools.has('count_v2'));
    assert.equal(readFileSync(path.join(pluginsDir(rig.dataDir), 'counter', 'main.lua'), 'utf8'), V1, 'not started with the new files');
    const info = rig.external.info('counter');
    assert.equal(info.version, '1.0.0');
    assert.equal(info.held_version, '1.1.0');
    assert.match(info.message!, /plugins approve counter/);
    // Approved: the new version replaces the old.
    const after = await rig.external.approve('counter');
    assert.equal(after.state, 'running');
    assert.equal(after.version, '1.1.0');
    assert.ok(rig.kernel.tools.has('count_v2') && !rig.kernel.tools.has('count_v1'));
    assert.deepEqual(rig.approvals.get('counter')?.capabilities, ['events:subscribe', 'tools']);
    // An update asking for nothing new goes in without a question.
    const s3 = src();
    const r3 = await rig.external.install(writePlugin(s3, 'counter', luaManifest('1.2.0', ['tools']), { 'main.lua': V1 }), false);
    assert.equal(r3.outcome, 'installed');
    assert.equal(rig.external.info('counter').version, '1.2.0');
    // Remove: gone, with its approval.
    await rig.external.remove('counter');
    assert.ok(!existsSync(path.join(pluginsDir(rig.dataDir), 'counter')));
    assert.ok(!rig.kernel.tools.has('count_v1'));
    assert.equal(rig.approvals.get('counter'), undefined);
    assert.throws(() => rig.external.info('counter'), /no plugin called "counter"/);
    rmSync(s2, { recursive: true, force: true });
    rmSync(s3, { recursive: true, force: true });
  } finally {
    await rig.close();
    rmSync(s, { recursive: true, force: true });
  }
});

test('install without approval holds a new plugin; a .tgz (npm pack layout) installs; links and bad manifests are refused', async () => {
  const s = src();
  const rig = await startRig();
  try {
    const held = await rig.external.install(writePlugin(s, 'counter', luaManifest('1.0.0', ['tools']), { 'main.lua': V1 }), false);
    assert.equal(held.outcome, 'held');
    assert.equal(rig.external.info('counter').state, 'held');
    assert.ok(!rig.kernel.tools.has('count_v1'));
    await rig.external.approve('counter');
    assert.ok(rig.kernel.tools.has('count_v1'));

    // A tarball with everything under package/ (what npm pack makes).
    const t = src();
    writePlugin(t, 'package', { name: 'tarred', version: '0.1.0', kind: 'skill', entry: 'SKILL.md' }, { 'SKILL.md': '---\nname: tarred\ndescription: From a tarball.\n---\nBody.\n' });
    const tgz = path.join(t, 'tarred-0.1.0.tgz');
    execFileSync('tar', ['-czf', tgz, '-C', t, 'package']);
    const r = await rig.external.install(tgz, false);
    assert.equal(r.outcome, 'installed', 'a skill asks for nothing: no approval needed');
    assert.equal(rig.skills.get('tarred')?.description, 'From a tarball.');

    const l = src();
    const dir = writePlugin(l, 'linky', { name: 'linky', version: '1.0.0', kind: 'skill', entry: 'SKILL.md' }, { 'SKILL.md': '---\nname: linky\ndescription: x\n---\n' });
    symlinkSync('/etc/passwd', path.join(dir, 'secret.md'));
    await assert.rejects(rig.external.install(dir, true), /symbolic link \(secret\.md\)/);
    assert.ok(!existsSync(path.join(pluginsDir(rig.dataDir), 'linky')));

    const b = src();
    assert.throws(() => rig.external.preview(writePlugin(b, 'bad', { name: 'bad', version: 'one', kind: 'skill', entry: 'SKILL.md' })), /\/version: must match pattern/);
    for (const d of [t, l, b]) rmSync(d, { recursive: true, force: true });
  } finally {
    await rig.close();
    rmSync(s, { recursive: true, force: true });
  }
});

test('the CLI sends the plugin as bytes: the service unpacks an uploaded .tgz and removes it after', async () => {
  const { withPluginSource } = await import('../../src/service/app.js');
  const t = src();
  const rig = await startRig();
  try {
    writePlugin(t, 'up', { name: 'up', version: '1.0.0', kind: 'skill', entry: 'SKILL.md' }, { 'SKILL.md': '---\nname: up\ndescription: Uploaded.\n---\nBody\n' });
    // What the CLI does for a folder: tar -czf - -C DIR .
    const archive = execFileSync('tar', ['-czf', '-', '-C', path.join(t, 'up'), '.']).toString('base64');
    let seen = '';
    const r = await withPluginSource({ archive_b64: archive }, (p) => {
      seen = p;
      assert.ok(existsSync(p));
      return rig.external.install(p, false);
    });
    assert.equal(r.outcome, 'installed');
    assert.equal(rig.skills.get('up')?.description, 'Uploaded.');
    assert.ok(!existsSync(seen), 'the upload is removed');
    await assert.rejects(withPluginSource({}, () => 1), /missing "archive_b64"/);
  } finally {
    await rig.close();
    rmSync(t, { recursive: true, force: true });
  }
});

test('the Python example installed as a household would (install --yes): loaded by the loader, sandboxed, its tool answers in a real turn with its own setting', async () => {
  const rig = await startRig({ script: [{ tool_calls: [{ name: 'hello_greet', arguments: { name: 'Ada' } }] }, { content: 'I greeted Ada.' }] });
  try {
    const example = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..', '..', 'examples', 'plugins', 'python-hello');
    const r = await rig.external.install(example, true);
    assert.equal(r.outcome, 'installed');
    assert.equal(r.state, 'running', r.message);
    assert.ok(rig.kernel.tools.has('hello_greet'));
    // Its settings reach it at start (the initialize request): a change applies after `plugins restart`.
    rig.kernel.settings.set('plugin.python-hello.greeting', 'Good evening');
    assert.equal((await rig.external.restart('python-hello')).state, 'running');
    const turn = await rig.kernel.injectInput('test', 'console', 'greet Ada');
    assert.equal(turn.status, 'done');
    const toolMsg = rig.provider.requests[1]!.messages.find((m) => m.role === 'tool');
    assert.equal(toolMsg?.content, 'Good evening, Ada!', 'the plugin read its own setting through the restricted SDK');
    // The runtime's own limits come from the box's settings, not through the plugin's restricted view (no refusal logged).
    const info = rig.external.info('python-hello');
    assert.equal(info.state, 'running');
    await rig.external.remove('python-hello');
    assert.ok(!rig.kernel.tools.has('hello_greet'), 'removed: its tool is gone');
  } finally {
    await rig.close();
  }
});
