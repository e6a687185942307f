/**
 * Issue 18 "Pictures" through the running service (a real Mosquitto, the LLM
 * test server scripting the model, the control socket, the simulated camera):
 * - "Take a picture of the front door": the model calls camera_snapshot, is
 *   shown the JPEG, and says what it sees; the picture is one file under
 *   <data dir>/images named by its sha256, remembered with the camera's
 *   name, the turn and the model's words.
 * - The run log holds a `sha256:` reference, not the bytes again.
 * - "What did the camera see today?": the prompt's recall already holds the
 *   picture's time and description, and pictures_recall returns them.
 * - "Forget the parcel": the picture's entry and file are gone.
 */
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createHash } from 'node:crypto';
import os from 'node:os';
import path from 'node:path';
import { startApp, type App } from '../../src/service/app.js';
import { request } from '../../src/cli/client.js';
import type { TurnResult } from '../../src/kernel/turn-types.js';
import { startLlmTestServer, type LlmTestServer, type ReceivedMessage, type ReceivedRequest } from '../support/llm-test-server.js';
import { startMosquitto, type MosquittoBroker } from '../support/mosquitto.js';

const text = (m: ReceivedMessage | undefined): string => (typeof m?.content === 'string' ? m.content : '');
const SEEN = 'A parcel is lying on the doormat next to colour bars.';

/** The fake multimodal model. */
function model(req: ReceivedRequest) {
  const msgs = req.body!.messages!;
  const last = msgs.at(-1)!;
  if (last.role === 'user' && last.images?.length && /^\[image returned by camera_snapshot\]/.test(text(last))) return { content: SEEN };
  if (last.role === 'tool') return { content: `From the pictures: ${text(last)}` };
  const said = text(last);
  if (/^take a picture/i.test(said)) return { tool_calls: [{ name: 'camera_snapshot', arguments: {} }] };
  if (/^what did the camera see today/i.test(said)) return { tool_calls: [{ name: 'pictures_recall', arguments: { when: 'today' } }] };
  const forget = /^forget (?:the )?(.+?)\.?$/i.exec(said);
  if (forget) return { tool_calls: [{ name: 'memory_forget', arguments: { about: forget[1]! } }] };
  return { content: 'Noted.' };
}

describe('pictures (service)', () => {
  let broker: MosquittoBroker;
  let srv: LlmTestServer;
  let app: App;
  let dir: string;
  let socket: string;

  async function ask(words: string): Promise<TurnResult> {
    const result = (await request(socket, 'ask', { text: words, as: 'Anna' }, undefined, { timeoutMs: 60_000 })) as TurnResult;
    assert.equal(result.status, 'done', `${words}: ${JSON.stringify(result)}`);
    return result;
  }

  before(async () => {
    broker = await startMosquitto();
    srv = await startLlmTestServer();
    srv.script(model);
    dir = mkdtempSync(path.join(os.tmpdir(), 'homeagent-pictures-'));
    socket = path.join(dir, 'homeagent.sock');
    app = await startApp({
      dataDir: dir,
      console: false,
      socketPath: socket,
      env: {
        HOMEAGENT__PLUGIN__MQTT__URL: broker.url,
        HOMEAGENT__CORE__LLM__SOURCES__OLLAMA__BASE_URL: srv.url,
        HOMEAGENT__CORE__AGENT__CONTEXT_WINDOW: '16384',
        HOMEAGENT__CORE__PLUGINS__OPTIONAL: '["camera"]',
        HOMEAGENT__PLUGIN__CAMERA__DRIVER: 'sim',
        HOMEAGENT__PLUGIN__CAMERA__NAME: 'front door',
        HOMEAGENT__PLUGIN__HOME__TIME_ZONE: 'UTC',
      },
    });
  });

  after(async () => {
    await app?.stop();
    await srv?.close();
    await broker?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  it('a snapshot is stored once, described by the model, recalled by time and forgotten for real', async () => {
    const mem = app.memory!.system;
    const took = await ask('Take a picture of the front door.');
    assert.equal(took.reply, SEEN);
    const shown = srv.chatRequests().at(-1)!.body!.messages!.at(-1)!;
    assert.equal(shown.images?.length, 1, 'the model was shown the snapshot');
    // The description is written when the plugin has handled the turn's events.
    await app.memory!.picturesPlugin.idle();
    const entries = mem.db.prepare('SELECT id, sha256, source, turn, description, described_by FROM picture_entries').all() as Array<Record<string, unknown>>;
    assert.equal(entries.length, 1, JSON.stringify(entries));
    assert.deepEqual({ ...entries[0], id: 0 }, { id: 0, sha256: entries[0]!.sha256, source: 'front door', turn: took.input_id, description: SEEN, described_by: 'model' });
    const sha = String(entries[0]!.sha256);
    assert.equal(sha, createHash('sha256').update(Buffer.from(shown.images![0]!, 'base64')).digest('hex'), 'named by the sha256 of the bytes the model saw');
    const file = path.join(dir, 'images', sha.slice(0, 2), `${sha}.jpg`);
    assert.ok(existsSync(file));
    assert.equal(existsSync(path.join(dir, 'camera')), false, 'no second copy under camera/');
    // Anna's export lists the picture her turn looked at.
    assert.deepEqual(app.memory!.exportPerson('Anna').pictures.map((p) => [p.source, p.description, p.sha256]), [['front door', SEEN, sha]]);
    // The run log keeps a reference, not a second copy of the bytes.
    const logged = app.kernel.services.runLog.turn(took.input_id).flatMap((e) => (e.type === 'llm.requested' ? e.appended : e.type === 'context.projected' ? e.messages : []));
    assert.deepEqual(logged.flatMap((m) => m.images ?? []), [`sha256:${sha}`]);
    assert.ok(!readFileSync(path.join(dir, 'runlog.db')).toString('latin1').includes(shown.images![0]!.slice(100, 160)), 'runlog.db holds no base64 of it');

    const asked = await ask('What did the camera see today?');
    const first = srv.chatRequests().find((r) => r.body!.messages!.some((m) => /^What did the camera see today/.test(text(m))))!;
    const prompt = first.body!.messages!.map(text).join('\n');
    assert.match(prompt, /\[Pictures taken or shown then\][\s\S]*front door: A parcel is lying on the doormat/, 'the prompt recalls the picture');
    assert.match(asked.reply, /A parcel is lying on the doormat/);
    assert.match(asked.reply, /"source":"front door"/);

    const forgot = await ask('Forget the parcel.');
    assert.match(forgot.reply, /Forgotten/i);
    assert.equal(Number(mem.db.prepare('SELECT count(*) FROM picture_entries').pluck().get()), 0);
    assert.equal(existsSync(file), false, 'the picture file is gone');
    assert.deepEqual(readdirSync(path.join(dir, 'images', sha.slice(0, 2))), []);
  });
});
