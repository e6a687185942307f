/**
 * Access to the WebUI (issue 16 "Access") over real HTTPS against the running
 * service: nothing without a link; a link opens one session, once, with a
 * Secure HttpOnly SameSite=Strict cookie; the certificate served is the one
 * whose fingerprint the link prints; state-changing requests check the
 * origin; the session token works as a bearer; sessions are listed and
 * revoked from the control socket (the CLI) and the API; sign-in attempts
 * are rate-limited; plain HTTP says push-to-talk is unavailable; the CLI
 * prints the link and fingerprint.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { readFileSync, statSync } from 'node:fs';
import path from 'node:path';
import { linkToken, startWebBox } from './helpers.js';
import { waitUntil } from '../support/wait.js';
import { request as socketRequest } from '../../src/cli/client.js';
import { cli } from '../cli/run-cli.js';

test('nobody gets in without a link; a link opens one session, once, with a Secure HttpOnly SameSite=Strict cookie', async () => {
  const box = await startWebBox();
  try {
    assert.equal((await box.req('/api/v1/session')).status, 401);
    assert.equal((await box.req('/api/v1/settings')).status, 401);
    assert.equal((await box.req('/api/v1/session', { bearer: 'made-up' })).status, 401);
    assert.equal((await box.req('/api/v1/session', { cookie: '__Host-homeagent=made-up' })).status, 401);
    // The pages themselves load (they say how to sign in); the data does not.
    const page = await box.req('/');
    assert.equal(page.status, 200);
    assert.match(String(page.headers['content-security-policy']), /default-src 'self'/);

    const link = await box.link('Alice');
    assert.match(link.url, /^https:\/\/[^/]+:\d+\/login#[A-Za-z0-9_-]{43}$/);
    assert.equal(link.person, 'Alice');
    // The fingerprint printed is the certificate's the server presents, which covers localhost.
    const r0 = await box.req('/api/v1/health');
    assert.equal(r0.fingerprint, link.fingerprint_sha256);
    const cert = new X509Certificate(readFileSync(path.join(box.dir, 'webui', 'cert.pem')));
    assert.equal(cert.fingerprint256, link.fingerprint_sha256);
    assert.ok(cert.checkHost('localhost'));
    assert.equal(statSync(path.join(box.dir, 'webui', 'key.pem')).mode & 0o777, 0o600);

    const login = await box.req('/api/v1/auth/login', { method: 'POST', body: { token: linkToken(link.url) }, origin: true });
    assert.equal(login.status, 200, login.text);
    assert.equal(login.json.session.person, 'Alice');
    assert.equal(login.json.token, undefined, 'a browser gets the cookie, never the token in the body');
    const setCookie = String(login.headers['set-cookie']?.[0]);
    assert.match(setCookie, /^__Host-homeagent=[A-Za-z0-9_-]{43};/);
    for (const attr of ['Secure', 'HttpOnly', 'SameSite=Strict', 'Path=/']) assert.ok(setCookie.split('; ').includes(attr), `${attr} in ${setCookie}`);
    const cookie = setCookie.slice(0, setCookie.indexOf(';'));
    const me = await box.req('/api/v1/session', { cookie });
    assert.equal(me.status, 200);
    assert.deepEqual({ person: me.json.person, kind: me.json.kind, push_to_talk: me.json.push_to_talk }, { person: 'Alice', kind: 'browser', push_to_talk: true });

    // One-time: the same link opens nothing again.
    const again = await box.req('/api/v1/auth/login', { method: 'POST', body: { token: linkToken(link.url) }, origin: true });
    assert.equal(again.status, 401);
    assert.equal(again.json.code, 'LINK_INVALID');
    // Only hashes are kept on disk.
    const stored = readFileSync(path.join(box.dir, 'webui', 'sessions.json'), 'utf8');
    assert.ok(!stored.includes(cookie.split('=')[1]!) && !stored.includes(linkToken(link.url)));
    assert.equal(JSON.parse(stored).schema_version, 1);
    // A bad person name is refused with what is wrong.
    await assert.rejects(socketRequest(box.socket, 'webui.link', { person: '' }), /person name/);
  } finally {
    await box.close();
  }
});

test('every state-changing request checks the origin', async () => {
  const box = await startWebBox();
  try {
    const cookie = await box.browserLogin();
    const put = (o: { origin?: boolean | string; bearer?: string; cookie?: string }) => box.req('/api/v1/settings/core.agent.max_tool_rounds', { method: 'PUT', body: { value: 3 }, ...o });
    const evil = await put({ cookie, origin: 'https://evil.example' });
    assert.equal(evil.status, 403);
    assert.equal(evil.json.code, 'ORIGIN_REFUSED');
    const none = await put({ cookie });
    assert.equal(none.status, 403, 'the cookie without an Origin is refused');
    assert.equal((await box.req('/api/v1/conversation/stop', { method: 'POST', cookie, origin: 'http://localhost:1' })).status, 403);
    assert.notEqual(box.app.settings.get('core.agent.max_tool_rounds'), 3);
    const ok = await put({ cookie, origin: true });
    assert.equal(ok.status, 200, ok.text);
    // Sign-in from another origin is refused too.
    const link = await box.link();
    const cross = await box.req('/api/v1/auth/login', { method: 'POST', body: { token: linkToken(link.url) }, origin: 'https://evil.example' });
    assert.equal(cross.status, 403);
    // ...and did not use up the link.
    assert.equal((await box.req('/api/v1/auth/login', { method: 'POST', body: { token: linkToken(link.url) }, origin: true })).status, 200);
    // A bearer token from a script needs no Origin, but one that names another origin is refused.
    const bearer = await box.scriptLogin();
    assert.equal((await put({ bearer })).status, 200);
    assert.equal((await put({ bearer, origin: 'https://evil.example' })).status, 403);
  } finally {
    await box.close();
  }
});

test('the session token works as a bearer; sessions and links are listed and revoked from the CLI socket and the API', async () => {
  const box = await startWebBox();
  try {
    const bearer = await box.scriptLogin('Bob');
    assert.match(bearer, /^[A-Za-z0-9_-]{43}$/);
    const me = await box.req('/api/v1/session', { bearer });
    assert.deepEqual({ person: me.json.person, kind: me.json.kind }, { person: 'Bob', kind: 'token' });
    const cookie = await box.browserLogin();
    const pending = await box.link('Carol');

    const listed = (await socketRequest(box.socket, 'webui.sessions', {})) as Array<{ id: string; kind: string; person?: string }>;
    assert.deepEqual(listed.map((e) => `${e.kind}:${e.person ?? ''}`).sort(), ['browser:', 'link:Carol', 'token:Bob']);
    const viaApi = await box.req('/api/v1/sessions', { cookie });
    assert.equal(viaApi.json.length, 3);
    assert.equal(viaApi.json.filter((e: { current: boolean }) => e.current).length, 1);

    // Revoke Bob's token from the CLI: it opens nothing from then on.
    const bob = listed.find((e) => e.person === 'Bob')!;
    const revoked = (await socketRequest(box.socket, 'webui.revoke', { id: bob.id })) as { revoked: { id: string } };
    assert.equal(revoked.revoked.id, bob.id);
    assert.equal((await box.req('/api/v1/session', { bearer })).status, 401);
    await assert.rejects(socketRequest(box.socket, 'webui.revoke', { id: bob.id }), /no WebUI session or link/);
    // Revoke Carol's link from the page (API): the link no longer opens.
    const carol = listed.find((e) => e.person === 'Carol')!;
    assert.equal((await box.req(`/api/v1/sessions/${carol.id}`, { method: 'DELETE', cookie, origin: true })).status, 200);
    assert.equal((await box.req('/api/v1/auth/login', { method: 'POST', body: { token: linkToken(pending.url) }, origin: true })).status, 401);
    // Sign out: the cookie is cleared and opens nothing.
    const out = await box.req('/api/v1/auth/logout', { method: 'POST', cookie, origin: true });
    assert.equal(out.status, 200);
    assert.match(String(out.headers['set-cookie']?.[0]), /Max-Age=0/);
    assert.equal((await box.req('/api/v1/session', { cookie })).status, 401);
    assert.deepEqual(await socketRequest(box.socket, 'webui.sessions', {}), []);
  } finally {
    await box.close();
  }
});

test('sign-in attempts are rate-limited per address', async () => {
  const box = await startWebBox({ env: { HOMEAGENT__PLUGIN__WEBUI__LOGIN_ATTEMPTS_PER_MINUTE: '3' } });
  try {
    for (let i = 0; i < 3; i++) assert.equal((await box.req('/api/v1/auth/login', { method: 'POST', body: { token: `guess-${i}` } })).status, 401);
    const link = await box.link();
    const limited = await box.req('/api/v1/auth/login', { method: 'POST', body: { token: linkToken(link.url) } });
    assert.equal(limited.status, 429);
    assert.equal(limited.json.code, 'TOO_MANY_ATTEMPTS');
    const retry = Number(limited.headers['retry-after']);
    assert.ok(retry >= 1 && retry <= 60, String(retry));
  } finally {
    await box.close();
  }
});

test('plain HTTP is a setting, and says push-to-talk is unavailable', async () => {
  const box = await startWebBox({ env: { HOMEAGENT__PLUGIN__WEBUI__HTTPS: 'false' } });
  try {
    assert.match(box.base, /^http:\/\//);
    const h = await box.req('/api/v1/health');
    assert.equal(h.json.https, false);
    assert.match(h.json.push_to_talk, /unavailable/);
    const link = await box.link();
    assert.match(link.url, /^http:\/\//);
    assert.equal(link.fingerprint_sha256, undefined);
    assert.match(String(link.note), /push-to-talk is unavailable/);
    const login = await box.req('/api/v1/auth/login', { method: 'POST', body: { token: linkToken(link.url) }, origin: true });
    const setCookie = String(login.headers['set-cookie']?.[0]);
    assert.match(setCookie, /^homeagent_session=/);
    assert.ok(!setCookie.includes('Secure'));
    assert.ok(setCookie.includes('HttpOnly') && setCookie.includes('SameSite=Strict'));
  } finally {
    await box.close();
  }
});

test('`homeagent webui link --person NAME` prints the link and the fingerprint; `webui sessions` and `webui revoke` work', async () => {
  const box = await startWebBox();
  try {
    const r = await cli(['--socket', box.socket, 'webui', 'link', '--person', 'Dana']);
    assert.equal(r.code, 0, r.stderr);
    const url = /https:\/\/\S+\/login#\S+/.exec(r.stdout)?.[0];
    assert.ok(url, r.stdout);
    assert.ok(r.stdout.includes(box.app.webui.certificate!.fingerprint256), r.stdout);
    assert.match(r.stdout, /as Dana/);
    const s = await cli(['--socket', box.socket, 'webui', 'sessions']);
    assert.match(s.stdout, /ID\s+KIND\s+PERSON/);
    const id = /^(\w+)\s+link\s+Dana/m.exec(s.stdout)?.[1];
    assert.ok(id, s.stdout);
    const v = await cli(['--socket', box.socket, 'webui', 'revoke', id]);
    assert.equal(v.code, 0, v.stderr);
    assert.match(v.stdout, new RegExp(`revoked link ${id} \\(Dana\\)`));
    assert.equal((await box.req('/api/v1/auth/login', { method: 'POST', body: { token: linkToken(url) } })).status, 401);
  } finally {
    await box.close();
  }
});

test('with plugin.webui.enabled false nothing listens, and webui link says the WebUI is off', async () => {
  const { mkdtempSync, rmSync } = await import('node:fs');
  const os = await import('node:os');
  const { startApp } = await import('../../src/service/app.js');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'homeagent-webui-off-'));
  const socket = path.join(dir, 'homeagent.sock');
  const app = await startApp({ dataDir: dir, console: false, socketPath: socket, embeddedBrokerPort: 0, env: { HOMEAGENT__PLUGIN__WEBUI__ENABLED: 'false', HOMEAGENT__CORE__LLM__SOURCES__OLLAMA__BASE_URL: 'http://127.0.0.1:9' } });
  try {
    assert.equal(app.webui.port, undefined);
    await assert.rejects(socketRequest(socket, 'webui.link', {}), /the WebUI is off/);
  } finally {
    await app.stop();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the user's own certificate is served instead of the self-signed one; half a pair is refused with what to set", async () => {
  const { mkdtempSync, rmSync } = await import('node:fs');
  const os = await import('node:os');
  const { execFileSync } = await import('node:child_process');
  const own = mkdtempSync(path.join(os.tmpdir(), 'homeagent-own-cert-'));
  const certFile = path.join(own, 'box.crt');
  const keyFile = path.join(own, 'box.key');
  execFileSync('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:prime256v1', '-nodes', '-keyout', keyFile, '-out', certFile, '-days', '30', '-subj', '/CN=localhost', '-addext', 'subjectAltName=DNS:localhost'], { stdio: 'ignore' });
  const mine = new X509Certificate(readFileSync(certFile)).fingerprint256;
  try {
    const box = await startWebBox({ env: { HOMEAGENT__PLUGIN__WEBUI__CERT_FILE: certFile, HOMEAGENT__PLUGIN__WEBUI__KEY_FILE: keyFile } });
    try {
      assert.equal(box.app.webui.certificate!.selfSigned, false);
      const h = await box.req('/api/v1/health');
      assert.equal(h.fingerprint, mine);
      assert.equal((await box.link()).fingerprint_sha256, mine);
    } finally {
      await box.close();
    }
    const half = await startWebBox({ env: { HOMEAGENT__PLUGIN__WEBUI__CERT_FILE: certFile } }).catch((err: Error) => err);
    assert.ok(!(half instanceof Error), 'the service starts; only the WebUI fails');
    try {
      const st = (await socketRequest(half.socket, 'status', {})) as { plugins: Array<{ name: string; state: string; error?: string }> };
      const w = st.plugins.find((p) => p.name === 'webui')!;
      assert.equal(w.state, 'failed');
      assert.match(String(w.error), /cert_file and plugin\.webui\.key_file must be set together/);
    } finally {
      await half.close();
    }
  } finally {
    rmSync(own, { recursive: true, force: true });
  }
});

test('a pairing code said aloud signs a browser in once; a wrong code is refused, five end it; without a speaker the box says so', async () => {
  // (More attempts per minute than the default: this test makes many on purpose; the limit itself is tested above.)
  const box = await startWebBox({ env: { HOMEAGENT__PLUGIN__WEBUI__LOGIN_ATTEMPTS_PER_MINUTE: '100' } });
  try {
    const said: string[] = [];
    box.app.kernel.bus.subscribe('_test_', 'output', (o) => {
      if (o.channel === 'speaker') said.push(String(o.content));
    });
    const ask = async (): Promise<string> => {
      const before = said.length;
      const r = await box.req('/api/v1/auth/pair', { method: 'POST', body: {}, origin: true });
      assert.equal(r.status, 200, r.text);
      assert.deepEqual(r.json, { said: true, expires_in_s: 120, digits: 6 });
      await waitUntil(() => said.length > before);
      const m = /pairing code is (\d) (\d) (\d) (\d) (\d) (\d)\. Again/.exec(said.at(-1)!);
      assert.ok(m, `said: ${said.at(-1)}`);
      return m.slice(1).join('');
    };
    const code = await ask();
    // It is never in the answer, nor in the sessions file.
    assert.ok(!readFileSync(path.join(box.dir, 'webui', 'sessions.json'), 'utf8').includes(code));
    const wrong = String((Number(code) + 1) % 1_000_000).padStart(6, '0');
    const bad = await box.req('/api/v1/auth/login', { method: 'POST', body: { code: wrong }, origin: true });
    assert.equal(bad.status, 401);
    assert.equal(bad.json.code, 'CODE_INVALID');
    const malformed = await box.req('/api/v1/auth/login', { method: 'POST', body: { code: 'abc' }, origin: true });
    assert.equal(malformed.status, 400);
    assert.match(malformed.json.error, /six digits/);
    // Typed with spaces as it was said: in, as a browser, once.
    const ok = await box.req('/api/v1/auth/login', { method: 'POST', body: { code: `${code.slice(0, 3)} ${code.slice(3)}` }, origin: true });
    assert.equal(ok.status, 200, ok.text);
    assert.match(String(ok.headers['set-cookie']?.[0]), /^__Host-homeagent=/);
    const again = await box.req('/api/v1/auth/login', { method: 'POST', body: { code }, origin: true });
    assert.equal(again.json.code, 'CODE_INVALID');
    // Five wrong codes end a code: the right one then opens nothing.
    const second = await ask();
    const other = String((Number(second) + 7) % 1_000_000).padStart(6, '0');
    for (let i = 0; i < 5; i++) assert.equal((await box.req('/api/v1/auth/login', { method: 'POST', body: { code: other }, origin: true })).status, 401);
    assert.equal((await box.req('/api/v1/auth/login', { method: 'POST', body: { code: second }, origin: true })).json.code, 'CODE_INVALID');
    // No speaker (the voice plugin stopped): a clear refusal, and no code is made.
    await box.app.kernel.host.stop('voice');
    const links = (await socketRequest(box.socket, 'webui.sessions', {})) as unknown[];
    const r = await box.req('/api/v1/auth/pair', { method: 'POST', body: {}, origin: true });
    assert.equal(r.status, 409, r.text);
    assert.equal(r.json.code, 'NO_SPEAKER');
    assert.match(r.json.error, /homeagent webui link/);
    assert.equal(((await socketRequest(box.socket, 'webui.sessions', {})) as unknown[]).length, links.length, 'no link was made');
  } finally {
    await box.close();
  }
});
