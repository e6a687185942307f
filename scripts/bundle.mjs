#!/usr/bin/env node
// `npm run bundle`: build the firmware-style release bundle
//   homeagent-<version>.tar.gz
//     homeagent-<version>/
//       dist/               tsc output (+ non-TS assets copied from src/ and hal/)
//       adapters/ data/     Lua adapters, shipped defaults
//       plugins/            plugins shipped with the release (an example skill)
//       systemd/ image/     units, install/update/rollback scripts, pi-gen stage
//       package.json package-lock.json
//       keys/<id>.pub       release keys this release hands to the devices (--add-key; rotation)
//       manifest.json       {format, name, version, node, builtAt, commit, keys:{add,retire}, files:[{path,size,sha256}]}
//       manifest.sig        ed25519 signature(s) over manifest.json (image/release-keys.mjs)
//
// Every release is signed: --key FILE (or $HOMEAGENT_SIGNING_KEY) names the
// ed25519 private key (`npm run keygen` makes a pair); the device checks the
// signature against its own trusted keys (/etc/homeagent/keys) before it
// installs anything. --unsigned makes a development bundle that a device
// installs only with `homeagent update --allow-unsigned`.
//
// The JS is compiled into a temporary staging directory (tsc --outDir), so the
// working tree gets nothing but the tarball. The staged tree is checked with
// image/verify-bundle.mjs (the same check install.sh runs on the device) before
// it is packed. The archive is reproducible: sorted names, owner 0:0, one mtime
// (SOURCE_DATE_EPOCH, else the last commit's time, else now), gzip without a
// timestamp.
//
// Usage: node scripts/bundle.mjs --key FILE [--out-dir DIR] [--project DIR] [--no-build]
//                                [--add-key PUB]... [--retire-key ID]... | --unsigned
//   --key FILE        ed25519 private key (PEM) to sign with; repeat to sign with several
//                     (default: $HOMEAGENT_SIGNING_KEY)
//   --unsigned        no signature: a development bundle (devices refuse it without --allow-unsigned)
//   --add-key PUB     ship public key PUB in the release: devices that install it trust PUB from then on
//   --retire-key ID   devices that install this release stop trusting key ID (never their last key)
//   --out-dir DIR     where the tarball goes (default: the project directory)
//   --project DIR     project to bundle (default: this repository)
//   --no-build        use the project's existing dist/ instead of running tsc
import { spawn, spawnSync } from 'node:child_process';
import { createWriteStream, chmodSync, copyFileSync, existsSync, lstatSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { createGzip } from 'node:zlib';

const here = dirname(fileURLToPath(import.meta.url));
const repoRoot = resolve(here, '..');

/** Top-level directories copied as they are (those that exist). */
const COPY_DIRS = ['adapters', 'data', 'plugins', 'systemd', 'image'];
/** Top-level files copied as they are (all required). */
const COPY_FILES = ['package.json', 'package-lock.json'];
/** Source roots whose non-TypeScript assets (html, json, sql, lua, ...) go next to the compiled JS. */
const ASSET_ROOTS = ['src', 'hal'];
/** Never bundled: build leftovers, images and archives (e.g. the pi-gen stage's files/). */
const EXCLUDE = /(^|\/)(node_modules|\.git)(\/|$)|(^|\/)\.[^/]*$|\.(tar\.gz|tgz|tar\.xz|img|zip)$/;

class BundleError extends Error {
  constructor(message) {
    super(message);
    this.name = 'BundleError';
    this.code = 'BUNDLE_FAILED';
  }
}

const USAGE = 'usage: bundle.mjs --key FILE [--out-dir DIR] [--project DIR] [--no-build] [--add-key PUB]... [--retire-key ID]... | --unsigned';

function parseArgs(argv) {
  const opts = { outDir: undefined, project: repoRoot, build: true, keys: [], unsigned: false, addKeys: [], retireKeys: [] };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--no-build') opts.build = false;
    else if (a === '--unsigned') opts.unsigned = true;
    else if (a === '--out-dir' || a === '--project' || a === '--key' || a === '--add-key' || a === '--retire-key') {
      const v = argv[++i];
      if (v === undefined) throw new BundleError(`${a} needs a value (${USAGE})`);
      if (a === '--out-dir') opts.outDir = resolve(v);
      else if (a === '--project') opts.project = resolve(v);
      else if (a === '--key') opts.keys.push(resolve(v));
      else if (a === '--add-key') opts.addKeys.push(resolve(v));
      else opts.retireKeys.push(v);
    } else throw new BundleError(`unknown argument ${a} (${USAGE})`);
  }
  if (opts.keys.length === 0 && !opts.unsigned && process.env.HOMEAGENT_SIGNING_KEY) opts.keys.push(resolve(process.env.HOMEAGENT_SIGNING_KEY));
  opts.outDir ??= opts.project;
  return opts;
}

/**
 * The signing keys, the keys to ship and to retire, checked before anything is built.
 * @param {{ keys?: string[], unsigned?: boolean, addKeys?: string[], retireKeys?: string[] }} options
 */
function signingPlan(keysModule, options) {
  const keyFiles = options.keys ?? [];
  if (options.unsigned && keyFiles.length > 0) throw new BundleError('--unsigned and --key exclude each other');
  if (!options.unsigned && keyFiles.length === 0) {
    throw new BundleError(
      'no signing key: a release must be signed. Pass --key FILE (or set HOMEAGENT_SIGNING_KEY) with the private key from `npm run keygen`; ' +
        'its .pub goes to the device (image/README.md, "Signing releases"). For a development bundle only: --unsigned',
    );
  }
  const wrap = (fn) => {
    try {
      return fn();
    } catch (err) {
      throw new BundleError(err instanceof Error ? err.message : String(err));
    }
  };
  const signers = keyFiles.map((f) => wrap(() => keysModule.readPrivateKey(f)));
  const adds = (options.addKeys ?? []).map((f) =>
    wrap(() => {
      let text;
      try {
        text = readFileSync(f);
      } catch (err) {
        throw new Error(`cannot read --add-key ${f}: ${err instanceof Error ? err.message : String(err)}`);
      }
      return keysModule.parsePublicKey(text, f);
    }),
  );
  const retire = [...new Set(options.retireKeys ?? [])];
  for (const id of retire) {
    if (!keysModule.KEY_ID_PATTERN.test(id)) throw new BundleError(`--retire-key ${JSON.stringify(id)} is not a key id (16 hex digits, as \`homeagent keys list\` and npm run keygen print)`);
    if (adds.some((k) => k.id === id)) throw new BundleError(`--retire-key ${id} is also given with --add-key`);
  }
  return { signers, adds: [...new Map(adds.map((k) => [k.id, k])).values()], retire };
}

/** Copy `src` into `dst` recursively; `filter(relPath)` decides per file. Symlinks are refused. */
function copyTree(src, dst, filter, rel = '') {
  for (const name of readdirSync(src).sort()) {
    const relPath = rel === '' ? name : `${rel}/${name}`;
    if (EXCLUDE.test(relPath)) continue;
    const from = join(src, name);
    const st = lstatSync(from);
    if (st.isSymbolicLink()) throw new BundleError(`refusing to bundle a symlink: ${from}`);
    if (st.isDirectory()) {
      copyTree(from, join(dst, name), filter, relPath);
    } else if (st.isFile() && filter(relPath)) {
      mkdirSync(dst, { recursive: true });
      copyFileSync(from, join(dst, name));
    }
  }
}

/** Modes are normalised: scripts 0755, everything else 0644, directories 0755. */
function normaliseModes(dir) {
  for (const name of readdirSync(dir)) {
    const p = join(dir, name);
    const st = lstatSync(p);
    if (st.isDirectory()) {
      chmodSync(p, 0o755);
      normaliseModes(p);
    } else {
      const head = readFileSync(p).subarray(0, 2).toString('latin1');
      chmodSync(p, name.endsWith('.sh') || head === '#!' ? 0o755 : 0o644);
    }
  }
}

function sourceEpoch(project) {
  const env = process.env.SOURCE_DATE_EPOCH;
  if (env && /^\d+$/.test(env)) return Number(env);
  const git = spawnSync('git', ['log', '-1', '--format=%ct'], { cwd: project, encoding: 'utf8' });
  if (git.status === 0 && /^\d+\s*$/.test(git.stdout)) return Number(git.stdout.trim());
  return Math.floor(Date.now() / 1000);
}

function gitCommit(project) {
  const git = spawnSync('git', ['rev-parse', 'HEAD'], { cwd: project, encoding: 'utf8' });
  return git.status === 0 && /^[0-9a-f]{40}\s*$/.test(git.stdout) ? git.stdout.trim() : null;
}

function compile(project, outDir) {
  const tsconfig = join(project, 'tsconfig.json');
  if (!existsSync(tsconfig)) throw new BundleError(`no tsconfig.json in ${project}`);
  let tsc;
  try {
    tsc = createRequire(join(project, 'package.json')).resolve('typescript/bin/tsc');
  } catch {
    throw new BundleError(`typescript is not installed in ${project} (run npm ci)`);
  }
  process.stderr.write(`bundle: tsc -p tsconfig.json --outDir ${outDir}\n`);
  const r = spawnSync(process.execPath, [tsc, '-p', tsconfig, '--outDir', outDir], { cwd: project, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 });
  if (r.status !== 0) {
    const diagnostics = `${r.stdout ?? ''}${r.stderr ?? ''}`.trim().split('\n');
    const shown = diagnostics.slice(0, 20).join('\n  ');
    const more = diagnostics.length > 20 ? `\n  ... ${diagnostics.length - 20} more lines` : '';
    throw new BundleError(`tsc failed (exit ${r.status ?? r.signal}); a release must type-check:\n  ${shown}${more}`);
  }
  for (const root of ASSET_ROOTS) {
    const src = join(project, root);
    if (existsSync(src)) copyTree(src, join(outDir, root), (rel) => !rel.endsWith('.ts'));
  }
}

async function packTar(stagingDir, topName, epoch, outFile) {
  const tar = spawn(
    'tar',
    ['--create', '--file=-', '--format=gnu', '--sort=name', '--owner=0', '--group=0', '--numeric-owner', `--mtime=@${epoch}`, '-C', stagingDir, topName],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let stderr = '';
  tar.stderr.on('data', (d) => (stderr += d));
  const exited = new Promise((resolveExit, reject) => {
    tar.on('error', reject);
    tar.on('close', (code) => (code === 0 ? resolveExit() : reject(new BundleError(`tar failed (${code}): ${stderr.trim()}`))));
  });
  await Promise.all([pipeline(tar.stdout, createGzip({ level: 9 }), createWriteStream(outFile)), exited]);
}

/**
 * Build the bundle. Returns the tarball path, version, file count and the ids
 * of the keys that signed it (none for `unsigned`).
 * @param {{ project?: string, outDir?: string, build?: boolean, keys?: string[], unsigned?: boolean, addKeys?: string[], retireKeys?: string[] }} options
 * @returns {Promise<{ file: string, version: string, files: number, signedBy: string[] }>}
 */
export async function createBundle(options = {}) {
  const project = resolve(options.project ?? repoRoot);
  const outDir = resolve(options.outDir ?? project);
  const build = options.build ?? true;
  const verifier = await import(pathToFileURL(join(repoRoot, 'image', 'verify-bundle.mjs')).href);
  const keysModule = await import(pathToFileURL(join(repoRoot, 'image', 'release-keys.mjs')).href);
  const plan = signingPlan(keysModule, options);

  const pkg = JSON.parse(readFileSync(join(project, 'package.json'), 'utf8'));
  const version = pkg.version;
  if (typeof version !== 'string' || !verifier.VERSION_PATTERN.test(version)) throw new BundleError(`package.json version ${JSON.stringify(version)} is not usable as a release name`);
  const topName = `homeagent-${version}`;
  const staging = mkdtempSync(join(tmpdir(), 'homeagent-bundle-'));
  try {
    const top = join(staging, topName);
    mkdirSync(top);
    if (build) {
      compile(project, join(top, 'dist'));
    } else {
      const dist = join(project, 'dist');
      if (!existsSync(dist)) throw new BundleError(`--no-build: ${dist} does not exist`);
      copyTree(dist, join(top, 'dist'), () => true);
    }
    for (const d of COPY_DIRS) {
      if (existsSync(join(project, d))) copyTree(join(project, d), join(top, d), () => true);
    }
    for (const f of COPY_FILES) {
      if (!existsSync(join(project, f))) throw new BundleError(`${f} is missing in ${project}`);
      copyFileSync(join(project, f), join(top, f));
    }
    if (plan.adds.length > 0) {
      mkdirSync(join(top, 'keys'));
      for (const k of plan.adds) writeFileSync(join(top, 'keys', `${k.id}.pub`), k.pem);
    }
    normaliseModes(top);

    const files = [];
    for (const e of verifier.walk(top)) {
      if (e.kind !== 'file') continue;
      files.push({ path: e.path, size: lstatSync(join(top, e.path)).size, sha256: await verifier.sha256File(join(top, e.path)) });
    }
    const epoch = sourceEpoch(project);
    const manifest = {
      format: verifier.MANIFEST_FORMAT,
      name: 'homeagent',
      version,
      node: pkg.engines?.node ?? null,
      builtAt: new Date(epoch * 1000).toISOString(),
      commit: gitCommit(project),
      keys: { add: plan.adds.map((k) => k.id), retire: plan.retire },
      files,
    };
    const manifestBytes = Buffer.from(`${JSON.stringify(manifest, null, 2)}\n`, 'utf8');
    writeFileSync(join(top, 'manifest.json'), manifestBytes, { mode: 0o644 });
    if (plan.signers.length > 0) {
      const sig = keysModule.signManifest(manifestBytes, plan.signers.map((s) => s.key));
      writeFileSync(join(top, keysModule.SIGNATURE_FILE), `${JSON.stringify(sig, null, 2)}\n`, { mode: 0o644 });
    }

    const check = await verifier.verifyBundleDir(top);
    if (!check.ok) throw new BundleError(`the staged bundle does not verify:\n  ${check.problems.join('\n  ')}`);

    mkdirSync(outDir, { recursive: true });
    const outFile = join(outDir, `${topName}.tar.gz`);
    const partial = `${outFile}.partial-${process.pid}`;
    try {
      await packTar(staging, topName, epoch, partial);
      renameSync(partial, outFile);
    } finally {
      rmSync(partial, { force: true });
    }
    return { file: outFile, version, files: files.length, signedBy: plan.signers.map((s) => s.id) };
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const result = await createBundle(opts);
  process.stdout.write(`${result.file}\n`);
  process.stderr.write(`bundle: homeagent ${result.version}, ${result.files} files + manifest.json\n`);
  if (result.signedBy.length > 0) {
    process.stderr.write(`bundle: signed by ${result.signedBy.join(', ')}\n`);
  } else {
    process.stderr.write('bundle: !!! UNSIGNED development bundle: devices refuse it unless installed with `homeagent update --allow-unsigned` (development only)\n');
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err) => {
    process.stderr.write(`bundle: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  });
}
