/**
 * Camera: the snapshot-source contract on a file, a local HTTP server and a
 * fake MQTT subscription; image preparation with sharp (downscale, EXIF
 * rotation, transparency, undecodable input); HTTP errors; MQTT frames;
 * CameraPlugin's camera_snapshot tool with a fake SDK.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import sharp from 'sharp';
import { CameraError, prepareImage } from '../../hal/camera/image.js';
import { CameraPlugin, createCamera } from '../../hal/camera/plugin.js';
import { FileSnapshotSource, HttpSnapshotSource, MqttSnapshotSource, SimSnapshotSource } from '../../hal/camera/sources.js';
import { cameraContract } from './contracts/camera.js';
import { FakeSdk, MemoryLogger } from '../support/fake-sdk.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'ha-camera-'));
after(() => rmSync(dir, { recursive: true, force: true }));

/** A tiny snapshot server: serves `state.image`; checks Basic auth when `state.auth` is set; `state.hang` never answers. */
async function snapshotServer() {
  const state: { image: Buffer; auth?: string; status?: number; hang?: boolean; lastAuth?: string } = { image: Buffer.alloc(0) };
  const server = http.createServer((req, res) => {
    state.lastAuth = req.headers.authorization;
    if (state.hang) return;
    if (state.auth && req.headers.authorization !== state.auth) {
      res.writeHead(401).end('unauthorized');
      return;
    }
    res.writeHead(state.status ?? 200, { 'content-type': 'image/jpeg' }).end(state.image);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const port = (server.address() as AddressInfo).port;
  return {
    state,
    url: `http://127.0.0.1:${port}/snapshot.jpg`,
    port,
    close: () =>
      new Promise<void>((r) => {
        server.closeAllConnections();
        server.close(() => r());
      }),
  };
}

/** A fake MQTT broker side: subscribe() records handlers; publish() delivers. */
function fakeMqtt() {
  const handlers = new Map<string, Set<(p: Buffer) => void>>();
  return {
    subscribe: (topic: string, cb: (p: Buffer) => void) => {
      const set = handlers.get(topic) ?? new Set();
      set.add(cb);
      handlers.set(topic, set);
      return () => set.delete(cb);
    },
    publish: (topic: string, payload: Buffer) => {
      for (const h of handlers.get(topic) ?? []) h(payload);
    },
    subscribers: (topic: string) => handlers.get(topic)?.size ?? 0,
  };
}

cameraContract('FileSnapshotSource', async () => {
  const file = path.join(dir, `cam-${Math.random().toString(36).slice(2)}.img`);
  return { source: new FileSnapshotSource(file), provide: async (img) => writeFileSync(file, img), cleanup: async () => rmSync(file, { force: true }) };
});

cameraContract('HttpSnapshotSource (local server)', async () => {
  const srv = await snapshotServer();
  return {
    source: new HttpSnapshotSource({ url: srv.url }),
    provide: async (img) => {
      srv.state.image = img;
    },
    cleanup: srv.close,
  };
});

cameraContract('MqttSnapshotSource (fake subscription)', async () => {
  const mqtt = fakeMqtt();
  const source = new MqttSnapshotSource({ topic: 'frigate/door/snapshot', subscribe: mqtt.subscribe, maxAgeMs: 0 });
  return {
    source,
    provide: async (img) => {
      // The next frame arrives shortly after the snapshot was asked for.
      setTimeout(() => mqtt.publish('frigate/door/snapshot', img), 10);
    },
    cleanup: async () => {},
  };
});

describe('prepareImage', () => {
  it('keeps small images at their size and never enlarges', async () => {
    const jpg = await sharp({ create: { width: 320, height: 200, channels: 3, background: '#808080' } }).jpeg().toBuffer();
    const img = await prepareImage(jpg);
    assert.deepEqual([img.width, img.height], [320, 200]);
    assert.equal(Buffer.from(img.base64, 'base64').equals(img.jpeg), true);
    assert.equal(img.bytes, img.jpeg.length);
  });

  it('applies EXIF orientation and flattens transparency', async () => {
    const rotated = await sharp({ create: { width: 400, height: 100, channels: 3, background: '#ff0000' } }).jpeg().withMetadata({ orientation: 6 }).toBuffer();
    const r = await prepareImage(rotated);
    assert.deepEqual([r.width, r.height], [100, 400]);
    const transparent = await sharp({ create: { width: 50, height: 50, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } } }).png().toBuffer();
    const t = await prepareImage(transparent);
    const { data } = await sharp(t.jpeg).raw().toBuffer({ resolveWithObject: true });
    assert.ok(data[0]! > 240, 'transparent pixels become white, not black');
  });

  it('truncated, empty or non-image bytes are IMAGE_UNDECODABLE', async () => {
    const jpg = await sharp({ create: { width: 640, height: 480, channels: 3, background: '#336699' } }).jpeg().toBuffer();
    for (const bad of [jpg.subarray(0, 200), Buffer.alloc(0), Buffer.from('GIF89a garbage')]) {
      await assert.rejects(prepareImage(bad), (e: unknown) => e instanceof CameraError && e.code === 'IMAGE_UNDECODABLE');
    }
  });
});

describe('HttpSnapshotSource errors', () => {
  it('user:pass in the URL becomes Basic auth; a wrong password is HTTP 401', async () => {
    const srv = await snapshotServer();
    try {
      srv.state.image = await sharp({ create: { width: 8, height: 8, channels: 3, background: '#000' } }).jpeg().toBuffer();
      srv.state.auth = `Basic ${Buffer.from('admin:s3cret').toString('base64')}`;
      const good = new HttpSnapshotSource({ url: `http://admin:s3cret@127.0.0.1:${srv.port}/snap` });
      assert.equal(good.origin.includes('s3cret'), false);
      assert.ok((await good.snapshot()).equals(srv.state.image));
      const bad = new HttpSnapshotSource({ url: `http://admin:wrong@127.0.0.1:${srv.port}/snap` });
      await assert.rejects(bad.snapshot(), (e: unknown) => e instanceof CameraError && e.code === 'CAMERA_HTTP_STATUS' && /401/.test(e.message));
    } finally {
      await srv.close();
    }
  });

  it('a camera that never answers is CAMERA_TIMEOUT; a closed port is CAMERA_UNREACHABLE', async () => {
    const srv = await snapshotServer();
    srv.state.hang = true;
    try {
      await assert.rejects(new HttpSnapshotSource({ url: srv.url, timeoutMs: 150 }).snapshot(), (e: unknown) => e instanceof CameraError && e.code === 'CAMERA_TIMEOUT');
    } finally {
      await srv.close();
    }
    await assert.rejects(new HttpSnapshotSource({ url: srv.url }).snapshot(), (e: unknown) => e instanceof CameraError && e.code === 'CAMERA_UNREACHABLE');
    assert.throws(() => new HttpSnapshotSource({ url: 'ftp://cam/x.jpg' }), (e: unknown) => e instanceof CameraError && e.code === 'CAMERA_BAD_CONFIG');
  });
});

describe('MqttSnapshotSource', () => {
  it('reuses a recent frame, decodes base64 payloads, times out, unsubscribes on close', async () => {
    const mqtt = fakeMqtt();
    let now = 1000;
    const src = new MqttSnapshotSource({ topic: 'cam/porch', subscribe: mqtt.subscribe, maxAgeMs: 2000, timeoutMs: 100, now: () => now });
    const jpg = await sharp({ create: { width: 16, height: 16, channels: 3, background: '#00ff00' } }).jpeg().toBuffer();
    const waiting = src.snapshot();
    await new Promise((r) => setImmediate(r));
    mqtt.publish('cam/porch', Buffer.from(`data:image/jpeg;base64,${jpg.toString('base64')}`));
    assert.ok((await waiting).equals(jpg));
    now += 1500;
    assert.ok((await src.snapshot()).equals(jpg));
    now += 1000;
    await assert.rejects(src.snapshot(), (e: unknown) => e instanceof CameraError && e.code === 'CAMERA_TIMEOUT');
    assert.equal(mqtt.subscribers('cam/porch'), 1);
    src.close();
    assert.equal(mqtt.subscribers('cam/porch'), 0);
  });
});

describe('createCamera and CameraPlugin', () => {
  it("'auto' without a source falls back to the test pattern; mqtt: needs a subscribe function", () => {
    const log = new MemoryLogger();
    assert.equal(createCamera({ driver: 'auto', source: '', timeoutMs: 1000 }, {}, dir, log).kind, 'sim');
    assert.ok(log.messages('warn').some((m) => /falling back/.test(m)));
    assert.equal(createCamera({ driver: 'auto', source: 'http://cam.local/snap.jpg', timeoutMs: 1000 }, {}, dir, log).kind, 'http');
    assert.equal(createCamera({ driver: 'auto', source: 'snap.jpg', timeoutMs: 1000 }, {}, dir, log).origin, path.join(dir, 'snap.jpg'));
    assert.throws(() => createCamera({ driver: 'real', source: 'mqtt:cam/x', timeoutMs: 1000 }, {}, dir, log), (e: unknown) => e instanceof CameraError && e.code === 'CAMERA_BAD_CONFIG');
  });

  it('camera_snapshot takes, downsizes, stores (keeping the newest N) and publishes the image', async () => {
    const dataDir = mkdtempSync(path.join(dir, 'data-'));
    const sdk = new FakeSdk({ name: 'camera', settings: { 'plugin.camera.driver': 'sim', 'plugin.camera.max_width': 320, 'plugin.camera.keep': 2 }, dataDir });
    const plugin = new CameraPlugin();
    await plugin.start(sdk);
    const tool = sdk.tools.get('camera_snapshot')!;
    const ctx = { input: { id: 'i', source: 'test', channel: 'console', text: '', kind: 'queued' as const, level: 0 as const, received_at: 0 }, signal: new AbortController().signal, call_id: 'c1' };
    const out = (await tool.handler({}, ctx)) as { kind: string; text: string; images: string[] };
    assert.equal(out.kind, 'tool_output', 'the image goes to the model with the result');
    assert.deepEqual([...Buffer.from(out.images[0]!, 'base64').subarray(0, 2)], [0xff, 0xd8]);
    const result = JSON.parse(out.text) as { width: number; height: number; file: string; source: string };
    assert.deepEqual([result.width, result.height], [320, 240]);
    assert.equal(result.source, 'sim:test-pattern');
    const meta = await sharp(result.file).metadata();
    assert.equal(meta.format, 'jpeg');
    const ev = sdk.events('plugin.camera.snapshot')[0] as { image_base64: string; width: number };
    assert.equal(ev.width, 320);
    assert.deepEqual([...Buffer.from(ev.image_base64, 'base64').subarray(0, 2)], [0xff, 0xd8]);
    await tool.handler({}, ctx);
    await tool.handler({}, ctx);
    assert.equal(readdirSync(path.join(dataDir, 'camera')).length, 2);
    await plugin.stop();
  });

  it('an undecodable camera image makes the tool fail with a clear typed error', async () => {
    const dataDir = mkdtempSync(path.join(dir, 'data-'));
    writeFileSync(path.join(dataDir, 'broken.jpg'), 'this is not a jpeg');
    const sdk = new FakeSdk({ name: 'camera', settings: { 'plugin.camera.source': 'broken.jpg' }, dataDir });
    const plugin = new CameraPlugin();
    await plugin.start(sdk);
    await assert.rejects(plugin.capture(), (e: unknown) => e instanceof CameraError && e.code === 'IMAGE_UNDECODABLE' && /not a decodable image/.test(e.message));
    await plugin.stop();
  });

  it('the simulated source gives a new decodable test pattern each time', async () => {
    const sim = new SimSnapshotSource();
    const a = await sim.snapshot();
    const b = await sim.snapshot();
    assert.equal(a.equals(b), false);
    assert.equal((await prepareImage(a)).width, 640);
  });
});
