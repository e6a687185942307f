#!/usr/bin/env node
// Verify an unpacked HomeAgent release bundle against its manifest.json.
//
// Used twice with the same rules:
// - by scripts/bundle.mjs before it packs a bundle (a bundle it makes always passes);
// - by image/install.sh on the device, BEFORE anything is installed: the copy of
//   this file next to the running install.sh is used, never the one inside the
//   bundle being checked.
//
// A bundle passes when: manifest.json is well formed (format 1, name
// "homeagent", a safe version string); every listed file exists, is a regular
// file, and has the listed size and sha256; no file exists that is not listed
// (only manifest.json itself and its signature manifest.sig, which
// release-keys.mjs checks); no symlinks, devices or sockets; every required
// file is present; package.json has the manifest's name and version; the
// optional "keys" (release keys added/retired, see release-keys.mjs) is well
// formed and each added key is in the bundle as keys/<id>.pub.
//
// Usage: node verify-bundle.mjs DIR
//   exit 0: prints the version on stdout
//   exit 2: the bundle is bad; one line per problem on stderr
//   exit 1: usage error
// Dependency-free on purpose: it runs before `npm ci`.
import { createHash } from 'node:crypto';
import { createReadStream, lstatSync, readFileSync, readdirSync, realpathSync } from 'node:fs';
import { join, posix } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Manifest format this verifier understands. */
export const MANIFEST_FORMAT = 1;

/** Files every release must contain (paths relative to the bundle directory). */
export const REQUIRED_FILES = Object.freeze([
  'manifest.json',
  'package.json',
  'package-lock.json',
  'dist/src/cli/main.js',
  'systemd/homeagent.service',
  'systemd/homeagent.sysusers',
  'systemd/homeagent.tmpfiles',
  'image/install.sh',
  'image/rollback.sh',
  'image/lib.sh',
  'image/verify-bundle.mjs',
  'image/release-keys.mjs',
  'image/restore-stores.mjs',
  'image/homeagent-cli.sh',
]);

/** Files at the top of a bundle that the manifest does not list: itself and its signature. */
export const UNLISTED_FILES = Object.freeze(['manifest.json', 'manifest.sig']);

/** Version strings become directory names: no slashes, no leading dot. */
export const VERSION_PATTERN = /^[0-9A-Za-z][0-9A-Za-z.+_-]{0,63}$/;

/**
 * sha256 of a file, hex.
 * @param {string} file
 * @returns {Promise<string>}
 */
export function sha256File(file) {
  return new Promise((resolve, reject) => {
    const hash = createHash('sha256');
    createReadStream(file)
      .on('error', reject)
      .on('data', (chunk) => hash.update(chunk))
      .on('end', () => resolve(hash.digest('hex')));
  });
}

/**
 * Every entry below `dir` as a POSIX relative path with its kind.
 * @param {string} dir
 * @returns {{ path: string, kind: 'file' | 'dir' | 'other' }[]}
 */
export function walk(dir) {
  /** @type {{ path: string, kind: 'file' | 'dir' | 'other' }[]} */
  const out = [];
  const visit = (rel) => {
    for (const name of readdirSync(join(dir, rel)).sort()) {
      const child = rel === '' ? name : `${rel}/${name}`;
      const st = lstatSync(join(dir, child));
      if (st.isDirectory()) {
        out.push({ path: child, kind: 'dir' });
        visit(child);
      } else {
        out.push({ path: child, kind: st.isFile() ? 'file' : 'other' });
      }
    }
  };
  visit('');
  return out;
}

function isSafeRelative(p) {
  return (
    typeof p === 'string' &&
    p !== '' &&
    !p.startsWith('/') &&
    !p.includes('\\') &&
    !p.includes('\0') &&
    posix.normalize(p) === p &&
    !p.split('/').some((seg) => seg === '..' || seg === '.' || seg === '')
  );
}

/**
 * Check an unpacked bundle directory.
 * @param {string} dir
 * @returns {Promise<{ ok: true, version: string, files: number } | { ok: false, problems: string[] }>}
 */
export async function verifyBundleDir(dir) {
  /** @type {string[]} */
  const problems = [];
  let manifest;
  try {
    manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
  } catch (err) {
    return { ok: false, problems: [`manifest.json missing or not JSON: ${err instanceof Error ? err.message : String(err)}`] };
  }
  if (manifest === null || typeof manifest !== 'object' || Array.isArray(manifest)) {
    return { ok: false, problems: ['manifest.json is not an object'] };
  }
  if (manifest.format !== MANIFEST_FORMAT) problems.push(`manifest format ${JSON.stringify(manifest.format)} is not ${MANIFEST_FORMAT}`);
  if (manifest.name !== 'homeagent') problems.push(`manifest name ${JSON.stringify(manifest.name)} is not "homeagent"`);
  const version = manifest.version;
  if (typeof version !== 'string' || !VERSION_PATTERN.test(version)) {
    problems.push(`manifest version ${JSON.stringify(version)} is not a valid version`);
  }
  if (!Array.isArray(manifest.files)) {
    problems.push('manifest has no "files" list');
    return { ok: false, problems };
  }

  /** @type {Map<string, { size: number, sha256: string }>} */
  const listed = new Map();
  for (const entry of manifest.files) {
    const p = entry && typeof entry === 'object' ? entry.path : undefined;
    if (!isSafeRelative(p)) {
      problems.push(`manifest lists an unsafe path: ${JSON.stringify(p)}`);
      continue;
    }
    if (UNLISTED_FILES.includes(p)) {
      problems.push(`manifest lists ${p}`);
      continue;
    }
    if (typeof entry.sha256 !== 'string' || !/^[0-9a-f]{64}$/.test(entry.sha256) || !Number.isSafeInteger(entry.size) || entry.size < 0) {
      problems.push(`manifest entry for ${p} has no valid sha256/size`);
      continue;
    }
    if (listed.has(p)) problems.push(`manifest lists ${p} twice`);
    listed.set(p, { size: entry.size, sha256: entry.sha256 });
  }

  let entries;
  try {
    entries = walk(dir);
  } catch (err) {
    problems.push(`cannot read bundle: ${err instanceof Error ? err.message : String(err)}`);
    return { ok: false, problems };
  }
  const present = new Set();
  for (const e of entries) {
    if (e.kind === 'other') problems.push(`not a regular file (symlink or special file): ${e.path}`);
    if (e.kind !== 'file') continue;
    present.add(e.path);
    if (!UNLISTED_FILES.includes(e.path) && !listed.has(e.path)) problems.push(`file not in manifest: ${e.path}`);
  }
  for (const [p, want] of listed) {
    if (!present.has(p)) {
      problems.push(`missing file: ${p}`);
      continue;
    }
    const file = join(dir, p);
    const size = lstatSync(file).size;
    if (size !== want.size) {
      problems.push(`size mismatch: ${p} (${size} bytes, manifest says ${want.size})`);
      continue;
    }
    const got = await sha256File(file);
    if (got !== want.sha256) problems.push(`checksum mismatch: ${p}`);
  }
  for (const req of REQUIRED_FILES) {
    if (!present.has(req)) problems.push(`required file missing: ${req}`);
  }
  if (manifest.keys !== undefined) {
    const keys = manifest.keys;
    const isIds = (v) => v === undefined || (Array.isArray(v) && v.every((x) => typeof x === 'string' && /^[0-9a-f]{16}$/.test(x)));
    if (keys === null || typeof keys !== 'object' || Array.isArray(keys) || !isIds(keys.add) || !isIds(keys.retire)) {
      problems.push('manifest "keys" is not { add: [key id...], retire: [key id...] }');
    } else {
      for (const id of keys.add ?? []) if (!listed.has(`keys/${id}.pub`)) problems.push(`manifest adds key ${id} but keys/${id}.pub is not in the bundle`);
    }
  }
  if (present.has('package.json')) {
    try {
      const pkg = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
      if (pkg.name !== manifest.name || pkg.version !== version) {
        problems.push(`package.json is ${pkg.name}@${pkg.version}, manifest says ${manifest.name}@${version}`);
      }
    } catch {
      problems.push('package.json is not JSON');
    }
  }
  if (problems.length > 0) return { ok: false, problems };
  return { ok: true, version, files: listed.size };
}

async function main(argv) {
  if (argv.length !== 1 || argv[0].startsWith('-')) {
    process.stderr.write('usage: verify-bundle.mjs DIR\n');
    return 1;
  }
  const result = await verifyBundleDir(argv[0]);
  if (!result.ok) {
    for (const p of result.problems) process.stderr.write(`bundle refused: ${p}\n`);
    return 2;
  }
  process.stdout.write(`${result.version}\n`);
  return 0;
}

function isMain() {
  try {
    return process.argv[1] !== undefined && realpathSync(process.argv[1]) === realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

if (isMain()) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (err) => {
      process.stderr.write(`verify-bundle: ${err instanceof Error ? err.message : String(err)}\n`);
      process.exitCode = 1;
    },
  );
}
