/**
 * Plugin host and event bus: a plugin crash at start does not stop the
 * others and leaves nothing registered; stopping a plugin removes all its
 * tools, stages, subscriptions and channels; a throwing subscriber is isolated;
 * external L4 is clamped to L3.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Plugin } from '../../src/kernel/sdk.js';
import { Cap } from '../../src/kernel/output-types.js';
import { startHarness } from '../support/kernel-harness.js';

const full = (name: string, log: string[]): Plugin => ({
  name,
  start(sdk) {
    sdk.registerTool({ name: `${name}_tool`, description: 'x', parameters: { type: 'object' }, handler: () => 'x' });
    sdk.registerStage('on_input', () => {
      log.push(`${name}:on_input`);
    });
    sdk.subscribe('raw_input', () => {
      log.push(`${name}:raw_input`);
    });
    sdk.registerOutputChannel(`${name}-out`, Cap.Text, 'x', () => undefined);
  },
});

test('a plugin that crashes at start does not stop the others and leaves nothing behind', async () => {
  const log: string[] = [];
  const crasher: Plugin = {
    name: 'crasher',
    start(sdk) {
      sdk.registerTool({ name: 'crasher_tool', description: 'x', parameters: { type: 'object' }, handler: () => 'x' });
      sdk.registerStage('on_input', () => {
        log.push('crasher:on_input');
      });
      throw new Error('cannot open /dev/nothing');
    },
  };
  const hanger: Plugin = { name: 'hanger', start: () => new Promise(() => undefined) };
  const h = await startHarness({
    beforeStart: (k) => {
      k.use(full('before', log)).use(crasher).use(full('after', log));
      k.host.add(hanger);
      k.settings.set('core.plugins.start_timeout_ms', 300);
    },
  });
  try {
    const st = Object.fromEntries(h.kernel.host.status().map((s) => [s.name, s]));
    assert.equal(st.before!.state, 'running');
    assert.equal(st.after!.state, 'running');
    assert.equal(st.crasher!.state, 'failed');
    assert.equal(st.hanger!.state, 'failed');
    assert.match(st.hanger!.error!, /timed out after 300 ms/);
    assert.match(st.crasher!.error!, /cannot open/);
    assert.ok(!h.kernel.tools.has('crasher_tool'));
    await h.kernel.injectInput('test', 'console', 'hello');
    assert.ok(log.includes('before:on_input') && log.includes('after:on_input'));
    assert.ok(!log.includes('crasher:on_input'));
  } finally {
    await h.close();
  }
});

test('stopping a plugin removes its tools, stages, subscriptions and channels', async () => {
  const log: string[] = [];
  const h = await startHarness({ beforeStart: (k) => k.use(full('p1', log)) });
  try {
    assert.ok(h.kernel.tools.has('p1_tool') && h.kernel.tools.has('output_send__p1-out'));
    assert.equal(h.kernel.stages.countOwner('p1'), 1);
    assert.equal(h.kernel.bus.countOwner('p1'), 1);
    await h.kernel.host.stop('p1');
    assert.ok(!h.kernel.tools.has('p1_tool'));
    assert.ok(!h.kernel.tools.has('output_send__p1-out'));
    assert.ok(!h.kernel.tools.has('output_send__p1-out_help'));
    assert.equal(h.kernel.outputs.get('p1-out'), undefined);
    assert.equal(h.kernel.stages.countOwner('p1'), 0);
    assert.equal(h.kernel.bus.countOwner('p1'), 0);
    await h.kernel.injectInput('test', 'console', 'hello');
    assert.deepEqual(log, []);
  } finally {
    await h.close();
  }
});

test('a throwing or rejecting subscriber is logged and isolated', async () => {
  const got: string[] = [];
  const p: Plugin = {
    name: 'subs',
    start(sdk) {
      sdk.subscribe('system', () => {
        throw new Error('sync boom');
      });
      sdk.subscribe('system', async () => {
        throw new Error('async boom');
      });
      sdk.subscribe('system', (e) => {
        got.push(e.message);
      });
    },
  };
  const h = await startHarness({ beforeStart: (k) => k.use(p) });
  try {
    h.kernel.bus.publish('system', { kind: 'test', message: 'still delivered' });
    await new Promise((r) => setImmediate(r));
    assert.deepEqual(got, ['kernel started', 'still delivered']);
  } finally {
    await h.close();
  }
});

test('an external plugin declaring L4 is clamped to L3; a kernel-level one keeps L4', async () => {
  const levels: number[] = [];
  const watcher: Plugin = {
    name: 'watcher',
    start(sdk) {
      sdk.registerStage('on_input', (ctx) => {
        levels.push(ctx.input.level);
        ctx.response = 'seen';
      });
    },
  };
  let ext!: Parameters<Plugin['start']>[0];
  let kern!: Parameters<Plugin['start']>[0];
  const external: Plugin = { name: 'ext', start: (sdk) => void (ext = sdk) };
  const kernelLevel: Plugin = { name: 'button', kernelLevel: true, start: (sdk) => void (kern = sdk) };
  const h = await startHarness({ beforeStart: (k) => k.use(watcher).use(external).use(kernelLevel) });
  try {
    await ext.injectInterrupt(4, 'console', 'urgent from outside');
    await kern.injectInterrupt(4, 'console', 'kernel critical');
    await ext.injectInput('console', 'plain');
    assert.deepEqual(levels, [3, 4, 0]);
  } finally {
    await h.close();
  }
});
