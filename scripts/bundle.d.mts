/** Types for scripts/bundle.mjs (`npm run bundle`), imported by the tests. */

/** Options of {@link createBundle}. */
export interface BundleOptions {
  /** Project to bundle (default: this repository). */
  project?: string;
  /** Where homeagent-<version>.tar.gz goes (default: the project directory). */
  outDir?: string;
  /** Run tsc into the staging directory (default true); false copies the project's dist/. */
  build?: boolean;
}

/** What {@link createBundle} made. */
export interface BundleResult {
  /** Absolute path of homeagent-<version>.tar.gz. */
  file: string;
  /** package.json version = manifest version. */
  version: string;
  /** Files listed in manifest.json. */
  files: number;
}

/** Build, verify and pack a release bundle. Rejects with an Error whose `code` is BUNDLE_FAILED. */
export function createBundle(options?: BundleOptions): Promise<BundleResult>;
