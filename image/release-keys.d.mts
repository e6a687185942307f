/** Types for image/release-keys.mjs (release signatures, trusted keys), imported by scripts and tests. */
import type { KeyObject } from 'node:crypto';

/** Format of manifest.sig. */
export const SIGNATURE_FORMAT: 1;
/** 'manifest.sig'. */
export const SIGNATURE_FILE: string;
/** Prefix signed before the bytes of manifest.json. */
export const SIGNATURE_CONTEXT: string;
/** 16 lowercase hex digits. */
export const KEY_ID_PATTERN: RegExp;
/** The lines --allow-unsigned prints. */
export const UNSIGNED_WARNING: readonly string[];

/** A key problem; `code` is KEY_INVALID (not an ed25519 key of the expected kind) or KEYS_DIR (the keys directory cannot be written). */
export class ReleaseKeyError extends Error {
  code: 'KEY_INVALID' | 'KEYS_DIR';
  constructor(code: string, message: string);
}

/** Why a bundle's signature was refused. */
export type RefusalReason = 'unsigned' | 'malformed' | 'no-trusted-keys' | 'untrusted-key' | 'bad-signature';
/** Result of {@link verifyReleaseSignature}. */
export type SignatureCheck =
  | { ok: true; keyId: string; keyFile: string; warnings: string[] }
  | { ok: false; reason: RefusalReason; message: string; warnings: string[] };

/** explicit, else $HOMEAGENT_KEYS_DIR, else <$HOMEAGENT_ROOT>/etc/homeagent/keys. */
export function defaultKeysDir(explicit?: string): string;
/** First 16 hex digits of sha256(DER SPKI). */
export function keyId(publicKey: KeyObject): string;
/** Parse an ed25519 PEM public key; throws ReleaseKeyError KEY_INVALID. */
export function parsePublicKey(pem: string | Buffer, what?: string): { id: string; key: KeyObject; pem: string };
/** Read an ed25519 PEM private key file; throws ReleaseKeyError KEY_INVALID. */
export function readPrivateKey(file: string): { id: string; key: KeyObject };
/** manifest.sig content for the bytes of manifest.json. */
export function signManifest(
  manifestBytes: Buffer,
  privateKeys: KeyObject[],
): { format: number; signatures: Array<{ algorithm: 'ed25519'; keyId: string; signature: string }> };
/** Every parsable *.pub in keysDir (others reported in warnings). */
export function loadTrustedKeys(keysDir: string): { keys: Array<{ id: string; file: string; key: KeyObject }>; warnings: string[] };
/** Check an unpacked bundle's manifest.sig against the keys in keysDir. */
export function verifyReleaseSignature(bundleDir: string, keysDir: string): SignatureCheck;
/** Trust a public key (written as <keysDir>/<id>.pub). */
export function addTrustedKey(keysDir: string, pem: string | Buffer, what?: string): { id: string; file: string; added: boolean };
/** Stop trusting key `id`. */
export function removeTrustedKey(keysDir: string, id: string): { removed: string[]; remaining: number };
/** The key changes (manifest.keys) a release carries. */
export function releaseKeyChanges(releaseDir: string): { add: Array<{ id: string; pem: string }>; retire: string[] };
/** Rotation: enroll/retire the keys a verified, installed release carries. */
export function enrollReleaseKeys(releaseDir: string, keysDir: string): { added: string[]; retired: string[]; warnings: string[] };
