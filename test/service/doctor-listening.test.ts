/**
 * `homeagent doctor` notices (issue 14) that nothing can start listening (no
 * push-to-talk pin and no wake word) and that espeak-ng or pocketsphinx (or
 * its model) is missing: real files on a PATH made for the test.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { checkListening, checkSpeechPrograms, doctorInputFromSettings, findOnPath } from '../../src/service/doctor.js';
import { ConfigRegistry } from '../../src/config/registry.js';
import { registerAllSettings } from '../../src/service/settings.js';

const voice = { pttPin: -1, gpioDriver: 'auto', wakeHost: '', wakePort: 10400, ttsEngine: 'espeak-ng' };

test('listening: neither a push-to-talk pin nor a wake word fails with both fixes; either one passes', () => {
  const none = checkListening(voice);
  assert.equal(none.ok, false);
  assert.match(none.detail, /nothing can start listening/);
  assert.match(none.fix ?? '', /plugin\.gpio\.ptt_pin/);
  assert.match(none.fix ?? '', /plugin\.voice\.wyoming_wake_host/);
  const ptt = checkListening({ ...voice, pttPin: 27 });
  assert.equal(ptt.ok, true);
  assert.match(ptt.detail, /push-to-talk on BCM pin 27/);
  const wake = checkListening({ ...voice, wakeHost: '127.0.0.1' });
  assert.equal(wake.ok, true);
  assert.match(wake.detail, /wake word from 127\.0\.0\.1:10400/);
});

test('espeak-ng and pocketsphinx: missing programs and a missing model are failures with the package to install', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'homeagent-doctor-path-'));
  try {
    const bin = path.join(dir, 'bin');
    const model = path.join(dir, 'model');
    mkdirSync(bin);
    let checks = checkSpeechPrograms(voice, bin, model);
    assert.deepEqual(checks.map((c) => [c.name, c.ok]), [['espeak-ng', false], ['pocketsphinx', false]]);
    assert.equal(checks[0]!.fix, 'sudo apt-get install espeak-ng');
    assert.match(checks[0]!.detail, /tts_engine is espeak-ng/);
    assert.match(checks[1]!.fix ?? '', /apt-get install pocketsphinx pocketsphinx-en-us/);
    for (const p of ['espeak-ng', 'pocketsphinx_batch']) {
      writeFileSync(path.join(bin, p), '#!/bin/sh\n');
      chmodSync(path.join(bin, p), 0o755);
    }
    // Not executable is not installed.
    writeFileSync(path.join(dir, 'espeak-ng'), '');
    assert.equal(findOnPath('espeak-ng', dir), undefined);
    checks = checkSpeechPrograms(voice, bin, model);
    assert.deepEqual(checks.map((c) => [c.name, c.ok]), [['espeak-ng', true], ['pocketsphinx', false]]);
    assert.match(checks[1]!.detail, /acoustic model .*en-us is missing/);
    mkdirSync(path.join(model, 'en-us'), { recursive: true });
    checks = checkSpeechPrograms(voice, bin, model);
    assert.deepEqual(checks.map((c) => [c.name, c.ok]), [['espeak-ng', true], ['pocketsphinx', true]]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('doctorInputFromSettings reads the sources in order, the broker and the voice settings', () => {
  const c = new ConfigRegistry(':memory:', { env: {} });
  try {
    registerAllSettings(c);
    c.set('plugin.gpio.ptt_pin', 22);
    c.set('plugin.mqtt.url', 'mqtt://10.0.0.5:1883');
    const input = doctorInputFromSettings(c, '/data');
    assert.deepEqual(input.sources.map((s) => [s.name, s.adapter, s.base_url]), [['ollama', 'ollama', 'http://127.0.0.1:11434']]);
    assert.equal(input.brokerUrl, 'mqtt://10.0.0.5:1883');
    assert.equal(input.voice?.pttPin, 22);
    assert.equal(input.voice?.ttsEngine, 'espeak-ng');
  } finally {
    c.close();
  }
});
