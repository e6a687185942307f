/**
 * Every shell script in image/ (installer, rollback, CLI wrapper, the pi-gen
 * stage) passes shellcheck; pi-gen cannot run here, so this and the
 * temporary-root tests are what guard its scripts.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { repoRoot } from './release-fixture.js';

function shellFiles(dir: string): string[] {
  const out: string[] = [];
  for (const name of readdirSync(dir).sort()) {
    const p = join(dir, name);
    if (statSync(p).isDirectory()) {
      if (name !== 'files') out.push(...shellFiles(p));
    } else if (name.endsWith('.sh')) {
      out.push(p);
    }
  }
  return out;
}

const imageDir = join(repoRoot, 'image');
const scripts = shellFiles(imageDir);

test('image/ has the scripts the release needs', () => {
  const names = scripts.map((s) => relative(imageDir, s));
  for (const expected of [
    'install.sh',
    'rollback.sh',
    'lib.sh',
    'homeagent-cli.sh',
    'pi-gen/stage-homeagent/prerun.sh',
    'pi-gen/stage-homeagent/00-install/00-run.sh',
    'pi-gen/stage-homeagent/00-install/00-run-chroot.sh',
  ]) {
    assert.ok(names.includes(expected), `${expected} missing from ${names.join(', ')}`);
  }
});

test('every .sh in image/ passes shellcheck', () => {
  const r = spawnSync('shellcheck', ['--external-sources', '--severity=style', ...scripts], { cwd: repoRoot, encoding: 'utf8', timeout: 120_000 });
  assert.equal(r.error, undefined, 'shellcheck must be installed (Debian package shellcheck)');
  assert.equal(r.status, 0, r.stdout + r.stderr);
});

test('pi-gen EXPORT_IMAGE (a sourced bash fragment) passes shellcheck', () => {
  const file = join(imageDir, 'pi-gen', 'stage-homeagent', 'EXPORT_IMAGE');
  const r = spawnSync('shellcheck', ['--shell=bash', '--severity=style', file], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(r.status, 0, r.stdout + r.stderr);
});
