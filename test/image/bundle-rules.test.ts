/**
 * scripts/bundle.mjs packing rules on small projects: compiled JS with its
 * non-TS assets, exclusions, modes, a reproducible archive, and refusals
 * (type errors, symlinks, missing required files, unusable versions).
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createBundle } from '../../scripts/bundle.mjs';
import { makeProject, repoRoot, runBundleCli, tempDir, testKey } from './release-fixture.js';

const work = tempDir('ha-bundle-rules-');
after(() => rmSync(work, { recursive: true, force: true }));

/** Every bundle here is signed with the fixtures' test key (a release must be signed). */
const signed = { keys: [testKey().privateKeyFile] };

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

/** A tiny TypeScript project that compiles with the repository's typescript. */
function tinyProject(name: string, version: string): string {
  const dir = makeProject(join(work, name), version);
  rmSync(join(dir, 'dist'), { recursive: true, force: true });
  symlinkSync(join(repoRoot, 'node_modules'), join(dir, 'node_modules'));
  mkdirSync(join(dir, 'src', 'cli'), { recursive: true });
  mkdirSync(join(dir, 'src', 'web'), { recursive: true });
  writeFileSync(join(dir, 'src', 'cli', 'main.ts'), `const args: string[] = [];\nexport const version: string = ${JSON.stringify(version)};\nexport default args;\n`);
  writeFileSync(join(dir, 'src', 'web', 'index.html'), '<!doctype html><title>HomeAgent</title>\n');
  writeFileSync(join(dir, 'src', 'web', '.eslintcache'), 'junk');
  writeFileSync(
    join(dir, 'tsconfig.json'),
    JSON.stringify({
      compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', outDir: 'dist', rootDir: '.', strict: true, types: [], sourceMap: true },
      include: ['src/**/*.ts'],
    }),
  );
  // Things that must never be bundled.
  writeFileSync(join(dir, 'data', '.DS_Store'), 'junk');
  mkdirSync(join(dir, 'image', 'pi-gen', 'stage-homeagent', '00-install', 'files'), { recursive: true });
  writeFileSync(join(dir, 'image', 'pi-gen', 'stage-homeagent', '00-install', 'files', 'node-v20.0.0-linux-arm64.tar.xz'), 'big');
  writeFileSync(join(dir, 'image', 'pi-gen', 'stage-homeagent', '00-install', 'files', 'homeagent-0.0.1.tar.gz'), 'old');
  return dir;
}

test('compiled JS, non-TS assets next to it, exclusions, and a reproducible archive', { timeout: 300_000 }, async () => {
  const project = tinyProject('tiny', '2.0.0');
  const saved = process.env.SOURCE_DATE_EPOCH;
  process.env.SOURCE_DATE_EPOCH = '1700000000';
  try {
    const a = await createBundle({ project, outDir: join(work, 'tiny-a'), ...signed });
    const b = await createBundle({ project, outDir: join(work, 'tiny-b'), ...signed });
    assert.equal(a.version, '2.0.0');
    assert.equal(sha256(a.file), sha256(b.file), 'same input, same bytes (ed25519 signatures are deterministic)');
    assert.deepEqual(a.signedBy, [testKey().id]);
    const inside = tarList(a.file).map((e) => e.replace(/^homeagent-2\.0\.0\//, ''));
    assert.ok(inside.includes('dist/src/cli/main.js'));
    assert.ok(inside.includes('dist/src/cli/main.js.map'));
    assert.ok(inside.includes('dist/src/web/index.html'), 'assets copied next to the JS');
    assert.ok(inside.includes('manifest.sig'), 'signed');
    assert.ok(!inside.some((e) => e.endsWith('main.ts')));
    assert.ok(!inside.some((e) => e.includes('.DS_Store') || e.includes('.eslintcache')));
    assert.ok(!inside.some((e) => e.includes('/files/')), 'pi-gen files/ (tarballs) excluded');
    const manifest = JSON.parse(readFileSync(join(extract(a.file, 'tiny-extracted'), 'homeagent-2.0.0', 'manifest.json'), 'utf8')) as Manifest;
    assert.equal(manifest.builtAt, new Date(1_700_000_000_000).toISOString());
    // The project tree got no dist/ (tsc wrote to the staging directory).
    assert.equal(existsSync(join(project, 'dist')), false);
  } finally {
    if (saved === undefined) delete process.env.SOURCE_DATE_EPOCH;
    else process.env.SOURCE_DATE_EPOCH = saved;
  }
});

test('a project that does not type-check, holds a symlink, or lacks a required file is not bundled', { timeout: 300_000 }, async () => {
  const broken = tinyProject('broken', '3.0.0');
  writeFileSync(join(broken, 'src', 'cli', 'main.ts'), 'export const n: number = "not a number";\n');
  await assert.rejects(createBundle({ project: broken, outDir: join(work, 'broken-out'), ...signed }), (err: Error & { code?: string }) => {
    assert.equal(err.code, 'BUNDLE_FAILED');
    assert.match(err.message, /tsc failed/);
    return true;
  });
  assert.equal(existsSync(join(work, 'broken-out', 'homeagent-3.0.0.tar.gz')), false);

  const linked = makeProject(join(work, 'linked'), '3.1.0');
  symlinkSync('/etc/passwd', join(linked, 'data', 'passwd'));
  await assert.rejects(createBundle({ project: linked, outDir: work, build: false, ...signed }), /refusing to bundle a symlink/);

  const noCli = makeProject(join(work, 'nocli'), '3.2.0');
  rmSync(join(noCli, 'dist', 'src', 'cli', 'main.js'));
  await assert.rejects(createBundle({ project: noCli, outDir: work, build: false, ...signed }), /required file missing: dist\/src\/cli\/main\.js/);

  const badVersion = makeProject(join(work, 'badversion'), '../4.0.0');
  await assert.rejects(createBundle({ project: badVersion, outDir: work, build: false, ...signed }), /not usable as a release name/);

  const cli = runBundleCli(['--bogus']);
  assert.equal(cli.status, 1);
  assert.match(cli.stderr, /unknown argument --bogus/);
});
