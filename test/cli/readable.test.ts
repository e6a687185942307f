/**
 * Issue 14 hardening, the `homeagent` CLI as a tester found it, against the
 * service started in-process (a real Unix socket, the embedded broker with the
 * demo home, an LLM nobody listens on, the voice pipeline on simulated audio):
 * - every client subcommand prints text, JSON only under --json (plugins,
 *   memory stats/recall, say, stop, config set/delete);
 * - status shows an LLM source's back-off only while it is in the future;
 * - listen: a file that is not a WAV, or a WAV with no samples, is an error
 *   said once (exit 1, nothing sent); the timer a recording started is
 *   printed as done; timings print one unit;
 * - config list aligns Chinese values by display width;
 * - a refused second `run` says why once, as text.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { execFileSync } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { startApp, type App } from '../../src/service/app.js';
import { request } from '../../src/cli/client.js';
import { displayWidth, printResult, table } from '../../src/cli/format.js';
import { encodeWav } from '../../hal/index.js';
import { waitUntil } from '../support/wait.js';
import { cli } from './run-cli.js';

const VOICE = path.resolve('../shared/fixtures/voice/en');
const ENV = { HOMEAGENT__PLUGIN__WEBUI__PORT: '0', HOMEAGENT__CORE__LLM__SOURCES__OLLAMA__BASE_URL: 'http://127.0.0.1:9', HOMEAGENT__CORE__SERVICE__DEMO_HOME: 'on' };

/** Whether `s` is a JSON document (what the tester saw instead of text). */
function isJson(s: string): boolean {
  try {
    JSON.parse(s);
    return /^[[{]/.test(s.trim());
  } catch {
    return false;
  }
}

describe('the homeagent CLI prints text, not JSON', () => {
  let app: App;
  let dir: string;
  let socket: string;
  const run = (...args: string[]) => cli(['--socket', socket, ...args]);

  before(async () => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'homeagent-cli-text-'));
    socket = path.join(dir, 'homeagent.sock');
    app = await startApp({ dataDir: dir, console: false, socketPath: socket, embeddedBrokerPort: 0, env: ENV });
    await waitUntil(() => app.home.registry?.view('demo_kitchen_light')?.available === true, 'the demo home discovered', 60_000);
  });
  after(async () => {
    await app.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  test('plugins, memory stats, memory recall, say, stop, config set/delete: text; --json: the JSON', async () => {
    const plugins = await run('plugins');
    assert.equal(plugins.code, 0, plugins.stderr);
    assert.ok(!isJson(plugins.stdout), plugins.stdout);
    // Issue 17: kind, version, state, restarts, last error and capabilities (built-in plugins have all).
    assert.match(plugins.stdout, /^NAME +KIND +VERSION +STATE +RESTARTS +LAST ERROR +CAPABILITIES$/m);
    assert.match(plugins.stdout, /^control +built-in +- +running +0 +- +\(all: built in\)$/m);
    assert.match(plugins.stdout, /^timers +built-in +- +running +0 +- +\(all: built in\)$/m);
    assert.ok(Array.isArray(JSON.parse((await run('--json', 'plugins')).stdout)));

    const stats = await run('memory', 'stats');
    assert.equal(stats.code, 0, stats.stderr);
    assert.ok(!isJson(stats.stdout), stats.stdout);
    assert.match(stats.stdout, /^entities: +\d+$/m);
    assert.match(stats.stdout, /^most mentioned: /m);
    // A count says what it counts (a newcomer read "Anna (person, 0)").
    const lines: string[] = [];
    printResult('memory.stats', { entities: 1, top_entities: [{ name: 'Anna', type: 'person', mention_count: 1 }, { name: 'Ben', type: 'person', mention_count: 0 }] }, false, (x) => lines.push(x));
    assert.match(lines.join('\n'), /most mentioned: Anna \(person, 1 mention\), Ben \(person, 0 mentions\)/);
    assert.equal(typeof (JSON.parse((await run('--json', 'memory', 'stats')).stdout) as { entities: number }).entities, 'number');

    const recall = await run('memory', 'recall', 'kitchen');
    assert.equal(recall.code, 0, recall.stderr);
    assert.ok(!isJson(recall.stdout), recall.stdout);
    assert.match(recall.stdout, /^(nothing remembered that matches|SCORE +KIND +WHEN +TEXT)$/m);

    const say = await run('say', 'hello', 'there');
    assert.equal(say.code, 0, say.stderr);
    // Playing, not played: a newcomer's `stop` right after cut what was printed as said.
    assert.equal(say.stdout, 'playing on speaker: "hello there" (homeagent stop cuts it)\n');
    assert.deepEqual(JSON.parse((await run('--json', 'say', 'hi')).stdout), { said: 'hi', channel: 'speaker' });

    const stop = await run('stop');
    assert.equal(stop.code, 0, stop.stderr);
    assert.equal(stop.stdout, 'stopped: the reply was cut, the speaker silenced and waiting inputs dropped\n');

    const set = await run('config', 'set', 'core.agent.max_tool_rounds', '5');
    assert.equal(set.code, 0, set.stderr);
    assert.equal(set.stdout, 'core.agent.max_tool_rounds is now 5\n');
    const del = await run('config', 'delete', 'core.agent.max_tool_rounds');
    assert.equal(del.code, 0, del.stderr);
    assert.match(del.stdout, /^core\.agent\.max_tool_rounds: the stored value was removed; it is now \d+ \(default\)\n$/);
    const delJson = JSON.parse((await run('--json', 'config', 'delete', 'core.agent.max_tool_rounds')).stdout) as { deleted: string; source: string; removed: boolean };
    assert.equal(delJson.deleted, 'core.agent.max_tool_rounds');
    assert.equal(delJson.source, 'default');
    assert.equal(delJson.removed, false, 'nothing was stored any more');
    // A key never set: nothing to remove, and the reply says so (a newcomer read "the stored value was removed").
    const none = await run('config', 'delete', 'core.agent.max_tool_rounds');
    assert.match(none.stdout, /^core\.agent\.max_tool_rounds: no value was stored; it is now \d+ \(default\)\n$/);
    // config get stays the value as JSON, for scripts.
    assert.equal((await run('config', 'get', 'core.output.mode')).stdout, '"auto"\n');
  });

  test('status: a back-off is shown with its time only while it is in the future', async () => {
    const r = (await request(socket, 'ask', { text: 'what is the meaning of life' }, undefined, { timeoutMs: 30_000 })) as { reply: string };
    assert.match(r.reply, /can't reach my language model/);
    const st = (await request(socket, 'status', {})) as { llm: { sources: Array<{ name: string; state: string; retry_at?: number }> } };
    const src = st.llm.sources.find((s) => s.name === 'ollama')!;
    assert.equal(src.state, 'backoff');
    assert.equal(typeof src.retry_at, 'number');
    const text = (now: number) => {
      const lines: string[] = [];
      printResult('status', st, false, (s) => lines.push(s), now);
      return lines.join('\n');
    };
    assert.match(text(src.retry_at! - 5000), /ollama: .*, backing off until \d\d:\d\d:\d\d/);
    const passed = text(src.retry_at! + 1);
    assert.doesNotMatch(passed, /backing off until/);
    assert.match(passed, /ollama: .*, backing off: retrying on the next request/);
  });

  test('listen: not a WAV, or a WAV without samples: an error said once, exit 1, nothing sent', async () => {
    const notWav = await run('listen', 'README.md');
    assert.equal(notWav.code, 1);
    assert.match(notWav.stderr, /^homeagent listen: README\.md is not a usable WAV file: /);
    assert.doesNotMatch(notWav.stderr, /listened to/);
    assert.equal(notWav.stdout, '');

    const empty = path.join(dir, 'empty.wav');
    writeFileSync(empty, encodeWav(Buffer.alloc(0), { sampleRate: 16000, channels: 1 }));
    const r = await run('listen', empty);
    assert.equal(r.code, 1, r.stdout);
    assert.match(r.stderr, /empty\.wav has no audio \(a WAV header with no samples\); nothing was sent/);
    assert.doesNotMatch(r.stdout + r.stderr, /didn't catch that|listened to/);
  });

  test("listen: a device is read only as far as the limit (a tester's /dev/zero read without end); one bad file of a batch does not lose the others", async () => {
    const zero = await run('listen', '/dev/zero');
    assert.equal(zero.code, 1);
    assert.match(zero.stderr, /^homeagent listen: \/dev\/zero: recordings over \d+ MB in one call are too large/);
    assert.equal(zero.stdout, '');
    const batch = await run('listen', 'README.md', path.join(VOICE, "what's the temperature.wav"), path.join(dir, 'no-such.wav'));
    assert.equal(batch.code, 1, 'a bad file is still an error of the command');
    assert.match(batch.stderr, /README\.md is not a usable WAV file/);
    assert.match(batch.stderr, /cannot read .*no-such\.wav: ENOENT/);
    assert.match(batch.stderr, /sending the other 1 of 3 files/);
    assert.match(batch.stdout, /transcript: "what's the temperature"/, 'the good file ran');
    // A named pipe nobody writes to reads as empty at once (a tester's `listen FIFO` hung for ever in open).
    const fifo = path.join(dir, 'mic.fifo');
    execFileSync('mkfifo', [fifo]);
    const piped = await run('listen', fifo);
    assert.equal(piped.code, 1);
    assert.match(piped.stderr, /mic\.fifo is not a usable WAV file/);
  });

  test('listen prints the timer a recording started as done, and timings with one unit', async () => {
    const r = await run('listen', path.join(VOICE, 'set a timer for 30 seconds.wav'));
    assert.equal(r.code, 0, r.stderr);
    assert.match(r.stdout, /^ {2}did: timer started: 30 seconds$/m, r.stdout);
    assert.doesNotMatch(r.stderr, /listened to/, 'one file: its result says it all, no progress line');
    assert.match(r.stdout, /^ {2}timings: speech \d+ ms/m);
    assert.doesNotMatch(r.stdout, /_ms|msms|\dms\b/);
    const timers = app.kernel.host.get('timers') as unknown as { service: { status(): Array<{ duration_s: number }> } };
    assert.ok(timers.service.status().some((t) => t.duration_s === 30), 'the timer runs');
    const logged: string[] = [];
    printResult('log', { event: 'plugin.timers.changed', at: new Date().toISOString(), payload: { change: 'started', id: 't1', seconds: 11400, ends_at: 0 } }, false, (s) => logged.push(s));
    assert.match(logged[0]!, /^\d\d:\d\d:\d\d timer started: 3 h 10 min \(id t1\)$/);
    // The turn's events read as text, not JSON dumps (a newcomer's `homeagent logs`).
    const at = new Date().toISOString();
    const more: string[] = [];
    for (const e of [
      { event: 'assistant_state', at, payload: { state: 'thinking', input_id: '440ef903-aaaa' } },
      { event: 'turn.started', at, payload: { type: 'turn.started', turn: '440ef903-aaaa', input: { id: 'x', source: 'control', channel: 'cli', received_at: 1796395442377 } } },
      { event: 'turn.finished', at, payload: { type: 'turn.finished', turn: '440ef903-aaaa', outcome: { kind: 'short_circuit' }, status: 'short_circuit', reply: 'It is 10:00.' } },
      { event: 'stop', at, payload: { source: 'control:cli', cancelled_inputs: 0 } },
      { event: 'plugin.something', at, payload: { a: 1, b: 'x'.repeat(100), c: { d: 2 } } },
      { event: 'plugin.voice.not_understood', at, payload: { heard: 'i turn off the tv', reason: 'not_command', said: "Sorry, I didn't catch that.", answering: false } },
    ]) printResult('log', e, false, (x) => more.push(x));
    assert.deepEqual(more.map((l) => l.slice(9)), [
      'state thinking',
      'turn 440ef903 started (cli)',
      'turn 440ef903 finished: short_circuit',
      'stop by control:cli, 0 queued inputs dropped',
      `plugin.something a=1 b="${'x'.repeat(56)}... c={"d":2}`,
      'voice not understood (not_command): heard "i turn off the tv"; said "Sorry, I didn\'t catch that."',
    ]);
    const cancel = await run('listen', path.join(VOICE, 'cancel timer.wav'));
    assert.match(cancel.stdout, /^ {2}did: timer cancelled: 30 seconds$/m, cancel.stdout);
  });

  test('config list keeps its columns aligned with Chinese values', async () => {
    const r = await run('config', 'list', 'plugin.voice.message_not_understood');
    assert.equal(r.code, 0, r.stderr);
    const rows = r.stdout.split('\n').filter((l) => /^plugin\.voice\.message_not_understood/.test(l));
    assert.equal(rows.length, 2, r.stdout);
    assert.ok(rows.some((l) => /\p{Script=Han}/u.test(l)), 'a Chinese value');
    // The FROM column starts at the same terminal column in every row.
    const fromColumn = (l: string) => displayWidth(l.slice(0, l.search(/ (default|stored|env)(, restart)?$/)));
    assert.equal(fromColumn(rows[0]!), fromColumn(rows[1]!), r.stdout);
    assert.equal(table(['A', 'B'], [['你好', 'x'], ['ab', 'y']]), 'A     B\n你好  x\nab    y');
    // A prefix no setting has (a newcomer's typo printed an empty table and exit 0): said so, exit 1.
    const none = await run('config', 'list', 'nosuchprefix');
    assert.equal(none.code, 1, none.stdout + none.stderr);
    assert.match(none.stdout, /no setting has a key that starts so/);
  });

  test('a refused second run says why once, as text', async () => {
    const r = await cli(['--data-dir', dir, '--socket', socket, 'run', '--no-console'], { env: { ...ENV, HOMEAGENT__CORE__SERVICE__EMBEDDED_BROKER_PORT: '0', HOMEAGENT_LOG_LEVEL: 'info', NODE_ENV: 'production' } });
    assert.equal(r.code, 1, r.stderr);
    const said = r.stderr.split('\n').filter((l) => /another homeagent is already running/.test(l));
    assert.equal(said.length, 1, r.stderr);
    assert.match(said[0]!, /^homeagent: could not start: another homeagent is already running/);
  });
});

test('listen prints what else the box said while a recording was handled: a yes/no question it dropped (a newcomer saw only "It is 11:49 PM.")', () => {
  const lines: string[] = [];
  const utterance = { file: 'time.wav', transcript: 'what time is it', rejected: false, status: 'turn', actions: [], reply: 'It is 11:49 PM.', spoken: ['OK, I did not unlock the Front Door.', 'It is 11:49 PM.'] };
  printResult('listen', { utterances: [utterance] }, false, (s) => lines.push(s));
  assert.deepEqual(lines, ['time.wav', '  transcript: "what time is it"', '  reply: "It is 11:49 PM."', '  also said: "OK, I did not unlock the Front Door."']);
  const plain: string[] = [];
  printResult('listen', { utterances: [{ ...utterance, spoken: ['It is 11:49 PM.'] }] }, false, (s) => plain.push(s));
  assert.ok(!plain.some((l) => l.includes('also said')), plain.join('\n'));
});

test('listen says when a clip it did not understand is cut tight to the speech (a newcomer\'s raw espeak-ng clips were "didn\'t catch that" with no word of why)', async () => {
  const { tightClipHint } = await import('../../src/service/voice-wiring.js');
  const tone = (ms: number): Buffer => {
    const b = Buffer.alloc(ms * 32);
    for (let i = 0; i < ms * 16; i++) b.writeInt16LE(Math.round(8000 * Math.sin((2 * Math.PI * 220 * i) / 16000)), i * 2);
    return b;
  };
  const quiet = (ms: number): Buffer => Buffer.alloc(ms * 32);
  assert.match(tightClipHint(Buffer.concat([tone(800), quiet(1000)])) ?? '', /sound at its very start: leave silence around the speech .*pad 0\.5 1/);
  assert.match(tightClipHint(Buffer.concat([quiet(500), tone(800)])) ?? '', /at its very end/);
  assert.match(tightClipHint(tone(800)) ?? '', /at its very start and end/);
  assert.equal(tightClipHint(Buffer.concat([quiet(500), tone(800), quiet(1000)])), undefined);
  // A real recording whose room noise is loud (-34 dBFS) up to its edges has silence around its speech: no hint (a
  // newcomer padded such recordings as told, with zeros, and one was then heard as another timer).
  const { readFileSync } = await import('node:fs');
  const { wavToVoicePcm } = await import('../../hal/mic/file-mic.js');
  const real = wavToVoicePcm(readFileSync('../shared/fixtures/voice/en/set a timer for 3 hours and 10 minutes.wav'));
  assert.equal(tightClipHint(real), undefined);
  const lines: string[] = [];
  printResult('listen', { utterances: [{ file: 'yes_raw.wav', transcript: '', rejected: true, status: 'rejected', actions: [], reply: "Sorry, I didn't catch that.", hint: 'the recording has sound at its very start: ...' }] }, false, (s) => lines.push(s));
  assert.equal(lines.at(-1), '  hint: the recording has sound at its very start: ...');
});

test('listen says why the recogniser refused a recording, and what it could not tell apart when it doubted a command', () => {
  const lines: string[] = [];
  printResult('listen', {
    utterances: [
      { file: 'a.wav', transcript: '', rejected: true, reason: 'not_command', heard: 'i turn off the tv', status: 'rejected', actions: [], reply: "Sorry, I didn't catch that.", timings: {} },
      { file: 'b.wav', transcript: 'turn on the kitchen lights', rejected: false, unsure_between: ['kitchen', 'another name'], status: 'injected', actions: [], reply: 'Do you really want to turn on the Kitchen Lights? Please say yes or no.', timings: {} },
    ],
  }, false, (s) => lines.push(s));
  assert.ok(lines.includes('  transcript: "" (rejected: not_command)'), lines.join('\n'));
  assert.ok(lines.includes('  heard: "i turn off the tv"'), lines.join('\n'));
  assert.ok(lines.includes('  doubted: could not tell "kitchen" from "another name"'), lines.join('\n'));
});

test('listen prints what was heard after an early commit, with why it was refused or what was doubted (a tester\'s "... and lock the front door" lost after a pause showed only as "also said")', () => {
  const lines: string[] = [];
  printResult('listen', {
    utterances: [
      {
        file: 'c.wav', transcript: 'turn on the kitchen lights', rejected: false, status: 'injected', actions: ['home/kitchen/light/set {"state":"ON"}'], reply: 'Turned on the Kitchen Lights.', timings: {},
        then: [{ transcript: '', status: 'rejected', reason: 'opposite_close', heard: 'unlock the front door', reply: "Sorry, I didn't catch whether to lock or unlock." }, { transcript: 'lock the front door', status: 'injected', reply: 'Do you really want to lock the Front Door? Please say yes or no.', unsure_between: ['lock', 'unlock'] }],
      },
    ],
  }, false, (s) => lines.push(s));
  assert.ok(lines.includes('  then: "" (rejected: opposite_close) -> "Sorry, I didn\'t catch whether to lock or unlock."'), lines.join('\n'));
  assert.ok(lines.includes('    heard: "unlock the front door"'), lines.join('\n'));
  assert.ok(lines.includes('  then: "lock the front door" -> "Do you really want to lock the Front Door? Please say yes or no."'), lines.join('\n'));
  assert.ok(lines.includes('    doubted: could not tell "lock" from "unlock"'), lines.join('\n'));
});

test('lists prints each list\'s name with no trailing space, its items under it (a newcomer\'s "shopping: ")', () => {
  const lines: string[] = [];
  printResult('lists', { shopping: [{ text: 'milk' }], todo: [] }, false, (s) => lines.push(...s.split('\n')));
  assert.deepEqual(lines, ['shopping:', '  - milk', 'todo: (empty)']);
});

test('logs: a risky action asked from the CLI says so, not "asked by control" (a newcomer\'s)', () => {
  const lines: string[] = [];
  const payload = { what: 'unlock Front Door', decision: 'denied', by: 'input', channel: 'cli', who: 'control', at: Date.UTC(2026, 11, 5, 12) };
  printResult('log', { event: 'plugin.home.decision', at: new Date(payload.at).toISOString(), payload }, false, (s) => lines.push(s));
  assert.match(lines[0]!, /risky unlock Front Door: denied \(.*; asked by the CLI \(homeagent ask\)\)$/);
});

test('logs: devices that did not report back after a command (plugin.home.unreported) are named with what the box said', () => {
  const lines: string[] = [];
  const payload = { ids: ['tv'], names: ['TV'], channel: 'speaker', text: 'I asked to turn off the TV, but it has not reported back, so it may not have happened.' };
  printResult('log', { event: 'plugin.home.unreported', at: new Date(Date.UTC(2026, 11, 5, 12)).toISOString(), payload }, false, (s) => lines.push(s));
  assert.match(lines[0]!, /no report from TV after a command: I asked to turn off the TV, but it has not reported back, so it may not have happened\.$/);
});

test('logs: an announcement (a timer going off, a device that did not report back) is no input anybody said (a newcomer read "input speaker: ...")', () => {
  const lines: string[] = [];
  const at = new Date(Date.UTC(2026, 11, 5, 12)).toISOString();
  printResult('log', { event: 'raw_input', at, payload: { channel: 'speaker', text: 'Your tea timer is done.', announcement: true } }, false, (s) => lines.push(s));
  printResult('log', { event: 'raw_input', at, payload: { channel: 'cli', text: 'turn on the tv' } }, false, (s) => lines.push(s));
  assert.match(lines[0]!, / announcement speaker: "Your tea timer is done\."$/);
  assert.match(lines[1]!, / input cli: "turn on the tv"$/);
});
