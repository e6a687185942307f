#!/usr/bin/env node
// Release signatures and the device's trusted release keys.
//
// A release bundle carries manifest.sig next to manifest.json: one or more
// ed25519 signatures (node:crypto, RFC 8032) over the exact bytes of
// manifest.json, prefixed with SIGNATURE_CONTEXT. manifest.json lists the
// sha256 and size of every other file and verify-bundle.mjs refuses any file it
// does not list, so a valid signature covers the whole release.
//
//   manifest.sig = { "format": 1,
//                    "signatures": [ { "algorithm": "ed25519", "keyId": "<16 hex>", "signature": "<base64>" } ] }
//
// Trust lives on the device, never in the bundle being installed: the public
// keys in /etc/homeagent/keys/*.pub (PEM, SubjectPublicKeyInfo). The first key
// comes from the image (pi-gen stage) or from `sudo homeagent keys add FILE`.
// A release signed by a trusted key may carry new keys (keys/<id>.pub, listed
// in manifest.keys.add) and retire old ones (manifest.keys.retire); install.sh
// enrolls them only after that release is installed (rotation).
//
// Used by image/install.sh on the device (the copy next to the running
// install.sh, never the one inside the bundle being checked), by
// scripts/bundle.mjs and scripts/keygen.mjs when releases are made, and by
// `homeagent keys ...`. Dependency-free on purpose: it runs before `npm ci`.
//
// Usage: node release-keys.mjs COMMAND [--keys-dir DIR] ...
//   verify [--allow-unsigned] BUNDLE_DIR   exit 0: prints "signed-by=<id>" or "signed-by=-" (allowed unsigned)
//                                          exit 2: refused, "reason=<reason>" on stdout, the message on stderr
//   enroll RELEASE_DIR                     add the keys a verified release carries, retire the ones it retires
//   add FILE...                            trust public key FILE (prints its id)
//   list                                   "<id> <file>" per trusted key
//   remove ID                              stop trusting key ID
// Keys directory: --keys-dir, else $HOMEAGENT_KEYS_DIR, else $HOMEAGENT_ROOT/etc/homeagent/keys (default /etc/homeagent/keys).
// Exit codes: 0 done, 1 usage or environment error, 2 refused (bad signature, bad key file).
import { createHash, createPrivateKey, createPublicKey, sign, verify } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, readFileSync, readdirSync, realpathSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

/** Format of manifest.sig this module writes and understands. */
export const SIGNATURE_FORMAT = 1;
/** Name of the signature file at the top of a bundle (not listed in the manifest). */
export const SIGNATURE_FILE = 'manifest.sig';
/** Domain separation: what is signed is this prefix followed by the bytes of manifest.json. */
export const SIGNATURE_CONTEXT = 'homeagent-release-manifest-v1\n';
/** Key ids: the first 16 hex digits of the sha256 of the key's DER SubjectPublicKeyInfo. */
export const KEY_ID_PATTERN = /^[0-9a-f]{16}$/;

/** A key problem; `code` is KEY_INVALID (not an ed25519 key of the expected kind) or KEYS_DIR (the keys directory cannot be written). */
export class ReleaseKeyError extends Error {
  /**
   * @param {string} code
   * @param {string} message
   */
  constructor(code, message) {
    super(message);
    this.name = 'ReleaseKeyError';
    this.code = code;
  }
}

/**
 * The keys directory: explicit, else $HOMEAGENT_KEYS_DIR, else <$HOMEAGENT_ROOT>/etc/homeagent/keys.
 * @param {string} [explicit]
 * @returns {string}
 */
export function defaultKeysDir(explicit) {
  if (explicit) return explicit;
  if (process.env.HOMEAGENT_KEYS_DIR) return process.env.HOMEAGENT_KEYS_DIR;
  const root = (process.env.HOMEAGENT_ROOT ?? '/').replace(/\/+$/, '');
  return `${root}/etc/homeagent/keys`;
}

/**
 * Id of a public key.
 * @param {import('node:crypto').KeyObject} publicKey
 * @returns {string}
 */
export function keyId(publicKey) {
  return createHash('sha256').update(publicKey.export({ type: 'spki', format: 'der' })).digest('hex').slice(0, 16);
}

/**
 * Parse an ed25519 public key (PEM SubjectPublicKeyInfo). Throws ReleaseKeyError KEY_INVALID.
 * @param {string | Buffer} pem
 * @param {string} [what] where it came from, for the message
 * @returns {{ id: string, key: import('node:crypto').KeyObject, pem: string }}
 */
export function parsePublicKey(pem, what = 'key') {
  const text = String(pem);
  if (/PRIVATE KEY/.test(text)) throw new ReleaseKeyError('KEY_INVALID', `${what} is a PRIVATE key; give the public key (.pub) instead, and keep the private key off the device`);
  let key;
  try {
    key = createPublicKey({ key: text, format: 'pem' });
  } catch (err) {
    throw new ReleaseKeyError('KEY_INVALID', `${what} is not a PEM public key (npm run keygen makes one): ${err instanceof Error ? err.message : String(err)}`);
  }
  if (key.asymmetricKeyType !== 'ed25519') throw new ReleaseKeyError('KEY_INVALID', `${what} is an ${key.asymmetricKeyType} key; release keys are ed25519 (npm run keygen)`);
  const normalised = String(key.export({ type: 'spki', format: 'pem' }));
  return { id: keyId(key), key, pem: normalised };
}

/**
 * Read an ed25519 private key file (PEM PKCS#8, as `npm run keygen` writes). Throws ReleaseKeyError KEY_INVALID.
 * @param {string} file
 * @returns {{ id: string, key: import('node:crypto').KeyObject }}
 */
export function readPrivateKey(file) {
  let text;
  try {
    text = readFileSync(file, 'utf8');
  } catch (err) {
    throw new ReleaseKeyError('KEY_INVALID', `cannot read signing key ${file}: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (!/PRIVATE KEY/.test(text)) throw new ReleaseKeyError('KEY_INVALID', `${file} is not a private key; sign with the .key file that npm run keygen wrote (the .pub goes to the device)`);
  let key;
  try {
    key = createPrivateKey({ key: text, format: 'pem' });
  } catch (err) {
    throw new ReleaseKeyError('KEY_INVALID', `${file} is not a PEM private key: ${err instanceof Error ? err.message : String(err)}`);
  }
  if (key.asymmetricKeyType !== 'ed25519') throw new ReleaseKeyError('KEY_INVALID', `${file} is an ${key.asymmetricKeyType} key; release keys are ed25519 (npm run keygen)`);
  return { id: keyId(createPublicKey(key)), key };
}

/**
 * Sign the bytes of manifest.json with each private key.
 * @param {Buffer} manifestBytes
 * @param {import('node:crypto').KeyObject[]} privateKeys
 * @returns {{ format: number, signatures: { algorithm: 'ed25519', keyId: string, signature: string }[] }}
 */
export function signManifest(manifestBytes, privateKeys) {
  const message = Buffer.concat([Buffer.from(SIGNATURE_CONTEXT, 'utf8'), manifestBytes]);
  return {
    format: SIGNATURE_FORMAT,
    signatures: privateKeys.map((k) => ({ algorithm: 'ed25519', keyId: keyId(createPublicKey(k)), signature: sign(null, message, k).toString('base64') })),
  };
}

/**
 * The trusted keys in a directory: every *.pub file that parses. Files that do
 * not parse are reported in `warnings` and not trusted. A missing directory is
 * no keys.
 * @param {string} keysDir
 * @returns {{ keys: { id: string, file: string, key: import('node:crypto').KeyObject }[], warnings: string[] }}
 */
export function loadTrustedKeys(keysDir) {
  /** @type {{ id: string, file: string, key: import('node:crypto').KeyObject }[]} */
  const keys = [];
  /** @type {string[]} */
  const warnings = [];
  if (!existsSync(keysDir)) return { keys, warnings };
  for (const name of readdirSync(keysDir).sort()) {
    if (!name.endsWith('.pub')) continue;
    const file = join(keysDir, name);
    try {
      const parsed = parsePublicKey(readFileSync(file), file);
      if (!keys.some((k) => k.id === parsed.id)) keys.push({ id: parsed.id, file, key: parsed.key });
    } catch (err) {
      warnings.push(`ignoring ${file}: ${err instanceof Error ? err.message : String(err)}`);
    }
  }
  return { keys, warnings };
}

/**
 * @typedef {'unsigned' | 'malformed' | 'no-trusted-keys' | 'untrusted-key' | 'bad-signature'} RefusalReason
 * @typedef {{ ok: true, keyId: string, keyFile: string, warnings: string[] }
 *   | { ok: false, reason: RefusalReason, message: string, warnings: string[] }} SignatureCheck
 */

/**
 * Check an unpacked bundle's manifest.sig against the trusted keys. Passes when
 * at least one signature is by a trusted key and verifies, and no signature by
 * a trusted key fails to verify. Reasons: unsigned (no manifest.sig),
 * malformed, no-trusted-keys (nothing enrolled yet), untrusted-key (signed, but
 * by no key this device trusts), bad-signature (a trusted key's signature does
 * not match the manifest: it was changed after signing).
 * @param {string} bundleDir
 * @param {string} keysDir
 * @returns {SignatureCheck}
 */
export function verifyReleaseSignature(bundleDir, keysDir) {
  const { keys, warnings } = loadTrustedKeys(keysDir);
  const enroll = `enroll the public key of whoever signs your releases first: sudo homeagent keys add KEY.pub (before the first install, when there is no homeagent command yet: sudo node homeagent-<version>/image/release-keys.mjs add KEY.pub)`;
  const sigFile = join(bundleDir, SIGNATURE_FILE);
  if (!existsSync(sigFile)) {
    return { ok: false, reason: 'unsigned', message: `the bundle is not signed (no ${SIGNATURE_FILE}); make releases with npm run bundle -- --key YOUR.key`, warnings };
  }
  let sig;
  try {
    sig = JSON.parse(readFileSync(sigFile, 'utf8'));
  } catch (err) {
    return { ok: false, reason: 'malformed', message: `${SIGNATURE_FILE} is not JSON: ${err instanceof Error ? err.message : String(err)}`, warnings };
  }
  if (!sig || typeof sig !== 'object' || sig.format !== SIGNATURE_FORMAT || !Array.isArray(sig.signatures) || sig.signatures.length === 0) {
    return { ok: false, reason: 'malformed', message: `${SIGNATURE_FILE} is not a format ${SIGNATURE_FORMAT} signature list`, warnings };
  }
  let manifestBytes;
  try {
    manifestBytes = readFileSync(join(bundleDir, 'manifest.json'));
  } catch {
    return { ok: false, reason: 'malformed', message: 'manifest.json is missing', warnings };
  }
  if (keys.length === 0) {
    return { ok: false, reason: 'no-trusted-keys', message: `no trusted release keys in ${keysDir}, so no signature can be checked; ${enroll}`, warnings };
  }
  const message = Buffer.concat([Buffer.from(SIGNATURE_CONTEXT, 'utf8'), manifestBytes]);
  /** @type {{ id: string, file: string } | undefined} */
  let good;
  /** @type {string[]} */
  const signers = [];
  for (const s of sig.signatures) {
    if (!s || typeof s !== 'object' || s.algorithm !== 'ed25519' || typeof s.keyId !== 'string' || typeof s.signature !== 'string') {
      return { ok: false, reason: 'malformed', message: `${SIGNATURE_FILE} has an entry that is not an ed25519 signature`, warnings };
    }
    signers.push(s.keyId);
    const trusted = keys.find((k) => k.id === s.keyId);
    if (!trusted) continue;
    const bytes = Buffer.from(s.signature, 'base64');
    let valid = false;
    try {
      valid = bytes.length === 64 && verify(null, message, trusted.key, bytes);
    } catch {
      valid = false;
    }
    if (!valid) {
      return {
        ok: false,
        reason: 'bad-signature',
        message: `the signature by trusted key ${s.keyId} does not match manifest.json: the bundle was changed after it was signed`,
        warnings,
      };
    }
    good ??= { id: trusted.id, file: trusted.file };
  }
  if (!good) {
    return {
      ok: false,
      reason: 'untrusted-key',
      message: `the bundle is signed by ${signers.join(', ')}, which ${signers.length === 1 ? 'is' : 'are'} not among the trusted keys in ${keysDir} (${keys.map((k) => k.id).join(', ')}); if you trust it, sudo homeagent keys add KEY.pub`,
      warnings,
    };
  }
  return { ok: true, keyId: good.id, keyFile: good.file, warnings };
}

/** Write a file atomically (temporary name, then rename) with `mode`. */
function writeAtomic(file, text, mode) {
  const tmp = `${file}.new-${process.pid}`;
  writeFileSync(tmp, text, { mode });
  chmodSync(tmp, mode);
  renameSync(tmp, file);
}

function ensureKeysDir(keysDir) {
  try {
    mkdirSync(keysDir, { recursive: true, mode: 0o755 });
  } catch (err) {
    throw new ReleaseKeyError('KEYS_DIR', `cannot create ${keysDir} (run as root: sudo homeagent keys ...): ${err instanceof Error ? err.message : String(err)}`);
  }
}

/**
 * Trust a public key: written as <keysDir>/<id>.pub (0644). Adding a key that
 * is already trusted changes nothing. Throws ReleaseKeyError.
 * @param {string} keysDir
 * @param {string | Buffer} pem
 * @param {string} [what] where the key came from, for messages
 * @returns {{ id: string, file: string, added: boolean }}
 */
export function addTrustedKey(keysDir, pem, what = 'key') {
  const parsed = parsePublicKey(pem, what);
  const existing = loadTrustedKeys(keysDir).keys.find((k) => k.id === parsed.id);
  if (existing) return { id: parsed.id, file: existing.file, added: false };
  ensureKeysDir(keysDir);
  const file = join(keysDir, `${parsed.id}.pub`);
  try {
    writeAtomic(file, parsed.pem, 0o644);
  } catch (err) {
    throw new ReleaseKeyError('KEYS_DIR', `cannot write ${file} (run as root: sudo homeagent keys ...): ${err instanceof Error ? err.message : String(err)}`);
  }
  return { id: parsed.id, file, added: true };
}

/**
 * Stop trusting key `id` (every *.pub file in keysDir that holds it).
 * @param {string} keysDir
 * @param {string} id
 * @returns {{ removed: string[], remaining: number }}
 */
export function removeTrustedKey(keysDir, id) {
  const { keys } = loadTrustedKeys(keysDir);
  const matching = keys.filter((k) => k.id === id);
  for (const k of matching) rmSync(k.file, { force: true });
  return { removed: matching.map((k) => k.file), remaining: keys.length - matching.length };
}

/**
 * The key changes a release carries: manifest.keys = { add: [id...], retire: [id...] },
 * each added key in keys/<id>.pub. Throws ReleaseKeyError KEY_INVALID when they are not well formed.
 * @param {string} releaseDir
 * @returns {{ add: { id: string, pem: string }[], retire: string[] }}
 */
export function releaseKeyChanges(releaseDir) {
  const manifest = JSON.parse(readFileSync(join(releaseDir, 'manifest.json'), 'utf8'));
  const keys = manifest?.keys;
  if (keys === undefined) return { add: [], retire: [] };
  const ids = (v, what) => {
    if (v === undefined) return [];
    if (!Array.isArray(v) || !v.every((x) => typeof x === 'string' && KEY_ID_PATTERN.test(x))) throw new ReleaseKeyError('KEY_INVALID', `manifest keys.${what} is not a list of key ids`);
    return v;
  };
  if (keys === null || typeof keys !== 'object') throw new ReleaseKeyError('KEY_INVALID', 'manifest "keys" is not an object');
  const add = ids(keys.add, 'add').map((id) => {
    const file = join(releaseDir, 'keys', `${id}.pub`);
    const parsed = parsePublicKey(readFileSync(file), `keys/${id}.pub`);
    if (parsed.id !== id) throw new ReleaseKeyError('KEY_INVALID', `keys/${id}.pub holds key ${parsed.id}, not ${id}`);
    return { id, pem: parsed.pem };
  });
  return { add, retire: ids(keys.retire, 'retire') };
}

/**
 * Rotation: enroll the keys a release (already verified and installed) carries
 * and retire the ones it retires. A retirement that would leave no trusted
 * key, or that retires a key the same release adds, is skipped with a warning.
 * @param {string} releaseDir
 * @param {string} keysDir
 * @returns {{ added: string[], retired: string[], warnings: string[] }}
 */
export function enrollReleaseKeys(releaseDir, keysDir) {
  const changes = releaseKeyChanges(releaseDir);
  /** @type {string[]} */
  const added = [];
  /** @type {string[]} */
  const retired = [];
  /** @type {string[]} */
  const warnings = [];
  for (const k of changes.add) {
    if (addTrustedKey(keysDir, k.pem, `keys/${k.id}.pub`).added) added.push(k.id);
  }
  for (const id of changes.retire) {
    if (changes.add.some((k) => k.id === id)) {
      warnings.push(`not retiring ${id}: the same release adds it`);
      continue;
    }
    const { keys } = loadTrustedKeys(keysDir);
    if (!keys.some((k) => k.id === id)) continue;
    if (keys.length <= 1) {
      warnings.push(`not retiring ${id}: it is the last trusted key`);
      continue;
    }
    removeTrustedKey(keysDir, id);
    retired.push(id);
  }
  return { added, retired, warnings };
}

const USAGE = `usage: release-keys.mjs [--keys-dir DIR] COMMAND
  verify [--allow-unsigned] BUNDLE_DIR   check manifest.sig against the trusted keys
  enroll RELEASE_DIR                     add/retire the keys a verified release carries
  add FILE...                            trust the ed25519 public key(s) in FILE (PEM)
  list                                   the trusted keys
  remove ID                              stop trusting key ID
keys directory: --keys-dir, $HOMEAGENT_KEYS_DIR, else $HOMEAGENT_ROOT/etc/homeagent/keys`;

/** The loud warning --allow-unsigned prints. */
export const UNSIGNED_WARNING = [
  '!!! --allow-unsigned: the signature check is OFF. Anyone who can hand this box a bundle can run code on it as root.',
  '!!! This is for development only; never use it on a box in real use.',
];

async function main(argv) {
  let keysDir;
  let allowUnsigned = false;
  /** @type {string[]} */
  const rest = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    if (a === '--keys-dir') {
      keysDir = argv[++i];
      if (!keysDir) {
        process.stderr.write(`${USAGE}\n`);
        return 1;
      }
    } else if (a === '--allow-unsigned') allowUnsigned = true;
    else if (a === '-h' || a === '--help') {
      process.stdout.write(`${USAGE}\n`);
      return 0;
    } else if (a.startsWith('-')) {
      process.stderr.write(`unknown option ${a}\n${USAGE}\n`);
      return 1;
    } else rest.push(a);
  }
  const dir = defaultKeysDir(keysDir);
  const [cmd, ...args] = rest;
  const out = (s) => process.stdout.write(`${s}\n`);
  const err = (s) => process.stderr.write(`${s}\n`);
  switch (cmd) {
    case 'verify': {
      if (args.length !== 1) break;
      const r = verifyReleaseSignature(args[0], dir);
      for (const w of r.warnings) err(`warning: ${w}`);
      if (r.ok) {
        out(`signed-by=${r.keyId}`);
        return 0;
      }
      if (allowUnsigned) {
        for (const line of UNSIGNED_WARNING) err(line);
        err(`!!! The signature check would have refused this bundle: ${r.message}`);
        out('signed-by=-');
        return 0;
      }
      out(`reason=${r.reason}`);
      err(r.message);
      return 2;
    }
    case 'enroll': {
      if (args.length !== 1) break;
      const r = enrollReleaseKeys(args[0], dir);
      for (const w of r.warnings) err(`warning: ${w}`);
      for (const id of r.added) err(`now trusting release key ${id} (carried by the release)`);
      for (const id of r.retired) err(`no longer trusting release key ${id} (retired by the release)`);
      out(`added=${r.added.join(',') || '-'} retired=${r.retired.join(',') || '-'}`);
      return 0;
    }
    case 'add': {
      if (args.length === 0) break;
      for (const file of args) {
        let text;
        try {
          text = readFileSync(file);
        } catch (e) {
          err(`cannot read ${file}: ${e instanceof Error ? e.message : String(e)}`);
          return 1;
        }
        const r = addTrustedKey(dir, text, file);
        out(r.added ? `trusted key ${r.id} (${r.file})` : `key ${r.id} is already trusted (${r.file})`);
      }
      return 0;
    }
    case 'list': {
      if (args.length !== 0) break;
      const { keys, warnings } = loadTrustedKeys(dir);
      for (const w of warnings) err(`warning: ${w}`);
      if (keys.length === 0) err(`no trusted release keys in ${dir}`);
      for (const k of keys) out(`${k.id} ${k.file}`);
      return 0;
    }
    case 'remove': {
      if (args.length !== 1 || !KEY_ID_PATTERN.test(args[0])) break;
      const r = removeTrustedKey(dir, args[0]);
      if (r.removed.length === 0) {
        err(`key ${args[0]} is not trusted in ${dir}`);
        return 1;
      }
      out(`removed key ${args[0]} (${r.removed.join(', ')})`);
      if (r.remaining === 0) err(`warning: no trusted release keys are left in ${dir}; every update will be refused until you add one`);
      return 0;
    }
    default:
      break;
  }
  err(USAGE);
  return 1;
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
    (e) => {
      process.stderr.write(`release-keys: ${e instanceof Error ? e.message : String(e)}\n`);
      process.exitCode = e instanceof ReleaseKeyError && e.code === 'KEY_INVALID' ? 2 : 1;
    },
  );
}
