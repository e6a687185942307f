/**
 * Broker URL, credentials and TLS come from the settings: the plugin
 * connects to a Mosquitto that only accepts TLS (a self-signed certificate
 * made with openssl for the test) and a user name/password, and controls
 * the fixture home through it.
 */
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { chmodSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import mqtt from 'mqtt';
import { HomePlugin } from '../../src/home/index.js';
import { startMosquitto, type MosquittoBroker } from '../support/mosquitto.js';
import { DeviceSimulator } from '../support/device-simulator.js';
import { FakeSdk } from '../support/fake-sdk.js';
import { FIXTURE_ENTITIES, waitFor } from './harness.js';
import { stubMatcher } from './stub-matcher.js';

describe('TLS and credentials from settings', () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'homeagent-tls-'));
  const cert = path.join(dir, 'cert.pem');
  const key = path.join(dir, 'key.pem');
  const passwd = path.join(dir, 'passwd');
  let broker: MosquittoBroker;
  let home: DeviceSimulator | undefined;
  const sdk = new FakeSdk();
  const plugin = new HomePlugin({ matchIntent: stubMatcher, mqtt: { reconnectMinMs: 100 } });

  before(async () => {
    chmodSync(dir, 0o755);
    execFileSync('openssl', ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', key, '-out', cert, '-days', '2', '-subj', '/CN=127.0.0.1', '-addext', 'subjectAltName=IP:127.0.0.1'], { stdio: 'ignore' });
    execFileSync('mosquitto_passwd', ['-b', '-c', passwd, 'box', 's3cret'], { stdio: 'ignore' });
    for (const f of [cert, key, passwd]) chmodSync(f, 0o644);
    broker = await startMosquitto({ extraConfig: [`certfile ${cert}`, `keyfile ${key}`, 'allow_anonymous false', `password_file ${passwd}`] });
    const url = `mqtts://127.0.0.1:${broker.port}`;
    sdk.settingsApi.preset('plugin.mqtt.url', url);
    sdk.settingsApi.preset('plugin.mqtt.username', 'box');
    sdk.settingsApi.preset('plugin.mqtt.password', 's3cret');
    sdk.settingsApi.preset('plugin.mqtt.tls', { ca: cert });
  });
  after(async () => {
    await plugin.stop();
    await home?.stop();
    await broker.stop();
    sdk.cleanup();
    rmSync(dir, { recursive: true, force: true });
  });

  test('anonymous and plain-TCP clients are refused', async () => {
    await assert.rejects(mqtt.connectAsync(`mqtts://127.0.0.1:${broker.port}`, { ca: readFileSync(cert), reconnectPeriod: 0, connectTimeout: 3000 }));
    await assert.rejects(mqtt.connectAsync(`mqtt://127.0.0.1:${broker.port}`, { username: 'box', password: 's3cret', reconnectPeriod: 0, connectTimeout: 3000 }));
  });

  test('the plugin connects with TLS and the account, discovers the home and commands it', async () => {
    await plugin.start(sdk);
    await waitFor(() => plugin.connected, 'TLS connection');
    // The simulator is a second client of the same broker, with the same account.
    home = new DeviceSimulator(`mqtts://127.0.0.1:${broker.port}`, undefined, { tls: { ca: readFileSync(cert) }, username: 'box', password: 's3cret' });
    await home.start();
    await waitFor(() => (plugin.registry?.entities().length ?? 0) === FIXTURE_ENTITIES, 'home discovered over TLS');
    await waitFor(() => plugin.registry?.view('standing_light')?.state.state === 'off', 'state');
    const r = await sdk.runInput('turn on standing light');
    assert.equal(r.response, 'Turned on the Standing Light.');
    assert.deepEqual(await home.waitForCommands(1), [{ topic: 'home/standing_light/set', payload: 'ON' }]);
  });
});
