/**
 * A bad bundle (checksum mismatch, missing or extra files, symlinks, no
 * manifest, not a tarball) is refused by image/install.sh before anything is
 * installed: the running release, its unit and the service stay as they were.
 */
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { runUpdate } from '../../src/service/update.js';
import { deviceOptions, makeBundles, makeDevice, releaseDirs, stagingLeftovers, tempDir } from './release-fixture.js';

const work = tempDir('ha-bad-bundle-');
let bundles: Map<string, string> = new Map<string, string>();
before(async () => {
  bundles = await makeBundles(work, ['1.0.0', '1.1.0']);
});
after(() => rmSync(work, { recursive: true, force: true }));

function bundle(version: string): string {
  const b = bundles.get(version);
  assert.ok(b, `bundle ${version}`);
  return b;
}
/** Repack a bundle after `edit` changed its unpacked tree (manifest NOT updated). */
function tamper(version: string, name: string, edit: (top: string) => void): string {
  const dir = join(work, `tamper-${name}`);
  mkdirSync(dir, { recursive: true });
  assert.equal(spawnSync('tar', ['-xzf', bundle(version), '-C', dir]).status, 0);
  const top = join(dir, `homeagent-${version}`);
  edit(top);
  const out = join(work, `${name}.tar.gz`);
  assert.equal(spawnSync('tar', ['-czf', out, '-C', dir, `homeagent-${version}`]).status, 0);
  return out;
}

/** Rewrite the manifest after an edit so checksums match again (to test the other rules). */
function rewriteManifest(top: string, mutate: (files: Array<{ path: string; size: number; sha256: string }>) => void): void {
  const m = JSON.parse(readFileSync(join(top, 'manifest.json'), 'utf8')) as { files: Array<{ path: string; size: number; sha256: string }> };
  mutate(m.files);
  writeFileSync(join(top, 'manifest.json'), JSON.stringify(m));
}

test('bad bundles are refused and the running release is untouched', async (t) => {
  const d = makeDevice(work);
  assert.equal((await runUpdate(bundle('1.0.0'), deviceOptions(d))).ok, true);
  const snapshot = { current: d.current(), started: d.started().length, npm: d.npmCalls().length, releases: releaseDirs(d) };
  const unitBefore = readFileSync(join(d.root, 'etc/systemd/system/homeagent.service'), 'utf8');

  const cases: Array<[string, () => string, RegExp]> = [
    ['checksum mismatch', () => tamper('1.1.0', 'checksum', (top) => writeFileSync(join(top, 'dist/src/cli/main.js'), 'process.exit(1)\n')), /checksum mismatch: dist\/src\/cli\/main\.js|size mismatch: dist\/src\/cli\/main\.js/],
    ['same size, different bytes', () => tamper('1.1.0', 'flip', (top) => {
      const f = join(top, 'data/personal.md');
      const text = readFileSync(f, 'utf8');
      writeFileSync(f, text.replace('persona', 'PERSONA'));
    }), /checksum mismatch: data\/personal\.md/],
    ['a listed file missing', () => tamper('1.1.0', 'missing', (top) => rmSync(join(top, 'adapters/ollama.lua'))), /missing file: adapters\/ollama\.lua/],
    ['a required file missing (and unlisted)', () => tamper('1.1.0', 'required', (top) => {
      rmSync(join(top, 'systemd/homeagent.service'));
      rewriteManifest(top, (files) => files.splice(files.findIndex((f) => f.path === 'systemd/homeagent.service'), 1));
    }), /required file missing: systemd\/homeagent\.service/],
    ['a file not in the manifest', () => tamper('1.1.0', 'extra', (top) => writeFileSync(join(top, 'dist/evil.js'), 'x')), /file not in manifest: dist\/evil\.js/],
    ['a symlink', () => tamper('1.1.0', 'symlink', (top) => symlinkSync('/etc/shadow', join(top, 'data/link'))), /not a regular file .*data\/link/],
    ['no manifest', () => tamper('1.1.0', 'nomanifest', (top) => rmSync(join(top, 'manifest.json'))), /manifest\.json missing/],
    ['not a tarball', () => {
      const f = join(work, 'garbage.tar.gz');
      writeFileSync(f, 'this is not gzip');
      return f;
    }, /not a readable \.tar\.gz/],
  ];
  for (const [name, make, problem] of cases) {
    await t.test(name, async () => {
      const r = await runUpdate(make(), deviceOptions(d));
      assert.equal(r.ok, false);
      assert.equal(r.outcome, 'refused', r.log);
      assert.equal(r.code, 'BUNDLE_REFUSED');
      assert.equal(r.exitCode, 2);
      assert.match(r.log, problem);
      assert.match(r.message, /bundle refused/);
      assert.equal(d.current(), snapshot.current);
      assert.equal(d.started().length, snapshot.started, 'no restart');
      assert.equal(d.npmCalls().length, snapshot.npm, 'no npm ci');
      assert.deepEqual(releaseDirs(d), snapshot.releases);
      assert.equal(readFileSync(join(d.root, 'etc/systemd/system/homeagent.service'), 'utf8'), unitBefore);
      assert.deepEqual(stagingLeftovers(d), []);
    });
  }
});
