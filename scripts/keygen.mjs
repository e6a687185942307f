#!/usr/bin/env node
// `npm run keygen`: make an ed25519 key pair for signing release bundles
// (node:crypto, RFC 8032).
//
//   <name>.key   private key, PEM PKCS#8, mode 0600: give it to `npm run bundle -- --key FILE`;
//                keep it off the devices and out of git
//   <name>.pub   public key, PEM SubjectPublicKeyInfo: the devices trust it
//                (image pi-gen stage, `sudo homeagent keys add FILE`, or a release made with --add-key)
//
// Usage: node scripts/keygen.mjs [--out-dir DIR] [--name NAME]
//   --out-dir DIR   default $XDG_CONFIG_HOME/homeagent/release-keys (~/.config/homeagent/release-keys)
//   --name NAME     file name without extension; default homeagent-release-<key id>
// Never overwrites an existing file. Prints the two paths and the key id.
import { generateKeyPairSync } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { keyId } from '../image/release-keys.mjs';

/** A refused key generation (bad arguments, a file that exists). `code` is KEYGEN_FAILED. */
class KeygenError extends Error {
  constructor(message) {
    super(message);
    this.name = 'KeygenError';
    this.code = 'KEYGEN_FAILED';
  }
}

/** Default directory for release keys: $XDG_CONFIG_HOME/homeagent/release-keys. */
export function defaultKeyDir() {
  return join(process.env.XDG_CONFIG_HOME || join(homedir(), '.config'), 'homeagent', 'release-keys');
}

/**
 * Make a key pair and write it. Throws KeygenError (code KEYGEN_FAILED) when a
 * file exists or the name is unusable.
 * @param {{ outDir?: string, name?: string }} [options]
 * @returns {{ id: string, privateKeyFile: string, publicKeyFile: string }}
 */
export function generateReleaseKeyPair(options = {}) {
  const outDir = resolve(options.outDir ?? defaultKeyDir());
  const { publicKey, privateKey } = generateKeyPairSync('ed25519');
  const id = keyId(publicKey);
  const name = options.name ?? `homeagent-release-${id}`;
  if (!/^[A-Za-z0-9][A-Za-z0-9._-]{0,100}$/.test(name)) throw new KeygenError(`--name ${JSON.stringify(name)}: use letters, digits, '.', '_' and '-'`);
  const privateKeyFile = join(outDir, `${name}.key`);
  const publicKeyFile = join(outDir, `${name}.pub`);
  for (const f of [privateKeyFile, publicKeyFile]) if (existsSync(f)) throw new KeygenError(`${f} exists; not overwriting a key (choose another --name)`);
  mkdirSync(outDir, { recursive: true, mode: 0o700 });
  writeFileSync(privateKeyFile, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600, flag: 'wx' });
  chmodSync(privateKeyFile, 0o600);
  writeFileSync(publicKeyFile, publicKey.export({ type: 'spki', format: 'pem' }), { mode: 0o644, flag: 'wx' });
  return { id, privateKeyFile, publicKeyFile };
}

function parseArgs(argv) {
  const opts = {};
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--out-dir' || a === '--name') {
      const v = argv[++i];
      if (v === undefined) throw new KeygenError(`${a} needs a value`);
      if (a === '--out-dir') opts.outDir = v;
      else opts.name = v;
    } else throw new KeygenError(`unknown argument ${a} (usage: keygen.mjs [--out-dir DIR] [--name NAME])`);
  }
  return opts;
}

function main() {
  const r = generateReleaseKeyPair(parseArgs(process.argv.slice(2)));
  process.stdout.write(`${r.privateKeyFile}\n${r.publicKeyFile}\n`);
  process.stderr.write(
    [
      `keygen: ed25519 release key ${r.id}`,
      `  private: ${r.privateKeyFile} (sign: npm run bundle -- --key ${r.privateKeyFile}; keep it secret, off the devices)`,
      `  public:  ${r.publicKeyFile} (enroll on a device: sudo homeagent keys add ${basename(r.publicKeyFile)}, or put it in the image)`,
      '',
    ].join('\n'),
  );
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    main();
  } catch (err) {
    process.stderr.write(`keygen: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exitCode = 1;
  }
}
