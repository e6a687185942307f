/** Types for scripts/bundle.mjs (`npm run bundle`), imported by the tests. */

/** Options of {@link createBundle}. */
export interface BundleOptions {
  /** Project to bundle (default: this repository). */
  project?: string;
  /** Where homeagent-<version>.tar.gz goes (default: the project directory). */
  outDir?: string;
  /** Run tsc into the staging directory (default true); false copies the project's dist/. */
  build?: boolean;
  /** ed25519 private key files (PEM, `npm run keygen`) that sign manifest.json; required unless `unsigned`. */
  keys?: string[];
  /** Make an unsigned development bundle (devices refuse it without --allow-unsigned). */
  unsigned?: boolean;
  /** Public key files shipped in keys/<id>.pub: devices installing this release trust them from then on (rotation). */
  addKeys?: string[];
  /** Key ids devices installing this release stop trusting (never their last key). */
  retireKeys?: string[];
}

/** What {@link createBundle} made. */
export interface BundleResult {
  /** Absolute path of homeagent-<version>.tar.gz. */
  file: string;
  /** package.json version = manifest version. */
  version: string;
  /** Files listed in manifest.json. */
  files: number;
  /** Ids of the keys that signed it (empty for an unsigned bundle). */
  signedBy: string[];
}

/** Build, verify and pack a release bundle. Rejects with an Error whose `code` is BUNDLE_FAILED (also when no key is given and `unsigned` is not set). */
export function createBundle(options?: BundleOptions): Promise<BundleResult>;
