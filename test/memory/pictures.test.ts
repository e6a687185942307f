/**
 * Issue 18 "Pictures" with the memory (src/memory/pictures-plugin.ts,
 * picture-tools.ts, MemorySystem.forget) and the camera (hal/camera/plugin.ts):
 * - a snapshot a turn took is stored once, referenced by the turn, and
 *   described by what the model said when it looked at it; an image given
 *   with an input likewise; the kernel's own turns record nothing;
 * - forgetting the turn (or the words of the description) removes the entry
 *   and the file when nothing else refers to it, and only then;
 * - "what did the camera see this morning?": pictures_recall and the
 *   prompt's recall find the snapshots of the morning (household time zone);
 * - periodic capture is off by default and takes snapshots when set (FakeClock).
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { describe, it } from 'node:test';
import { FakeClock } from '../../src/kernel/clock.js';
import { CameraPlugin } from '../../hal/camera/plugin.js';
import { testPattern } from '../../hal/camera/image.js';
import { PicturesPlugin } from '../../src/memory/pictures-plugin.js';
import type { ChatMessage } from '../../src/kernel/llm-types.js';
import type { InputMessage } from '../../src/kernel/turn-types.js';
import { FakeSdk } from '../support/fake-sdk.js';
import { callTool, fakeSettings, makeMemory, tempDir } from './helpers.js';

const DAY = 86_400_000;

function input(id: string, text: string, extra: Partial<InputMessage> = {}): InputMessage {
  return { id, source: 'webui', channel: 'webui', text, kind: 'queued', level: 0, received_at: 0, ...extra };
}

/** Publish one turn's events the way the kernel's bus subscriber does. */
function turnEvents(sdk: FakeSdk, turn: string) {
  return {
    started: (inp: InputMessage) => sdk.publish('turn.started', { type: 'turn.started', turn, input: inp }),
    requested: (appended: ChatMessage[], round = 1) => sdk.publish('llm.requested', { type: 'llm.requested', turn, round, appended }),
    completed: (content: string, round = 1) =>
      sdk.publish('llm.completed', { type: 'llm.completed', turn, round, response: { content, tool_calls: [], done_reason: 'stop' } as never, duration_ms: 1 }),
    finished: (said: string) => sdk.publish('turn.finished', { type: 'turn.finished', turn, outcome: { kind: 'reply', reply: said }, status: 'done', reply: said, said }),
  };
}

describe('pictures with the memory and the camera', () => {
  it('a snapshot a turn took is stored once, referenced by the turn and described by the model; forgetting the turn removes it', async () => {
    const { dir, cleanup } = tempDir();
    const clock = new FakeClock(Date.UTC(2026, 11, 1, 8, 0));
    const mem = makeMemory({ dir, clock });
    const sdk = new FakeSdk({ name: 'camera', dataDir: dir, settings: { 'plugin.camera.driver': 'sim', 'plugin.camera.name': 'front door' }, clock });
    const camera = new CameraPlugin({ pictures: mem.pictures, clock });
    const plugin = new PicturesPlugin({ pictures: mem.pictures, clock });
    try {
      await camera.start(sdk);
      plugin.start(sdk);
      const t = turnEvents(sdk, 'turn-1');
      t.started(input('turn-1', 'what is at the front door?', { received_at: clock.now() }));
      mem.append({ id: 'turn-1:user', time: clock.now(), kind: 'user', source: 'webui', input: 'what is at the front door?', response: '' });
      t.completed('');
      const ctx = { input: input('turn-1', 'what is at the front door?'), signal: new AbortController().signal, call_id: 'c1' };
      const out = (await sdk.tools.get('camera_snapshot')!.handler({}, ctx)) as { text: string; images: string[] };
      const result = JSON.parse(out.text) as { picture_id: number; file: string };
      assert.ok(result.file.startsWith(`${dir}/images/`), `stored in the picture store: ${result.file}`);
      // The kernel adds the tool's image as a user message; the model's next words describe it.
      t.requested([{ role: 'user', content: '[image returned by camera_snapshot]', images: out.images }], 2);
      t.completed('A parcel is lying on the doormat.', 2);
      t.finished('A parcel is lying on the doormat.');
      await plugin.idle();
      const rows = mem.db.prepare('SELECT id, source, turn, description, described_by FROM picture_entries').all();
      assert.deepEqual(rows, [{ id: result.picture_id, source: 'front door', turn: 'turn-1', description: 'A parcel is lying on the doormat.', described_by: 'model' }], 'one entry: the camera\'s and the turn\'s are the same picture');
      assert.equal(Number(mem.db.prepare('SELECT count(*) FROM pictures').pluck().get()), 1);
      // An image given with an input is remembered with its turn too; the kernel's own turns record nothing.
      const given = (await testPattern(7, 64, 48)).toString('base64');
      const t2 = turnEvents(sdk, 'turn-2');
      t2.started(input('turn-2', 'what is this?', { images: [given], received_at: clock.now() }));
      t2.completed('A test card with colour bars.');
      t2.finished('A test card with colour bars.');
      const self = turnEvents(sdk, 'turn-3');
      self.started(input('turn-3', '[memory review]', { source: '_kernel_', channel: '_consolidation_', images: [(await testPattern(8, 64, 48)).toString('base64')] }));
      self.completed('ok');
      self.finished('ok');
      await plugin.idle();
      assert.deepEqual(mem.db.prepare('SELECT source, turn, description FROM picture_entries WHERE turn != ?').all('turn-1'), [{ source: 'turn:webui', turn: 'turn-2', description: 'A test card with colour bars.' }]);
      // Forgetting the first turn removes its picture, file and all.
      const file = mem.pictures.picture(mem.pictures.entry(result.picture_id)!.sha256)!.file;
      assert.ok(existsSync(file));
      const r = mem.forget({ turns: ['turn-1'] });
      assert.equal(r.pictures, 1);
      assert.equal(mem.pictures.entry(result.picture_id), undefined);
      assert.equal(existsSync(file), false, 'the file is gone');
      assert.equal(Number(mem.db.prepare('SELECT count(*) FROM pictures').pluck().get()), 1, 'the other picture stays');
    } finally {
      await plugin.stop();
      await camera.stop();
      mem.close();
      cleanup();
    }
  });

  it('forgetting removes a picture only when nothing else refers to it; the words of its description forget it too', async () => {
    const { dir, cleanup } = tempDir();
    const clock = new FakeClock(Date.UTC(2026, 11, 1, 9, 0));
    const mem = makeMemory({ dir, clock });
    try {
      const img = await testPattern(1, 64, 48);
      const a = await mem.pictures.put(img, { source: 'tool:camera_snapshot', turn: 'ta' });
      await mem.pictures.put(img, { source: 'tool:camera_snapshot', turn: 'tb' });
      mem.forget({ turns: ['ta'] });
      assert.ok(existsSync(a.picture.file), 'turn tb still refers to it');
      assert.deepEqual(mem.pictures.read(a.picture.sha256), img);
      mem.forget({ turns: ['tb'] });
      assert.equal(existsSync(a.picture.file), false, 'nothing refers to it any more');
      assert.equal(mem.pictures.picture(a.picture.sha256), undefined);
      // "Forget the red bicycle": the picture the model described so goes, another stays.
      const bike = await mem.pictures.put(await testPattern(2, 64, 48), { source: 'garden', turn: 'tc' });
      mem.pictures.describe([bike.entry.id], 'A red bicycle leans on the fence.');
      const cat = await mem.pictures.put(await testPattern(3, 64, 48), { source: 'garden', turn: 'td' });
      mem.pictures.describe([cat.entry.id], 'A grey cat sleeps on the bench.');
      const r = mem.forget({ about: 'the red bicycle' });
      assert.equal(r.pictures, 1);
      assert.equal(existsSync(bike.picture.file), false);
      assert.ok(existsSync(cat.picture.file));
      assert.equal(mem.pictures.entry(cat.entry.id)?.description, 'A grey cat sleeps on the bench.');
    } finally {
      mem.close();
      cleanup();
    }
  });

  it('"what did the camera see this morning?" finds the morning\'s snapshots with their times and descriptions', async () => {
    const { dir, cleanup } = tempDir();
    const morning = Date.UTC(2026, 11, 1, 0, 0);
    const clock = new FakeClock(morning + 11 * 3_600_000);
    const settings = fakeSettings({ 'plugin.home.time_zone': 'UTC' });
    const mem = makeMemory({ dir, clock, settings });
    try {
      const at = async (ms: number, seed: number, description?: string, turn?: string) => {
        const r = await mem.pictures.put(await testPattern(seed, 64, 48), { source: 'front door', time: ms, ...(turn ? { turn } : {}) });
        if (description) mem.pictures.describe([r.entry.id], description);
        return r.entry.id;
      };
      await at(morning - DAY + 8 * 3_600_000, 1, 'Yesterday: the bins are out.');
      await at(morning + 4 * 3_600_000, 2, 'Before dawn: dark street.');
      const early = await at(morning + 7 * 3_600_000 + 600_000, 3, 'The postman at the gate with a parcel.', 'turn-x');
      const later = await at(morning + 9.5 * 3_600_000, 4);
      const tools = mem.tools();
      const r = (await callTool(tools, 'pictures_recall', { when: 'this morning' })) as { pictures: Array<{ id: number; time: string; source: string; description: string }> };
      assert.deepEqual(
        r.pictures.map((p) => [p.id, p.time, p.description]),
        [
          [later, '2026-12-01T09:30:00.000Z', 'snapshot from front door at 2026-12-01 09:30 UTC'],
          [early, '2026-12-01T07:10:00.000Z', 'The postman at the gate with a parcel.'],
        ],
      );
      const y = (await callTool(tools, 'pictures_recall', { when: 'yesterday' })) as { pictures: Array<{ description: string }> };
      assert.deepEqual(y.pictures.map((p) => p.description), ['Yesterday: the bins are out.']);
      // The prompt's recall answers without a tool call.
      const block = await mem.recallForPrompt('What did the camera see this morning?', 2000);
      assert.match(block.text, /\[Pictures taken or shown then\]/);
      assert.match(block.text, /2026-12-01 07:10\] front door: The postman at the gate with a parcel\./);
      assert.doesNotMatch(block.text, /bins|dark street/);
      // Morning in the household's zone: Berlin is UTC+1 in December, so 04:00 UTC is 05:00 there.
      settings.set('plugin.home.time_zone', 'Europe/Berlin');
      const berlin = (await callTool(tools, 'pictures_recall', { when: 'this morning' })) as { pictures: Array<{ description: string }> };
      assert.ok(berlin.pictures.some((p) => p.description === 'Before dawn: dark street.'));
      // A picture shown again is served only when its file is intact.
      const shown = (await callTool(tools, 'picture_show', { id: early })) as { kind: string; images: string[] };
      assert.equal(shown.kind, 'tool_output');
      assert.deepEqual([...Buffer.from(shown.images[0]!, 'base64').subarray(0, 2)], [0xff, 0xd8]);
    } finally {
      mem.close();
      cleanup();
    }
  });

  it('periodic capture is off by default and takes a snapshot every interval once set', async () => {
    const { dir, cleanup } = tempDir();
    const clock = new FakeClock(Date.UTC(2026, 11, 1, 6, 0));
    const mem = makeMemory({ dir, clock });
    const sdk = new FakeSdk({ name: 'camera', dataDir: dir, settings: { 'plugin.camera.driver': 'sim', 'plugin.camera.name': 'garden' }, clock });
    const camera = new CameraPlugin({ pictures: mem.pictures, clock });
    try {
      await camera.start(sdk);
      assert.equal(sdk.settingsApi.get('plugin.camera.capture_interval_min'), 0);
      clock.advance(6 * 3_600_000);
      await Promise.resolve();
      assert.equal(sdk.events('plugin.camera.snapshot').length, 0, 'no snapshot without a request');
      sdk.settingsApi.set('plugin.camera.capture_interval_min', 30);
      clock.advance(29 * 60_000);
      assert.equal(sdk.events('plugin.camera.snapshot').length, 0);
      clock.advance(60_000);
      await sdk.waitForPublished('plugin.camera.snapshot', () => true, 1);
      // Let the capture finish (its promise settles right after the publish).
      await new Promise(setImmediate);
      clock.advance(30 * 60_000);
      await sdk.waitForPublished('plugin.camera.snapshot', () => true, 2);
      const rows = mem.db.prepare('SELECT time, source, turn, described_by FROM picture_entries ORDER BY time').all();
      assert.deepEqual(rows, [
        { time: Date.UTC(2026, 11, 1, 12, 30), source: 'garden', turn: null, described_by: 'default' },
        { time: Date.UTC(2026, 11, 1, 13, 0), source: 'garden', turn: null, described_by: 'default' },
      ]);
      // Off again: no more.
      sdk.settingsApi.set('plugin.camera.capture_interval_min', 0);
      clock.advance(3 * 3_600_000);
      await Promise.resolve();
      assert.equal(sdk.events('plugin.camera.snapshot').length, 2);
    } finally {
      await camera.stop();
      mem.close();
      cleanup();
    }
  });
});

