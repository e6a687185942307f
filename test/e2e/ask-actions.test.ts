/**
 * `homeagent ask` lists what the box did, as `homeagent listen` does: a
 * command handled locally calls no tool, so a newcomer typing "turn on the
 * kitchen lights" saw the reply and nothing else. Through the running
 * service against the fixture home (real Mosquitto, the device simulator).
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { request } from '../../src/cli/client.js';
import { cli } from '../cli/run-cli.js';
import { startE2E, type E2E } from '../support/e2e-home.js';

let box: E2E;
before(async () => {
  box = await startE2E();
});
after(async () => {
  await box?.close();
});

const ask = async (text: string): Promise<{ reply: string; actions: string[] }> =>
  (await request(box.app.socketPath, 'ask', { text }, undefined, { timeoutMs: 30_000 })) as { reply: string; actions: string[] };

test('ask lists the device commands, timers and list items its turn made, and nothing of other turns', async () => {
  const on = await ask('turn on the kitchen lights');
  assert.match(on.reply, /Kitchen Lights/);
  assert.equal(on.actions.length, 1, JSON.stringify(on.actions));
  assert.match(on.actions[0]!, /^mqtt home\/kitchen\/light\/set .*ON/);
  const timer = await ask('set a timer for 5 minutes');
  assert.deepEqual(timer.actions, ['timer started: 5 minutes']);
  const milk = await ask('add milk to the shopping list');
  assert.deepEqual(milk.actions, ['shopping list added: milk']);
  const time = await ask('what time is it');
  assert.deepEqual(time.actions, [], 'a question changes nothing');
});

test('the homeagent command prints them under the streamed reply: one "did:" line per action', async () => {
  // A newcomer found none: the streamed path printed the tools only (printResult was reached only when nothing streamed).
  const r = await cli(['--socket', box.app.socketPath, 'ask', 'turn off the kitchen lights']);
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.split('\n');
  assert.match(lines[0]!, /Kitchen Lights/, r.stdout);
  assert.ok(lines.some((l) => /^ {2}did: mqtt home\/kitchen\/light\/set .*OFF/.test(l)), r.stdout);
  const q = await cli(['--socket', box.app.socketPath, 'ask', 'what time is it']);
  assert.ok(!q.stdout.includes('did:'), q.stdout);
});

test('what the box said for another input (a dropped yes/no question) is printed under the reply as "also said", not as its first line', async () => {
  // A newcomer's "what time is it" after "unlock the front door" printed "OK, I did not unlock the Front Door." first.
  const q = await cli(['--socket', box.app.socketPath, 'ask', 'unlock the front door']);
  assert.equal(q.code, 0, q.stderr);
  assert.match(q.stdout, /really want to unlock the Front Door/, q.stdout);
  const r = await cli(['--socket', box.app.socketPath, 'ask', 'what time is it']);
  assert.equal(r.code, 0, r.stderr);
  const lines = r.stdout.trim().split('\n');
  assert.doesNotMatch(lines[0]!, /did not unlock/, r.stdout);
  assert.match(lines[0]!, /\d/, r.stdout);
  assert.ok(lines.slice(1).some((l) => /^ {2}also said: "OK, I did not unlock the Front Door\."$/.test(l)), r.stdout);
  assert.ok(!r.stdout.includes('did: '), 'nothing was unlocked');
});
