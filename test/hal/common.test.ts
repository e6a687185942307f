/**
 * Shared HAL pieces: driver selection (auto/real/sim and its log line), the
 * ALSA presence probe on a fake /proc tree, PCM helpers (the fake clock is
 * tested in test/kernel/clock.test.ts, WAV files in test/hal/wav.test.ts).
 */
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { probeAlsa } from '../../hal/common/alsa.js';
import { HalError } from '../../hal/common/errors.js';
import { chooseDriver } from '../../hal/common/mode.js';
import { applyVolume, floatToS16, generateTones, pcmDurationMs, resampleFloat } from '../../hal/common/pcm.js';
import { MemoryLogger } from '../support/fake-sdk.js';

const dir = mkdtempSync(path.join(os.tmpdir(), 'ha-common-'));
after(() => rmSync(dir, { recursive: true, force: true }));

describe('chooseDriver', () => {
  it("'auto' follows the probe and logs a fallback with its reason", () => {
    const log = new MemoryLogger();
    assert.equal(chooseDriver('gpio', 'auto', () => ({ present: true, detail: 'pinctrl-rp1@571' }), log), 'real');
    assert.equal(chooseDriver('gpio', 'auto', () => ({ present: false, reason: 'no /sys/class/gpio' }), log), 'sim');
    assert.deepEqual(log.messages('warn'), ['gpio: no hardware (no /sys/class/gpio), falling back to the simulator']);
  });

  it("'real' and 'sim' are taken as configured without probing; other values are HAL_BAD_MODE", () => {
    const log = new MemoryLogger();
    const probe = () => {
      throw new Error('must not probe');
    };
    assert.equal(chooseDriver('mic', 'real', probe, log), 'real');
    assert.equal(chooseDriver('mic', 'sim', probe, log), 'sim');
    assert.throws(() => chooseDriver('mic', 'fake', probe, log), (e: unknown) => e instanceof HalError && e.code === 'HAL_BAD_MODE');
  });
});

describe('probeAlsa', () => {
  function procTree(cards: string, pcms: string[]): string {
    const root = mkdtempSync(path.join(dir, 'proc-'));
    mkdirSync(path.join(root, 'asound', 'card0'), { recursive: true });
    writeFileSync(path.join(root, 'asound', 'cards'), cards);
    for (const p of pcms) mkdirSync(path.join(root, 'asound', 'card0', p));
    return root;
  }

  it('finds a playback device on a Pi headphone card, and no capture device on it', () => {
    const root = procTree(' 0 [Headphones     ]: bcm2835_headpho - bcm2835 Headphones\n                      bcm2835 Headphones\n', ['pcm0p']);
    assert.deepEqual(probeAlsa('p', 'sh', root), { present: true, detail: 'card 0 (Headphones)' });
    const c = probeAlsa('c', 'sh', root);
    assert.equal(c.present, false);
  });

  it('reports a missing binary or missing ALSA', () => {
    const none = probeAlsa('p', 'no-such-player-binary', dir);
    assert.deepEqual(none, { present: false, reason: 'no-such-player-binary is not installed' });
    const noAlsa = probeAlsa('p', 'sh', dir);
    assert.equal(noAlsa.present, false);
    assert.match(noAlsa.present ? '' : noAlsa.reason, /no ALSA/);
  });
});

describe('PCM helpers', () => {
  it('tones have the requested length and start and end silent (no clicks)', () => {
    const pcm = generateTones([{ freqHz: 1000, durationMs: 100 }], 16000);
    assert.equal(pcm.length, 3200);
    assert.equal(pcmDurationMs(pcm.length, 16000), 100);
    assert.equal(pcm.readInt16LE(0), 0);
    assert.ok(Math.abs(pcm.readInt16LE(pcm.length - 2)) < 50);
  });

  it('volume 100 is unchanged, 0 is silence, 50 is a quarter of the amplitude', () => {
    const pcm = floatToS16(Float32Array.from([0.5, -0.5]));
    assert.equal(applyVolume(pcm, 100), pcm);
    assert.deepEqual([...new Int16Array(applyVolume(pcm, 0).buffer.slice(0))].map((v) => Math.abs(v)), [0, 0]);
    const half = applyVolume(pcm, 50);
    assert.equal(half.readInt16LE(0), Math.round(pcm.readInt16LE(0) / 4));
  });

  it('resampling keeps duration for up- and down-sampling', () => {
    const oneSecond44k = new Float32Array(44100).fill(0.25);
    const down = resampleFloat(oneSecond44k, 44100, 16000);
    assert.equal(down.length, 16000);
    assert.ok(Math.abs(down[8000]! - 0.25) < 1e-6);
    assert.equal(resampleFloat(new Float32Array(8000), 8000, 16000).length, 16000);
  });
});
