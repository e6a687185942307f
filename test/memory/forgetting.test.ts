/**
 * Issue 18 "Forgetting for real", through the running service (a real
 * Mosquitto, the LLM test server scripting the model's tool calls, the
 * control socket):
 * - Anna says a sentence with a made-up word ("my quindlewort bike lock code
 *   is zorbulax"); the model stores it (set_trait), the window archives it
 *   into documents (small top_k), the rule distiller reads it, a pre-update
 *   copy of the memory store holds it, the simulated speaker's journal and
 *   WAV of a reply saying it too. Before forgetting, the bytes are there
 *   (the scan is real).
 * - "Forget my bike lock code": the model calls memory_forget. Afterwards no
 *   file under the data directory (databases, -wal/-shm, the log at info,
 *   the copy) holds the made-up word, the sentence's other rare word or the
 *   asking words, byte for byte; recall finds nothing; the run log's turns
 *   that held it are tombstones (what and when, none of the text) and
 *   deriveContext says so; what else was said is still remembered and its
 *   turn still replays exactly.
 * - Versions: a trait set again is an earlier version recall no longer
 *   returns and "what did I tell you before?" reaches (another person's
 *   sensitive one never); forgetting removes both values.
 * - A person forgets what is theirs: Ben's request leaves Anna's words.
 * - memory_delete_entity forgets an entity the same way; a failed request
 *   is not kept, and the log at info holds no word of it.
 * - An asking turn a stopped process did not see end is tombstoned when the
 *   service starts again.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import Database from 'better-sqlite3';
import { startApp, type App } from '../../src/service/app.js';
import { request } from '../../src/cli/client.js';
import type { TurnResult } from '../../src/kernel/turn-types.js';
import { deriveContext, TOMBSTONED } from '../../src/kernel/run-log.js';
import { logToFile, setLogLevel } from '../../src/kernel/log.js';
import { startLlmTestServer, type LlmTestServer, type ReceivedMessage, type ReceivedRequest } from '../support/llm-test-server.js';
import { startMosquitto, type MosquittoBroker } from '../support/mosquitto.js';

const text = (m: ReceivedMessage | undefined): string => (typeof m?.content === 'string' ? m.content : '');

/** The fake model: stores codes with set_trait, forgets with memory_forget / memory_delete_entity. */
function model(req: ReceivedRequest) {
  const msgs = req.body!.messages!;
  const last = msgs.at(-1)!;
  if (last.role === 'tool') return { content: `Done: ${text(last)}` };
  const said = text(last);
  const code = /my (.+) code is (\w+)/i.exec(said);
  if (code) return { tool_calls: [{ name: 'set_trait', arguments: { trait: `${code[1]!.replace(/^\w+ /, '')} code`, value: code[2]! } }] };
  const forget = /^forget (?:that )?(.+?)\.?$/i.exec(said);
  if (forget && /^the (.+) entity$/i.test(forget[1]!)) return { tool_calls: [{ name: 'memory_delete_entity', arguments: { name: /^the (.+) entity$/i.exec(forget[1]!)![1]! } }] };
  if (forget) return { tool_calls: [{ name: 'memory_forget', arguments: { about: forget[1]! } }] };
  const fav = /^my favourite (\w+) is (\w+)/i.exec(said);
  if (fav) return { tool_calls: [{ name: 'set_trait', arguments: { trait: `favourite ${fav[1]!}`, value: fav[2]! } }] };
  const before = /what did i tell you before about (my .+?)\??$/i.exec(said);
  if (before) return { tool_calls: [{ name: 'memory_recall', arguments: { query: before[1]!, earlier: true } }] };
  const what = /^what is (my .+?)\??$/i.exec(said);
  if (what) return { tool_calls: [{ name: 'memory_recall', arguments: { query: what[1]! } }] };
  const likes = /remember that (\w+) likes (.+?)\.?$/i.exec(said);
  if (likes) return { tool_calls: [{ name: 'memory_commit', arguments: { triples: [{ subject: likes[1]!, relation: 'likes', object: likes[2]! }] } }] };
  return { content: 'Noted.' };
}

/** Every regular file under `dir`. */
function filesUnder(dir: string): string[] {
  const out: string[] = [];
  for (const n of readdirSync(dir)) {
    const p = path.join(dir, n);
    const st = statSync(p);
    if (st.isDirectory()) out.push(...filesUnder(p));
    else if (st.isFile()) out.push(p);
  }
  return out;
}

/** Files under `dir` whose bytes hold `word` (ASCII, any case), with the word. */
function holders(dir: string, words: readonly string[]): string[] {
  const out: string[] = [];
  for (const f of filesUnder(dir)) {
    const bytes = readFileSync(f).toString('latin1').toLowerCase();
    for (const w of words) if (bytes.includes(w.toLowerCase())) out.push(`${path.relative(dir, f)}: ${w}`);
  }
  return out;
}

describe('forgetting for real (service)', () => {
  let broker: MosquittoBroker;
  let srv: LlmTestServer;
  let app: App;
  let dir: string;
  let socket: string;

  async function ask(words: string, as = 'Anna'): Promise<TurnResult> {
    const result = (await request(socket, 'ask', { text: words, as }, undefined, { timeoutMs: 60_000 })) as TurnResult;
    assert.equal(result.status, 'done', `${words}: ${JSON.stringify(result)}`);
    return result;
  }

  before(async () => {
    broker = await startMosquitto();
    srv = await startLlmTestServer();
    srv.script(model);
    dir = mkdtempSync(path.join(os.tmpdir(), 'homeagent-forget-'));
    socket = path.join(dir, 'homeagent.sock');
    // The log at the default level (info), in the data directory: it is scanned too.
    process.env.HOMEAGENT_LOG_LEVEL = 'info';
    logToFile(path.join(dir, 'homeagent.log'));
    app = await start();
  });

  /** Start the service on the test's data directory. */
  function start(): Promise<App> {
    return startApp({
      dataDir: dir,
      console: false,
      socketPath: socket,
      env: {
        HOMEAGENT__PLUGIN__MQTT__URL: broker.url,
        HOMEAGENT__CORE__LLM__SOURCES__OLLAMA__BASE_URL: srv.url,
        HOMEAGENT__CORE__AGENT__CONTEXT_WINDOW: '16384',
        HOMEAGENT__CORE__MEMORY__TOP_K: '4',
        HOMEAGENT__CORE__MEMORY__PROTECTED_TAIL: '2',
      },
    });
  }
  after(async () => {
    await app?.stop();
    setLogLevel('silent');
    delete process.env.HOMEAGENT_LOG_LEVEL;
    await srv?.close();
    await broker?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a forgotten sentence leaves no byte of its words in any file under the data directory', async () => {
    const mem = app.memory!.system;
    const kept = await ask('I like strong espresso in the morning.');
    const keptRequest = srv.chatRequests().at(-1)!;
    await ask('My quindlewort bike lock code is zorbulax.');
    await ask('I live in Lisbon.');
    await ask('The plumber comes on Tuesday.');
    await ask('Remember that Ben likes sailing.');
    await mem.runLoopOnce('rules');
    await mem.runLoopOnce('distill');
    assert.ok(Number(mem.db.prepare("SELECT count(*) FROM docs WHERE input LIKE '%zorbulax%'").pluck().get()) >= 1, 'the sentence was archived into documents');
    assert.ok(mem.graph.relationsOf(mem.graph.resolve('Anna')!.id).some((r) => r.target_name === 'zorbulax'), 'set_trait stored the code');
    // A pre-update copy of the memory store made while it held the sentence.
    const copy = path.join(dir, 'backups', 'pre-migration', 'memory-v2-20261201T000000000Z');
    mkdirSync(copy, { recursive: true });
    mem.db.prepare('VACUUM INTO ?').run(path.join(copy, 'memory.db'));
    // What the simulated speaker wrote when it said the code aloud (speaker.jsonl and the reply's WAV).
    const sim = path.join(dir, 'speaker-sim');
    mkdirSync(sim, { recursive: true });
    writeFileSync(path.join(sim, '0001-r1.wav'), 'RIFF....WAVE');
    writeFileSync(path.join(sim, '0002-r2.wav'), 'RIFF....WAVE');
    writeFileSync(
      path.join(sim, 'speaker.jsonl'),
      `${JSON.stringify({ id: 'r1', text: 'Your quindlewort bike lock code is zorbulax.', file: path.join(sim, '0001-r1.wav') })}\n${JSON.stringify({ id: 'r2', text: 'It is noon.', file: path.join(sim, '0002-r2.wav') })}\n`,
    );
    const secret = ['zorbulax', 'quindlewort'];
    const before = holders(dir, secret);
    for (const f of ['memory.db', 'runlog.db', 'backups/pre-migration/memory-v2-20261201T000000000Z/memory.db']) {
      assert.ok(before.some((h) => h.startsWith(`${f}`)), `before forgetting, ${f} holds the words (the scan sees them): ${before.join(', ')}`);
    }
    const secretTurns = (app.kernel.services.runLog.tail(10000) as Array<{ type: string; turn: string; input?: { text?: string } }>)
      .filter((e) => e.type === 'turn.started' && /zorbulax/.test(e.input?.text ?? ''))
      .map((e) => e.turn);
    assert.equal(secretTurns.length, 1);

    const r = await ask('Forget my bike lock code.');
    assert.match(r.reply, /Forgotten for good: 1 conversation turn\(s\), 1 fact\(s\)/);

    const left = holders(dir, [...secret, 'bike lock']);
    assert.deepEqual(left, [], `no file holds the forgotten words: ${left.join(', ')}`);
    const spoken = readFileSync(path.join(sim, 'speaker.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    assert.deepEqual(Object.keys(spoken[0]!), ['forgotten_at'], 'the spoken line is a tombstone');
    assert.equal(spoken[1]!.text, 'It is noon.');
    assert.deepEqual(readdirSync(sim).sort(), ['0002-r2.wav', 'speaker.jsonl'], 'the WAV of the forgotten reply is removed');
    // Nothing recalls it.
    assert.deepEqual(mem.search('bike lock code zorbulax', 10).filter((h) => /zorbulax|bike/i.test(h.text)), []);
    assert.equal(mem.graph.resolve('zorbulax'), undefined);
    assert.deepEqual(Object.keys(mem.social.person('Anna', 'Anna')!.traits).sort(), ['likes', 'lives_in'], 'the code is no trait of Anna any more');
    // The run log: tombstones (what and when, none of the text); the replay says the turn was forgotten.
    const events = app.kernel.services.runLog.turn(secretTurns[0]!);
    assert.ok(events.length > 3 && events.every((e) => e.type === 'tombstone'), events.map((e) => e.type).join(','));
    const t = events[0]!;
    assert.ok(t.type === 'tombstone' && t.of === 'turn.started' && t.deleted_at > 0);
    assert.deepEqual(Object.keys(t).sort(), ['at', 'deleted_at', 'of', 'seq', 'turn', 'type']);
    assert.equal(deriveContext(events, 1), TOMBSTONED);
    const asking = app.kernel.services.runLog.turn(r.input_id);
    assert.ok(asking.length > 0 && asking.every((e) => e.type === 'tombstone'), 'the turn that asked to forget is a tombstone too');
    // What else was said is still there; a turn from before replays exactly.
    assert.ok(mem.search('strong espresso', 5).some((h) => /espresso/.test(h.text)));
    assert.ok(mem.graph.relationsOf(mem.graph.resolve('Anna')!.id).some((x) => x.target_name === 'Lisbon'));
    assert.deepEqual(deriveContext(app.kernel.services.runLog.turn(kept.input_id), 1), keptRequest.body!.messages);
    // The log at the default level holds no conversation text at all.
    const log = readFileSync(path.join(dir, 'homeagent.log'), 'utf8');
    assert.ok(log.length > 0, 'the service logged at info');
    for (const said of ['espresso', 'Lisbon', 'plumber', 'sailing']) assert.doesNotMatch(log, new RegExp(said), `the log holds no conversation text (${said})`);
    // The next prompt does not show it either.
    await ask('What is my bike lock code?');
    const prompt = JSON.stringify(srv.chatRequests().at(-1)!.body!.messages);
    assert.doesNotMatch(prompt, /zorbulax|quindlewort/);
  });

  it('a changed value is an earlier version: recall answers the new one, "before" reaches the old, forgetting removes both', async () => {
    const mem = app.memory!.system;
    await ask('My favourite colour is periwinkle.');
    await ask('My favourite colour is vermilion.');
    const now = await ask('What is my favourite colour?');
    assert.match(now.reply, /Anna favourite colour vermilion/);
    assert.doesNotMatch(now.reply, /periwinkle/, 'normal recall no longer returns the old value');
    const context = text(srv.chatRequests().at(-2)!.body!.messages.at(-2));
    // The turn context's recall (issue 19 leaves out what the history already shows, so the new value may be absent there too).
    const facts = context.includes('[Known facts]') ? context.slice(context.indexOf('[Known facts]')) : '';
    assert.doesNotMatch(facts, /periwinkle/, "nor do the prompt's known facts");
    const earlier = await ask('What did I tell you before about my favourite colour?');
    assert.match(earlier.reply, /"earlier":\[\{"fact":"Anna favourite colour periwinkle","until":"\d{4}-\d\d-\d\d"\}\]/);
    // Ben does not see Anna's earlier value of a sensitive fact either.
    await ask('My bank card code is 4411.');
    await ask('My bank card code is 9922.');
    const ben = await ask('What did I tell you before about my bank card code?', 'Ben');
    assert.doesNotMatch(ben.reply, /4411|9922/);
    const anna = await ask('What did I tell you before about my bank card code?');
    assert.match(anna.reply, /Anna card code 4411/);
    assert.ok(mem.exportPerson('Anna').earlier_values.some((v) => v.fact === 'Anna favourite colour periwinkle'), 'memory export --person shows earlier values');
    const r = await ask('Forget my favourite colour.');
    assert.match(r.reply, /Forgotten for good: .* 1 fact\(s\), 1 earlier version\(s\)/);
    assert.equal(mem.db.prepare("SELECT count(*) FROM relation_versions WHERE target_name IN ('periwinkle', 'vermilion')").pluck().get(), 0);
    assert.deepEqual(holders(dir, ['periwinkle', 'vermilion']), []);
  });

  it("a person forgets what is theirs: Ben's request leaves Anna's words and facts; Anna's forgets them", async () => {
    const mem = app.memory!.system;
    await ask('My sprocketmoss gym code is quillibrant.');
    const ben = await ask('Forget the gym code.', 'Ben');
    assert.match(ben.reply, /Nothing of yours says that; there is nothing to forget\. \d+ thing\(s\) said or stored by someone else were left: only they can have them forgotten\./);
    assert.doesNotMatch(ben.reply, /sprocketmoss|quillibrant/, 'nor does it tell Ben what was left');
    assert.ok(mem.graph.relationsOf(mem.graph.resolve('Anna')!.id).some((x) => x.target_name === 'quillibrant'), "Anna's fact stays");
    assert.ok(holders(dir, ['sprocketmoss']).some((h) => h.startsWith('memory.db')), "Anna's words stay");
    const anna = await ask('Forget the gym code.');
    assert.match(anna.reply, /Forgotten for good: 1 conversation turn\(s\), 1 fact\(s\)/);
    assert.deepEqual(holders(dir, ['sprocketmoss', 'quillibrant']), []);
  });

  it('memory_delete_entity forgets an entity, its facts and what was said naming it', async () => {
    const mem = app.memory!.system;
    await ask('Remember that Anna likes glimmerwick.');
    await ask('Our neighbour Glimmerwick has a red boat.');
    assert.ok(mem.graph.resolve('glimmerwick'));
    const ben = await ask('Forget the glimmerwick entity.', 'Ben');
    assert.match(ben.reply, /Nothing about 「glimmerwick」 is yours to forget\. 3 thing\(s\)/);
    assert.ok(mem.graph.resolve('glimmerwick'));
    const r = await ask('Forget the glimmerwick entity.');
    assert.match(r.reply, /Forgot 「glimmerwick」: 1 fact\(s\), 2 conversation turn\(s\)/);
    assert.equal(mem.graph.resolve('glimmerwick'), undefined);
    assert.deepEqual(holders(dir, ['glimmerwick']), []);
    // Asked again: the tool fails (no such entity); the request is not kept, and the log at info holds no word of it.
    const again = await ask('Forget the glimmerwick entity.');
    assert.match(JSON.stringify(again.tools), /no entity \\"glimmerwick\\"/);
    assert.deepEqual(holders(dir, ['glimmerwick']), []);
    assert.ok(mem.graph.relationsOf(mem.graph.resolve('Anna')!.id).some((x) => x.target_name === 'Lisbon'), "Anna's other facts stay");
  });

  it('an asking turn the process did not see end (it stopped mid-turn) is tombstoned in the run log when the service starts again', async () => {
    const r = await ask('The kettle is descaled.');
    assert.ok(app.kernel.services.runLog.turn(r.input_id).some((e) => e.type === 'turn.started'));
    await app.stop();
    // As a process killed between the tool's answer and the end of its turn leaves it: the turn still listed as forgetting.
    const db = new Database(path.join(dir, 'memory.db'));
    db.prepare("INSERT INTO meta(key, value) VALUES('forgetting_turns', ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value").run(JSON.stringify([r.input_id]));
    db.close();
    app = await start();
    const events = app.kernel.services.runLog.turn(r.input_id);
    assert.ok(events.length > 0 && events.every((e) => e.type === 'tombstone'), events.map((e) => e.type).join(','));
    assert.deepEqual(app.memory!.system.unfinishedForgetting(), []);
  });
});
