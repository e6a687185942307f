/**
 * Lua script plugins (issue 17): main.lua registers tools, stage handlers
 * and subscriptions through `sdk`; a tool's endless loop is stopped by the
 * instruction budget and returned as a tool error while the box goes on
 * answering; a reload with a broken file keeps the old registrations, a good
 * one swaps them; a registration the plugin was not granted is refused and
 * logged.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import path from 'node:path';
import { onLogProblem, type RecentProblem } from '../../src/kernel/log.js';
import { pluginsDir, startRig, writePlugin } from './rig.js';

const manifest = (caps: string[]) => ({ name: 'luademo', version: '1.0.0', kind: 'lua', entry: 'main.lua', capabilities: caps });

const MAIN_V1 = `
sdk.register_tool{
  name = "lua_add",
  description = "Add two numbers. Example: {\\"a\\":1,\\"b\\":2}",
  parameters = { type = "object", properties = { a = { type = "number" }, b = { type = "number" } }, required = { "a", "b" } },
  handler = function(args) return tostring(args.a + args.b) end,
}
sdk.register_tool{
  name = "lua_spin",
  description = "Never ends",
  parameters = { type = "object", properties = {} },
  handler = function(args) while true do end end,
}
sdk.register_stage("on_input", function(ctx)
  if ctx.raw_message == "lua ping" then return { response = "pong from lua" } end
end)
`;

async function callTool(rig: Awaited<ReturnType<typeof startRig>>, name: string, args: Record<string, unknown>) {
  const input = { id: 'test', source: 'test', channel: 'console', text: '', kind: 'queued' as const, level: 0 as const, received_at: 0 };
  return rig.kernel.tools.execute(name, args, { input, signal: new AbortController().signal, call_id: 'c1' });
}

test('a Lua plugin registers tools and a stage; an endless loop in a tool is a tool error and the box keeps answering', async () => {
  const rig = await startRig({
    setup: (d) => writePlugin(pluginsDir(d), 'luademo', manifest(['tools', 'stage:on_input']), { 'main.lua': MAIN_V1 }),
  });
  try {
    // Not approved yet: held, nothing registered.
    assert.equal(rig.external.info('luademo').state, 'held');
    assert.ok(!rig.kernel.tools.has('lua_add'));
    await rig.external.approve('luademo');
    assert.equal(rig.external.info('luademo').state, 'running');
    const r = await callTool(rig, 'lua_add', { a: 2, b: 40 });
    assert.equal(r.content, '42');
    const spin = await callTool(rig, 'lua_spin', {});
    assert.equal(spin.is_error, true);
    assert.match(spin.content, /instruction budget exceeded/);
    // The VM still answers, and so does the box.
    assert.equal((await callTool(rig, 'lua_add', { a: 1, b: 1 })).content, '2');
    const turn = await rig.kernel.injectInput('test', 'console', 'lua ping');
    assert.equal(turn.reply, 'pong from lua');
    rig.provider.enqueue({ tool_calls: [{ name: 'tools_call', arguments: { name: 'lua_spin', arguments: {} } }] }, { content: 'That tool did not finish.' });
    const t2 = await rig.kernel.injectInput('test', 'console', 'spin please');
    assert.equal(t2.status, 'done');
    assert.equal(t2.reply, 'That tool did not finish.');
    assert.match(String(t2.tools[0]?.result), /budget/);
  } finally {
    await rig.close();
  }
});

test('reloading a Lua plugin: a broken file keeps the old tools, a good one swaps them at once', async () => {
  let dir = '';
  const rig = await startRig({
    setup: (d) => {
      dir = writePlugin(pluginsDir(d), 'luademo', manifest(['tools', 'stage:on_input']), { 'main.lua': MAIN_V1 });
    },
  });
  try {
    await rig.external.approve('luademo');
    assert.ok(rig.kernel.tools.has('lua_add'));
    writeFileSync(path.join(dir, 'main.lua'), 'sdk.register_tool{ name = "lua_mul", handler = function(a) return a.x * 2 end\n this is not lua');
    const bad = await rig.external.reload();
    assert.equal(bad.failed.length, 1);
    assert.match(bad.failed[0]!.error, /plugins\/luademo\/main\.lua:2/);
    assert.ok(rig.kernel.tools.has('lua_add'), 'the old registrations stay');
    assert.equal(rig.external.info('luademo').state, 'running');
    writeFileSync(path.join(dir, 'main.lua'), `sdk.register_tool{ name = "lua_mul", description = "double", parameters = { type = "object", properties = { x = { type = "number" } } }, handler = function(a) return a.x * 2 end }`);
    const good = await rig.external.reload();
    assert.deepEqual(good.changed, ['luademo']);
    assert.ok(!rig.kernel.tools.has('lua_add'));
    assert.equal((await callTool(rig, 'lua_mul', { x: 21 })).content, '42');
  } finally {
    await rig.close();
  }
});

test('a Lua plugin registering a stage it was not granted is refused, logged, and leaves nothing registered', async () => {
  const rig = await startRig({
    setup: (d) => writePlugin(pluginsDir(d), 'luademo', manifest(['tools']), { 'main.lua': MAIN_V1 }),
  });
  // Every problem logged from here on (the ring of recent problems holds only
  // the last 20, which a loaded machine's other warnings can push it out of).
  const problems: RecentProblem[] = [];
  const unsubscribe = onLogProblem((p) => problems.push(p));
  try {
    await rig.external.approve('luademo');
    const info = rig.external.info('luademo');
    assert.equal(info.state, 'failed', JSON.stringify(info));
    assert.match(info.last_error!, /PERMISSION_DENIED|may not handle the on_input stage: capability "stage:on_input" was not approved/);
    assert.ok(!rig.kernel.tools.has('lua_add'), 'what it registered before the refusal is removed');
    assert.equal(info.next_restart_at, undefined, 'a refusal repeats: not retried until approved or changed');
    const logged = problems.find((p) => p.ns.endsWith('plugin:luademo') && /capability not approved/.test(p.msg));
    assert.ok(logged, `the refusal is logged; logged were: ${JSON.stringify(problems)}`);
    assert.match(logged.err ?? '', /stage:on_input/);
  } finally {
    unsubscribe();
    await rig.close();
  }
});

test('the example in docs/examples/dice installs and works as docs/PLUGINS.md shows it', async () => {
  const { readFileSync } = await import('node:fs');
  const { INSTALL_ROOT } = await import('../../src/kernel/kernel.js');
  const example = path.join(INSTALL_ROOT, 'docs', 'examples', 'dice');
  const doc = readFileSync(path.join(INSTALL_ROOT, 'docs', 'PLUGINS.md'), 'utf8');
  const main = readFileSync(path.join(example, 'main.lua'), 'utf8');
  const shown = /```lua\n([\s\S]*?)```/.exec(doc.slice(doc.indexOf('## Lua plugins')))![1]!;
  assert.ok(main.includes(shown.trim()), 'the documentation shows the example as it is');
  const rig = await startRig();
  try {
    const r = await rig.external.install(example, true);
    assert.equal(r.state, 'running', r.message);
    assert.match((await callTool(rig, 'dice_roll', { sides: 1, count: 3 })).content, /^rolled 3$/);
    rig.settings.set('plugin.dice.default_sides', 2);
    assert.match((await callTool(rig, 'dice_roll', {})).content, /^rolled [12]$/);
    assert.match((await rig.kernel.injectInput('test', 'console', 'roll for me')).reply, /^Rolled a [12]$/);
  } finally {
    await rig.close();
  }
});
