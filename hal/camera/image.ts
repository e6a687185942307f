/**
 * Image handling with sharp: decode whatever a camera returned (JPEG, PNG,
 * WebP, GIF, TIFF, AVIF), apply EXIF orientation, flatten transparency,
 * downscale to fit a box and re-encode as JPEG (metadata stripped) before an
 * image goes to a multimodal model (base64 for Ollama `images`) or to disk.
 */
import sharp from 'sharp';
import { HalError } from '../common/errors.js';

/** Camera and image failures: IMAGE_UNDECODABLE, ENOENT, CAMERA_HTTP_STATUS, CAMERA_UNREACHABLE, CAMERA_TIMEOUT, CAMERA_TOO_LARGE, CAMERA_BAD_CONFIG. */
export class CameraError extends HalError {}

/** Options: bounding box in pixels (default 1024 x 1024; never enlarged) and JPEG quality 1..100 (default 80). */
export interface PrepareOptions {
  maxWidth?: number;
  maxHeight?: number;
  quality?: number;
}

/** A re-encoded image: JPEG bytes and their base64, final and original size in pixels, original format. */
export interface PreparedImage {
  jpeg: Buffer;
  /** Base64 of `jpeg`, no data: prefix (Ollama /api/chat `images` entries). */
  base64: string;
  width: number;
  height: number;
  bytes: number;
  source: { format: string; width: number; height: number; bytes: number };
}

function describeBytes(b: Buffer): string {
  if (b.length === 0) return 'it is empty (0 bytes)';
  const head = b.subarray(0, 16).toString('latin1').replace(/[^\x20-\x7e]/g, '.');
  return `${b.length} bytes starting with "${head}"`;
}

/**
 * Decode, downscale and re-encode as JPEG. Throws `CameraError` IMAGE_UNDECODABLE
 * when the bytes are not an image sharp can read (truncated, HTML error page, empty).
 * Input above 50 megapixels is refused the same way (sharp's limitInputPixels).
 */
export async function prepareImage(input: Buffer, opts: PrepareOptions = {}): Promise<PreparedImage> {
  const maxWidth = opts.maxWidth ?? 1024;
  const maxHeight = opts.maxHeight ?? 1024;
  const quality = Math.min(100, Math.max(1, Math.round(opts.quality ?? 80)));
  let meta: Awaited<ReturnType<ReturnType<typeof sharp>['metadata']>>;
  try {
    meta = await sharp(input, { failOn: 'error', limitInputPixels: 50_000_000 }).metadata();
    if (!meta.width || !meta.height) throw new Error('no image dimensions');
    const { data, info } = await sharp(input, { failOn: 'error', limitInputPixels: 50_000_000 })
      .rotate()
      .flatten({ background: '#ffffff' })
      .resize({ width: maxWidth, height: maxHeight, fit: 'inside', withoutEnlargement: true })
      .jpeg({ quality, mozjpeg: true })
      .toBuffer({ resolveWithObject: true });
    return {
      jpeg: data,
      base64: data.toString('base64'),
      width: info.width,
      height: info.height,
      bytes: data.length,
      source: { format: meta.format ?? 'unknown', width: meta.width, height: meta.height, bytes: input.length },
    };
  } catch (err) {
    throw new CameraError('IMAGE_UNDECODABLE', `not a decodable image: ${describeBytes(input)} (${err instanceof Error ? err.message : String(err)})`, { cause: err });
  }
}

/** A 640 x 480 JPEG test pattern (colour bars with a moving marker for `seq`), for the simulated camera. */
export async function testPattern(seq = 0, width = 640, height = 480): Promise<Buffer> {
  const bars = [
    [255, 255, 255],
    [255, 255, 0],
    [0, 255, 255],
    [0, 255, 0],
    [255, 0, 255],
    [255, 0, 0],
    [0, 0, 255],
    [0, 0, 0],
  ] as const;
  const px = Buffer.alloc(width * height * 3);
  const marker = (seq * 37) % width;
  for (let y = 0; y < height; y++) {
    for (let x = 0; x < width; x++) {
      const c = Math.abs(x - marker) < 8 && y > height * 0.8 ? ([128, 128, 128] as const) : bars[Math.floor((x * bars.length) / width)]!;
      const o = (y * width + x) * 3;
      px[o] = c[0];
      px[o + 1] = c[1];
      px[o + 2] = c[2];
    }
  }
  return sharp(px, { raw: { width, height, channels: 3 } }).jpeg({ quality: 85 }).toBuffer();
}
