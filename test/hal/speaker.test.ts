/**
 * Speaker specifics beyond the contract: the simulator's WAV files and
 * timeline (fake clock), software volume, the real driver's errors (missing
 * binary -> ENOENT, a player that fails), and createSpeaker's choice.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { FakeClock } from '../../src/kernel/clock.js';
import { generateTones } from '../../hal/common/pcm.js';
import { parseWav } from '../../hal/common/wav.js';
import { createSpeaker } from '../../hal/speaker/config.js';
import { ProcessSpeaker } from '../../hal/speaker/process-speaker.js';
import { SimSpeaker, type SimPlayback } from '../../hal/speaker/sim-speaker.js';
import { SpeakerError } from '../../hal/speaker/types.js';
import { MemoryLogger } from '../support/fake-sdk.js';

const dirs: string[] = [];
function tmp(): string {
  const d = mkdtempSync(path.join(os.tmpdir(), 'ha-speaker-'));
  dirs.push(d);
  return d;
}
after(() => {
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const turns = async (n = 5) => {
  for (let i = 0; i < n; i++) await new Promise((r) => setImmediate(r));
};

describe('SimSpeaker', () => {
  it('writes what was said to a WAV and a jsonl line with start and end times', async () => {
    const clock = new FakeClock(10_000);
    const dir = tmp();
    const s = new SimSpeaker({ dir, clock });
    const pcm = generateTones([{ freqHz: 440, durationMs: 500 }], 16000);
    const p = s.play(pcm, { sampleRate: 16000, id: 'greet', text: 'Hello there.' });
    await turns();
    clock.advance(500);
    assert.deepEqual(await p, { id: 'greet', completed: true });
    const rec = s.history[0]!;
    assert.equal(rec.text, 'Hello there.');
    assert.equal(rec.started_at, 10_000);
    assert.equal(rec.ended_at, 10_500);
    assert.equal(rec.completed, true);
    assert.equal(rec.played_ms, 500);
    const wav = readFileSync(rec.file);
    const info = parseWav(wav);
    assert.equal(info.format.sampleRate, 16000);
    assert.ok(wav.subarray(info.dataOffset, info.dataOffset + info.dataLength).equals(pcm));
    const lines = readFileSync(path.join(dir, 'speaker.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as SimPlayback);
    assert.deepEqual(lines, [rec]);
    await s.close();
  });

  it('records when and where stop() cut an utterance; the WAV holds only what was heard', async () => {
    const clock = new FakeClock(0);
    const s = new SimSpeaker({ dir: tmp(), clock });
    const first = s.openStream({ sampleRate: 16000, id: 'reply', text: 'It is sunny. Tomorrow it rains.' });
    first.write(generateTones([{ freqHz: 300, durationMs: 1000 }], 16000));
    const queued = s.play(generateTones([{ freqHz: 500, durationMs: 200 }], 16000), { sampleRate: 16000, id: 'next' });
    await turns();
    clock.advance(400);
    const report = await s.stop();
    assert.deepEqual(report, { requestedAt: 400, exitedAt: 400, exitMs: 0, cut: true, dropped: 1 });
    assert.deepEqual(await first.done, { id: 'reply', completed: false });
    assert.deepEqual(await queued, { id: 'next', completed: false });
    assert.equal(s.history.length, 1);
    const rec = s.history[0]!;
    assert.equal(rec.cut_at, 400);
    assert.equal(rec.played_ms, 400);
    assert.equal(rec.total_ms, 1000);
    assert.equal(rec.completed, false);
    const info = parseWav(readFileSync(rec.file));
    assert.equal(info.dataLength, 400 * 32);
    await s.close();
  });

  it('applies software volume to what is played', async () => {
    const s = new SimSpeaker({ dir: tmp(), speed: 0 });
    const pcm = Buffer.alloc(4);
    pcm.writeInt16LE(20000, 0);
    pcm.writeInt16LE(-20000, 2);
    s.setVolume(50);
    await s.play(pcm, { sampleRate: 16000 });
    const wav = readFileSync(s.history[0]!.file);
    const info = parseWav(wav);
    assert.equal(wav.readInt16LE(info.dataOffset), 5000);
    assert.equal(wav.readInt16LE(info.dataOffset + 2), -5000);
    assert.equal(s.history[0]!.volume, 50);
    await s.close();
  });

  it('a restart numbers its WAVs on from those the last run left, so no line of speaker.jsonl comes to name other speech', async () => {
    const dir = tmp();
    const pcm = Buffer.alloc(320);
    const first = new SimSpeaker({ dir, speed: 0 });
    await first.play(pcm, { sampleRate: 16000, id: 'a', text: 'One.' });
    await first.play(pcm, { sampleRate: 16000, id: 'b', text: 'Two.' });
    await first.close();
    const again = new SimSpeaker({ dir, speed: 0 });
    await again.play(pcm, { sampleRate: 16000, id: 'c', text: 'Three.' });
    await again.close();
    const lines = readFileSync(path.join(dir, 'speaker.jsonl'), 'utf8').trim().split('\n').map((l) => JSON.parse(l) as SimPlayback);
    assert.deepEqual(lines.map((l) => path.basename(l.file)), ['0001-a.wav', '0002-b.wav', '0003-c.wav']);
    assert.equal(new Set(lines.map((l) => l.file)).size, 3, 'three files for three lines');
  });
});

describe('ProcessSpeaker errors', () => {
  it('a missing player binary rejects play with code ENOENT; the speaker keeps working', async () => {
    const s = new ProcessSpeaker({ player: 'aplay', command: '/nonexistent/aplay', device: 'null' });
    const errors: SpeakerError[] = [];
    s.on('error', (e) => errors.push(e));
    await assert.rejects(s.play(Buffer.alloc(320), { sampleRate: 16000 }), (e: unknown) => e instanceof SpeakerError && e.code === 'ENOENT' && /alsa-utils/.test(e.message));
    assert.equal(errors.length, 1);
    assert.equal(s.isPlaying, false);
    await s.close();
  });

  it('a player that exits with an error rejects that utterance only', async () => {
    const s = new ProcessSpeaker({ player: 'aplay', device: 'no_such_pcm_device' });
    s.on('error', () => {});
    await assert.rejects(s.play(Buffer.alloc(320), { sampleRate: 16000 }), (e: unknown) => e instanceof SpeakerError && e.code === 'SPEAKER_PLAYER_FAILED');
    await s.close();
    const ok = new ProcessSpeaker({ player: 'aplay', device: 'null' });
    assert.equal((await ok.play(Buffer.alloc(320), { sampleRate: 16000 })).completed, true);
    await ok.close();
  });
});

describe('createSpeaker', () => {
  it("'sim' gives the simulator writing into sim_dir; 'real' gives aplay", async () => {
    const log = new MemoryLogger();
    const dir = tmp();
    const sim = createSpeaker({ driver: 'sim', player: 'aplay', device: '', volume: 70, simDir: dir, earcons: true }, log);
    assert.equal(sim.kind, 'sim');
    assert.equal(sim.volume, 70);
    await sim.close();
    const real = createSpeaker({ driver: 'real', player: 'aplay', device: 'null', volume: 70, simDir: dir, earcons: true }, log);
    assert.equal(real.kind, 'aplay');
    await real.close();
  });

  it("'auto' on a machine without a sound card falls back to the simulator and logs why", async () => {
    const log = new MemoryLogger();
    const s = createSpeaker({ driver: 'auto', player: 'aplay', device: '', volume: 80, simDir: tmp(), earcons: true }, log);
    // This CI machine has no /proc/asound card with a playback device.
    assert.equal(s.kind, 'sim');
    assert.ok(log.messages('warn').some((m) => /falling back to the simulator/.test(m)));
    await s.close();
  });
});
