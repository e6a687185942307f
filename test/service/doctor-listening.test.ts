/**
 * `homeagent doctor` says how the box can be woken (issue 15: the one
 * button, push-to-talk, the Wyoming wake service, which it asks for its wake
 * words) and fails when nobody can wake it; Chinese without the Wyoming ASR;
 * espeak-ng or pocketsphinx (or its model) missing: real files on a PATH made
 * for the test. The start-up log says the same.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { checkChineseSpeech, checkListening, checkSpeechPrograms, checkTts, checkWakeService, doctorInputFromSettings, findOnPath } from '../../src/service/doctor.js';
import { logWakeWays } from '../../src/service/voice-wiring.js';
import { startWyomingTestServer } from '../support/wyoming-test-server.js';
import { FakeSdk } from '../support/fake-sdk.js';
import { printResult } from '../../src/cli/format.js';
import { ConfigRegistry } from '../../src/config/registry.js';
import { registerAllSettings } from '../../src/service/settings.js';

const voice = {
  stopPin: 17, pttPin: -1, oneButton: true, longPressMs: 2000, gpioDriver: 'auto', wakeHost: '', wakePort: 10400, wakeWords: '', wakePhrase: '', language: 'en', asrHost: '', ttsEngine: 'espeak-ng',
};

test('listening: the default wiring is the one button (press to talk); every way is named; nothing at all fails with the fixes', () => {
  const one = checkListening(voice, false);
  assert.equal(one.ok, true);
  assert.match(one.detail, /press the button on BCM 17 to talk .*hold it 2 s to switch the microphone off or on/);
  const none = checkListening({ ...voice, stopPin: -1 }, false);
  assert.equal(none.ok, false);
  assert.match(none.detail, /nothing can wake the box/);
  assert.match(none.fix ?? '', /plugin\.gpio\.ptt_pin/);
  assert.match(none.fix ?? '', /plugin\.voice\.wyoming_wake_host/);
  assert.match(none.fix ?? '', /rhasspy\/wyoming-openwakeword/);
  const stopOnly = checkListening({ ...voice, oneButton: false }, false);
  assert.equal(stopOnly.ok, false);
  assert.match(stopOnly.detail, /only stops \(plugin\.gpio\.one_button is false\)/);
  const ptt = checkListening({ ...voice, pttPin: 27 }, false);
  assert.equal(ptt.ok, true);
  assert.match(ptt.detail, /push-to-talk button on BCM 27/);
  assert.doesNotMatch(ptt.detail, /BCM 17 to talk/, 'with a separate push-to-talk pin the stop button only stops');
  const wake = checkListening({ ...voice, stopPin: -1, wakeHost: '127.0.0.1', wakeWords: 'ok_nabu' }, false);
  assert.equal(wake.ok, true);
  assert.match(wake.detail, /say the wake word \(ok_nabu\), heard by the Wyoming wake service at 127\.0\.0\.1:10400/);
});

test('listening: a box whose only button is simulated (no GPIO here) cannot be woken by anybody in the room', () => {
  const sim = checkListening(voice, true);
  assert.equal(sim.ok, false);
  assert.match(sim.detail, /nobody in the room can wake the box/);
  assert.equal(checkListening({ ...voice, wakeHost: 'nabu.local' }, true).ok, true, 'the wake word still works');
});

test("listening: a newcomer's doctor said ok with a wake phrase on a machine with no microphone, and with a wake service that does not answer; both fail now", () => {
  const phrase = checkListening({ ...voice, wakePhrase: 'hey home agent' }, true, true);
  assert.equal(phrase.ok, false);
  assert.match(phrase.detail, /^nobody in the room can be heard: the microphone is simulated/);
  const service = checkListening({ ...voice, wakeHost: '127.0.0.1', wakeWords: 'ok_nabu' }, true, false, true);
  assert.equal(service.ok, false);
  assert.match(service.detail, /^nobody in the room can wake the box: the Wyoming wake service at 127\.0\.0\.1:10400 does not answer and the buttons are simulated/);
  assert.equal(checkListening({ ...voice, wakeHost: '127.0.0.1' }, false, false, true).ok, true, 'a real button still wakes it');
  assert.equal(checkListening({ ...voice, wakeHost: '127.0.0.1' }, true, false, false).ok, true, 'a service that answers wakes it');
});

test('chinese: zh without the Wyoming ASR fails and says why (no Chinese acoustic model for pocketsphinx); with it, ok; other languages: no check', () => {
  assert.equal(checkChineseSpeech(voice), undefined);
  const bad = checkChineseSpeech({ ...voice, language: 'zh' });
  assert.equal(bad?.ok, false);
  assert.match(bad?.detail ?? '', /Debian has no Chinese acoustic model for pocketsphinx/);
  assert.match(bad?.detail ?? '', /typed Chinese works/);
  assert.match(bad?.fix ?? '', /plugin\.voice\.wyoming_asr_host/);
  const good = checkChineseSpeech({ ...voice, language: 'zh', asrHost: '10.0.0.2' });
  assert.equal(good?.ok, true);
  assert.match(good?.detail ?? '', /Wyoming ASR is set \(10\.0\.0\.2\)/);
});

test('wake word service: answers and lists its wake words; a name it lacks and a service that is down fail with the fix', async () => {
  const s = await startWyomingTestServer();
  try {
    const ok = await checkWakeService({ ...voice, wakeHost: s.host, wakePort: s.port });
    assert.equal(ok?.ok, true);
    assert.match(ok?.detail ?? '', /listening for all it offers: ok_nabu/);
    const named = await checkWakeService({ ...voice, wakeHost: s.host, wakePort: s.port, wakeWords: 'ok_nabu' });
    assert.equal(named?.ok, true);
    const missing = await checkWakeService({ ...voice, wakeHost: s.host, wakePort: s.port, wakeWords: 'hey_jarvis' });
    assert.equal(missing?.ok, false);
    assert.match(missing?.detail ?? '', /does not offer hey_jarvis \(it offers: ok_nabu\)/);
    assert.match(missing?.fix ?? '', /plugin\.voice\.wake_words ok_nabu/);
  } finally {
    await s.close();
  }
  const down = await checkWakeService({ ...voice, wakeHost: s.host, wakePort: s.port });
  assert.equal(down?.ok, false);
  assert.match(down?.detail ?? '', /reconnects by itself/);
  assert.equal(await checkWakeService(voice), undefined, 'no wake service configured: no check');
  // A tester set plugin.voice.wake_words with no wake service and was told nothing.
  const alone = await checkWakeService({ ...voice, wakeWords: 'hey_jarvis' });
  assert.equal(alone?.ok, false);
  assert.match(alone?.detail ?? '', /plugin\.voice\.wake_words is hey_jarvis but plugin\.voice\.wyoming_wake_host is empty: no wake word is listened for/);
  assert.match(alone?.fix ?? '', /plugin\.voice\.wyoming_wake_host/);
  assert.equal(await checkWakeService({ ...voice, wakeWords: ',, ,' }), undefined, 'no names at all: nothing set');
  const forged = await checkWakeService({ ...voice, wakeWords: 'ok\nFAIL fake' });
  assert.doesNotMatch(forged?.detail ?? '', /\n/, 'control characters are not printed');
});

test("tts engine: piper with no binary or model, a binary that is no program, a missing voice file, and a Wyoming TTS that is down or no TTS fail with the fix; espeak-ng has no such check (a tester's piper was taken without a word)", async () => {
  assert.equal(await checkTts(voice), undefined);
  const bare = await checkTts({ ...voice, ttsEngine: 'piper' });
  assert.equal(bare?.ok, false);
  assert.match(bare?.detail ?? '', /plugin\.voice\.tts_engine is piper but plugin\.voice\.piper_binary and plugin\.voice\.piper_model are empty: the box speaks with espeak-ng instead/);
  assert.match(bare?.fix ?? '', /config set plugin\.voice\.piper_binary .* and homeagent config set plugin\.voice\.piper_model /, 'the fix names both');
  const dir = mkdtempSync(path.join(os.tmpdir(), 'ha-piper-'));
  try {
    const bin = path.join(dir, 'piper');
    const model = path.join(dir, 'en_US-test-medium.onnx');
    writeFileSync(bin, '#!/bin/sh\n');
    const noModel = await checkTts({ ...voice, ttsEngine: 'piper', piperBinary: bin, piperModel: '' });
    assert.match(noModel?.detail ?? '', /plugin\.voice\.piper_model is empty/);
    const notProgram = await checkTts({ ...voice, ttsEngine: 'piper', piperBinary: bin, piperModel: model });
    assert.equal(notProgram?.ok, false);
    assert.match(notProgram?.detail ?? '', /is not an executable file/);
    chmodSync(bin, 0o755);
    const noVoice = await checkTts({ ...voice, ttsEngine: 'piper', piperBinary: bin, piperModel: model });
    assert.match(noVoice?.detail ?? '', /en_US-test-medium\.onnx is missing/);
    mkdirSync(model);
    assert.match((await checkTts({ ...voice, ttsEngine: 'piper', piperBinary: bin, piperModel: model }))?.detail ?? '', /en_US-test-medium\.onnx is missing \(or not a file\)/, 'a directory is no voice');
    rmSync(model, { recursive: true });
    writeFileSync(model, 'x');
    const noJson = await checkTts({ ...voice, ttsEngine: 'piper', piperBinary: bin, piperModel: model });
    assert.match(noJson?.detail ?? '', /en_US-test-medium\.onnx\.json is missing/);
    writeFileSync(`${model}.json`, '{}');
    const ok = await checkTts({ ...voice, ttsEngine: 'piper', piperBinary: bin, piperModel: model });
    assert.equal(ok?.ok, true, ok?.detail);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  assert.match((await checkTts({ ...voice, ttsEngine: 'wyoming', ttsHost: '' }))?.detail ?? '', /wyoming_tts_host is empty/);
  const s = await startWyomingTestServer();
  try {
    const up = await checkTts({ ...voice, ttsEngine: 'wyoming', ttsHost: s.host, ttsPort: s.port });
    assert.equal(up?.ok, true, up?.detail);
  } finally {
    await s.close();
  }
  const down = await checkTts({ ...voice, ttsEngine: 'wyoming', ttsHost: s.host, ttsPort: s.port });
  assert.equal(down?.ok, false);
  assert.match(down?.detail ?? '', /nothing is said aloud until it answers/);
});

test('start-up log: how the box can be woken, a warning when nobody can, and the Chinese fact', () => {
  const sdk = new FakeSdk({ settings: { 'plugin.gpio.driver': 'real', 'plugin.gpio.sysfs_root': '/sys' } });
  try {
    const cfg = { ...voice, gpioDriver: 'real', language: 'zh' };
    const r = logWakeWays(sdk, cfg);
    assert.equal(r.ways[0]?.kind, 'button');
    assert.ok(sdk.log.messages('info').some((m) => /^the box can be woken by: press the button on BCM 17/.test(m)));
    assert.ok(sdk.log.messages('warn').some((m) => /no Chinese acoustic model for pocketsphinx/.test(m)));
    logWakeWays(sdk, { ...cfg, stopPin: -1, language: 'en' });
    assert.ok(sdk.log.messages('warn').some((m) => /^nothing can wake the box/.test(m)));
  } finally {
    sdk.cleanup();
  }
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
    assert.equal(input.voice?.stopPin, 17);
    assert.equal(input.voice?.oneButton, true);
    assert.equal(input.voice?.longPressMs, 2000);
    assert.equal(input.voice?.ttsEngine, 'espeak-ng');
  } finally {
    c.close();
  }
});

test('status: the Wake rows say how the box can be woken, the wake service connection and what is wrong', () => {
  const lines: string[] = [];
  printResult(
    'status',
    {
      uptime_s: 5,
      voice: {
        speaker: 'aplay',
        stt: { order: 'grammar only', grammar: { state: 'ready', entities: 3, words: 40 } },
        wake: {
          ways: ['press the button on BCM 17 to talk', 'say the wake word (ok_nabu), heard by the Wyoming wake service at nabu.local:10400'],
          problems: [],
          service: 'nabu.local:10400',
          connection: { state: 'waiting', error: 'connect ECONNREFUSED', retry_ms: 4000, connections: 1 },
        },
      },
    },
    false,
    (s) => void lines.push(s),
  );
  const text = lines.join('\n');
  assert.match(text, /^Wake +press the button on BCM 17 to talk$/m);
  assert.match(text, /^ +say the wake word \(ok_nabu\)/m);
  assert.match(text, /wake service nabu\.local:10400: NOT connected \(waiting: connect ECONNREFUSED; it reconnects by itself\)/);
});
