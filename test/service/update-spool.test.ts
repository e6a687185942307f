/**
 * The update spool's root helper (src/service/update-spool.ts) on its own:
 * `homeagent update-spool` with nothing requested, a request that is not
 * JSON, a bundle in the spool that is a link (never followed), a bundle that
 * is not the one requested, and status.json never written through a link.
 * The install itself (image/install.sh through update.ts) is covered with the
 * WebUI in test/webui/health.test.ts.
 */
import { test, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync, existsSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { processSpool, spoolPaths, writeJsonAtomic } from '../../src/service/update-spool.js';

const root = mkdtempSync(path.join(os.tmpdir(), 'ha-spool-'));
after(() => rmSync(root, { recursive: true, force: true }));
let n = 0;
function spool() {
  const p = spoolPaths(path.join(root, `s${++n}`));
  mkdirSync(p.dir);
  return p;
}

test('the CLI: nothing requested is a no-op; a request that is not JSON is taken, reported failed, exit 1', () => {
  const p = spool();
  const cli = (dir: string) => spawnSync(process.execPath, ['--import', 'tsx', path.resolve('src/cli/main.ts'), 'update-spool', '--spool', dir], { encoding: 'utf8' });
  const none = cli(p.dir);
  assert.equal(none.status, 0, none.stderr);
  assert.equal(none.stdout.trim(), 'nothing requested');
  assert.equal(existsSync(p.status), false);
  writeFileSync(p.request, '{not json');
  const bad = cli(p.dir);
  assert.equal(bad.status, 1);
  assert.match(bad.stdout, /^failed: the request could not be read: .*not valid JSON/);
  assert.equal(existsSync(p.request), false, 'claimed, so the .path unit does not start it again');
  assert.equal(JSON.parse(readFileSync(p.status, 'utf8')).state, 'failed');
});

test('a bundle that is a link is not followed; a bundle that is not the one requested is refused', async () => {
  const p = spool();
  const secret = path.join(root, 'secret');
  writeFileSync(secret, 'root-only');
  symlinkSync(secret, p.bundle);
  writeJsonAtomic(p.request, { version: 1, id: 'a', action: 'install', requested_at: 0 });
  const s = await processSpool(p.dir, { scriptsDir: '/nonexistent' });
  assert.equal(s?.state, 'failed');
  assert.match(s!.message!, /no bundle to install in the spool/);
  assert.equal(readFileSync(secret, 'utf8'), 'root-only');

  writeFileSync(p.bundle, 'some bytes');
  writeJsonAtomic(p.request, { version: 1, id: 'b', action: 'install', sha256: 'f'.repeat(64), requested_at: 0 });
  const s2 = await processSpool(p.dir, { scriptsDir: '/nonexistent' });
  assert.equal(s2?.state, 'failed');
  assert.match(s2!.message!, /not the one the request is for/);
  assert.equal(existsSync(p.bundle), false, 'a refused bundle leaves the spool');
  // An action it does not know.
  writeJsonAtomic(p.request, { version: 1, id: 'c', action: 'format-disk', requested_at: 0 });
  assert.match((await processSpool(p.dir))!.message!, /not one this release understands/);
});

test('status.json replaces a link planted in its place instead of writing through it', async () => {
  const p = spool();
  const target = path.join(root, 'passwd');
  writeFileSync(target, 'untouched');
  symlinkSync(target, p.status);
  writeJsonAtomic(p.request, { version: 1, id: 'd', action: 'install', requested_at: 0 });
  await processSpool(p.dir);
  assert.equal(readFileSync(target, 'utf8'), 'untouched');
  assert.equal(JSON.parse(readFileSync(p.status, 'utf8')).id, 'd');
});
