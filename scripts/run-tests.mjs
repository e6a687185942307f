#!/usr/bin/env node
// Runs every test file under test/ with Node's test runner and tsx
// (Node 20's runner neither expands globs nor finds .ts files by itself).
// Usage: node scripts/run-tests.mjs [path-substring ...]
import { existsSync, readdirSync, statSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';

const root = path.resolve(path.dirname(new URL(import.meta.url).pathname), '..');
const files = [];
(function walk(dir) {
  for (const name of readdirSync(dir)) {
    const p = path.join(dir, name);
    if (statSync(p).isDirectory()) walk(p);
    else if (name.endsWith('.test.ts')) files.push(path.relative(root, p));
  }
})(path.join(root, 'test'));
files.sort();
// The fixtures (recordings, the test home, conversations) live beside the clone, not in it (README, Tests).
const shared = path.resolve(root, '..', 'shared', 'fixtures');
if (!existsSync(shared)) {
  console.error(`warning: ${shared} is missing: the tests that read the fixtures (the test home, recordings, conversations) will fail. Link the project's shared folder: ln -s /path/to/shared ${path.resolve(root, '..', 'shared')}`);
}
const filters = process.argv.slice(2);
const selected = filters.length ? files.filter((f) => filters.some((x) => f.includes(x))) : files;
if (selected.length === 0) {
  console.error(`no test files match ${filters.join(' ')}`);
  process.exit(1);
}
const r = spawnSync(process.execPath, ['--import', 'tsx', '--test', '--test-timeout=180000', ...selected], {
  cwd: root,
  stdio: 'inherit',
  env: { ...process.env, NODE_ENV: 'test' },
});
process.exit(r.status ?? 1);
