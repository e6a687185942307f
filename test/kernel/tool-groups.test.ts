/**
 * Issue 19 "Only the tools a turn needs": an ordinary turn offers the core
 * (core.agent.core_tools), the tools of the output channel in use and the two
 * stable loader tools; a tool outside the core is reached with tools_load
 * (its schema arrives as a tool result) and tools_call, in the same turn and
 * in a later one, while the bytes before the history stay the same. The LLM
 * test server refuses any call of a tool its request did not offer, so a turn
 * that succeeds used only what it was offered. The inner call of a
 * tools_call is validated with the same ajv schema as a direct call and
 * passes before_toolcall like one.
 */
import { describe, it, test } from 'node:test';
import assert from 'node:assert/strict';
import type { Plugin } from '../../src/kernel/sdk.js';
import { defineTool, schemaGuard, type ObjectSchemaLiteral } from '../../src/kernel/tool-schema.js';
import { MODEL_HIDDEN, modelSchema, ToolRegistry, toolSchema } from '../../src/kernel/tool-registry.js';
import { silentLogger } from '../support/quiet.js';
import { DEFAULT_CORE_TOOLS, offeredSchemas, TOOLS_CALL, TOOLS_LOAD, unwrapToolsCall } from '../../src/kernel/tool-groups.js';
import { homeTools, type HomeToolDeps } from '../../src/home/tools.js';
import type { ReceivedRequest } from '../support/llm-test-server.js';
import { startLlmRig } from './llm-rig.js';
import { renderRequest, renderUpToHistoryEnd } from './prompt-render.js';

/** Sprinkler runs the garden plugin's tool was called with. */
const runs: Array<{ zone: string; minutes: number }> = [];

/** A plugin whose one tool is in its default group, `garden`, not in the core. */
const garden: Plugin = {
  name: 'garden',
  start(sdk) {
    sdk.registerTool(
      defineTool({
        name: 'sprinkler_start',
        description: 'Water one garden zone. Example: {"zone":"front","minutes":5}',
        parameters: { type: 'object', properties: { zone: { type: 'string', enum: ['front', 'back', 'greenhouse'] }, minutes: { type: 'number', minimum: 1, maximum: 60 } }, required: ['zone', 'minutes'], additionalProperties: false },
        handler: (args) => {
          runs.push({ zone: args.zone, minutes: args.minutes });
          return `watering ${args.zone} for ${args.minutes} min`;
        },
      }),
    );
    // A policy on the inner tool: the greenhouse is never watered by the model.
    sdk.registerStage('before_toolcall', (ctx) => {
      if (ctx.tool_call?.function.name === 'sprinkler_start' && ctx.tool_call.function.arguments.zone === 'greenhouse') {
        ctx.deny = true;
        ctx.deny_reason = 'the greenhouse waters itself';
      }
    });
  },
};

const CORE = ['memory_recall', 'memory_commit'];
const offered = (req: ReceivedRequest): string[] => (req.body?.tools ?? []).map((t) => t.function?.name ?? '');
const lastUser = (req: ReceivedRequest): string => String([...(req.body?.messages ?? [])].reverse().find((m) => m.role === 'user')?.content ?? '');
const toolResults = (req: ReceivedRequest): string[] => (req.body?.messages ?? []).filter((m) => m.role === 'tool').map((m) => String(m.content));

test('an ordinary turn offers the core; a tool outside it is reached through tools_load and tools_call in the same turn and later ones, the bytes before the history unchanged', async () => {
  runs.length = 0;
  const rig = await startLlmRig('ollama', { 'core.agent.core_tools': CORE }, (k) => k.use(garden), { refuseUnofferedTools: true });
  try {
    const turnOf = new Map<string, ReceivedRequest[]>();
    rig.srv.script((req) => {
      const said = lastUser(req);
      (turnOf.get(said) ?? turnOf.set(said, []).get(said)!).push(req);
      const done = toolResults(req).length - (turnOf.get(said)![0] ? toolResults(turnOf.get(said)![0]!).length : 0);
      if (said === 'water the front garden') {
        // Round 1 loads the group, round 2 calls with bad arguments, round 3 calls right, then the answer.
        if (done === 0) return { tool_calls: [{ name: TOOLS_LOAD, arguments: { group: 'garden' } }] };
        if (done === 1) return { tool_calls: [{ name: TOOLS_CALL, arguments: { name: 'sprinkler_start', arguments: { zone: 'front', minutes: 'five' } } }] };
        if (done === 2) return { tool_calls: [{ name: TOOLS_CALL, arguments: { name: 'sprinkler_start', arguments: { zone: 'front', minutes: 5 } } }] };
        return { content: 'Watering the front for five minutes.' };
      }
      if (said === 'what is a good time to water?') return { content: 'Early in the morning.' };
      if (said === 'now the back, ten minutes, and the greenhouse') {
        // A later turn: no new tools_load, the schema is in the history.
        if (done === 0) return { tool_calls: [{ name: TOOLS_CALL, arguments: { name: 'sprinkler_start', arguments: { zone: 'back', minutes: 10 } } }, { name: TOOLS_CALL, arguments: { name: 'sprinkler_start', arguments: JSON.stringify({ zone: 'greenhouse', minutes: 3 }) } }] };
        return { content: 'The back is being watered; the greenhouse waters itself.' };
      }
      return { content: 'All right.' };
    });
    const t1 = await rig.kernel.injectInput('console', 'console', 'water the front garden');
    assert.equal(t1.status, 'done', t1.error);
    const t2 = await rig.kernel.injectInput('console', 'console', 'what is a good time to water?');
    assert.equal(t2.status, 'done', t2.error);
    const t3 = await rig.kernel.injectInput('console', 'console', 'now the back, ten minutes, and the greenhouse');
    assert.equal(t3.status, 'done', t3.error);
    assert.deepEqual(rig.srv.refusals.map((r) => r.tool), [], 'no request asked for a tool it was not offered');

    // Offered on every request: the core list, the tools of the input's channel, the loader; the same bytes every time.
    const reqs = rig.srv.chatRequests();
    for (const r of reqs) assert.deepEqual(offered(r), [...CORE, TOOLS_LOAD, TOOLS_CALL]);
    assert.ok(reqs.every((r) => JSON.stringify(r.body!.tools) === JSON.stringify(reqs[0]!.body!.tools)));
    const load = reqs[0]!.body!.tools!.find((t) => t.function?.name === TOOLS_LOAD) as { function: { description: string } };
    assert.match(load.function.description, /Groups: .*admin \(.*\).*garden \(sprinkler_start\).*knowledge \(/, 'the loader names the groups outside the core');
    assert.doesNotMatch(load.function.description, /memory \(/, 'a group wholly in the core is not offered for loading');

    // Same turn: the group's schema came back as a tool result; the bad call was refused by the same ajv check as a direct one; the good one ran.
    const firstTurn = turnOf.get('water the front garden')!;
    const [loaded, invalid, ran] = toolResults(firstTurn.at(-1)!);
    assert.match(loaded!, /"name":"sprinkler_start","description":"Water one garden zone\. Example: \{\\"zone\\":\\"front\\",\\"minutes\\":5\}","parameters":\{"type":"object","properties":\{"zone":\{"type":"string","enum":\["front","back","greenhouse"\]\}/);
    assert.equal(invalid, `error: ${rig.kernel.tools.validate('sprinkler_start', { zone: 'front', minutes: 'five' })!.message}`);
    assert.match(invalid!, /invalid arguments for sprinkler_start: \/minutes must be number/);
    assert.equal(ran, 'watering front for 5 min');
    assert.deepEqual(t1.tools.map((t) => [t.name, t.is_error]), [[TOOLS_LOAD, false], ['sprinkler_start', true], ['sprinkler_start', false]], 'the turn reports the tool that ran');

    // A later turn: called without loading again (arguments as a JSON string accepted); the stage's policy applied to the inner call.
    assert.deepEqual(runs, [{ zone: 'front', minutes: 5 }, { zone: 'back', minutes: 10 }]);
    assert.deepEqual(t3.tools.map((t) => [t.name, t.result]), [['sprinkler_start', 'watering back for 10 min'], ['sprinkler_start', 'denied: the greenhouse waters itself']]);

    // The prefix: each turn's first request starts with every byte of the previous one up to its history's end.
    const firsts = ['water the front garden', 'what is a good time to water?', 'now the back, ten minutes, and the greenhouse'].map((s) => turnOf.get(s)![0]!);
    for (let i = 1; i < firsts.length; i++) {
      const shared = renderUpToHistoryEnd(firsts[i - 1]!.body!)!;
      assert.ok(renderRequest(firsts[i]!.body!).startsWith(shared), `turn ${i + 1} keeps the bytes before the history`);
    }
    // The history shows the calls as the model made them (through tools_call), answered in place.
    const history = renderUpToHistoryEnd(firsts[2]!.body!)!;
    assert.match(history, /<tool_call>\{"name":"tools_load","arguments":\{"group":"garden"\}\}<\/tool_call>/);
    assert.match(history, /<tool_call>\{"name":"tools_call","arguments":\{"name":"sprinkler_start","arguments":\{"zone":"front","minutes":5\}\}\}<\/tool_call>[\s\S]*<tool_response name="tools_call">\nwatering front for 5 min/);
  } finally {
    await rig.close();
  }
});

test('the tools of the channel in use: in output mode explicit a speaker turn offers output_send__speaker, a console turn output_send__console; in mode auto (the default) neither (the reply goes there); the internal channel the memory maintenance tools; the default core list', async () => {
  const rig = await startLlmRig('ollama', {}, undefined, { refuseUnofferedTools: true });
  try {
    rig.srv.script(() => ({ content: 'Fine.' }));
    await rig.kernel.injectInput('console', 'console', 'hello');
    await rig.kernel.injectInput('speaker', 'speaker', 'hello again');
    await rig.kernel.injectInput('_kernel_', '_consolidation_', '[memory review] These facts may conflict ...');
    rig.settings.set('core.output.mode', 'explicit');
    await rig.kernel.injectInput('console', 'console', 'hello, explicitly');
    await rig.kernel.injectInput('speaker', 'speaker', 'hello again, explicitly');
    const [c, s, internal, ce, se] = rig.srv.chatRequests().map(offered);
    // The rig has no home, timers or lists plugin: of the default core list, the memory tools are registered.
    assert.deepEqual(DEFAULT_CORE_TOOLS, ['device_control', 'device_state', 'timer', 'list', 'memory_recall', 'memory_commit']);
    // Mode auto: the plain reply goes to the input's channel; its output_send tool stays loadable (group output).
    assert.deepEqual(c, ['memory_recall', 'memory_commit', TOOLS_LOAD, TOOLS_CALL]);
    assert.deepEqual(s, ['memory_recall', 'memory_commit', TOOLS_LOAD, TOOLS_CALL]);
    // Mode explicit: only an output_send call reaches anyone, so the channel in use's tool is offered.
    assert.deepEqual(ce, ['memory_recall', 'memory_commit', 'output_send__console', TOOLS_LOAD, TOOLS_CALL]);
    assert.deepEqual(se, ['memory_recall', 'memory_commit', 'output_send__speaker', TOOLS_LOAD, TOOLS_CALL]);
    // The internal channel's memory review and merge prompts name these tools; it sends to no output channel.
    assert.deepEqual(internal, ['memory_recall', 'memory_commit', 'memory_merge', 'memory_purge', 'memory_edit', TOOLS_LOAD, TOOLS_CALL]);
  } finally {
    await rig.close();
  }
});

test('the test server refuses a call of a tool the request did not offer', async () => {
  const rig = await startLlmRig('ollama', {}, (k) => k.use(garden), { refuseUnofferedTools: true });
  try {
    rig.srv.script(() => ({ tool_calls: [{ name: 'sprinkler_start', arguments: { zone: 'front', minutes: 1 } }] }));
    const r = await rig.kernel.injectInput('console', 'console', 'water the front');
    assert.notEqual(r.status, 'done');
    assert.deepEqual(rig.srv.refusals.map((x) => x.tool), ['sprinkler_start']);
    assert.ok(!rig.srv.refusals[0]!.offered.includes('sprinkler_start'));
  } finally {
    await rig.close();
  }
});

/** A description for a 3B model: at most 300 characters, ending in exactly one example of the arguments (a JSON object). */
function assertShortWithOneExample(name: string, description: string): void {
  assert.ok(description.length <= 300, `${name}: ${description.length} characters`);
  assert.equal(description.split('Example:').length, 2, `${name}: one example`);
  const example = /Example: (\{.*\})$/.exec(description);
  assert.ok(example, `${name} ends with its example: ${description}`);
  assert.doesNotThrow(() => JSON.parse(example[1]!), `${name}: the example is JSON`);
}

test('tool descriptions are short with one example each, and each example passes the tool\'s own schema', async () => {
  const rig = await startLlmRig('ollama', {}, (k) => k.use(garden));
  try {
    const tools = rig.kernel.tools;
    const defs = [...tools.names().map((n) => tools.get(n)!), ...homeTools({} as HomeToolDeps)];
    assert.ok(defs.length >= 20, `${defs.length} tools`);
    for (const d of defs) {
      const schema = tools.schemasOf([d.name])[0] ?? toolSchema(d);
      const description = d.name === TOOLS_LOAD ? offeredSchemas(tools, rig.settings, 'console').find((s) => s.function.name === TOOLS_LOAD)!.function.description : schema.function.description;
      assertShortWithOneExample(d.name, description);
      const example = JSON.parse(/Example: (\{.*\})$/.exec(description)![1]!) as Record<string, unknown>;
      if (tools.has(d.name)) assert.equal(tools.validate(d.name, example), null, `${d.name}: its example is valid arguments`);
      else assert.ok(schemaGuard(d.parameters as ObjectSchemaLiteral)(example), `${d.name}: its example is valid arguments`);
    }
  } finally {
    await rig.close();
  }
});

describe('tools_call and the schema the model reads', () => {
  it('unwraps the inner call and refuses what is not one', () => {
    const call = (args: Record<string, unknown>) => ({ id: 'c1', type: 'function' as const, function: { name: TOOLS_CALL, arguments: args } });
    assert.deepEqual(unwrapToolsCall(call({ name: 'x', arguments: { a: 1 } })), { call: { id: 'c1', type: 'function', function: { name: 'x', arguments: { a: 1 } } } });
    assert.deepEqual(unwrapToolsCall(call({ name: 'x' })), { call: { id: 'c1', type: 'function', function: { name: 'x', arguments: {} } } });
    assert.deepEqual(unwrapToolsCall(call({ name: 'x', arguments: '{"a":2}' })), { call: { id: 'c1', type: 'function', function: { name: 'x', arguments: { a: 2 } } } });
    assert.match((unwrapToolsCall(call({})) as { error: string }).error, /needs "name"/);
    assert.match((unwrapToolsCall(call({ name: 'x', arguments: '[1' })) as { error: string }).error, /must be a JSON object/);
    assert.match((unwrapToolsCall(call({ name: 'x', arguments: [1] })) as { error: string }).error, /must be a JSON object/);
    assert.match((unwrapToolsCall(call({ name: TOOLS_LOAD })) as { error: string }).error, /directly/);
    assert.equal(unwrapToolsCall({ id: 'c', type: 'function', function: { name: 'other', arguments: {} } }), undefined);
  });

  it('leaves out what only validation needs; the registry still checks it', () => {
    const s = { type: 'object', properties: { q: { type: 'string', minLength: 1, maxLength: 10, pattern: '\\S' }, n: { type: ['integer', 'null'], minimum: 1 }, list: { type: 'array', items: { type: 'string', maxLength: 3 }, maxItems: 2 } }, required: ['q'], additionalProperties: false };
    assert.deepEqual(modelSchema(s), { type: 'object', properties: { q: { type: 'string' }, n: { type: 'integer', minimum: 1 }, list: { type: 'array', items: { type: 'string' } } }, required: ['q'] });
  });

  it('an argument marked x-model-hidden is not shown to the model, and still accepted and validated', async () => {
    const tools = new ToolRegistry(silentLogger);
    let got: unknown;
    tools.register('t', defineTool({
      name: 'note',
      description: 'Keep a note. Example: {"text":"milk"}',
      parameters: { type: 'object', properties: { text: { type: 'string' }, weight: { type: 'number', minimum: 0, maximum: 1, [MODEL_HIDDEN]: true } }, required: ['text'], additionalProperties: false },
      handler: (args) => {
        got = args;
        return 'ok';
      },
    }));
    assert.deepEqual(toolSchema(tools.get('note')!).function.parameters, { type: 'object', properties: { text: { type: 'string' } }, required: ['text'] });
    const ctx = { input: { id: 'i', source: 's', channel: 'c', text: '', ts: 0 }, signal: new AbortController().signal, call_id: 'c1' } as unknown as Parameters<ToolRegistry['execute']>[2];
    assert.equal((await tools.execute('note', { text: 'milk', weight: 0.5 }, ctx)).is_error, false);
    assert.deepEqual(got, { text: 'milk', weight: 0.5 });
    assert.match((await tools.execute('note', { text: 'milk', weight: 2 }, ctx)).content, /\/weight must be <= 1/);
  });
});
