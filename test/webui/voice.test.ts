/**
 * Push-to-talk over the WebUI's WebSocket (issue 16, Talk): a fixture
 * recording sent as 16 kHz mono frames goes through the box's own voice
 * pipeline (real pocketsphinx) and comes back as transcript, what was done
 * and the spoken reply as a WAV; the upgrade needs a session and the page's
 * origin; malformed frames get typed errors.
 */
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import WebSocket from 'ws';
import { startWebBox, type WebBox } from './helpers.js';
import { VOICE_DIR } from '../support/e2e-home.js';
import { wavToVoicePcm } from '../../hal/mic/file-mic.js';
import { request } from '../../src/cli/client.js';
import { waitUntil } from '../support/wait.js';
import { noise } from '../voice/helpers.js';

let box: WebBox;
let token: string;
before(async () => {
  box = await startWebBox({ env: { HOMEAGENT__CORE__SERVICE__DEMO_HOME: 'on' } });
  token = await box.scriptLogin();
  // The speech grammar is built once the service is up.
  let ready = false;
  await waitUntil(() => {
    void request(box.socket, 'status', {}).then((st) => (ready = (st as { voice?: { stt?: { grammar?: { state?: string } } } }).voice?.stt?.grammar?.state === 'ready'));
    return ready;
  }, 'the speech grammar', 120_000);
});
after(async () => box.close());

/** Open the push-to-talk socket; resolves once open, or rejects with the refused status. */
function connect(headers: Record<string, string>): Promise<{ ws: WebSocket; frames: Array<string | Buffer> }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(box.base.replace(/^https/, 'wss') + '/api/v1/voice', { ca: box.app.webui.certificate!.cert, headers });
    const frames: Array<string | Buffer> = [];
    ws.on('message', (d: Buffer, isBinary: boolean) => frames.push(isBinary ? d : d.toString()));
    ws.once('open', () => resolve({ ws, frames }));
    ws.once('unexpected-response', (_req, res) => reject(new Error(`refused ${res.statusCode}`)));
    ws.once('error', reject);
  });
}

test('a recording sent over the WebSocket is heard by the box: transcript, what was done (the demo home lock, over MQTT), the spoken reply as a WAV', async () => {
  const { ws, frames } = await connect({ authorization: `Bearer ${token}` });
  // The recording, then the quiet room for as long as a person takes to let go of the button (1.5 s, -65 dBFS, as the end-to-end voice test does).
  const pcm = Buffer.concat([wavToVoicePcm(readFileSync(path.join(VOICE_DIR, 'lock the Front Door.wav'))), noise(1500, -65, 11)]);
  for (let i = 0; i < pcm.length; i += 3200) ws.send(pcm.subarray(i, i + 3200), { binary: true });
  ws.send(JSON.stringify({ type: 'end' }));
  await waitUntil(() => frames.some((f) => Buffer.isBuffer(f)) || frames.some((f) => typeof f === 'string' && f.includes('"error"')), 'the answer', 60_000);
  const result = JSON.parse(frames.find((f) => typeof f === 'string') as string);
  assert.equal(result.type, 'result', JSON.stringify(result));
  assert.equal(result.transcript, 'lock the front door');
  assert.ok(result.actions.some((a: string) => /^mqtt .*front_door.* LOCK/i.test(a)), JSON.stringify(result.actions));
  assert.match(result.reply, /lock/i);
  const wav = frames.find((f) => Buffer.isBuffer(f)) as Buffer;
  assert.equal(wav.subarray(0, 4).toString(), 'RIFF');
  assert.ok(wav.length > 10_000);
  ws.close();
});

test('malformed frames get typed errors; the upgrade needs a session and the page origin', async () => {
  const { ws, frames } = await connect({ authorization: `Bearer ${token}` });
  ws.send(Buffer.alloc(3), { binary: true });
  ws.send('not json');
  ws.send(JSON.stringify({ type: 'end' }));
  ws.send(JSON.stringify({ type: 'shout' }));
  await waitUntil(() => frames.length >= 4, 'four answers');
  assert.deepEqual(frames.map((f) => JSON.parse(String(f)).code), ['ODD_BYTES', 'BAD_MESSAGE', 'NO_AUDIO', 'BAD_MESSAGE']);
  ws.close();
  await assert.rejects(connect({}), /refused 401/);
  await assert.rejects(connect({ authorization: `Bearer ${token}`, origin: 'https://evil.example' }), /refused 403/);
  const cookie = await box.browserLogin();
  await assert.rejects(connect({ cookie }), /refused 403/, 'a cookie without an Origin');
  const ok = await connect({ cookie, origin: box.base });
  ok.ws.close();
});

test('push-to-talk from a browser paired for a person: the box hears that person, as typed input from it does', async () => {
  const anna = await box.scriptLogin('Anna');
  const inputs: Array<{ text: string; user?: string }> = [];
  box.app.kernel.bus.subscribe('_test_', 'raw_input', (i) => void inputs.push({ text: i.text, ...(i.user ? { user: i.user } : {}) }));
  const { ws, frames } = await connect({ authorization: `Bearer ${anna}` });
  const pcm = Buffer.concat([wavToVoicePcm(readFileSync(path.join(VOICE_DIR, 'lock the Front Door.wav'))), noise(1500, -65, 12)]);
  for (let i = 0; i < pcm.length; i += 3200) ws.send(pcm.subarray(i, i + 3200), { binary: true });
  ws.send(JSON.stringify({ type: 'end' }));
  await waitUntil(() => frames.some((f) => Buffer.isBuffer(f)) || frames.some((f) => typeof f === 'string' && f.includes('"error"')), 'the answer', 60_000);
  const result = JSON.parse(frames.find((f) => typeof f === 'string') as string);
  assert.equal(result.transcript, 'lock the front door', JSON.stringify(result));
  assert.deepEqual(inputs.filter((i) => i.text === 'lock the front door'), [{ text: 'lock the front door', user: 'Anna' }]);
  ws.close();
});
