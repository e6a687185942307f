/**
 * Benchmark runner: `npm run bench` runs every test/bench/<name>.ts, `npm run
 * bench -- NAME [NAME...]` the named ones. Each bench exports `run()` and
 * prints its figures as `<area>.<figure>: <value> <unit>` lines; each runs in
 * its own process so one bench's memory never skews another's.
 */
import { readdirSync } from 'node:fs';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const dir = path.dirname(fileURLToPath(import.meta.url));
const all = readdirSync(dir)
  .filter((f) => f.endsWith('.ts') && f !== 'run.ts' && !f.startsWith('_'))
  .map((f) => f.replace(/\.ts$/, ''))
  .sort();
const wanted = process.argv.slice(2).filter((a) => a !== '--');
const unknown = wanted.filter((w) => !all.includes(w));
if (unknown.length) {
  console.error(`unknown bench: ${unknown.join(', ')}; available: ${all.join(', ')}`);
  process.exit(2);
}
let failed = 0;
for (const name of wanted.length ? wanted : all) {
  console.log(`# bench ${name}`);
  const file = path.join(dir, `${name}.ts`);
  const r = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', `const m = await import(${JSON.stringify(file)}); await m.run(); process.exit(0);`], {
    stdio: 'inherit',
    env: { ...process.env, NODE_ENV: 'production', HOMEAGENT_LOG_LEVEL: process.env.HOMEAGENT_LOG_LEVEL ?? 'silent' },
  });
  if (r.status !== 0) {
    failed++;
    console.log(`# bench ${name} failed (exit ${r.status})`);
  }
}
process.exit(failed ? 1 : 0);
