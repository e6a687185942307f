/**
 * Attack: bad WAV files through `homeagent listen` (the CLI's request over
 * the maintenance socket: the bytes travel base64-encoded, the service never
 * opens a path). Files: not a WAV, empty, a bare 12-byte RIFF header, a
 * header cut inside "fmt ", a data size far larger than the file, a "fmt "
 * size of 4 GB, a data size of 0xFFFFFFFF with no data, a sample rate of 0,
 * of 1 Hz (16,000 times upsampling) and of 4,294,967,295 Hz, 65,535
 * channels, 7-bit and 12-bit samples, A-law, 100,000 empty chunks before
 * "fmt ", odd-length 16-bit data, invalid base64, and a valid header on 10 s
 * of noise at 8-bit 1 Hz. Each must come back as a typed error (an error
 * line with a code, or an utterance with status "error" and a message; an
 * unusable but well-formed file may instead be heard as no speech), within
 * 60 s, with the service still answering.
 *
 * Figures:
 *  bad_wavs_untyped       files answered otherwise: no answer, an untyped
 *                         failure, or a transcript made up from garbage (pass 0)
 *  bad_wavs_service_down  times the service was gone or did not answer
 *                         `status` after a file (pass 0)
 *  bad_wavs_rss_mb        peak RSS of the service while it listened to them,
 *                         VmRSS sampled every 50 ms (pass < 300, as the 20 MB reply)
 */
import { request } from '../../src/cli/client.js';
import { below, exactly, type Figure } from './report.js';
import { startWorld, type Scope } from './world.js';

/** A RIFF/WAVE file from chunks. `riffSize` overrides the RIFF size field. */
function riff(chunks: Buffer[], riffSize?: number): Buffer {
  const body = Buffer.concat([Buffer.from('WAVE'), ...chunks]);
  const head = Buffer.alloc(8);
  head.write('RIFF', 0, 'ascii');
  head.writeUInt32LE(riffSize ?? body.length, 4);
  return Buffer.concat([head, body]);
}

function chunk(id: string, data: Buffer, size?: number): Buffer {
  const h = Buffer.alloc(8);
  h.write(id, 0, 'ascii');
  h.writeUInt32LE(size ?? data.length, 4);
  return Buffer.concat([h, data, data.length % 2 ? Buffer.alloc(1) : Buffer.alloc(0)]);
}

function fmt(o: { tag?: number; channels?: number; rate?: number; bits?: number; blockAlign?: number; byteRate?: number }): Buffer {
  const b = Buffer.alloc(16);
  const channels = o.channels ?? 1;
  const bits = o.bits ?? 16;
  const rate = o.rate ?? 16000;
  const align = o.blockAlign ?? channels * Math.ceil(bits / 8);
  b.writeUInt16LE(o.tag ?? 1, 0);
  b.writeUInt16LE(channels, 2);
  b.writeUInt32LE(rate >>> 0, 4);
  b.writeUInt32LE((o.byteRate ?? rate * align) >>> 0, 8);
  b.writeUInt16LE(align, 12);
  b.writeUInt16LE(bits, 14);
  return b;
}

function noise(bytes: number): Buffer {
  const b = Buffer.alloc(bytes);
  let x = 12345;
  for (let i = 0; i < bytes; i++) {
    x = (x * 1103515245 + 12345) & 0x7fffffff;
    b[i] = x & 0xff;
  }
  return b;
}

/** The files: name, bytes (or a raw base64 string), and whether "no speech" is an acceptable answer. */
function files(): Array<{ name: string; data: Buffer | string; noSpeechOk?: boolean }> {
  const okFmt = chunk('fmt ', fmt({}));
  const pcm = noise(32000);
  const manyChunks = Buffer.concat(Array.from({ length: 100_000 }, () => chunk('junk', Buffer.alloc(0))));
  return [
    { name: 'text.wav', data: Buffer.from('this is not a WAV file at all\n') },
    { name: 'empty.wav', data: Buffer.alloc(0) },
    { name: 'riff-only.wav', data: Buffer.from('RIFF\x04\x00\x00\x00WAVE', 'latin1') },
    { name: 'rifx.wav', data: Buffer.concat([Buffer.from('RIFX'), riff([okFmt, chunk('data', pcm)]).subarray(4)]) },
    { name: 'cut-in-fmt.wav', data: riff([okFmt, chunk('data', pcm)]).subarray(0, 30) },
    { name: 'data-size-past-end.wav', data: riff([okFmt, chunk('data', pcm.subarray(0, 100), 0x7ffffff0)]), noSpeechOk: true },
    { name: 'data-size-max-no-data.wav', data: riff([okFmt, chunk('data', Buffer.alloc(0), 0xffffffff)]), noSpeechOk: true },
    { name: 'fmt-size-4gb.wav', data: riff([chunk('fmt ', fmt({}), 0xffffffff), chunk('data', pcm)]) },
    { name: 'riff-size-4gb.wav', data: riff([okFmt, chunk('data', pcm.subarray(0, 2000))], 0xffffffff), noSpeechOk: true },
    { name: 'rate-0.wav', data: riff([chunk('fmt ', fmt({ rate: 0 })), chunk('data', pcm)]) },
    { name: 'rate-1hz.wav', data: riff([chunk('fmt ', fmt({ rate: 1 })), chunk('data', pcm)]) },
    { name: 'rate-4ghz.wav', data: riff([chunk('fmt ', fmt({ rate: 0xffffffff })), chunk('data', pcm)]) },
    { name: 'channels-65535.wav', data: riff([chunk('fmt ', fmt({ channels: 65535, bits: 8, blockAlign: 65535 })), chunk('data', pcm)]) },
    { name: 'channels-0.wav', data: riff([chunk('fmt ', fmt({ channels: 0, blockAlign: 0 })), chunk('data', pcm)]) },
    { name: 'bits-7.wav', data: riff([chunk('fmt ', fmt({ bits: 7, blockAlign: 1 })), chunk('data', pcm)]) },
    { name: 'bits-12.wav', data: riff([chunk('fmt ', fmt({ bits: 12, blockAlign: 2 })), chunk('data', pcm)]) },
    { name: 'alaw.wav', data: riff([chunk('fmt ', fmt({ tag: 6, bits: 8 })), chunk('data', pcm)]) },
    { name: 'block-align-wrong.wav', data: riff([chunk('fmt ', fmt({ blockAlign: 7 })), chunk('data', pcm)]) },
    { name: 'no-data-chunk.wav', data: riff([okFmt]) },
    { name: 'no-fmt-chunk.wav', data: riff([chunk('data', pcm)]) },
    { name: 'data-before-fmt.wav', data: riff([chunk('data', pcm), okFmt]), noSpeechOk: true },
    { name: '100k-empty-chunks.wav', data: riff([manyChunks, okFmt, chunk('data', pcm)]), noSpeechOk: true },
    { name: 'odd-16bit-data.wav', data: riff([okFmt, chunk('data', pcm.subarray(0, 3001))]), noSpeechOk: true },
    { name: 'invalid-base64.wav', data: '!!!!not base64 at all@@@@' },
    { name: 'rate-1hz-10s-8bit.wav', data: riff([chunk('fmt ', fmt({ rate: 1, bits: 8 })), chunk('data', noise(10))]) },
  ];
}

/** Run the attack. */
export async function run(scope: Scope, note: (s: string) => void): Promise<Figure[]> {
  const { box } = await startWorld(scope, { home: false });
  // The voice pipeline must be up to serve `listen` (its grammar is built even for an empty home).
  const end = Date.now() + 60_000;
  for (;;) {
    const st = await box.status();
    const voice = st.plugins.find((p) => p.name === 'voice');
    if (voice?.state === 'running' || voice?.state === 'started') break;
    if (voice?.state === 'failed') throw new Error(`the voice plugin failed to start: ${voice.error ?? ''}`);
    if (Date.now() > end) throw new Error(`the voice plugin is ${voice?.state ?? 'absent'} after 60 s`);
    await new Promise((r) => setTimeout(r, 100));
  }
  let untyped = 0;
  let down = 0;
  const why: string[] = [];
  const outcomes: string[] = [];
  let peak = box.rssMb();
  const sampler = setInterval(() => {
    const r = box.rssMb();
    if (r > peak) peak = r;
  }, 50);
  scope.defer(() => clearInterval(sampler));
  for (const f of files()) {
    const data_b64 = typeof f.data === 'string' ? f.data : f.data.toString('base64');
    let verdict: string;
    try {
      const res = (await request(box.socketPath, 'listen', { files: [{ name: f.name, data_b64 }], realtime: false }, undefined, { timeoutMs: 60_000 })) as { utterances?: Array<{ status?: string; error?: string; transcript?: string }> };
      const u = res.utterances?.[0];
      if (u?.status === 'error' && typeof u.error === 'string' && u.error) verdict = `error "${u.error.slice(0, 80)}"`;
      else if (f.noSpeechOk && u && (u.status === 'no_speech' || u.status === 'rejected') && !u.transcript) verdict = `heard as ${u.status}`;
      else {
        untyped++;
        verdict = `answered ${JSON.stringify(u ?? res).slice(0, 120)}`;
        why.push(`${f.name}: ${verdict}`);
      }
    } catch (err) {
      const e = err as { code?: unknown; message?: string };
      if (typeof e.code === 'string' && e.code && e.code !== 'SERVICE_UNREACHABLE' && e.code !== 'TIMEOUT' && e.code !== 'COMMAND_FAILED') verdict = `${e.code}: ${String(e.message).slice(0, 80)}`;
      else {
        untyped++;
        verdict = `${String(e.code ?? 'no code')}: ${String(e.message ?? err).slice(0, 100)}`;
        why.push(`${f.name}: ${verdict}`);
      }
    }
    outcomes.push(`${f.name}: ${verdict}`);
    let alive = box.alive();
    if (alive) {
      try {
        await box.status();
      } catch {
        alive = false;
      }
    }
    if (!alive) {
      down++;
      why.push(`${f.name}: the service ${box.alive() ? 'did not answer status' : `exited (${JSON.stringify(box.exit())})`}`);
      if (!box.alive()) break;
    }
  }
  clearInterval(sampler);
  note(`${outcomes.length} files; service peak RSS while listening ${peak.toFixed(0)} MB`);
  for (const o of outcomes) note(`  ${o}`);
  return [
    exactly('bad_wavs_untyped', untyped, 'files', 0, why.length ? why.join('\n') : undefined),
    exactly('bad_wavs_service_down', down, 'times', 0),
    below('bad_wavs_rss_mb', peak, 'MB', 300, 'peak RSS of the service while it listened to the files (sampled every 50 ms); the same bar as the 20 MB reply'),
  ];
}
