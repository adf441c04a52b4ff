// What an in-process file tool must never touch, checked per entry: the secrets floor and
// denied_paths by real path (whole components), and by identity (device + inode), so a bind mount
// of ~/.ssh or a hard link to a key inside the working tree is refused like the original.
// biome-ignore lint/style/noRestrictedImports: identities of the protected entries themselves (the floor, denied_paths), never the content of a grant
import { lstatSync, readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { isUnder } from '../../core/paths.ts';
import { floorEntryFor } from '../../policy/paths.ts';
import type { ProtectedPaths } from '../../policy/types.ts';

/** Pseudo file systems a walk never enters: their files are views of processes and devices. */
const PSEUDO_ROOTS = ['/proc', '/sys', '/dev'];

/** Entries of protected folders looked at for hard links before giving up (then any linked file is refused). */
const MAX_LINK_SCAN = 20_000;

export interface Identity {
  dev: number;
  ino: number;
  nlink: number;
  isDirectory(): boolean;
}

const key = (st: { dev: number; ino: number }) => `${st.dev}:${st.ino}`;

export class PathGuard {
  /** Floor and denied entries (lexical and canonical forms), minus any the caller named explicitly. */
  readonly entries: readonly string[];
  readonly #floor: readonly string[];
  readonly #denied: readonly string[];
  readonly #identities = new Map<string, string>();
  /** Their inode numbers: most files are ruled out by one number lookup, without a key string. */
  readonly #inodes = new Set<number>();
  #linked: Map<string, string> | undefined;
  #linkScanComplete = true;

  /**
   * `root` is the folder or file a walk starts from, already canonical. Under --unrestricted the
   * protected entries that hold the root are dropped: the call named that place itself.
   */
  constructor(paths: ProtectedPaths, root?: string) {
    const holdsRoot = (entry: string) => paths.unrestricted && root !== undefined && isUnder(root, entry);
    this.#floor = paths.floor.filter((entry) => !holdsRoot(entry));
    this.#denied = paths.denied.filter((entry) => !holdsRoot(entry));
    this.entries = [...new Set([...this.#floor, ...this.#denied])];
    for (const entry of this.entries) {
      try {
        const st = statSync(entry);
        this.#identities.set(key(st), entry);
        this.#inodes.add(st.ino);
      } catch {
        // Not there (yet): nothing can alias it.
      }
    }
  }

  /** Why `path` (absolute, real) must not be read, or undefined. */
  refusal(path: string): string | undefined {
    const floor = floorEntryFor(path, this.#floor);
    if (floor) return `the secrets floor (${floor})`;
    const denied = this.#denied.find((entry) => isUnder(path, entry));
    if (denied) return `denied_paths (${denied})`;
    return undefined;
  }

  /** Like refusal, and a walk also stays out of /proc, /sys and /dev. */
  walkRefusal(path: string): string | undefined {
    const pseudo = PSEUDO_ROOTS.find((entry) => isUnder(path, entry));
    return pseudo ? `a pseudo file system (${pseudo})` : this.refusal(path);
  }

  /** Protected entries (and pseudo file systems) at or below `dir`: where a walk must check names. */
  entriesWithin(dir: string): string[] {
    return [...this.entries, ...PSEUDO_ROOTS].filter((entry) => isUnder(entry, dir));
  }

  /**
   * Why an opened file or folder is the same object as a protected one (a bind mount, or a hard
   * link to a protected file), or undefined.
   */
  identityRefusal(st: Identity): string | undefined {
    if (st.nlink <= 1 && !this.#inodes.has(st.ino)) return undefined;
    const same = this.#identities.get(key(st));
    if (same) return `the same file as ${same}`;
    if (st.nlink > 1 && !st.isDirectory()) {
      const linked = this.#linkedFiles().get(key(st));
      if (linked) return `a hard link to ${linked}`;
      if (!this.#linkScanComplete)
        return 'a hard-linked file (the protected folders are too large to rule it out)';
    }
    return undefined;
  }

  /** Reads what identityRefusal needs now (before a thread gives up its access to the protected folders). */
  prime(): void {
    this.#linkedFiles();
  }

  /** Files under protected folders that have other names (nlink > 1): only those can be hard-linked elsewhere. */
  #linkedFiles(): Map<string, string> {
    if (this.#linked) return this.#linked;
    const linked = new Map<string, string>();
    let seen = 0;
    const visit = (dir: string, depth: number): void => {
      let names: string[];
      try {
        names = readdirSync(dir);
      } catch {
        return;
      }
      for (const name of names) {
        if (++seen > MAX_LINK_SCAN) {
          this.#linkScanComplete = false;
          return;
        }
        const path = join(dir, name);
        let st: ReturnType<typeof lstatSync>;
        try {
          st = lstatSync(path);
        } catch {
          continue;
        }
        if (st.isDirectory() && depth < 16) visit(path, depth + 1);
        else if (st.isFile() && st.nlink > 1) linked.set(key(st), path);
      }
    };
    for (const entry of this.entries) {
      try {
        const st = statSync(entry);
        if (st.isDirectory()) visit(entry, 0);
        else if (st.isFile() && st.nlink > 1) linked.set(key(st), entry);
      } catch {
        // Not there.
      }
      if (!this.#linkScanComplete) break;
    }
    this.#linked = linked;
    return linked;
  }
}
