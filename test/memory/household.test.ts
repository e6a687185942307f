/**
 * Issue 18 "The household's memory" (faults to fix first, and People),
 * through the running service: a real Mosquitto, the LLM test server
 * scripting the model's tool calls, the `homeagent` CLI and the control
 * socket.
 * - The memory's review prompt (a `_consolidation_` self-input quoting "I
 *   live in ..." sentences) and its answer never reach a later real turn's
 *   prompt, the context window, the rule distiller's queue or the graph.
 * - `homeagent ask --as Anna`: facts from "I ..." go to Anna's entity, never
 *   to an entity named after the channel; the turn context says who speaks;
 *   an unidentified asker is "someone in the household"; "this is Carla"
 *   makes Carla the speaker of that channel for the next inputs.
 * - "What do you know about me?": the model's person_query answers from the
 *   speaker's entity; Anna's bank PIN (sensitive) is told to Anna, neither
 *   in Ben's tool result, nor in Ben's recalled memory, nor in the history
 *   Ben's prompt shows.
 * - `homeagent memory export --person Anna` writes everything stored about
 *   Anna as JSON; an unknown name is an error.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startApp, type App } from '../../src/service/app.js';
import { request } from '../../src/cli/client.js';
import { printResult } from '../../src/cli/format.js';
import type { TurnResult } from '../../src/kernel/turn-types.js';
import { startLlmTestServer, type LlmTestServer, type ReceivedMessage, type ReceivedRequest } from '../support/llm-test-server.js';
import { startMosquitto, type MosquittoBroker } from '../support/mosquitto.js';
import { waitUntil } from '../support/wait.js';
import { TURN_CONTEXT_MARK } from '../kernel/prompt-render.js';
import { COMPACTION_REQUEST_MARK } from '../../src/kernel/compaction.js';
import { cli } from '../cli/run-cli.js';

const text = (m: ReceivedMessage | undefined): string => (typeof m?.content === 'string' ? m.content : '');

/** The fake model: scripted on the last thing said (a tool result, the review prompt, questions about people). */
function model(req: ReceivedRequest) {
  const msgs = req.body!.messages!;
  const last = msgs.at(-1)!;
  if (last.role === 'tool') return { content: `From my memory: ${text(last)}` };
  const said = text(last);
  if (said.startsWith('[memory review]')) return { content: 'skip' };
  if (/what do you know about me/i.test(said)) return { tool_calls: [{ name: 'person_query', arguments: {} }] };
  const about = /what do you know about (\w+)/i.exec(said);
  if (about) return { tool_calls: [{ name: 'person_query', arguments: { person: about[1]! } }] };
  if (/who lives here/i.test(said)) return { tool_calls: [{ name: 'people_list', arguments: {} }] };
  const sister = /(\w+) is my sister/i.exec(said);
  if (sister) return { tool_calls: [{ name: 'relate', arguments: { relation: 'sister_of', other: sister[1]! } }] };
  const pin = /remember my bank PIN is (\d+)/i.exec(said);
  if (pin) return { tool_calls: [{ name: 'set_trait', arguments: { trait: 'bank PIN', value: pin[1]! } }] };
  return { content: 'Noted.' };
}

/** The turn context message of a request (the one right before the new user message). */
function turnContextOf(req: ReceivedRequest): string {
  const ctx = req.body!.messages!.at(-2);
  assert.ok(text(ctx).startsWith(TURN_CONTEXT_MARK), `a turn context before the new message: ${text(ctx)}`);
  return text(ctx);
}

describe('the household: who is speaking, what is theirs, housekeeping kept out (service)', () => {
  let broker: MosquittoBroker;
  let srv: LlmTestServer;
  let app: App;
  let dir: string;
  let socket: string;

  /** Ask through the control socket as `as` (undefined: nobody given); returns the result and the first LLM request of the turn. */
  async function ask(words: string, as?: string): Promise<{ result: TurnResult; req: ReceivedRequest }> {
    const before = srv.chatRequests().length;
    const result = (await request(socket, 'ask', { text: words, ...(as ? { as } : {}) }, undefined, { timeoutMs: 60_000 })) as TurnResult;
    assert.equal(result.status, 'done', `${words}: ${JSON.stringify(result)}`);
    // The turn's first request (a compaction's summary request may come before it).
    const req = srv.chatRequests().slice(before).find((q) => !String(q.body?.messages?.at(-1)?.content ?? '').startsWith(COMPACTION_REQUEST_MARK));
    assert.ok(req, `${words}: the model was asked`);
    return { result, req };
  }

  const facts = () => {
    const mem = app.memory!.system;
    return (mem.db.prepare('SELECT id FROM relations').pluck().all() as number[]).map((id) => {
      const r = mem.graph.relation(id)!;
      return `${r.source_name} ${r.relation_type} ${r.target_name}`;
    });
  };

  before(async () => {
    broker = await startMosquitto();
    srv = await startLlmTestServer();
    srv.script(model);
    dir = mkdtempSync(path.join(os.tmpdir(), 'homeagent-household-'));
    socket = path.join(dir, 'homeagent.sock');
    app = await startApp({
      dataDir: dir,
      console: false,
      socketPath: socket,
      env: { HOMEAGENT__PLUGIN__MQTT__URL: broker.url, HOMEAGENT__CORE__LLM__SOURCES__OLLAMA__BASE_URL: srv.url, HOMEAGENT__CORE__AGENT__CONTEXT_WINDOW: '16384', HOMEAGENT__CORE__AGENT__PROMPT_BAND: '0', HOMEAGENT__PLUGIN__WEBUI__PORT: '0' },
    });
  });
  after(async () => {
    await app?.stop();
    await srv?.close();
    await broker?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('files "I live in ..." under the person asking (ask --as), never under the channel, and says who speaks', async () => {
    const r = await cli(['--socket', socket, 'ask', '--as', 'anna', 'I live in Lisbon.']);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /Noted\./);
    const inputs: Array<Record<string, unknown>> = [];
    const off = app.kernel.bus.subscribe('_test_', 'raw_input', (i) => void inputs.push(i as unknown as Record<string, unknown>));
    const { req } = await ask('Now I live in Porto.', 'Anna');
    off();
    assert.deepEqual([inputs[0]!.user, inputs[0]!.user_via], ['Anna', 'given'], 'the input carries who is speaking and how it is known');
    const lines: string[] = [];
    printResult('log', { event: 'raw_input', at: new Date().toISOString(), payload: inputs[0] }, false, (l) => lines.push(l));
    assert.match(lines.join('\n'), /input cli \(Anna\): "Now I live in Porto\."/, '`homeagent logs` says who spoke');
    assert.match(turnContextOf(req), /; speaker: Anna\]/);
    assert.doesNotMatch(text(req.body!.messages![0]), /Anna|Speaker/, 'the speaker is not in the system message (stable prefix)');
    await app.memory!.system.runLoopOnce('rules');
    const all = facts();
    for (const f of ['Anna lives_in Lisbon', 'Anna lives_in Porto']) assert.ok(all.includes(f), `${f} in ${all.join(' | ')}`);
    for (const channel of ['cli', 'console', 'user']) assert.equal(app.memory!.system.graph.resolve(channel), undefined, `no entity named "${channel}"`);
    assert.deepEqual(
      app.memory!.system.social.list().map((p) => p.name),
      ['Anna'],
    );
  });

  it('an unidentified asker is "someone in the household"; a bad --as is refused', async () => {
    const { req } = await ask('I like strong coffee.');
    assert.match(turnContextOf(req), /; speaker: someone in the household\]/);
    await app.memory!.system.runLoopOnce('rules');
    assert.ok(facts().includes('someone in the household likes strong coffee'), facts().join(' | '));
    const bad = await cli(['--socket', socket, 'ask', '--as', 'cli', 'hello']);
    assert.equal(bad.code, 1);
    assert.match(bad.stderr, /"as" \(the person asking\) "cli" is a channel's name, not a person's/);
  });

  it("the review loop's consolidation turn never reaches a later prompt, the window, the rule queue or the graph", async () => {
    const mem = app.memory!.system;
    const consolidation: string[] = [];
    const done = new Set<string>();
    mem.db.prepare("UPDATE meta SET value = '0' WHERE key = 'review_since'").run();
    const offStart = app.kernel.bus.subscribe('_test_', 'turn.started', (e) => void (e.input.channel === '_consolidation_' && consolidation.push(e.turn)));
    const offEnd = app.kernel.bus.subscribe('_test_', 'turn.finished', (e) => void done.add(e.turn));
    const before = srv.chatRequests().length;
    try {
      const r = await mem.runLoopOnce('review');
      assert.equal(r.conflicts, 1, 'Anna lives_in Lisbon / Porto is a conflict to review');
      await waitUntil(() => consolidation.length === 1 && done.has(consolidation[0]!), 'the consolidation turn to finish');
    } finally {
      offStart();
      offEnd();
    }
    const reviewReq = srv.chatRequests().slice(before).find((q) => text(q.body!.messages!.at(-1)).startsWith('[memory review]'));
    assert.ok(reviewReq, 'the model got the review prompt');
    assert.match(text(reviewReq.body!.messages!.at(-1)), /said: "I live in Lisbon\."/, 'it quotes the sentences');
    assert.doesNotMatch(turnContextOf(reviewReq), /speaker:/, 'a self-input has no speaker');
    // Nothing of it in the memory.
    assert.ok(mem.window.all().every((e) => !e.event.source.startsWith('_') && !/\[memory review\]|^skip$/.test(`${e.event.input}${e.event.response}`)), 'not in the window');
    assert.equal(Number(mem.db.prepare("SELECT count(*) FROM rule_queue WHERE text LIKE '%memory review%'").pluck().get()), 0, 'not in the rule queue');
    await mem.runLoopOnce('rules');
    assert.ok(!facts().some((f) => / lives_in /.test(f) && !f.startsWith('Anna ')), `quoted sentences are not re-extracted: ${facts().join(' | ')}`);
    // A later real turn's prompt is free of it.
    const { req } = await ask('What is on my calendar today?', 'Anna');
    const all = JSON.stringify(req.body!.messages);
    assert.doesNotMatch(all, /memory review|relation \d+:|\bskip\b/, 'the later prompt carries neither the review prompt nor its answer');
    assert.match(all, /Now I live in Porto/, 'while the real conversation is there');
  });

  it('"What do you know about me?" answers from the speaker\'s entity; a sensitive fact is told to its owner only', async () => {
    const pin = await ask('Remember my bank PIN is 4321', 'Anna');
    assert.equal(pin.result.tools[0]?.name, 'set_trait');
    assert.match(pin.result.tools[0]!.result, /Anna bank PIN 4321/);
    const anna = await ask('What do you know about me?', 'Anna');
    const annaTool = anna.result.tools.find((t) => t.name === 'person_query')!;
    assert.deepEqual(annaTool.arguments, {});
    const annaView = JSON.parse(annaTool.result) as { person: string; traits: Record<string, string>; facts: string[] };
    assert.equal(annaView.person, 'Anna');
    assert.equal(annaView.traits['bank PIN'], '4321');
    assert.match(annaView.traits.lives_in!, /Porto/);
    assert.match(anna.result.reply, /4321/, 'the reply is built from the tool result');
    // Anna's own sensitive fact is hers to see: her prompt's history shows it (set_trait's result), so the recall block
    // does not repeat it (issue 19); asked without that history, her recall has it and Ben's does not.
    assert.match(JSON.stringify(anna.req.body!.messages), /Anna bank PIN 4321/, "Anna's prompt has it");
    assert.doesNotMatch(turnContextOf(anna.req), /Anna bank PIN 4321/, 'the recall block does not repeat what the history shows');
    assert.match((await app.memory!.system.recallForPrompt('What do you know about me?', 500, undefined, 'Anna')).text, /Anna bank PIN 4321/, "Anna's own recalled memory has it");
    assert.doesNotMatch((await app.memory!.system.recallForPrompt('What do you know about Anna?', 500, undefined, 'Ben')).text, /4321/, "Ben's does not");

    const ben = await ask('What do you know about Anna?', 'Ben');
    const benView = JSON.parse(ben.result.tools.find((t) => t.name === 'person_query')!.result) as { person: string; traits: Record<string, string>; facts: string[] };
    assert.equal(benView.person, 'Anna');
    assert.match(benView.traits.lives_in!, /Porto/, 'ordinary facts are shared');
    assert.equal(benView.traits['bank PIN'], undefined);
    assert.doesNotMatch(ben.result.reply + JSON.stringify(benView), /4321/, 'the PIN is not told to Ben');
    const benCtx = turnContextOf(ben.req);
    assert.match(benCtx, /; speaker: Ben\]/);
    const benPrompt = JSON.stringify(ben.req.body!.messages);
    // Recalled for this turn, or in an earlier turn's context the history shows (the recall block does not repeat it).
    assert.match(benPrompt, /Anna lives_in Porto/, "Ben's prompt has Anna's ordinary facts");
    assert.doesNotMatch(benCtx, /4321/, "Ben's recall leaves out Anna's sensitive fact");
    assert.doesNotMatch(benPrompt, /4321/, "nor does the history Ben's prompt shows: Anna's words are a placeholder there");
    assert.match(benPrompt, /\[Anna said something private\]/);
    assert.match(benPrompt, /Now I live in Porto/, 'the rest of the conversation is shared');
    // Anna's next turn sees her own words again.
    const again = await ask('Thanks, that is all.', 'Anna');
    assert.match(JSON.stringify(again.req.body!.messages), /Remember my bank PIN is 4321/);
  });

  it('"this is Carla" makes Carla the speaker of that channel for the next inputs', async () => {
    const hello = await ask('Hi, this is Carla.');
    assert.match(turnContextOf(hello.req), /; speaker: Carla\]/);
    const next = await ask('I like green tea.');
    assert.match(turnContextOf(next.req), /; speaker: Carla\]/);
    await app.memory!.system.runLoopOnce('rules');
    assert.ok(facts().includes('Carla likes green tea'), facts().join(' | '));
    assert.deepEqual(app.memory!.system.social.list().map((p) => p.name).sort(), ['Anna', 'Ben', 'Carla']);
    const sister = await ask('Anna is my sister.');
    assert.equal(sister.result.tools[0]?.name, 'relate');
    assert.match(sister.result.tools[0]!.result, /Remembered: Carla sister_of Anna\./);
    const who = await ask('Who lives here?');
    const list = JSON.parse(who.result.tools[0]!.result) as { speaking_now: string; people: Array<{ name: string }> };
    assert.equal(list.speaking_now, 'Carla');
    assert.deepEqual(list.people.map((p) => p.name), ['Carla', 'Anna', 'Ben'], 'most recently heard first');
  });

  it('memory export --person writes everything stored about a person as JSON', async () => {
    const out = path.join(dir, 'anna.json');
    const r = await cli(['--socket', socket, 'memory', 'export', '--person', 'anna', '--out', out]);
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /wrote .*anna\.json: Anna, \d+ fact\(s\), \d+ thing\(s\) said/);
    assert.equal(statSync(out).mode & 0o777, 0o600, 'readable by its owner only');
    const x = JSON.parse(readFileSync(out, 'utf8')) as {
      format: string;
      person: string;
      household_member: boolean;
      traits: Record<string, string>;
      relations: Array<{ subject: string; relation: string; object: string; sensitive: boolean; sentence?: string }>;
      said: { context_events: Array<{ input: string }>; documents: unknown[]; rule_queue: unknown[] };
    };
    assert.equal(x.format, 'homeagent.person-export/1');
    assert.equal(x.person, 'Anna');
    assert.equal(x.household_member, true);
    const rels = x.relations.map((f) => `${f.subject} ${f.relation} ${f.object}`);
    for (const f of ['Anna lives_in Lisbon', 'Anna lives_in Porto', 'Anna bank PIN 4321']) assert.ok(rels.includes(f), `${f} in ${rels.join(' | ')}`);
    assert.equal(x.relations.find((f) => f.relation === 'bank PIN')!.sensitive, true);
    assert.equal(x.relations.find((f) => f.object === 'Lisbon')!.sentence, 'I live in Lisbon.');
    const said = x.said.context_events.map((e) => e.input);
    for (const s of ['I live in Lisbon.', 'Now I live in Porto.', 'What do you know about me?']) assert.ok(said.includes(s), `${s} in ${said.join(' | ')}`);
    assert.ok(!said.some((s) => /strong coffee|green tea/.test(s)), "others' words are not Anna's");
    const mentioned = (x as unknown as { mentioned: { context_events: Array<{ kind: string; speaker: string | null; input: string; time: string }> } }).mentioned.context_events;
    assert.deepEqual(
      mentioned.filter((e) => e.kind === 'user').map((e) => `${e.speaker}: ${e.input}`),
      ['Ben: What do you know about Anna?', 'Carla: Anna is my sister.'],
      'what others said about her',
    );
    assert.ok(mentioned.some((e) => e.kind === 'tool' && /relate/.test(e.input)), 'and the tool calls that named her');
    assert.match(mentioned[0]!.time, /^\d{4}-\d{2}-\d{2}T/, 'times as ISO 8601');
    // To stdout (for a pipe), and an unknown person is an error.
    const stdout = await cli(['--socket', socket, 'memory', 'export', '--person', 'Carla']);
    assert.equal(stdout.code, 0, stdout.stderr);
    assert.equal((JSON.parse(stdout.stdout) as { person: string }).person, 'Carla');
    const stats = await cli(['--socket', socket, 'memory', 'stats']);
    assert.match(stats.stdout, /^people: +Carla, Anna, Ben$/m);
    assert.match(stats.stdout, /^sensitive facts: +1$/m);
    const unknown = await cli(['--socket', socket, 'memory', 'export', '--person', 'Zed']);
    assert.equal(unknown.code, 1);
    assert.match(unknown.stderr, /nobody called "Zed" is known/);
  });
});
