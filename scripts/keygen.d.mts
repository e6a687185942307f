/** Types for scripts/keygen.mjs (`npm run keygen`), imported by the tests. */

/** Default directory for release keys: $XDG_CONFIG_HOME/homeagent/release-keys. */
export function defaultKeyDir(): string;
/** Make an ed25519 release key pair (<name>.key 0600, <name>.pub); never overwrites. Throws code KEYGEN_FAILED. */
export function generateReleaseKeyPair(options?: { outDir?: string; name?: string }): { id: string; privateKeyFile: string; publicKeyFile: string };
