/**
 * The service with its WebUI for the WebUI tests: the real service (startApp)
 * on a temporary data directory, its embedded broker on a free port, the LLM
 * test server as its model, and the WebUI on a free port over HTTPS with the
 * self-signed certificate it made. Requests go over real HTTPS and verify the
 * server against that certificate (`ca`), so nothing is trusted blindly.
 */
import { createHash, createPublicKey } from 'node:crypto';
import https from 'node:https';
import http from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { startApp, type App } from '../../src/service/app.js';
import { request as socketRequest } from '../../src/cli/client.js';
import { startLlmTestServer, type LlmTestServer, type Reply } from '../support/llm-test-server.js';
import type { LinkAnswer } from '../../src/plugins/webui/index.js';

/** A response read whole. */
export interface Res {
  status: number;
  headers: http.IncomingHttpHeaders;
  text: string;
  json: any; // eslint-disable-line @typescript-eslint/no-explicit-any
  /** SHA-256 fingerprint of the certificate the server presented (HTTPS). */
  fingerprint?: string;
}

/** Options of one request. */
export interface Req {
  method?: string;
  body?: unknown;
  /** Raw body bytes (sent as they are). */
  raw?: string | Buffer;
  headers?: Record<string, string>;
  bearer?: string;
  cookie?: string;
  /** Send `Origin: <the WebUI's origin>` (what a browser page sends). */
  origin?: boolean | string;
}

/** A running service with its WebUI. */
export interface WebBox {
  app: App;
  llm: LlmTestServer;
  /** `https://localhost:<port>` (or http). */
  base: string;
  socket: string;
  dir: string;
  /** One HTTP(S) request, read whole. */
  req(pathname: string, o?: Req): Promise<Res>;
  /** One request whose response is handed over as it streams. */
  stream(pathname: string, o?: Req): Promise<http.IncomingMessage>;
  /** A link from the control socket's `webui.link`. */
  link(person?: string): Promise<LinkAnswer>;
  /** Sign in as a browser would (with Origin): the session cookie `name=value`. */
  browserLogin(person?: string): Promise<string>;
  /** Sign in as a script (no Origin): the bearer token. */
  scriptLogin(person?: string): Promise<string>;
  close(): Promise<void>;
}

/** The token part of a link URL (after `#`). */
export function linkToken(url: string): string {
  return url.slice(url.indexOf('#') + 1);
}

/** Start the service with its WebUI (see module comment). `env` adds settings. */
export async function startWebBox(o: { env?: Record<string, string>; llmReply?: Reply } = {}): Promise<WebBox> {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'homeagent-webui-'));
  const llm = await startLlmTestServer({ defaultReply: o.llmReply ?? { content: 'Hello from the test server.' } });
  const socket = path.join(dir, 'homeagent.sock');
  const app = await startApp({
    dataDir: dir,
    console: false,
    socketPath: socket,
    embeddedBrokerPort: 0,
    env: { HOMEAGENT__PLUGIN__WEBUI__PORT: '0', HOMEAGENT__CORE__LLM__SOURCES__OLLAMA__BASE_URL: llm.url, HOMEAGENT__CORE__SERVICE__DEMO_HOME: 'off', ...o.env },
  });
  const secure = !!app.webui.certificate;
  const base = `${secure ? 'https' : 'http'}://localhost:${app.webui.port}`;
  const ca = app.webui.certificate?.cert;

  const open = (pathname: string, r: Req = {}): Promise<http.IncomingMessage> =>
    new Promise((resolve, reject) => {
      const body = r.raw ?? (r.body !== undefined ? JSON.stringify(r.body) : undefined);
      const headers: Record<string, string> = { ...(r.body !== undefined ? { 'content-type': 'application/json' } : {}), ...r.headers };
      if (r.bearer) headers.authorization = `Bearer ${r.bearer}`;
      if (r.cookie) headers.cookie = r.cookie;
      if (r.origin) headers.origin = typeof r.origin === 'string' ? r.origin : base;
      const opts = { method: r.method ?? 'GET', headers, ...(secure ? { ca } : {}) };
      const q = (secure ? https : http).request(new URL(pathname, base), opts, resolve);
      q.on('error', reject);
      q.end(body);
    });
  const box: WebBox = {
    app,
    llm,
    base,
    socket,
    dir,
    stream: open,
    async req(pathname, r = {}) {
      const res = await open(pathname, r);
      const fingerprint = secure ? (res.socket as import('node:tls').TLSSocket).getPeerCertificate().fingerprint256 : undefined;
      const chunks: Buffer[] = [];
      for await (const c of res) chunks.push(c as Buffer);
      const text = Buffer.concat(chunks).toString('utf8');
      let json: unknown;
      try {
        json = JSON.parse(text);
      } catch {
        json = undefined;
      }
      return { status: res.statusCode ?? 0, headers: res.headers, text, json, ...(fingerprint ? { fingerprint } : {}) };
    },
    link: async (person) => (await socketRequest(socket, 'webui.link', person !== undefined ? { person } : {})) as LinkAnswer,
    async browserLogin(person) {
      const l = await box.link(person);
      const r = await box.req('/api/v1/auth/login', { method: 'POST', body: { token: linkToken(l.url) }, origin: true });
      if (r.status !== 200) throw new Error(`login failed: ${r.status} ${r.text}`);
      const set = String(r.headers['set-cookie']?.[0] ?? '');
      return set.slice(0, set.indexOf(';'));
    },
    async scriptLogin(person) {
      const l = await box.link(person);
      const r = await box.req('/api/v1/auth/login', { method: 'POST', body: { token: linkToken(l.url) } });
      if (r.status !== 200) throw new Error(`login failed: ${r.status} ${r.text}`);
      return r.json.token as string;
    },
    async close() {
      await app.stop();
      await llm.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
  return box;
}

/** Lines of an NDJSON response as they arrive; resolves with all of them at the end. */
export async function readNdjson(res: http.IncomingMessage, onLine?: (line: any) => void): Promise<any[]> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const lines: unknown[] = [];
  let buf = '';
  for await (const c of res) {
    buf += (c as Buffer).toString('utf8');
    let i;
    while ((i = buf.indexOf('\n')) >= 0) {
      const l = buf.slice(0, i);
      buf = buf.slice(i + 1);
      if (!l.trim()) continue;
      const v = JSON.parse(l) as unknown;
      lines.push(v);
      onLine?.(v);
    }
  }
  return lines;
}

/** Debian's Chromium, as the browser tests drive it. */
export const CHROMIUM = '/usr/bin/chromium';

/** The CPU the benches leave to the browser (the last one), when the machine has more than one; undefined on one CPU. */
export const BROWSER_CPU: number | undefined = os.cpus().length > 1 ? os.cpus().length - 1 : undefined;

/** How the benches run Chromium in the background: on BROWSER_CPU only, `nice -n 19` and the SCHED_IDLE policy (see launchChromium). */
export const BACKGROUND_CHROMIUM = `${BROWSER_CPU !== undefined ? `taskset -c ${BROWSER_CPU} ` : ''}chrt --idle 0 nice -n 19`;

/**
 * Launch Debian's Chromium headless (playwright-core) trusting `box`'s
 * self-signed certificate by its public key, with the flags these machines
 * need (no sandbox, no GPU, no background networking). `background` runs
 * the browser and every process it starts at the lowest CPU priority,
 * through a small wrapper executable (BACKGROUND_CHROMIUM): `nice -n 19`,
 * and SCHED_IDLE because Chromium running as root sets its own processes'
 * nice values again (-8 for the browser and GPU processes, 0 or 5 for
 * renderers) but leaves the scheduling policy they inherit. The benches use
 * it so the pages' rendering, which on a real deployment runs on phones and
 * laptops, does not take the box's cores from the service they measure.
 */
export async function launchChromium(box: { app: App }, opts: { background?: boolean } = {}): Promise<import('playwright-core').Browser> {
  return launchChromiumTrusting(certificateSpki(box.app.webui.certificate!.cert), opts);
}

/** The base64 sha256 of a PEM certificate's public key (SubjectPublicKeyInfo), as Chromium's --ignore-certificate-errors-spki-list takes it. */
export function certificateSpki(certPem: string): string {
  return createHash('sha256').update(createPublicKey(certPem).export({ type: 'spki', format: 'der' })).digest('base64');
}

/** launchChromium for a certificate known by its public key's hash (certificateSpki): for a process that has no App (test/support/activity-pages-process.ts). */
export async function launchChromiumTrusting(spki: string, opts: { background?: boolean } = {}): Promise<import('playwright-core').Browser> {
  const { chromium } = await import('playwright-core');
  let executablePath = CHROMIUM;
  let wrapperDir: string | undefined;
  if (opts.background) {
    wrapperDir = mkdtempSync(path.join(os.tmpdir(), 'homeagent-chromium-bg-'));
    executablePath = path.join(wrapperDir, 'chromium');
    writeFileSync(executablePath, `#!/bin/sh\nexec ${BACKGROUND_CHROMIUM} ${CHROMIUM} "$@"\n`, { mode: 0o755 });
  }
  const browser = await chromium.launch({ executablePath, args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', `--ignore-certificate-errors-spki-list=${spki}`] });
  if (wrapperDir) {
    const dir = wrapperDir;
    browser.on('disconnected', () => rmSync(dir, { recursive: true, force: true }));
  }
  return browser;
}

/** A web box with three signed-in sessions: Alice's, Bob's and an unnamed one (the household's), as cookies. */
export interface HouseholdBox {
  box: WebBox;
  alice: string;
  bob: string;
  household: string;
}

/** startWebBox, then a sign-in link each for Alice, Bob and nobody in particular (the privacy tests' three viewers). */
export async function startHouseholdBox(): Promise<HouseholdBox> {
  const box = await startWebBox();
  return { box, alice: await box.scriptLogin('Alice'), bob: await box.scriptLogin('Bob'), household: await box.scriptLogin() };
}
