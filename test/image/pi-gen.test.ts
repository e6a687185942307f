/**
 * The pi-gen stage without pi-gen: its scripts run the way pi-gen's
 * run_sub_stage runs them (00-run.sh on the host, then 00-run-chroot.sh piped
 * into `on_chroot`), with on_chroot replaced by a shell that points
 * HOMEAGENT_ROOT at a temporary root file system, a fake systemctl and npm,
 * and a stand-in Node.js tarball. The installer they call is image/install.sh.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, readlinkSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { makeBundles, makeDevice, makeKey, repoRoot, tempDir, testKey, type FakeDevice } from './release-fixture.js';

const stage = join(repoRoot, 'image', 'pi-gen', 'stage-homeagent');
const work = tempDir('ha-pigen-');
let bundle = '';
let nodeTarball = '';
after(() => rmSync(work, { recursive: true, force: true }));

before(async () => {
  bundle = (await makeBundles(work, ['5.0.0'])).get('5.0.0') ?? '';
  // A stand-in for node-v20.x-linux-arm64.tar.xz: same layout, a node that only knows --version.
  const src = join(work, 'node-src', 'node-v20.11.1-linux-arm64');
  mkdirSync(join(src, 'bin'), { recursive: true });
  mkdirSync(join(src, 'include', 'node'), { recursive: true });
  mkdirSync(join(src, 'share', 'doc', 'node'), { recursive: true });
  writeFileSync(join(src, 'bin', 'node'), '#!/bin/sh\necho v20.11.1\n');
  chmodSync(join(src, 'bin', 'node'), 0o755);
  writeFileSync(join(src, 'include', 'node', 'node.h'), '/* headers for node-gyp */\n');
  writeFileSync(join(src, 'share', 'doc', 'node', 'gdbinit'), 'doc\n');
  writeFileSync(join(src, 'CHANGELOG.md'), 'changes\n');
  const files = join(work, 'files');
  mkdirSync(files);
  nodeTarball = join(files, 'node-v20.11.1-linux-arm64.tar.xz');
  const r = spawnSync('tar', ['-cJf', nodeTarball, '-C', join(work, 'node-src'), 'node-v20.11.1-linux-arm64'], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  const sum = createHash('sha256').update(readFileSync(nodeTarball)).digest('hex');
  writeFileSync(join(files, 'SHASUMS256.txt'), `${'0'.repeat(64)}  node-v20.11.1-darwin-arm64.tar.xz\n${sum}  node-v20.11.1-linux-arm64.tar.xz\n`);
});

/** A root file system as stage2 leaves it, as far as this stage cares: the first user exists. */
function rootfs(device: FakeDevice): string {
  mkdirSync(join(device.root, 'etc'), { recursive: true });
  writeFileSync(join(device.root, 'etc', 'passwd'), 'root:x:0:0:root:/root:/bin/bash\npi:x:1000:1000:,,,:/home/pi:/bin/bash\n');
  writeFileSync(join(device.root, 'etc', 'group'), 'root:x:0:\npi:x:1000:\n');
  mkdirSync(join(device.root, 'tmp'), { recursive: true });
  return device.root;
}

/** Run the sub-stage like pi-gen: ./00-run.sh, then `on_chroot < 00-run-chroot.sh`. */
function runSubStage(device: FakeDevice, env: NodeJS.ProcessEnv): { status: number | null; out: string } {
  const script = `set -e
on_chroot() { HOMEAGENT_ROOT="$ROOTFS_DIR" bash -e -s; }
export -f on_chroot
cd "$1/00-install"
./00-run.sh
on_chroot < 00-run-chroot.sh
`;
  const r = spawnSync('bash', ['-c', script, 'pi-gen', stage], {
    encoding: 'utf8',
    timeout: 120_000,
    env: {
      ...process.env,
      ...device.env,
      ROOTFS_DIR: device.root,
      FIRST_USER_NAME: 'pi',
      SYSTEMCTL: device.systemctl,
      HOMEAGENT_NPM: device.npm,
      HOMEAGENT_NODE: process.execPath,
      HOMEAGENT_NODE_BIN: '',
      HOMEAGENT_BUNDLE: bundle,
      HOMEAGENT_NODE_TARBALL: nodeTarball,
      HOMEAGENT_RELEASE_KEYS: testKey().publicKeyFile,
      ...env,
    },
  });
  return { status: r.status, out: `${r.stdout}${r.stderr}` };
}

test('the stage installs Node.js and HomeAgent into the root file system with image/install.sh', () => {
  // A root file system that trusts no release key yet: the image build enrolls the one it is given.
  const d = makeDevice(work, { trust: [] });
  const root = rootfs(d);
  const r = runSubStage(d, {});
  assert.equal(r.status, 0, r.out);
  assert.match(r.out, /Node\.js v20\.11\.1 installed/);
  // Node.js in /usr/local, docs dropped, headers kept for node-gyp.
  assert.ok(existsSync(join(root, 'usr/local/bin/node')));
  assert.ok(existsSync(join(root, 'usr/local/include/node/node.h')));
  assert.equal(existsSync(join(root, 'usr/local/CHANGELOG.md')), false);
  assert.equal(existsSync(join(root, 'usr/local/share/doc')), false);
  // HomeAgent installed by install.sh --no-start: release, links, units, enabled offline, not started.
  assert.equal(readlinkSync(join(root, 'opt/homeagent/current')), 'releases/5.0.0');
  assert.equal(readlinkSync(join(root, 'opt/homeagent/bin/node')), '/usr/local/bin/node');
  assert.ok(existsSync(join(root, 'opt/homeagent/releases/5.0.0/node_modules')));
  assert.ok(existsSync(join(root, 'etc/systemd/system/homeagent.service')));
  // ...and the WebUI's update helper: its .path unit enabled in the image, its oneshot only started by it.
  assert.ok(existsSync(join(root, 'etc/systemd/system/homeagent-update.path')));
  assert.ok(existsSync(join(root, 'etc/systemd/system/homeagent-update.service')));
  assert.deepEqual(d.systemctlCalls(), [`--root=${root} enable homeagent.service`, `--root=${root} enable homeagent-update.path`]);
  assert.deepEqual(d.started(), []);
  assert.equal(d.npmCalls().length, 1);
  // The service user, and the image's first user in group homeagent for the CLI socket.
  assert.match(readFileSync(join(root, 'etc/passwd'), 'utf8'), /^homeagent:x:\d+:\d+:/m);
  assert.match(readFileSync(join(root, 'etc/group'), 'utf8'), /^homeagent:x:\d+:pi$/m);
  // The release key the image was built with is trusted (the bundle was checked against it).
  assert.deepEqual(d.trustedKeys(), [testKey().id]);
  assert.match(r.out, new RegExp(`signature verified: homeagent 5\\.0\\.0 is signed by trusted key ${testKey().id}`));
  // The staging area in /tmp is gone.
  assert.equal(existsSync(join(root, 'tmp/homeagent-install')), false);
});

test('a Node.js tarball that does not match SHASUMS256.txt stops the build before anything is copied', () => {
  const d = makeDevice(work);
  const root = rootfs(d);
  const r = runSubStage(d, { HOMEAGENT_NODE_SHA256: 'f'.repeat(64) });
  assert.notEqual(r.status, 0);
  assert.match(r.out, /checksum mismatch/);
  assert.equal(existsSync(join(root, 'tmp/homeagent-install')), false);
  assert.equal(existsSync(join(root, 'opt/homeagent')), false);
});

test('without a release key the stage stops and says what to give it; a bundle signed by another key fails the build', () => {
  const d = makeDevice(work, { trust: [] });
  const root = rootfs(d);
  const none = runSubStage(d, { HOMEAGENT_RELEASE_KEYS: '' });
  assert.notEqual(none.status, 0);
  assert.match(none.out, /no release key: the image must trust the key that signs your bundles.*npm run keygen/);
  assert.equal(existsSync(join(root, 'tmp/homeagent-install')), false);

  const priv = runSubStage(d, { HOMEAGENT_RELEASE_KEYS: testKey().privateKeyFile });
  assert.notEqual(priv.status, 0);
  assert.match(priv.out, /is a PRIVATE key; the image needs the public key/);

  const wrong = runSubStage(d, { HOMEAGENT_RELEASE_KEYS: makeKey('not-the-signer').publicKeyFile });
  assert.notEqual(wrong.status, 0);
  assert.match(wrong.out, /bundle refused: the bundle is signed by .* not among the trusted keys/);
  assert.equal(existsSync(join(root, 'opt/homeagent/current')), false);
});

test('without a bundle the stage says how to make one', () => {
  const d = makeDevice(work);
  rootfs(d);
  const r = runSubStage(d, { HOMEAGENT_BUNDLE: join(work, 'missing.tar.gz') });
  assert.notEqual(r.status, 0);
  assert.match(r.out, /run 'npm run bundle'/);
});

test('prerun.sh starts from the previous stage; 00-packages lists the Debian packages', () => {
  const d = makeDevice(work);
  const marker = join(d.dir, 'copied');
  const r = spawnSync('bash', ['-c', `copy_previous() { touch '${marker}'; }; export -f copy_previous; "$1"`, 'pi-gen', join(stage, 'prerun.sh')], {
    encoding: 'utf8',
    env: { ...process.env, ROOTFS_DIR: join(d.dir, 'no-rootfs-yet') },
  });
  assert.equal(r.status, 0, r.stderr);
  assert.ok(existsSync(marker));
  const packages = readFileSync(join(stage, '00-install', '00-packages'), 'utf8')
    .split('\n')
    .map((l) => l.replace(/#.*/, '').trim())
    .filter((l) => l !== '');
  for (const p of ['mosquitto', 'pocketsphinx', 'pocketsphinx-en-us', 'espeak-ng', 'alsa-utils', 'sox', 'bubblewrap']) {
    assert.ok(packages.includes(p), `${p} in 00-packages`);
  }
  assert.ok(!packages.includes('nodejs'), 'Node.js comes from the official tarball, not Debian (18)');
});
