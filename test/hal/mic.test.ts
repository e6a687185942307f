/**
 * Microphone specifics: the RIFF chunk walker (LIST before/after data, odd
 * chunk padding, never 44 bytes assumed), conversion of sox-made files to
 * 16 kHz mono s16, real-time pacing on a fake clock, a missing recorder
 * (ENOENT, no crash), restart with backoff when the recorder exits with code 1
 * at boot, the push source and createMicrophone's choice.
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { Readable } from 'node:stream';
import { after, describe, it } from 'node:test';
import { FakeClock } from '../../src/kernel/clock.js';
import { generateTones } from '../../hal/common/pcm.js';
import { encodeWav, parseWav } from '../../hal/common/wav.js';
import { createMicrophone } from '../../hal/mic/config.js';
import { FileMicrophone, wavToVoicePcm } from '../../hal/mic/file-mic.js';
import { PushMicrophone } from '../../hal/mic/push-mic.js';
import { RecorderMicrophone } from '../../hal/mic/recorder-mic.js';
import { MicError } from '../../hal/mic/types.js';
import { MemoryLogger } from '../support/fake-sdk.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'ha-mic-'));
after(() => rmSync(dir, { recursive: true, force: true }));

function chunk(id: string, body: Buffer): Buffer {
  const h = Buffer.alloc(8);
  h.write(id, 0, 'ascii');
  h.writeUInt32LE(body.length, 4);
  return Buffer.concat([h, body, body.length % 2 ? Buffer.alloc(1) : Buffer.alloc(0)]);
}

/** A WAV with LIST/INFO before the data, an odd-sized chunk, and a LIST after the data. */
function wavWithExtraChunks(pcm: Buffer): Buffer {
  const plain = encodeWav(pcm, { sampleRate: 16000 });
  const fmt = plain.subarray(12, 36);
  const info = chunk('LIST', Buffer.concat([Buffer.from('INFO'), chunk('ISFT', Buffer.from('Lavf58.76.100\0'))]));
  const odd = chunk('junk', Buffer.from('abc'));
  const body = Buffer.concat([Buffer.from('WAVE'), fmt, info, odd, chunk('data', pcm), chunk('LIST', Buffer.concat([Buffer.from('INFO'), chunk('ICMT', Buffer.from('after\0'))]))]);
  const riff = Buffer.alloc(8);
  riff.write('RIFF', 0, 'ascii');
  riff.writeUInt32LE(body.length, 4);
  return Buffer.concat([riff, body]);
}

async function readAll(stream: Readable): Promise<Buffer> {
  const parts: Buffer[] = [];
  for await (const c of stream) parts.push(c as Buffer);
  return Buffer.concat(parts);
}

/** Zero crossings per second of s16le mono PCM at 16 kHz (a 440 Hz tone gives about 880). */
function crossingsPerSecond(pcm: Buffer): number {
  let n = 0;
  for (let o = 2; o < pcm.length; o += 2) if (pcm.readInt16LE(o - 2) < 0 !== pcm.readInt16LE(o) < 0) n++;
  return n / (pcm.length / 2 / 16000);
}

describe('RIFF parsing', () => {
  it('only the data chunk is audio: LIST before and after, odd chunk padding', () => {
    const pcm = generateTones([{ freqHz: 440, durationMs: 50 }], 16000);
    const wav = wavWithExtraChunks(pcm);
    const info = parseWav(wav);
    assert.deepEqual(info.chunks.map((c) => c.id), ['fmt ', 'LIST', 'junk', 'data', 'LIST']);
    assert.notEqual(info.dataOffset, 44);
    assert.ok(wav.subarray(info.dataOffset, info.dataOffset + info.dataLength).equals(pcm));
    assert.ok(wavToVoicePcm(wav).equals(pcm));
  });

  it('not a WAV, or a WAV without data, is a typed error', () => {
    assert.throws(() => wavToVoicePcm(Buffer.from('hello world, not audio')), (e: unknown) => e instanceof MicError && e.code === 'WAV_INVALID');
    const noData = encodeWav(Buffer.alloc(0), { sampleRate: 16000 }).subarray(0, 36);
    assert.throws(() => wavToVoicePcm(noData), (e: unknown) => e instanceof MicError && e.code === 'WAV_INVALID');
  });

  it('a data size of 0xFFFFFFFF (streamed WAV) is clamped to the bytes present', () => {
    const pcm = generateTones([{ freqHz: 440, durationMs: 20 }], 16000);
    const wav = encodeWav(pcm, { sampleRate: 16000 });
    wav.writeUInt32LE(0xffffffff, 40);
    assert.equal(parseWav(wav).dataLength, pcm.length);
  });
});

describe('conversion of files that differ from 16 kHz mono s16 (made with sox)', () => {
  const cases: Array<{ name: string; args: string[] }> = [
    { name: '44.1 kHz stereo s16', args: ['-r', '44100', '-c', '2', '-b', '16', '-e', 'signed-integer'] },
    { name: '48 kHz mono float32', args: ['-r', '48000', '-c', '1', '-b', '32', '-e', 'floating-point'] },
    { name: '8 kHz mono u8', args: ['-r', '8000', '-c', '1', '-b', '8', '-e', 'unsigned-integer'] },
    { name: '22.05 kHz stereo s24', args: ['-r', '22050', '-c', '2', '-b', '24', '-e', 'signed-integer'] },
  ];
  for (const c of cases) {
    it(`${c.name} -> 16 kHz mono s16 with the same duration and pitch`, async () => {
      const file = path.join(dir, `${c.name.replace(/\W+/g, '_')}.wav`);
      execFileSync('sox', ['-n', ...c.args, file, 'synth', '1.0', 'sine', '440', 'vol', '0.5']);
      const mic = new FileMicrophone({ path: file, pace: 'fast' });
      const pcm = await readAll(await mic.start());
      assert.ok(Math.abs(pcm.length - 32000) <= 4, `${pcm.length} bytes for 1 s`);
      const zc = crossingsPerSecond(pcm);
      assert.ok(zc > 860 && zc < 900, `zero crossings ${zc}/s`);
    });
  }
});

describe('FileMicrophone pacing', () => {
  it('emits each 20 ms chunk once it would have been recorded (real-time pace on the clock) and ends once after the file', async () => {
    const clock = new FakeClock();
    const pcm = generateTones([{ freqHz: 440, durationMs: 200 }], 16000);
    const mic = new FileMicrophone({ wav: encodeWav(pcm, { sampleRate: 16000 }), clock });
    const stream = await mic.start();
    const got: Buffer[] = [];
    let ends = 0;
    stream.on('data', (d: Buffer) => got.push(d));
    stream.on('end', () => ends++);
    const flush = () => new Promise((r) => setImmediate(r));
    await flush();
    assert.equal(Buffer.concat(got).length, 0);
    clock.advance(20);
    await flush();
    assert.equal(Buffer.concat(got).length, 640);
    clock.advance(79);
    await flush();
    assert.equal(Buffer.concat(got).length, 640 * 4);
    clock.advance(1);
    await flush();
    assert.equal(Buffer.concat(got).length, 640 * 5);
    clock.advance(1000);
    await flush();
    assert.ok(Buffer.concat(got).equals(pcm));
    assert.equal(ends, 1);
    assert.equal(mic.running, false);
  });

  it('a speed factor of 4 plays four times faster; trailing silence is appended', async () => {
    const clock = new FakeClock();
    const pcm = generateTones([{ freqHz: 440, durationMs: 80 }], 16000);
    const mic = new FileMicrophone({ wav: encodeWav(pcm, { sampleRate: 16000 }), clock, pace: 4, trailingSilenceMs: 40 });
    const stream = await mic.start();
    const all = readAll(stream);
    clock.advance(5);
    clock.advance(25);
    const out = await all;
    assert.equal(out.length, pcm.length + 40 * 32);
    assert.ok(out.subarray(pcm.length).equals(Buffer.alloc(40 * 32)));
  });

  it('a missing file rejects start with code ENOENT', async () => {
    const mic = new FileMicrophone({ path: path.join(dir, 'nope.wav') });
    await assert.rejects(mic.start(), (e: unknown) => e instanceof MicError && e.code === 'ENOENT');
  });
});

describe('RecorderMicrophone supervision', () => {
  it('a missing arecord rejects start with code ENOENT and nothing crashes', async () => {
    const mic = new RecorderMicrophone({ recorder: 'arecord', command: path.join(dir, 'no-such-arecord') });
    await assert.rejects(mic.start(), (e: unknown) => e instanceof MicError && e.code === 'ENOENT' && /alsa-utils/.test(e.message));
    assert.equal(mic.running, false);
    await mic.stop();
  });

  it('a missing sox (PATH without it) rejects with ENOENT too', async () => {
    const mic = new RecorderMicrophone({ recorder: 'sox', env: { PATH: dir } });
    await assert.rejects(mic.start(), (e: unknown) => e instanceof MicError && e.code === 'ENOENT');
  });

  function fakeRecorder(fails: number): { command: string; env: NodeJS.ProcessEnv } {
    const counter = path.join(dir, `count-${fails}-${Math.random().toString(36).slice(2)}`);
    const command = path.join(dir, `fake-arecord-${fails}.sh`);
    writeFileSync(
      command,
      `#!/bin/sh\nn=$(cat "$COUNTER" 2>/dev/null || echo 0)\necho $((n+1)) > "$COUNTER"\nif [ "$n" -lt "$FAILS" ]; then echo "arecord: main:830: audio open error: No such device" >&2; exit 1; fi\nexec arecord "$@"\n`,
    );
    chmodSync(command, 0o755);
    return { command, env: { ...process.env, COUNTER: counter, FAILS: String(fails) } };
  }

  it('a recorder exiting with code 1 at boot is restarted with exponential backoff', async () => {
    const clock = new FakeClock();
    const fake = fakeRecorder(2);
    const mic = new RecorderMicrophone({ recorder: 'arecord', device: 'null', clock, ...fake });
    const retries: Array<{ attempt: number; delayMs: number; exitCode: number | null; stderr: string }> = [];
    mic.on('retry', (e) => {
      retries.push(e);
      setImmediate(() => clock.advance(e.delayMs));
    });
    const stream = await mic.start();
    const data = await new Promise<Buffer>((resolve) => stream.once('data', resolve));
    assert.ok(data.length > 0);
    assert.deepEqual(
      retries.map((r) => [r.attempt, r.delayMs, r.exitCode]),
      [
        [1, 500, 1],
        [2, 1000, 1],
      ],
    );
    assert.match(retries[0]!.stderr, /audio open error/);
    assert.equal(mic.running, true);
    await mic.stop();
    assert.equal(readFileSync(fake.env.COUNTER!, 'utf8').trim(), '3');
  });

  it('gives up after maxAttempts with a MIC_FAILED error event and ends the stream', async () => {
    const clock = new FakeClock();
    const mic = new RecorderMicrophone({ recorder: 'arecord', device: 'null', clock, backoff: { maxAttempts: 3 }, ...fakeRecorder(99) });
    const delays: number[] = [];
    mic.on('retry', (e) => {
      delays.push(e.delayMs);
      setImmediate(() => clock.advance(e.delayMs));
    });
    const failed = new Promise<MicError>((resolve) => mic.once('error', resolve));
    const stream = await mic.start();
    const ended = new Promise<void>((r) => stream.once('end', () => r()));
    stream.resume();
    const err = await failed;
    await ended;
    assert.equal(err.code, 'MIC_FAILED');
    assert.match(err.message, /audio open error/);
    assert.deepEqual(delays, [500, 1000, 2000]);
    assert.equal(mic.running, false);
  });
});

describe('PushMicrophone', () => {
  it('streams written PCM and converted WAV bytes, then ends on end()', async () => {
    const mic = new PushMicrophone();
    assert.throws(() => mic.write(Buffer.alloc(2)), (e: unknown) => e instanceof MicError && e.code === 'MIC_NOT_STARTED');
    const stream = await mic.start();
    const all = readAll(stream);
    const raw = generateTones([{ freqHz: 440, durationMs: 20 }], 16000);
    mic.write(raw.subarray(0, 3));
    mic.write(raw.subarray(3));
    const file = path.join(dir, 'push-8k.wav');
    execFileSync('sox', ['-n', '-r', '8000', '-c', '1', '-b', '16', file, 'synth', '0.5', 'sine', '440']);
    mic.writeWav(readFileSync(file));
    mic.end();
    const out = await all;
    assert.ok(out.subarray(0, raw.length).equals(raw));
    assert.equal(out.length, raw.length + 16000);
  });
});

describe('createMicrophone', () => {
  it("'auto' without a capture device falls back to a push source and logs why", () => {
    const log = new MemoryLogger();
    const mic = createMicrophone({ driver: 'auto', recorder: 'arecord', device: '', simFile: '', simPace: 'realtime' }, log);
    assert.equal(mic.kind, 'push');
    assert.ok(log.messages('warn').some((m) => /falling back to the simulator/.test(m)));
  });

  it("'sim' with a sim_file streams that file; 'real' gives the recorder", () => {
    const log = new MemoryLogger();
    assert.equal(createMicrophone({ driver: 'sim', recorder: 'arecord', device: '', simFile: path.join(dir, 'x.wav'), simPace: 'fast' }, log).kind, 'file');
    assert.equal(createMicrophone({ driver: 'real', recorder: 'sox', device: 'hw:1', simFile: '', simPace: 'realtime' }, log).kind, 'sox');
  });
});
