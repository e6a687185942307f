/**
 * `npm run bundle` (scripts/bundle.mjs) on the real project: compiled with tsc
 * into a temporary staging directory and packed with its manifest. Nothing is
 * written into the repository. (The packing rules are in bundle-rules.test.ts.)
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { verifyReleaseSignature } from '../../image/release-keys.mjs';
import { verifyBundleDir } from '../../image/verify-bundle.mjs';
import { makeDevice, repoRoot, runBundleCli, tempDir, testKey } from './release-fixture.js';

const work = tempDir('ha-bundle-');
after(() => rmSync(work, { recursive: true, force: true }));

const sha256 = (file: string): string => createHash('sha256').update(readFileSync(file)).digest('hex');

interface Manifest {
  format: number;
  name: string;
  version: string;
  node: string | null;
  builtAt: string;
  files: Array<{ path: string; size: number; sha256: string }>;
}

function extract(tarball: string, name: string): string {
  const dir = join(work, name);
  mkdirSync(dir);
  const r = spawnSync('tar', ['-xzf', tarball, '-C', dir], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return dir;
}

function tarList(tarball: string): string[] {
  const r = spawnSync('tar', ['-tzf', tarball], { encoding: 'utf8' });
  assert.equal(r.status, 0, r.stderr);
  return r.stdout.split('\n').filter((l) => l !== '');
}

/** Files below dir, relative, sorted. */
function filesBelow(dir: string, rel = ''): string[] {
  if (!existsSync(dir)) return [];
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    const r = rel === '' ? name : `${rel}/${name}`;
    if (statSync(p).isDirectory()) out.push(...filesBelow(p, r));
    else out.push(r);
  }
  return out;
}

test('npm run bundle builds the real project into homeagent-<version>.tar.gz with a manifest', { timeout: 600_000 }, async () => {
  const pkg = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { version: string; engines?: { node?: string } };
  const tarballsInRepo = (): string[] => readdirSync(repoRoot).filter((n) => n.endsWith('.tar.gz')).sort();
  const rootBefore = tarballsInRepo();
  const distBefore = existsSync(join(repoRoot, 'dist'));
  const outDir = join(work, 'out');

  // Signed with a key given through the environment (as a CI secret would be).
  const r = runBundleCli(['--out-dir', outDir], { HOMEAGENT_SIGNING_KEY: testKey().privateKeyFile });
  assert.equal(r.status, 0, r.stderr);
  assert.match(r.stderr, new RegExp(`signed by ${testKey().id}`));
  const tarball = join(outDir, `homeagent-${pkg.version}.tar.gz`);
  assert.equal(r.stdout.trim(), tarball);
  assert.deepEqual(readdirSync(outDir), [`homeagent-${pkg.version}.tar.gz`]);

  // One top-level directory; the parts a release needs; no sources, tests or node_modules.
  const top = `homeagent-${pkg.version}/`;
  const entries = tarList(tarball);
  assert.ok(entries.every((e) => e.startsWith(top)), 'one top-level directory');
  const inside = new Set(entries.map((e) => e.slice(top.length)));
  for (const f of [
    'manifest.json',
    'package.json',
    'package-lock.json',
    'dist/src/cli/main.js',
    'dist/src/service/sd-notify.js',
    'dist/src/service/update.js',
    'systemd/homeagent.service',
    'systemd/homeagent.sysusers',
    'systemd/homeagent.tmpfiles',
    'image/install.sh',
    'image/rollback.sh',
    'image/lib.sh',
    'image/verify-bundle.mjs',
    'image/release-keys.mjs',
    'image/restore-stores.mjs',
    'manifest.sig',
    'image/README.md',
    'image/pi-gen/stage-homeagent/00-install/00-run-chroot.sh',
  ]) {
    assert.ok(inside.has(f), `${f} in the bundle`);
  }
  for (const f of filesBelow(join(repoRoot, 'adapters'))) assert.ok(inside.has(`adapters/${f}`), `adapters/${f}`);
  for (const f of filesBelow(join(repoRoot, 'data')).filter((f) => !f.split('/').some((s) => s.startsWith('.')))) {
    assert.ok(inside.has(`data/${f}`), `data/${f}`);
  }
  const forbidden = [...inside].filter((e) => /(^|\/)node_modules\//.test(e) || e.startsWith('test/') || e.startsWith('src/') || /\.tar\.gz$/.test(e));
  assert.deepEqual(forbidden, []);
  assert.ok(![...inside].some((e) => e.startsWith('dist/') && e.endsWith('.ts') && !e.endsWith('.d.ts')), 'no TypeScript sources in dist/');

  // Owner 0:0 and executable scripts.
  const verbose = spawnSync('tar', ['-tvzf', tarball], { encoding: 'utf8' }).stdout.split('\n');
  const line = (p: string): string => verbose.find((l) => l.endsWith(`${top}${p}`)) ?? '';
  assert.match(line('image/install.sh'), /^-rwxr-xr-x 0\/0 /);
  assert.match(line('package.json'), /^-rw-r--r-- 0\/0 /);

  // The manifest lists every file with its size and sha256 and passes the device-side check.
  const dir = extract(tarball, 'real');
  const release = join(dir, top);
  const manifest = JSON.parse(readFileSync(join(release, 'manifest.json'), 'utf8')) as Manifest;
  assert.equal(manifest.format, 1);
  assert.equal(manifest.name, 'homeagent');
  assert.equal(manifest.version, pkg.version);
  assert.equal(manifest.node, pkg.engines?.node ?? null);
  assert.ok(!Number.isNaN(Date.parse(manifest.builtAt)));
  const listed = manifest.files.map((f) => f.path);
  assert.deepEqual(listed, [...listed].sort(), 'sorted');
  assert.deepEqual(listed, filesBelow(release).filter((f) => f !== 'manifest.json' && f !== 'manifest.sig'));
  assert.deepEqual((manifest as Manifest & { keys?: unknown }).keys, { add: [], retire: [] });
  for (const f of manifest.files) {
    assert.equal(f.sha256, sha256(join(release, f.path)), f.path);
    assert.equal(f.size, statSync(join(release, f.path)).size, f.path);
  }
  const verified = await verifyBundleDir(release);
  assert.deepEqual(verified, { ok: true, version: pkg.version, files: manifest.files.length });
  // ... and its signature verifies against a device that trusts the test key.
  const signature = verifyReleaseSignature(release, makeDevice(work).keysDir);
  assert.equal(signature.ok, true, JSON.stringify(signature));
  // The built CLI is the one from this tree.
  assert.equal(readFileSync(join(release, 'package.json'), 'utf8'), readFileSync(join(repoRoot, 'package.json'), 'utf8'));
  assert.equal(readFileSync(join(release, 'systemd/homeagent.service'), 'utf8'), readFileSync(join(repoRoot, 'systemd/homeagent.service'), 'utf8'));

  // Nothing left in the repository: no tarball.
  assert.deepEqual(tarballsInRepo(), rootBefore);
  // tsc wrote into the staging directory: a tree without dist/ still has none.
  if (!distBefore) assert.equal(existsSync(join(repoRoot, 'dist')), false);
});
