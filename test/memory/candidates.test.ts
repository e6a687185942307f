/**
 * Sensitive facts wait as candidates (issue 18), through the running service
 * (a real Mosquitto, the LLM test server scripting the model's tool calls):
 * - What the rule distiller finds on its own that is sensitive ("I like my
 *   therapy sessions") is not stored: it waits as a candidate, shown to its
 *   person only, under [Waiting for a yes] in the turn context; Ben cannot
 *   confirm Anna's; Anna's yes (memory_confirm) stores it as her sensitive
 *   fact, her no drops it. What is not sensitive is stored at once.
 * - What a person explicitly asks to remember (memory_commit, set_trait) is
 *   stored at once, sensitive or not.
 * - The box's own consolidation turn storing a sensitive fact (memory_commit
 *   on the `_consolidation_` channel) makes a candidate too.
 * - Cold-document distillation (the archive loop, FakeClock) holds its
 *   sensitive triples the same way.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startApp, type App } from '../../src/service/app.js';
import { request } from '../../src/cli/client.js';
import type { TurnResult } from '../../src/kernel/turn-types.js';
import { FakeClock } from '../../src/kernel/clock.js';
import { startLlmTestServer, type LlmTestServer, type ReceivedMessage, type ReceivedRequest } from '../support/llm-test-server.js';
import { startMosquitto, type MosquittoBroker } from '../support/mosquitto.js';
import { fakeSettings, makeMemory, tempDir } from './helpers.js';

const text = (m: ReceivedMessage | undefined): string => (typeof m?.content === 'string' ? m.content : '');

/** The fake model: answers "yes"/"no" to the first waiting fact it is shown; remembers on request. */
function model(req: ReceivedRequest) {
  const msgs = req.body!.messages!;
  const last = msgs.at(-1)!;
  if (last.role === 'tool') return { content: `Done: ${text(last)}` };
  const said = text(last);
  const waiting = /\[Waiting for a yes\][^\n]*\n- #(\d+) /.exec(text(msgs.at(-2)));
  if (/^(yes|no), /i.test(said)) {
    const id = /#(\d+)/.exec(said)?.[1] ?? waiting?.[1];
    if (id) return { tool_calls: [{ name: 'memory_confirm', arguments: { id: Number(id), keep: /^yes/i.test(said) } }] };
    return { content: 'There is nothing waiting.' };
  }
  const commit = /^remember that my (.+?) is (.+?)\.?$/i.exec(said);
  if (commit) return { tool_calls: [{ name: 'memory_commit', arguments: { triples: [{ subject: 'me', relation: commit[1]!, object: commit[2]! }] } }] };
  if (said.startsWith('[memory review]')) return { tool_calls: [{ name: 'memory_commit', arguments: { triples: [{ subject: 'Anna', relation: 'takes', object: 'insulin' }] } }] };
  return { content: waiting ? `Shall I remember #${waiting[1]}?` : 'Noted.' };
}

describe('sensitive facts wait for a yes (service)', () => {
  let broker: MosquittoBroker;
  let srv: LlmTestServer;
  let app: App;
  let dir: string;
  let socket: string;

  async function ask(words: string, as?: string): Promise<TurnResult> {
    const result = (await request(socket, 'ask', { text: words, ...(as ? { as } : {}) }, undefined, { timeoutMs: 60_000 })) as TurnResult;
    assert.equal(result.status, 'done', `${words}: ${JSON.stringify(result)}`);
    return result;
  }
  const facts = (): string[] => {
    const mem = app.memory!.system;
    return (mem.db.prepare('SELECT id FROM relations').pluck().all() as number[]).map((id) => {
      const r = mem.graph.relation(id)!;
      return `${r.source_name} ${r.relation_type} ${r.target_name}${r.sensitive ? ' (sensitive)' : ''}`;
    });
  };

  before(async () => {
    broker = await startMosquitto();
    srv = await startLlmTestServer();
    srv.script(model);
    dir = mkdtempSync(path.join(os.tmpdir(), 'homeagent-candidates-'));
    socket = path.join(dir, 'homeagent.sock');
    app = await startApp({
      dataDir: dir,
      console: false,
      socketPath: socket,
      env: { HOMEAGENT__PLUGIN__MQTT__URL: broker.url, HOMEAGENT__CORE__LLM__SOURCES__OLLAMA__BASE_URL: srv.url, HOMEAGENT__CORE__AGENT__CONTEXT_WINDOW: '16384' },
    });
  });
  after(async () => {
    await app?.stop();
    await srv?.close();
    await broker?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it("the rule distiller's sensitive find waits for its person's yes; the rest is stored at once", async () => {
    const mem = app.memory!.system;
    await ask('I like my therapy sessions on Mondays.', 'Anna');
    await ask('I like sailing.', 'Anna');
    await ask('I like my diabetes nurse.', 'Anna');
    await mem.runLoopOnce('rules');
    assert.deepEqual(facts(), ['Anna likes sailing'], 'only what is not sensitive was stored');
    const waiting = mem.candidates('Anna');
    assert.deepEqual(waiting.map((c) => `${c.subject} ${c.relation} ${c.object} [${c.origin}]`), ['Anna likes my therapy sessions on Mondays [rules]', 'Anna likes my diabetes nurse [rules]']);
    // Ben is not shown them and cannot decide on them.
    await ask('Hello there.', 'Ben');
    assert.doesNotMatch(text(srv.chatRequests().at(-1)!.body!.messages!.at(-2)), /Waiting for a yes|therapy/);
    const benYes = await ask(`Yes, keep #${waiting[0]!.id}.`, 'Ben');
    assert.match(JSON.stringify(benYes.tools), /no fact waiting for a yes with id \d+ for Ben/);
    // Anna is shown them, and her yes stores the first as her sensitive fact; her no drops the second.
    const shown = await ask('Good morning.', 'Anna');
    assert.match(shown.reply, new RegExp(`Shall I remember #${waiting[0]!.id}\\?`));
    assert.match(text(srv.chatRequests().at(-1)!.body!.messages!.at(-2)), /\[Waiting for a yes\].*\n- #\d+ Anna likes my therapy sessions on Mondays\n- #\d+ Anna likes my diabetes nurse/);
    const yes = await ask('Yes, please remember that.', 'Anna');
    assert.match(yes.reply, /Remembered \(told only to its person\): Anna likes my therapy sessions on Mondays/);
    const no = await ask('No, forget the nurse one.', 'Anna');
    assert.match(no.reply, /Dropped, not remembered: Anna likes my diabetes nurse/);
    assert.deepEqual(facts().sort(), ['Anna likes my therapy sessions on Mondays (sensitive)', 'Anna likes sailing']);
    assert.deepEqual(mem.candidates('Anna'), []);
    const r = mem.graph.relationsOf(mem.graph.resolve('Anna')!.id).find((x) => x.target_name.includes('therapy'))!;
    assert.equal(r.owner, 'Anna');
  });

  it('what a person asks to remember is stored at once, sensitive or not', async () => {
    const r = await ask('Remember that my blood pressure is 120 over 80.', 'Anna');
    assert.match(r.reply, /Stored 1 fact/);
    assert.ok(facts().includes('Anna blood pressure 120 over 80 (sensitive)'), facts().join(' | '));
    assert.deepEqual(app.memory!.system.candidates('Anna'), []);
  });

  it("the box's own consolidation turn storing a sensitive fact makes a candidate", async () => {
    const mem = app.memory!.system;
    const before = srv.chatRequests().length;
    await app.kernel.injectSelf('[memory review] Anna may take insulin; store what is right.');
    assert.ok(srv.chatRequests().length > before, 'the consolidation turn asked the model');
    assert.ok(!facts().some((f) => f.includes('insulin')), facts().join(' | '));
    assert.deepEqual(mem.candidates('Anna').map((c) => `${c.subject} ${c.relation} ${c.object} [${c.origin}]`), ['Anna takes insulin [consolidation]']);
    assert.deepEqual(mem.exportPerson('Anna').waiting_for_yes.map((c) => c.fact), ['Anna takes insulin'], 'memory export --person shows what waits');
    assert.equal(mem.introspect().facts_waiting_for_yes, 1);
  });
});

it('cold-document distillation (the archive loop) holds its sensitive triples as candidates', async () => {
  const { dir, cleanup } = tempDir('ha-mem-candidates-');
  const clock = new FakeClock(Date.UTC(2026, 11, 1, 8));
  const mem = makeMemory({ dir, clock, settings: fakeSettings({ 'core.memory.top_k': 2, 'core.memory.protected_tail': 0 }) });
  try {
    const said = ['I live in Porto, near Ribeira.', 'My salary goes to Banco Atlantico, I live in Porto.'];
    said.forEach((t, i) => mem.append({ id: `t${i}:user`, time: clock.now() + i, kind: 'user', source: 'cli', speaker: 'Carla', input: t, response: '' }));
    mem.append({ id: 'x:user', time: clock.now() + 5, kind: 'user', source: 'cli', speaker: 'Carla', input: 'ok', response: '' });
    mem.append({ id: 'y:user', time: clock.now() + 6, kind: 'user', source: 'cli', speaker: 'Carla', input: 'fine', response: '' });
    mem.db.prepare('DELETE FROM rule_queue').run();
    mem.prune('nothing');
    clock.advance(73 * 3_600_000);
    const r = await mem.runLoopOnce('archive');
    assert.ok(r.cold! >= 2, JSON.stringify(r));
    const stored = (mem.db.prepare('SELECT id FROM relations').pluck().all() as number[]).map((id) => mem.graph.relation(id)!).map((x) => `${x.source_name} ${x.relation_type} ${x.target_name}`);
    assert.ok(stored.includes('Carla lives_in Porto'), stored.join(' | '));
    assert.ok(stored.every((f) => !/Banco/.test(f)), stored.join(' | '));
    const waiting = mem.candidates('Carla').map((c) => `${c.subject} ${c.relation} ${c.object} [${c.origin}]`);
    assert.ok(waiting.includes('Carla mentioned Banco Atlantico [archive]'), waiting.join(' | '));
    assert.deepEqual(mem.candidates('Ben'), [], "nobody else's to see");
  } finally {
    mem.close();
    cleanup();
  }
});
