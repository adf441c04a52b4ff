// What a checkpoint leaves out of a folder it tracks: what .gitignore (and .ignore) ignores, version
// control folders (.git: the git guard keeps its config and hooks; objects are git's own history),
// every `.env*` file and what the sandbox keeps read-only at a writable root (rune.toml, .rune), and
// whatever the policy protects — the secrets floor and denied_paths by path, and by identity (a bind
// mount of a protected folder, a hard link to a protected file). Protected content is never read.
import type { Entry } from '../../core/fd/index.ts';
import { isUnder } from '../../core/paths.ts';
import type { ProtectedPaths } from '../../policy/types.ts';
import { PathGuard } from '../../tools/walk/guard.ts';
import type { IgnoreRules } from '../../tools/walk/ignore-rules.ts';

const VCS_DIRS = new Set(['.git', '.hg', '.svn', '.jj']);
const ROOT_PROTECTED = new Set(['rune.toml', '.rune']);

/** Why a name is left out wherever it is, or undefined. */
export function nameLeftOut(name: string, atRoot: boolean): string | undefined {
  if (name.startsWith('.env')) return 'a .env file';
  if (VCS_DIRS.has(name)) return 'a version control folder';
  if (atRoot && ROOT_PROTECTED.has(name)) return "rune's own configuration";
  return undefined;
}

export class TrackFilter {
  readonly guard: PathGuard;
  /** Protected entries at or below the tracked folder: only these need a per-path check. */
  readonly #within: readonly string[];

  constructor(
    readonly folder: string,
    paths: ProtectedPaths,
  ) {
    // A checkpoint is rune's copy, not a tool's access: --unrestricted does not let it in.
    this.guard = new PathGuard({ ...paths, unrestricted: false });
    this.#within = this.guard.entriesWithin(folder);
  }

  /** Whether the folder itself may be tracked at all. */
  folderRefusal(): string | undefined {
    return this.guard.walkRefusal(this.folder);
  }

  /**
   * Why the entry `rel` (below the folder, `name` its last part) is left out, or undefined.
   * `rules` are those of its parent folder; `entry` what lstat said of it.
   */
  leftOut(rel: string, name: string, entry: Entry, rules: IgnoreRules): string | undefined {
    const byName = nameLeftOut(name, !rel.includes('/'));
    if (byName) return byName;
    if (this.#within.length > 0) {
      const path = `${this.folder === '/' ? '' : this.folder}/${rel}`;
      if (this.#within.some((entry) => isUnder(path, entry))) return 'protected by the policy';
    }
    const isDir = entry.kind === 'dir';
    if ((isDir || entry.nlink > 1) && this.guard.identityRefusal({ ...entry, isDirectory: () => isDir }))
      return 'protected by the policy';
    if (rules.ignored(rel, isDir)) return 'ignored';
    return undefined;
  }

  /** Why a single file named by a file tool is left out (the floor and denied_paths only). */
  fileRefusal(path: string, entry: Entry | undefined): string | undefined {
    const name = path.slice(path.lastIndexOf('/') + 1);
    if (name.startsWith('.env')) return 'a .env file';
    const refused = this.guard.refusal(path);
    if (refused) return refused;
    if (entry && entry.nlink > 1 && this.guard.identityRefusal({ ...entry, isDirectory: () => false }))
      return 'protected by the policy';
    return undefined;
  }
}
