/**
 * A client that finds nothing on its socket names the homeagent service that
 * runs elsewhere (src/cli/find-service.ts): a newcomer started
 * `./scripts/run.sh --data-dir /tmp/x`, typed `homeagent status` and was told
 * only "Is it running?", and `homeagent config set` changed another data
 * directory's settings.db.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { otherServicesHint, runningServices, serviceOf } from '../../src/cli/find-service.js';
import { cli, serviceAnswers } from './run-cli.js';

const HERMETIC = { HOMEAGENT__CORE__LLM__SOURCES__OLLAMA__BASE_URL: 'http://127.0.0.1:9', HOMEAGENT_SOCKET: '' };

test('a command line that runs the service gives its socket as the service works it out; any other gives none', () => {
  const node = '/usr/bin/node';
  assert.deepEqual(serviceOf([node, '/opt/h/dist/src/cli/main.js', 'run', '--console', '--data-dir', 'x'], '/home/pi', {}), { socket: '/home/pi/x/homeagent.sock', dataDir: '/home/pi/x' });
  assert.deepEqual(serviceOf([node, '--import', 'tsx', 'src/cli/main.ts', '--data-dir=/tmp/d', 'run'], '/w', {}), { socket: '/tmp/d/homeagent.sock', dataDir: '/tmp/d' });
  assert.deepEqual(serviceOf([node, 'dist/src/cli/main.js', '--socket', 's.sock', 'run'], '/w', {}), { socket: '/w/s.sock', dataDir: '/w/data-local' });
  assert.deepEqual(serviceOf([node, 'dist/src/cli/main.js', 'run'], '/w', { HOMEAGENT_DATA_DIR: 'data2' }), { socket: '/w/data2/homeagent.sock', dataDir: '/w/data2' });
  assert.deepEqual(serviceOf([node, 'dist/src/cli/main.js', 'run'], '/w', { RUNTIME_DIRECTORY: '/run/homeagent', STATE_DIRECTORY: '/var/lib/homeagent' }), { socket: '/run/homeagent/homeagent.sock', dataDir: '/var/lib/homeagent' });
  assert.equal(serviceOf([node, 'dist/src/cli/main.js', 'status'], '/w', {}), undefined, 'a client is no service');
  assert.equal(serviceOf([node, 'other.js', 'run'], '/w', {}), undefined);
  assert.equal(otherServicesHint([]), undefined);
  assert.equal(otherServicesHint([{ pid: 1, socket: '/tmp/d/homeagent.sock', dataDir: '/tmp/d' }]), 'a homeagent service runs with its socket at /tmp/d/homeagent.sock: add --data-dir /tmp/d');
  assert.equal(otherServicesHint([{ pid: 1, socket: '/tmp/s.sock', dataDir: '/tmp/d' }]), 'a homeagent service runs with its socket at /tmp/s.sock: add --socket /tmp/s.sock');
});

test('with a service running on another data directory, status names it and config set refuses to change the wrong settings.db', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'homeagent-elsewhere-'));
  const other = mkdtempSync(path.join(os.tmpdir(), 'homeagent-here-'));
  const socket = path.join(dir, 'homeagent.sock');
  const service = spawn(process.execPath, ['--import', 'tsx', path.resolve('src/cli/main.ts'), '--data-dir', dir, 'run', '--no-console'], {
    stdio: ['ignore', 'ignore', 'pipe'],
    env: { ...process.env, ...HERMETIC, NODE_ENV: 'production', HOMEAGENT_LOG_LEVEL: 'warn', HOMEAGENT__CORE__SERVICE__EMBEDDED_BROKER_PORT: '0', HOMEAGENT__PLUGIN__WEBUI__PORT: '0' },
  });
  let err = '';
  service.stderr.on('data', (d: Buffer) => (err += d.toString()));
  try {
    await serviceAnswers(socket, service);
    assert.equal(service.exitCode, null, err);
    assert.ok(runningServices().some((s) => s.socket === socket && s.pid === service.pid), 'found from /proc');
    assert.ok(!runningServices(socket).some((s) => s.socket === socket), 'the socket tried is left out');
    // The client in another working directory, with no --data-dir: its own data-local has nothing.
    const status = await cli(['status'], { env: HERMETIC, cwd: other });
    assert.equal(status.code, 3);
    // Other tests' services may run at the same time: each is named, this one among them.
    assert.match(status.stderr, /cannot reach the homeagent service at .*data-local\/homeagent\.sock/);
    assert.ok(status.stderr.includes(socket) && status.stderr.includes(`--data-dir ${dir}`), status.stderr);
    // A data directory named: that one is meant, and no other service is pointed at (a newcomer's stopped box was).
    const namedStatus = await cli(['--data-dir', path.join(other, 'mine'), 'status'], { env: HERMETIC, cwd: other });
    assert.equal(namedStatus.code, 3);
    assert.ok(!namedStatus.stderr.includes(socket), namedStatus.stderr);
    const set = await cli(['config', 'set', 'plugin.home.area', 'Kitchen'], { env: HERMETIC, cwd: other });
    assert.equal(set.code, 3, set.stderr);
    assert.match(set.stderr, /nothing answers on .*data-local.*homeagent\.sock, and .*homeagent service/);
    assert.ok(set.stderr.includes(socket), set.stderr);
    // With the data directory named, it goes to the service.
    const named = await cli(['--data-dir', dir, 'config', 'set', 'plugin.home.area', 'Kitchen'], { env: HERMETIC, cwd: other });
    assert.equal(named.code, 0, named.stderr);
    // A second service on the same data directory, its socket elsewhere: refused (a breaking tester's two took the
    // box's MQTT identity from each other); a client naming the data directory finds the first one's socket.
    const second = await cli(['--data-dir', dir, '--socket', path.join(other, 'second.sock'), 'run', '--no-console'], { env: { ...HERMETIC, HOMEAGENT__CORE__SERVICE__EMBEDDED_BROKER_PORT: '0', HOMEAGENT__PLUGIN__WEBUI__PORT: '0' }, cwd: other });
    assert.notEqual(second.code, 0);
    assert.match(second.stderr, new RegExp(`another homeagent is already running with data directory .*process ${service.pid}`));
  } finally {
    service.kill('SIGTERM');
    await new Promise((r) => (service.exitCode !== null ? r(null) : service.once('exit', r)));
    rmSync(dir, { recursive: true, force: true });
    rmSync(other, { recursive: true, force: true });
  }
});
