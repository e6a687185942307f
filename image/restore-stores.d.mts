// Types of image/restore-stores.mjs (a dependency-free script; see its header).

/** A copy of one store chosen to be put back. */
export interface ChosenCopy {
  store: string;
  /** The schema version the copy is at. */
  version: number;
  /** Its timestamp, YYYYMMDDTHHMMSSmmmZ. */
  stamp: string;
  /** The copy folder. */
  copy: string;
  /** Paths inside the copy folder = paths in the data directory. */
  files: string[];
}

export declare const COPY_FOLDER: RegExp;
export declare function timestamp(ms?: number): string;
export declare function withMillis(stamp: string): string;
export declare function chooseCopies(dataDir: string, since: string): ChosenCopy[];
export declare function restore(opts: { dataDir: string; since: string; from: string; dryRun?: boolean; now?: number; log?: (line: string) => void }): {
  restored: Array<{ store: string; version: number; copy: string; files: string[] }>;
  aside: string | null;
};
export declare function undo(opts: { dataDir: string; aside: string; log?: (line: string) => void }): { returned: string[] };
