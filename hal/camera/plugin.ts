/**
 * CameraPlugin: the `camera_snapshot` tool. Takes a snapshot from the
 * configured source (file, HTTP URL, MQTT topic, or the simulated test
 * pattern), downscales and re-encodes it to JPEG with sharp, stores it, and
 * publishes `plugin.camera.snapshot` with the base64 JPEG for whoever
 * attaches it to a multimodal request (Ollama `images`). Settings plugin.camera.*.
 *
 * Where a snapshot is stored: in the service, the memory's picture store
 * (CameraDeps.pictures; issue 18 "Pictures": once by sha256 under
 * <data dir>/images, remembered with its time, the camera's name and a
 * description, kept under core.memory.images_max_mb); without one, under
 * <data dir>/camera/ keeping the newest `plugin.camera.keep`.
 *
 * Snapshots are taken on request (the tool). Periodic capture
 * (`plugin.camera.capture_interval_min`) is off (0) unless the household
 * turns it on; the interval is re-read after each capture and a change
 * re-arms the timer at once.
 */
import { mkdir, readdir, unlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import type { Logger } from '../../src/kernel/log-types.js';
import { systemClock, type Clock, type TimerHandle } from '../../src/kernel/clock.js';
import type { Plugin, PluginSDK } from '../../src/kernel/sdk.js';
import type { SettingDef } from '../../src/kernel/settings-types.js';
import { chooseDriver, DRIVER_MODES, type DriverMode } from '../common/mode.js';
import { CameraError, prepareImage, type PreparedImage } from './image.js';
import { FileSnapshotSource, HttpSnapshotSource, MqttSnapshotSource, SimSnapshotSource, type FetchFn, type MqttSubscribe, type SnapshotSource } from './sources.js';

/** Settings of the camera. */
export const CAMERA_SETTINGS: readonly SettingDef[] = [
  { key: 'plugin.camera.driver', type: 'string', default: 'auto', enum: DRIVER_MODES, description: "Camera: 'auto' (the configured source, else a simulated test pattern), 'real' or 'sim'" },
  { key: 'plugin.camera.source', type: 'string', default: '', description: 'Snapshot source: a file path, http(s)://host/snapshot.jpg (user:pass@ allowed) or mqtt:<topic>' },
  { key: 'plugin.camera.max_width', type: 'integer', default: 1024, min: 64, max: 4096, description: 'Downscale to at most this width (pixels) before sending or storing' },
  { key: 'plugin.camera.max_height', type: 'integer', default: 1024, min: 64, max: 4096, description: 'Downscale to at most this height (pixels)' },
  { key: 'plugin.camera.jpeg_quality', type: 'integer', default: 80, min: 1, max: 100, description: 'JPEG quality of re-encoded images' },
  { key: 'plugin.camera.timeout_ms', type: 'integer', default: 5000, min: 100, max: 60000, description: 'How long to wait for the camera (ms)' },
  { key: 'plugin.camera.keep', type: 'integer', default: 20, min: 0, max: 10000, description: 'Snapshots kept under <data dir>/camera (0: do not store) when the memory\'s picture store is not in use' },
  { key: 'plugin.camera.name', type: 'string', default: 'camera', description: 'The camera\'s name in what is remembered of its pictures (e.g. "front door camera")' },
  { key: 'plugin.camera.capture_interval_min', type: 'number', default: 0, min: 0, max: 10080, description: 'Take a snapshot every this many minutes and remember it (0: off; snapshots only on request)' },
];

/** Typed camera configuration (pixels, ms). */
export interface CameraConfig {
  driver: DriverMode;
  source: string;
  maxWidth: number;
  maxHeight: number;
  quality: number;
  timeoutMs: number;
  keep: number;
  /** The camera's name (plugin.camera.name). */
  name: string;
  /** Periodic capture interval, minutes (0: off). */
  captureIntervalMin: number;
}

/**
 * Where snapshots are remembered (the memory's PictureStore,
 * src/memory/pictures.ts): `put` stores the bytes once by sha256 and
 * records an entry (time ms, source = the camera's name, the turn that took
 * it, a caption when the camera gave one).
 */
export interface PictureSink {
  put(bytes: Buffer, meta: { time?: number; source: string; turn?: string; caption?: string }): Promise<{ picture: { sha256: string; file: string }; entry: { id: number } }>;
}

/** What the camera needs from the rest of the service: an MQTT subscribe function (from the MQTT plugin) and optionally fetch. */
export interface CameraDeps {
  mqttSubscribe?: MqttSubscribe;
  fetch?: FetchFn;
  /** The picture store snapshots go to (the service passes the memory's); without it they go to <data dir>/camera. */
  pictures?: PictureSink;
  /** Timer source of periodic capture and the snapshots' times (tests: FakeClock). */
  clock?: Clock;
}

/**
 * Build the snapshot source for `cfg` ('auto': the configured source, or the
 * simulator when none is set). Relative file paths resolve against `dataDir`.
 * Throws CameraError CAMERA_BAD_CONFIG (real without a source, mqtt: without a subscribe function, bad URL).
 */
export function createCamera(cfg: Pick<CameraConfig, 'driver' | 'source' | 'timeoutMs'>, deps: CameraDeps, dataDir: string, log: Logger): SnapshotSource {
  const source = cfg.source.trim();
  const which = chooseDriver('camera', cfg.driver, () => (source ? { present: true, detail: source.replace(/\/\/[^@/]*@/, '//***@') } : { present: false, reason: 'plugin.camera.source is empty' }), log);
  if (which === 'sim') return new SimSnapshotSource();
  if (!source) throw new CameraError('CAMERA_BAD_CONFIG', 'plugin.camera.driver is real but plugin.camera.source is empty');
  if (/^https?:\/\//i.test(source)) return new HttpSnapshotSource({ url: source, timeoutMs: cfg.timeoutMs, fetch: deps.fetch });
  if (source.startsWith('mqtt:')) {
    if (!deps.mqttSubscribe) throw new CameraError('CAMERA_BAD_CONFIG', `${source}: no MQTT connection was given to the camera plugin`);
    return new MqttSnapshotSource({ topic: source.slice(5), subscribe: deps.mqttSubscribe, timeoutMs: cfg.timeoutMs });
  }
  const file = source.startsWith('file://') ? new URL(source).pathname : source;
  return new FileSnapshotSource(path.resolve(dataDir, file));
}

/** A snapshot ready for a model: the prepared JPEG plus where it was stored (when stored) and when it was taken (epoch ms). */
export interface Snapshot extends PreparedImage {
  file?: string;
  capturedAt: number;
  origin: string;
  /** The sha256 (hex) and entry id in the picture store, when it was stored there. */
  sha256?: string;
  pictureId?: number;
}

/** The camera plugin. */
export class CameraPlugin implements Plugin {
  readonly name = 'camera';
  private sdk: PluginSDK | undefined;
  private source: SnapshotSource | undefined;
  private unsub: (() => void) | undefined;
  private seq = 0;
  private readonly clock: Clock;
  private timer: TimerHandle | undefined;
  private capturing = false;

  constructor(private readonly deps: CameraDeps = {}) {
    this.clock = deps.clock ?? systemClock;
  }

  private config(): CameraConfig {
    const s = this.sdk!.settings();
    return {
      driver: s.get<DriverMode>('plugin.camera.driver'),
      source: s.get<string>('plugin.camera.source'),
      maxWidth: s.get<number>('plugin.camera.max_width'),
      maxHeight: s.get<number>('plugin.camera.max_height'),
      quality: s.get<number>('plugin.camera.jpeg_quality'),
      timeoutMs: s.get<number>('plugin.camera.timeout_ms'),
      keep: s.get<number>('plugin.camera.keep'),
      name: s.get<string>('plugin.camera.name') || 'camera',
      captureIntervalMin: Number(s.get<number>('plugin.camera.capture_interval_min')) || 0,
    };
  }

  async start(sdk: PluginSDK): Promise<void> {
    this.sdk = sdk;
    const settings = sdk.settings();
    for (const def of CAMERA_SETTINGS) settings.register(def);
    this.source = createCamera(this.config(), this.deps, sdk.dataDir, sdk.log);
    this.unsub = settings.onChange('plugin.camera.', (key) => {
      if (key === 'plugin.camera.capture_interval_min') this.armCapture();
      if (key !== 'plugin.camera.source' && key !== 'plugin.camera.driver' && key !== 'plugin.camera.timeout_ms') return;
      this.source?.close();
      this.source = undefined;
      try {
        this.source = createCamera(this.config(), this.deps, sdk.dataDir, sdk.log);
      } catch (err) {
        sdk.log.error({ err: err instanceof Error ? err.message : String(err) }, 'camera: new settings could not be applied');
      }
    });
    sdk.registerTool({
      name: 'camera_snapshot',
      description: 'Take a picture with the home camera now. Returns when it was taken, its size in pixels and the file it was saved to.',
      parameters: { type: 'object', properties: {}, additionalProperties: false },
      no_memory: true,
      handler: async (_args, ctx) => {
        const snap = await this.capture(ctx.signal, ctx.input.id);
        // The downscaled JPEG goes to a multimodal model with the result (kernel ToolOutput).
        return {
          kind: 'tool_output' as const,
          text: JSON.stringify({
            captured_at: new Date(snap.capturedAt).toISOString(),
            width: snap.width,
            height: snap.height,
            bytes: snap.bytes,
            file: snap.file,
            source: snap.origin,
            ...(snap.pictureId !== undefined ? { picture_id: snap.pictureId } : {}),
          }),
          images: [snap.base64],
        };
      },
    });
    this.armCapture();
  }

  /** (Re-)arm periodic capture from plugin.camera.capture_interval_min (0: off). */
  private armCapture(): void {
    this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    if (!this.sdk) return;
    const minutes = this.config().captureIntervalMin;
    if (!(minutes > 0)) return;
    this.timer = this.clock.setTimeout(() => {
      // The next one is due an interval from now, whatever this one takes; one still running is not doubled.
      this.armCapture();
      if (this.capturing) return;
      this.capturing = true;
      const log = this.sdk?.log;
      void this.capture()
        .catch((err: unknown) => log?.warn({ err: err instanceof Error ? err.message : String(err) }, 'periodic snapshot failed'))
        .finally(() => {
          this.capturing = false;
        });
    }, minutes * 60_000);
  }

  /**
   * Take, prepare, store and announce a snapshot. Rejects with CameraError
   * (IMAGE_UNDECODABLE, CAMERA_TIMEOUT, CAMERA_HTTP_STATUS, ENOENT, CAMERA_BAD_CONFIG).
   */
  async capture(signal?: AbortSignal, turn?: string): Promise<Snapshot> {
    const sdk = this.sdk;
    if (!sdk) throw new CameraError('CAMERA_BAD_CONFIG', 'the camera plugin is not started');
    const source = this.source;
    if (!source) throw new CameraError('CAMERA_BAD_CONFIG', 'no usable camera source (see the log for the configuration error)');
    const cfg = this.config();
    const raw = await source.snapshot(signal);
    const img = await prepareImage(raw, { maxWidth: cfg.maxWidth, maxHeight: cfg.maxHeight, quality: cfg.quality });
    const capturedAt = this.clock.now();
    let file: string | undefined;
    let stored: { sha256: string; pictureId: number } | undefined;
    if (this.deps.pictures) {
      const r = await this.deps.pictures.put(img.jpeg, { time: capturedAt, source: cfg.name, ...(turn !== undefined ? { turn } : {}) });
      file = r.picture.file;
      stored = { sha256: r.picture.sha256, pictureId: r.entry.id };
    } else if (cfg.keep > 0) file = await this.store(img.jpeg, capturedAt, cfg.keep);
    const snap: Snapshot = { ...img, file, capturedAt, origin: source.origin, ...(stored ?? {}) };
    sdk.publish('plugin.camera.snapshot', {
      file,
      width: img.width,
      height: img.height,
      bytes: img.bytes,
      source: source.origin,
      camera: cfg.name,
      captured_at: capturedAt,
      image_base64: img.base64,
      ...(stored ? { sha256: stored.sha256, picture_id: stored.pictureId } : {}),
      ...(turn !== undefined ? { turn } : {}),
    });
    return snap;
  }

  private async store(jpeg: Buffer, at: number, keep: number): Promise<string> {
    const dir = path.join(this.sdk!.dataDir, 'camera');
    await mkdir(dir, { recursive: true });
    const file = path.join(dir, `snapshot-${new Date(at).toISOString().replace(/[:.]/g, '-')}-${String(++this.seq).padStart(4, '0')}.jpg`);
    await writeFile(file, jpeg);
    const all = (await readdir(dir)).filter((f) => /^snapshot-.*\.jpg$/.test(f)).sort();
    for (const old of all.slice(0, Math.max(0, all.length - keep))) await unlink(path.join(dir, old)).catch(() => undefined);
    return file;
  }

  async stop(): Promise<void> {
    this.clock.clearTimeout(this.timer);
    this.timer = undefined;
    this.unsub?.();
    this.unsub = undefined;
    this.source?.close();
    this.source = undefined;
    this.sdk = undefined;
  }
}
