/**
 * The Health page's API (issue 16, page 6) against the running service:
 * plugins with their state and a restart through the CLI's command, the log
 * tail, and updates through the update spool: an upload refused without a
 * session, a huge one refused before it is read, the spool file written,
 * an install and a roll-back request, and the root helper
 * (src/service/update-spool.ts processSpool, what homeagent-update.service
 * runs) carrying them out with the real image/install.sh in a temporary
 * install root (fake systemctl and npm, test/image/release-fixture.ts), its
 * status.json read back through GET /update.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { existsSync, readFileSync, readdirSync, rmSync } from 'node:fs';
import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import path from 'node:path';
import { startWebBox, type WebBox } from './helpers.js';
import { createLogger, setLogLevel } from '../../src/kernel/log.js';
import { processSpool, spoolPaths } from '../../src/service/update-spool.js';
import { bundleProject, deviceOptions, makeDevice, makeKey, makeProject, tempDir } from '../image/release-fixture.js';

let box: WebBox;
let token: string;
let spool: ReturnType<typeof spoolPaths>;
const work = tempDir('ha-webui-health-');
before(async () => {
  box = await startWebBox({ env: { HOMEAGENT__PLUGIN__WEBUI__UPDATE_MAX_MB: '1' } });
  token = await box.scriptLogin();
  spool = spoolPaths(path.join(box.dir, 'update-spool'));
});
after(async () => {
  await box.close();
  rmSync(work, { recursive: true, force: true });
});

const upload = (body: Buffer, o: { bearer?: string; cookie?: string; origin?: boolean } = { bearer: token }) => box.req('/api/v1/update/bundle?name=homeagent-9.9.9.tar.gz', { method: 'PUT', raw: body, headers: { 'content-type': 'application/gzip' }, ...o });

test('plugins: listed as `homeagent plugins` lists them; a restart goes through plugins.restart; the WebUI itself and unknown names refused', async () => {
  const list = await box.req('/api/v1/plugins', { bearer: token });
  assert.equal(list.status, 200);
  const timers = (list.json as Array<Record<string, unknown>>).find((p) => p.name === 'timers');
  assert.equal(timers?.kind, 'built-in');
  assert.equal(timers?.state, 'running');
  const r = await box.req('/api/v1/plugins/timers/restart', { method: 'POST', bearer: token });
  assert.equal(r.status, 200, r.text);
  assert.equal(r.json.name, 'timers');
  assert.equal(r.json.state, 'running');
  const after = (await box.req('/api/v1/plugins', { bearer: token })).json as Array<Record<string, unknown>>;
  assert.ok(Number(after.find((p) => p.name === 'timers')?.started_at) >= Number(timers?.started_at ?? 0));
  const self = await box.req('/api/v1/plugins/webui/restart', { method: 'POST', bearer: token });
  assert.equal(self.status, 409);
  assert.equal(self.json.code, 'CANNOT_RESTART_SELF');
  const none = await box.req('/api/v1/plugins/nosuch/restart', { method: 'POST', bearer: token });
  assert.equal(none.status, 404);
  assert.match(none.json.error, /no plugin called "nosuch"/);
  // From a browser the restart needs the page's own origin.
  const cookie = await box.browserLogin();
  assert.equal((await box.req('/api/v1/plugins/timers/restart', { method: 'POST', cookie, origin: 'https://evil.example' })).status, 403);
});

test('logs: the last warnings and errors, newest last; `since` keeps only newer ones', async () => {
  setLogLevel('warn');
  const t0 = new Date().toISOString();
  createLogger('test:health').warn({ err: 'disk almost full' }, 'a warning for the Health page');
  setLogLevel('silent');
  const r = await box.req('/api/v1/logs', { bearer: token });
  assert.equal(r.status, 200);
  const last = r.json.problems.at(-1);
  assert.equal(last.msg, 'a warning for the Health page');
  assert.equal(last.level, 'warn');
  assert.equal(last.ns, 'homeagent:test:health');
  assert.equal(last.err, 'disk almost full');
  const later = await box.req(`/api/v1/logs?since=${encodeURIComponent(last.time)}`, { bearer: token });
  assert.deepEqual(later.json.problems, []);
  assert.ok(t0 <= last.time);
  assert.equal((await box.req('/api/v1/logs')).status, 401);
});

test('an upload without a session is refused, and so is one with the cookie from another origin', async () => {
  const gz = gzipSync(Buffer.from('x'));
  const r = await upload(gz, {});
  assert.equal(r.status, 401);
  assert.equal(r.json.code, 'UNAUTHENTICATED');
  const cookie = await box.browserLogin();
  assert.equal((await upload(gz, { cookie })).status, 403, 'cookie without Origin');
  assert.equal(existsSync(spool.bundle), false);
});

test('a bundle over plugin.webui.update_max_mb is refused from its Content-Length before its body is sent; one that is not gzip is refused at its first bytes', async () => {
  const cert = box.app.webui.certificate!.cert;
  const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
    const q = https.request(new URL('/api/v1/update/bundle', box.base), { method: 'PUT', ca: cert, headers: { authorization: `Bearer ${token}`, 'content-type': 'application/gzip', 'content-length': String(5 * 1024 * 1024 * 1024) } }, (r) => {
      let body = '';
      r.setEncoding('utf8').on('data', (d: string) => (body += d));
      r.on('end', () => resolve({ status: r.statusCode ?? 0, body }));
    });
    q.on('error', reject);
    // Only the headers and a first kilobyte: the answer comes without the other 5 GB.
    q.write(Buffer.alloc(1024));
  });
  assert.equal(res.status, 413);
  assert.match(JSON.parse(res.body).error, /5368709120 bytes, over the limit of 1048576 \(plugin\.webui\.update_max_mb\)/);
  const notGzip = await upload(Buffer.from('PK\u0003\u0004 a zip file'));
  assert.equal(notGzip.status, 400);
  assert.equal(notGzip.json.code, 'NOT_A_BUNDLE');
  // Nothing half-written is left behind.
  assert.deepEqual(existsSync(spool.dir) ? readdirSync(spool.dir).filter((f) => f.endsWith('.part') || f === 'bundle.tar.gz') : [], []);
});

test('an upload lands in the spool; install writes the request; the helper refuses a bundle signed by an untrusted key and the page reads why', async () => {
  const device = makeDevice(work);
  const stranger = makeKey('stranger');
  const file = await bundleProject(makeProject(work, '2.0.0'), work, { keys: [stranger] });
  const bytes = readFileSync(file);
  const up = await upload(bytes);
  assert.equal(up.status, 200, up.text);
  assert.equal(up.json.size, bytes.length);
  assert.equal(up.json.sha256, createHash('sha256').update(bytes).digest('hex'));
  assert.equal(up.json.name, 'homeagent-9.9.9.tar.gz');
  assert.deepEqual(readFileSync(spool.bundle), bytes);
  let view = (await box.req('/api/v1/update', { bearer: token })).json;
  assert.equal(view.bundle.sha256, up.json.sha256);
  assert.equal(view.max_bytes, 1024 * 1024);

  const inst = await box.req('/api/v1/update/install', { method: 'POST', bearer: token });
  assert.equal(inst.status, 200, inst.text);
  assert.equal(inst.json.action, 'install');
  const req = JSON.parse(readFileSync(spool.request, 'utf8'));
  assert.deepEqual(req, inst.json);
  assert.equal(req.sha256, up.json.sha256);
  // One request at a time.
  const again = await box.req('/api/v1/update/rollback', { method: 'POST', bearer: token });
  assert.equal(again.status, 409);
  assert.equal(again.json.code, 'UPDATE_BUSY');
  view = (await box.req('/api/v1/update', { bearer: token })).json;
  assert.equal(view.request.id, inst.json.id);

  // What homeagent-update.service runs when homeagent-update.path sees request.json.
  const status = await processSpool(spool.dir, deviceOptions(device));
  assert.equal(status?.state, 'done');
  assert.equal(existsSync(spool.request), false, 'claimed');
  assert.equal(existsSync(spool.bundle), false, 'the refused bundle is gone');
  view = (await box.req('/api/v1/update', { bearer: token })).json;
  assert.equal(view.request, null);
  assert.equal(view.bundle, null);
  assert.equal(view.status.id, inst.json.id);
  assert.equal(view.status.ok, false);
  assert.equal(view.status.outcome, 'refused');
  assert.equal(view.status.signature_refusal, 'untrusted-key');
  assert.match(view.status.message, new RegExp(`bundle refused, nothing changed: .*signed by ${stranger.id}, which is not among the trusted keys`));
  assert.equal(existsSync(path.join(device.root, 'opt/homeagent/current')), false, 'nothing installed');
});

test('a trusted bundle is installed by the helper; a roll-back request is carried out and read back', async () => {
  const device = makeDevice(work);
  for (const v of ['3.0.0', '3.1.0']) {
    const bytes = readFileSync(await bundleProject(makeProject(work, v), work));
    assert.equal((await upload(bytes)).status, 200);
    assert.equal((await box.req('/api/v1/update/install', { method: 'POST', bearer: token })).status, 200);
    const st = await processSpool(spool.dir, deviceOptions(device));
    assert.equal(st?.ok, true, st?.log.join('\n'));
  }
  let view = (await box.req('/api/v1/update', { bearer: token })).json;
  assert.equal(view.status.outcome, 'installed');
  assert.equal(view.status.release, '3.1.0');
  assert.ok(view.status.log.length > 0, 'progress lines');
  assert.equal(device.current(), '3.1.0');

  const rb = await box.req('/api/v1/update/rollback', { method: 'POST', bearer: token });
  assert.equal(rb.status, 200, rb.text);
  assert.equal(JSON.parse(readFileSync(spool.request, 'utf8')).action, 'rollback');
  await processSpool(spool.dir, deviceOptions(device));
  view = (await box.req('/api/v1/update', { bearer: token })).json;
  assert.equal(view.status.action, 'rollback');
  assert.equal(view.status.outcome, 'rolled-back');
  assert.equal(view.status.release, '3.0.0');
  assert.equal(device.current(), '3.0.0');
  // Without an upload there is nothing to install.
  const none = await box.req('/api/v1/update/install', { method: 'POST', bearer: token });
  assert.equal(none.status, 409);
  assert.equal(none.json.code, 'NO_BUNDLE');
});

test('timers and lists: what `homeagent timers` and `lists` print, as the page reads them', async () => {
  assert.deepEqual((await box.req('/api/v1/timers', { bearer: token })).json, []);
  const set = await box.app.kernel.injectInput('test', 'cli', 'set a pasta timer for 10 minutes');
  assert.equal(set.status, 'short_circuit', set.reply);
  const add = await box.app.kernel.injectInput('test', 'cli', 'add oat milk to the shopping list');
  assert.equal(add.status, 'short_circuit', add.reply);
  const timers = (await box.req('/api/v1/timers', { bearer: token })).json as Array<Record<string, unknown>>;
  assert.equal(timers.length, 1, JSON.stringify(timers));
  assert.equal(timers[0]!.name, 'pasta');
  assert.equal(timers[0]!.state, 'running');
  assert.equal(timers[0]!.duration_s, 600);
  assert.ok(Number(timers[0]!.remaining_s) > 590 && Number(timers[0]!.remaining_s) <= 600);
  const lists = (await box.req('/api/v1/lists', { bearer: token })).json as Record<string, Array<{ text: string }>>;
  assert.deepEqual(lists.shopping!.map((i) => i.text), ['oat milk']);
  assert.deepEqual(lists.todo, []);
  assert.equal((await box.req('/api/v1/lists')).status, 401, 'a session is needed');
  const { printResult } = await import('../../src/cli/format.js');
  let printed = '';
  printResult('timers', timers, false, (s) => void (printed += s));
  assert.match(printed, /pasta\s+running\s+\d+ min/);
  printed = '';
  printResult('lists', lists, false, (s) => void (printed += s));
  assert.match(printed, /shopping:\n  - oat milk\ntodo: \(empty\)/);
});
