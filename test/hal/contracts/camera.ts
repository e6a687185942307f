/**
 * Snapshot source contract: whatever the source (file, HTTP URL, MQTT topic),
 * the image put there comes back byte for byte, goes through prepareImage, and
 * undecodable bytes give CameraError IMAGE_UNDECODABLE.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import sharp from 'sharp';
import { CameraError, prepareImage } from '../../../hal/camera/image.js';
import type { SnapshotSource } from '../../../hal/camera/sources.js';

/** A source plus a way to make its next snapshot return `image`. */
export interface CameraHarness {
  source: SnapshotSource;
  provide(image: Buffer): Promise<void>;
  cleanup(): Promise<void>;
}

/** Register the snapshot-source contract for one implementation. */
export function cameraContract(name: string, factory: () => Promise<CameraHarness>): void {
  describe(`SnapshotSource contract: ${name}`, () => {
    async function withCam(fn: (h: CameraHarness) => Promise<void>): Promise<void> {
      const h = await factory();
      try {
        await fn(h);
      } finally {
        h.source.close();
        await h.cleanup();
      }
    }

    it('returns the camera image and it prepares to a downscaled JPEG', () =>
      withCam(async (h) => {
        const png = await sharp({ create: { width: 1600, height: 1200, channels: 3, background: { r: 10, g: 120, b: 200 } } }).png().toBuffer();
        await h.provide(png);
        const raw = await h.source.snapshot();
        assert.ok(raw.equals(png));
        const img = await prepareImage(raw, { maxWidth: 800, maxHeight: 800 });
        assert.deepEqual([img.width, img.height], [800, 600]);
        assert.equal(img.source.format, 'png');
        assert.deepEqual([...img.jpeg.subarray(0, 2)], [0xff, 0xd8]);
      }));

    it('an undecodable image is a typed IMAGE_UNDECODABLE error', () =>
      withCam(async (h) => {
        await h.provide(Buffer.from('<html><body>401 Unauthorized</body></html>'));
        const raw = await h.source.snapshot();
        await assert.rejects(prepareImage(raw), (e: unknown) => e instanceof CameraError && e.code === 'IMAGE_UNDECODABLE' && /<html>/.test(e.message));
      }));

    it('reports its kind and origin', () =>
      withCam(async (h) => {
        assert.ok(['file', 'http', 'mqtt', 'sim'].includes(h.source.kind));
        assert.ok(h.source.origin.length > 0);
      }));
  });
}
