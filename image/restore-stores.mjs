#!/usr/bin/env node
// Put back the stores a release migrated, for `homeagent rollback` (image/rollback.sh)
// and the automatic rollback after a failed update (image/lib.sh).
//
// When a release opens a store of an older schema version it first keeps a
// copy (src/kernel/store-version.ts) in
//   <data dir>/backups/pre-migration/<store>-v<old version>-<YYYYMMDDTHHMMSSmmmZ>[-N]/<path in the data dir>
// Those copies are the stores as the release before left them. For each store
// with a copy made at or after SINCE (when the release being left became
// current), the earliest such copy is put back; the store files that were in
// place (with their -wal/-shm/-journal and .tmp companions) are moved, not
// deleted, into
//   <data dir>/backups/rolled-back/<YYYYMMDDTHHMMSSZ>-from-<release>/<path in the data dir>
// together with a README.txt saying what happened. Nothing is deleted.
//
// Usage:
//   node restore-stores.mjs restore --data-dir DIR --since YYYYMMDDTHHMMSS[mmm]Z --from RELEASE [--dry-run]
//   node restore-stores.mjs undo --data-dir DIR --aside DIR
//     (a rollback whose target did not start: the moved stores go back in place)
// Output: one line on stdout for the shell scripts,
//   restore: `restored=<store>:v<version>,... aside=<DIR>` (`restored=- aside=-` when nothing was migrated)
//   undo:    `returned=<number of files>`
// and one line per action on stderr. Exit 0 done (also: nothing to do), 1 usage
// or IO error (a restore that fails half-way moves back what it had moved).
// Run as root, the files put back get the owner of the data directory (the
// service user). Dependency-free on purpose: it runs from the release scripts.
import { chownSync, copyFileSync, existsSync, mkdirSync, readdirSync, realpathSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** A copy folder's name: store, version, timestamp, optional uniqueness suffix. */
export const COPY_FOLDER = /^([a-z][a-z0-9-]*)-v(\d+)-(\d{8}T\d{6}(?:\d{3})?Z)(?:-(\d+))?$/;
/** Companion files moved together with a store file. */
const COMPANIONS = ['', '-wal', '-shm', '-journal', '.tmp'];
const TIMESTAMP = /^\d{8}T\d{6}(?:\d{3})?Z$/;

/** A timestamp with milliseconds (`...SSZ` becomes `...SS000Z`), so stamps of both forms compare as strings. */
export function withMillis(stamp) {
  return stamp.length === 16 ? `${stamp.slice(0, 15)}000Z` : stamp;
}

/** `YYYYMMDDTHHMMSSZ` (UTC) for `ms`: the rolled-back folder's date. */
export function timestamp(ms = Date.now()) {
  return new Date(ms).toISOString().replace(/[-:]/g, '').replace(/\.\d{3}Z$/, 'Z');
}

/** Every regular file under `dir`, as paths relative to it. */
function filesUnder(dir) {
  const out = [];
  const walk = (d) => {
    for (const e of readdirSync(d, { withFileTypes: true })) {
      const p = join(d, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) out.push(relative(dir, p));
    }
  };
  walk(dir);
  return out.sort();
}

/**
 * The copies to put back: per store, the earliest copy made at or after
 * `since`. Returns [{store, version, stamp, copy (folder), files (relative paths)}].
 */
export function chooseCopies(dataDir, since) {
  const root = join(dataDir, 'backups', 'pre-migration');
  if (!existsSync(root)) return [];
  const byStore = new Map();
  for (const name of readdirSync(root)) {
    const m = COPY_FOLDER.exec(name);
    if (!m || withMillis(m[3]) < withMillis(since)) continue;
    const c = { store: m[1], version: Number(m[2]), stamp: withMillis(m[3]), n: Number(m[4] ?? 1), copy: join(root, name) };
    const best = byStore.get(c.store);
    if (!best || c.stamp < best.stamp || (c.stamp === best.stamp && c.n < best.n)) byStore.set(c.store, c);
  }
  return [...byStore.values()]
    .sort((a, b) => a.store.localeCompare(b.store))
    .map(({ n: _n, ...c }) => ({ ...c, files: filesUnder(c.copy).filter((f) => !f.split(sep).includes('..')) }));
}

/** Give `path` the data directory's owner when running as root (the service must own its stores). */
function ownLike(path, dataDir) {
  if (typeof process.getuid !== 'function' || process.getuid() !== 0) return;
  const st = statSync(dataDir);
  chownSync(path, st.uid, st.gid);
}

function mkdirOwned(dir, dataDir) {
  const missing = [];
  for (let d = dir; !existsSync(d); d = dirname(d)) missing.unshift(d);
  for (const d of missing) {
    mkdirSync(d);
    ownLike(d, dataDir);
  }
}

/**
 * Put the chosen copies back (see the header). Returns {restored, aside}.
 * `log(line)` is told each action.
 */
export function restore({ dataDir, since, from, dryRun = false, now = Date.now(), log = () => {} }) {
  const chosen = chooseCopies(dataDir, since);
  if (chosen.length === 0) {
    log(`no store was migrated since ${from} became current (${since}); the stores stay as they are`);
    return { restored: [], aside: null };
  }
  const restored = chosen.map((c) => ({ store: c.store, version: c.version, copy: c.copy, files: c.files }));
  if (dryRun) return { restored, aside: null };
  const stamp = timestamp(now);
  let aside = join(dataDir, 'backups', 'rolled-back', `${stamp}-from-${from}`);
  for (let i = 2; existsSync(aside); i++) aside = join(dataDir, 'backups', 'rolled-back', `${stamp}-from-${from}-${i}`);
  mkdirOwned(aside, dataDir);
  const lines = [];
  try {
    putBack(chosen, { dataDir, aside, from, lines, log });
  } catch (err) {
    log(`putting back the stores failed (${err instanceof Error ? err.message : String(err)}); moving the files of ${from} back`);
    undo({ dataDir, aside, log });
    throw err;
  }
  const readme = [
    `These are the stores ${from} had written, moved here on ${new Date(now).toISOString()} by a rollback.`,
    `They were replaced by the copies kept before ${from} migrated them:`,
    ...lines.map((l) => `  ${l}`),
    `To use them again, start ${from} (or a newer release) with these files back in the data directory.`,
    '',
  ].join('\n');
  writeFileSync(join(aside, 'README.txt'), readme);
  ownLike(join(aside, 'README.txt'), dataDir);
  return { restored, aside };
}

/** Move the store files in place to `aside` and copy each chosen copy's files in; `lines` gets one line per file put back. */
function putBack(chosen, { dataDir, aside, from, lines, log }) {
  for (const c of chosen) {
    for (const rel of c.files) {
      const target = join(dataDir, rel);
      for (const suffix of COMPANIONS) {
        if (!existsSync(target + suffix)) continue;
        mkdirOwned(dirname(join(aside, rel)), dataDir);
        renameSync(target + suffix, join(aside, rel + suffix));
        log(`kept ${rel + suffix} (written by ${from}) in ${aside}`);
      }
      mkdirOwned(dirname(target), dataDir);
      const tmp = `${target}.restore-${process.pid}`;
      copyFileSync(join(c.copy, rel), tmp);
      ownLike(tmp, dataDir);
      renameSync(tmp, target);
      log(`put back ${rel} (${c.store} store, schema version ${c.version}) from ${c.copy}`);
      lines.push(`${rel}: the ${c.store} store at schema version ${c.version}, from ${c.copy}`);
    }
  }
}

/** Move the files kept in `aside` back into the data directory (a rollback that did not start). */
export function undo({ dataDir, aside, log = () => {} }) {
  const returned = [];
  for (const rel of filesUnder(aside)) {
    if (rel === 'README.txt') continue;
    const target = join(dataDir, rel);
    mkdirOwned(dirname(target), dataDir);
    renameSync(join(aside, rel), target);
    returned.push(rel);
    log(`returned ${rel} from ${aside}`);
  }
  return { returned };
}

const FLAGS = { '--data-dir': 'dataDir', '--since': 'since', '--from': 'from', '--aside': 'aside' };

function main(argv) {
  const [cmd, ...rest] = argv;
  const opts = {};
  for (let i = 0; i < rest.length; i++) {
    const a = rest[i];
    if (a === '--dry-run') opts.dryRun = true;
    else if (a in FLAGS) opts[FLAGS[a]] = rest[++i];
    else throw new Error(`unknown argument ${a}`);
  }
  const log = (line) => process.stderr.write(`homeagent-stores: ${line}\n`);
  if (!opts.dataDir) throw new Error('--data-dir is required');
  if (cmd === 'restore') {
    if (!opts.since || !TIMESTAMP.test(opts.since)) throw new Error('--since YYYYMMDDTHHMMSS[mmm]Z is required');
    if (!opts.from) throw new Error('--from RELEASE is required');
    if (!existsSync(opts.dataDir)) {
      log(`no data directory ${opts.dataDir}; nothing to restore`);
      return { restored: [], aside: null };
    }
    return restore({ dataDir: opts.dataDir, since: opts.since, from: opts.from, dryRun: opts.dryRun === true, log });
  }
  if (cmd === 'undo') {
    if (!opts.aside) throw new Error('--aside DIR is required');
    return undo({ dataDir: opts.dataDir, aside: opts.aside, log });
  }
  throw new Error('usage: restore-stores.mjs restore --data-dir DIR --since YYYYMMDDTHHMMSS[mmm]Z --from RELEASE [--dry-run] | undo --data-dir DIR --aside DIR');
}

if (process.argv[1] && realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url))) {
  try {
    const r = main(process.argv.slice(2));
    const line =
      'returned' in r
        ? `returned=${r.returned.length}`
        : `restored=${r.restored.map((c) => `${c.store}:v${c.version}`).join(',') || '-'} aside=${r.aside ?? '-'}`;
    process.stdout.write(`${line}\n`);
  } catch (err) {
    process.stderr.write(`homeagent-stores: error: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  }
}
