/**
 * The box's own MCP server (issue 17 "MCP", server half) on the real service
 * (startWebBox: the WebUI over HTTPS with its self-signed certificate, the
 * demo home on the embedded broker), used with the official SDK's client
 * over Streamable HTTP: refused without a WebUI bearer token (401), read-only
 * by default (state and recall listed, control refused with a result naming
 * the setting), control once plugin.mcp_server.allow_control is true, and a
 * risky control (unlocking the front door) waits for the household's yes.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import https from 'node:https';
import { Readable } from 'node:stream';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { startWebBox, type WebBox } from '../webui/helpers.js';
import { waitUntil } from '../support/wait.js';

/** fetch over node:https that trusts only the box's own certificate (`ca`): the SDK client's transport uses it. */
function fetchWithCa(ca: string) {
  return (url: string | URL, init: RequestInit = {}): Promise<Response> =>
    new Promise((resolve, reject) => {
      const headers = Object.fromEntries(new Headers(init.headers).entries());
      const q = https.request(new URL(url), { method: init.method ?? 'GET', headers, ca }, (res) => {
        const h = new Headers();
        for (const [k, v] of Object.entries(res.headers)) if (v !== undefined) h.set(k, Array.isArray(v) ? v.join(', ') : v);
        const status = res.statusCode ?? 0;
        const body = status === 204 || status === 304 || init.method === 'HEAD' ? null : (Readable.toWeb(res) as unknown as ReadableStream);
        resolve(new Response(body, { status, headers: h }));
      });
      q.on('error', reject);
      const abort = (): void => void q.destroy(new Error('aborted'));
      init.signal?.addEventListener('abort', abort, { once: true });
      q.on('close', () => init.signal?.removeEventListener('abort', abort));
      q.end(typeof init.body === 'string' ? init.body : undefined);
    });
}

async function connect(box: WebBox, token?: string): Promise<Client> {
  const client = new Client({ name: 'test-agent', version: '1' });
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', box.base), {
    fetch: fetchWithCa(box.app.webui.certificate!.cert),
    ...(token ? { requestInit: { headers: { authorization: `Bearer ${token}` } } } : {}),
  });
  await client.connect(transport);
  return client;
}

const text = (r: unknown): string => ((r as CallToolResult).content ?? []).map((c) => (c.type === 'text' ? c.text : '')).join('\n');

test('the MCP server: 401 without a token; read-only by default; control when allowed; a risky control waits for the yes', async () => {
  const box = await startWebBox({ env: { HOMEAGENT__CORE__SERVICE__DEMO_HOME: 'on', HOMEAGENT__PLUGIN__MCP_SERVER__CONFIRM_CHANNEL: 'webui', HOMEAGENT__PLUGIN__HOME__CONFIRM_TIMEOUT_MS: '20000' } });
  const clients: Client[] = [];
  try {
    await waitUntil(() => (box.app.home.registry?.entities().length ?? 0) >= 3, 'the demo home');

    // Without a token: 401 with WWW-Authenticate, and the SDK's client cannot connect.
    const raw = await box.req('/mcp', { method: 'POST', body: { jsonrpc: '2.0', id: 1, method: 'initialize', params: {} } });
    assert.equal(raw.status, 401);
    assert.match(String(raw.headers['www-authenticate']), /^Bearer/);
    assert.match(raw.json.error, /homeagent webui link/);
    const is401 = (err: unknown): boolean => (err as { code?: number }).code === 401 && /UNAUTHENTICATED/.test(String(err));
    await assert.rejects(connect(box), is401);
    await assert.rejects(connect(box, 'not-a-token'), is401);

    // Read-only: reading tools only; timer and list limited to their reading actions.
    const token = await box.scriptLogin();
    const c = await connect(box, token);
    clients.push(c);
    const listed = (await c.listTools()).tools;
    assert.deepEqual(listed.map((t) => t.name).sort(), ['device_state', 'list', 'memory_recall', 'timer']);
    assert.deepEqual((listed.find((t) => t.name === 'timer')!.inputSchema.properties as Record<string, { enum: string[] }>).action.enum, ['status']);
    const state = await c.callTool({ name: 'device_state', arguments: {} });
    assert.equal(state.isError, undefined);
    assert.match(text(state), /Kitchen Light/);
    assert.match(text(await c.callTool({ name: 'memory_recall', arguments: { query: 'Anna allergies' } })), /Nothing remembered/);
    assert.match(text(await c.callTool({ name: 'list', arguments: { action: 'items', list: 'shopping' } })), /"items":\[\]/);
    const refused = await c.callTool({ name: 'device_control', arguments: { device: 'Kitchen Light', action: 'turn_on' } });
    assert.equal(refused.isError, true);
    assert.match(text(refused), /read-only.*plugin\.mcp_server\.allow_control true/);
    const timer = await c.callTool({ name: 'timer', arguments: { action: 'set', seconds: 60 } });
    assert.equal(timer.isError, true);
    assert.match(text(timer), /read-only, so timer set is not allowed/);

    // Control allowed: device_control listed and acting.
    box.app.settings.set('plugin.mcp_server.allow_control', true);
    assert.ok((await c.listTools()).tools.some((t) => t.name === 'device_control'));
    const on = await c.callTool({ name: 'device_control', arguments: { device: 'Kitchen Light', action: 'turn_on' } });
    assert.equal(on.isError, undefined, text(on));
    assert.match(text(on), /"ok":true/);

    // A risky control: the household is asked on the confirmation channel; a yes there lets it act.
    const unlock = c.callTool({ name: 'device_control', arguments: { device: 'Front Door', action: 'unlock' } });
    await waitUntil(() => box.app.home.gate?.pending === true, 'the question to the household');
    await box.app.kernel.injectInput('test', 'webui', 'yes');
    const unlocked = await unlock;
    assert.equal(unlocked.isError, undefined, text(unlocked));
    assert.match(text(unlocked), /"action":"unlock"/);

    // A no: refused, and the result says so.
    const again = c.callTool({ name: 'device_control', arguments: { device: 'Front Door', action: 'unlock' } });
    await waitUntil(() => box.app.home.gate?.pending === true, 'the second question');
    await box.app.kernel.injectInput('test', 'webui', 'no');
    const no = await again;
    assert.equal(no.isError, true);
    assert.match(text(no), /refused: The user did not confirm "unlock Front Door"/);

    // The stop button ends a call waiting for its yes.
    const stopped = c.callTool({ name: 'device_control', arguments: { device: 'Front Door', action: 'unlock' } });
    await waitUntil(() => box.app.home.gate?.pending === true, 'the third question');
    box.app.kernel.stopNow('test');
    const s = await stopped;
    assert.equal(s.isError, true);
    assert.match(text(s), /refused|stopped/);
  } finally {
    for (const c of clients) await c.close().catch(() => undefined);
    await box.close();
  }
});
