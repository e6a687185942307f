/** Types for image/verify-bundle.mjs, imported by scripts/bundle.mjs and the tests. */

/** Manifest format the verifier understands. */
export const MANIFEST_FORMAT: 1;
/** Files every release must contain. */
export const REQUIRED_FILES: readonly string[];
/** Top-level files the manifest does not list: manifest.json and manifest.sig. */
export const UNLISTED_FILES: readonly string[];
/** Allowed version strings (they become directory names). */
export const VERSION_PATTERN: RegExp;
/** sha256 of a file, hex. */
export function sha256File(file: string): Promise<string>;
/** Every entry below `dir`, as POSIX relative paths. */
export function walk(dir: string): Array<{ path: string; kind: 'file' | 'dir' | 'other' }>;
/** Check an unpacked bundle directory against its manifest.json. */
export function verifyBundleDir(dir: string): Promise<{ ok: true; version: string; files: number } | { ok: false; problems: string[] }>;
