/**
 * The console banner's line on talking to the box by voice (a newcomer's
 * finding: the banner listed what was simulated and what to type, but not how
 * to wake the box): the ways when a person in the room can wake it, otherwise
 * why nobody can and what reaches it instead.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { bannerWakeLine, listenCommandFor, wakeReport, type WakeConfig } from '../../src/service/wake-ways.js';
import { bannerText } from '../../src/plugins/console/index.js';

const config = (o: Partial<WakeConfig>): WakeConfig => ({ stopPin: 17, pttPin: -1, oneButton: true, longPressMs: 2000, gpioDriver: 'auto', wakeHost: '', wakePort: 10400, wakeWords: '', wakePhrase: '', language: 'en', asrHost: '', ...o });

test('a real button on BCM 17: the line says to press it', () => {
  const line = bannerWakeLine(wakeReport(config({}), false));
  assert.match(line, /^the box can be woken by: press the button on BCM 17 to talk/);
  assert.doesNotMatch(line, /nobody/);
});

test('the Wyoming wake service and a button: both ways, in one line', () => {
  const line = bannerWakeLine(wakeReport(config({ wakeHost: '192.168.1.20', wakeWords: 'ok_nabu' }), false));
  assert.match(line, /press the button on BCM 17 .*; or say the wake word \(ok_nabu\), heard by the Wyoming wake service at 192\.168\.1\.20:10400/);
});

test('only a simulated button: nobody in the room can, and the line says what reaches the box instead', () => {
  const line = bannerWakeLine(wakeReport(config({}), true));
  assert.match(line, /^nobody in the room can wake the box: its only button is simulated/);
  assert.match(line, /type here instead, or feed it a recording with `homeagent listen FILE\.wav`$/);
});

test('no way at all: the problem already names the console and listen, and is not repeated', () => {
  const line = bannerWakeLine(wakeReport(config({ stopPin: -1 }), false));
  assert.match(line, /^nothing can wake the box: no button/);
  assert.equal(line.match(/homeagent listen/g)?.length, 1);
});

test('the banner prints the line after what is simulated, before what to try', () => {
  const text = bannerText({ title: 'HomeAgent 9', simulated: ['buttons and LEDs (no GPIO)'], examples: ['a'], voice: 'the box can be woken by: press the button on BCM 17 to talk' });
  assert.equal(text, 'HomeAgent 9: text console.\nSimulated here: buttons and LEDs (no GPIO).\nBy voice: the box can be woken by: press the button on BCM 17 to talk.\nTry: "a".\nType stop (or /stop) to cut a reply, /help for help, /quit or Ctrl-D to end.\n');
});

test('the listen command the banner gives reaches this box from any directory: --data-dir unless it is the device\'s own', () => {
  assert.equal(listenCommandFor('/var/lib/homeagent', {}), 'homeagent listen FILE.wav');
  assert.equal(listenCommandFor('/srv/box', { STATE_DIRECTORY: '/srv/box' }), 'homeagent listen FILE.wav');
  // A newcomer ran the CLI from another directory: ./data-local is relative, so the banner names it (absolute).
  assert.equal(listenCommandFor('data-local', {}), `homeagent --data-dir ${process.cwd()}/data-local listen FILE.wav`);
  const line = bannerWakeLine(wakeReport(config({}), true), listenCommandFor('/tmp/box2', {}));
  assert.match(line, /feed it a recording with `homeagent --data-dir \/tmp\/box2 listen FILE\.wav`$/);
});
