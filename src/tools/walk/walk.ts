// The folder walk under search_files and find_files. The root is opened from '/' through no link
// (src/core/fd), and every folder relative to its already verified parent (openat, see
// folder-ops.ts) with O_NOFOLLOW, so a folder swapped for a symlink
// mid-walk fails to open instead of leading elsewhere; each entry's real path
// is then its parent's plus its name, checked against the floor and denied_paths without a
// realpath per file, and each opened object's identity (device + inode) against bind mounts and
// hard links of protected files. Symlinks are never followed. Synchronous: it runs in a worker.
// biome-ignore lint/style/noRestrictedImports: openSync opens '/' itself (openSlash), the root every walk path is resolved from
import { closeSync, constants, fstatSync, openSync, type Stats } from 'node:fs';
import { basename, dirname } from 'node:path';
import { OpenedStat } from '../../core/fd/sys.ts';
import { isUnder } from '../../core/paths.ts';
import type { FolderOps } from './folder-ops.ts';
import type { Identity, PathGuard } from './guard.ts';
import { IgnoreRules, readSmallFileAt } from './ignore-rules.ts';

const { O_RDONLY, O_DIRECTORY, O_NOFOLLOW } = constants;
const DIR_FLAGS = O_RDONLY | O_DIRECTORY | O_NOFOLLOW;
// Linux's O_PATH (x86-64 and arm64); Node does not export it. libuv adds O_CLOEXEC to every open.
const O_PATH = 0o10000000;
/** Version-control folders: never searched (git grep does not search .git either). */
const VCS_DIRS = new Set(['.git', '.hg', '.svn', '.jj']);
const MAX_DEPTH = 256;

export interface WalkStats {
  files: number;
  folders: number;
  symlinks: number;
  /** Entries refused by the floor, denied_paths, a pseudo file system, or identity. */
  protected: number;
  ignored: number;
  unreadable: number;
  special: number;
  binary: number;
  large: number;
}

export const emptyStats = (): WalkStats => ({
  files: 0,
  folders: 0,
  symlinks: 0,
  protected: 0,
  ignored: 0,
  unreadable: 0,
  special: 0,
  binary: 0,
  large: 0,
});

export interface FileEntry {
  /** The open parent folder: open the file with ops.openAt(dirFd, name, …). */
  dirFd: number;
  name: string;
  /** Absolute real path. */
  path: string;
  /** Relative to the walk root; for a root that is a file, its name. */
  rel: string;
}

export interface WalkOptions {
  /** Absolute canonical path of a folder or a file. */
  root: string;
  guard: PathGuard;
  ops: FolderOps;
  /** The ignore rules from above the root (rulesAbove), read before the walk. */
  rules: IgnoreRules;
  stats: WalkStats;
  /** Return false to leave a folder (relative to the root) out. */
  enterFolder?(rel: string): boolean;
  /** Each regular file, in `git ls-files` order; return true to stop the walk. */
  onFile(entry: FileEntry): boolean | undefined;
}

export class WalkError extends Error {}

function openError(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? (error as Error).message;
}

/**
 * The ignore rules above `root` (its ancestors up to the enclosing repository's root), read by
 * real path before the walk. `root` is canonical, so its ancestors hold no symlinks.
 */
export function rulesAbove(root: string, guard: PathGuard, ops: FolderOps): IgnoreRules {
  const ancestors: Array<{
    rel: string;
    names: Set<string>;
    read: (names: readonly string[]) => string | undefined;
  }> = [];
  let dir = dirname(root);
  let rel = basename(root);
  for (;;) {
    if (guard.walkRefusal(dir)) break;
    const names = new Set<string>();
    let fd: number | undefined;
    try {
      fd = openFromTop(ops, dir, O_PATH | O_DIRECTORY);
      for (const name of ['.git', '.gitignore', '.ignore']) if (exists(ops, fd, name)) names.add(name);
    } catch {
      // Not there, or a link on the way: nothing above is read through it.
    } finally {
      if (fd !== undefined) ops.close(fd);
    }
    const at = dir;
    ancestors.push({ rel, names, read: (parts) => readAbove(ops, at, parts) });
    if (names.has('.git')) break;
    const parent = dirname(dir);
    if (parent === dir) break;
    rel = `${basename(dir)}/${rel}`;
    dir = parent;
  }
  return IgnoreRules.above(ancestors);
}

function exists(ops: FolderOps, dirFd: number, name: string): boolean {
  try {
    ops.close(ops.openAt(dirFd, name, O_PATH));
    return true;
  } catch (error) {
    // A link opened with O_PATH | O_NOFOLLOW is itself: ELOOP is still an entry.
    return (error as NodeJS.ErrnoException).code === 'ELOOP';
  }
}

/** Opens the absolute `path` from '/', following no link anywhere (the folder the walk judged). */
export function openFromTop(ops: FolderOps, path: string, flags: number): number {
  const slash = openSlash();
  try {
    return ops.openPath(slash, path === '/' ? '.' : path.slice(1), flags);
  } finally {
    closeSync(slash);
  }
}

// '/' itself is the one folder opened by name: it has no parent and cannot be a link.
const openSlash = (): number => openSync('/', O_PATH | O_DIRECTORY);

/** An ignore file of a folder above the root, read through that folder opened without following a link. */
function readAbove(ops: FolderOps, dir: string, names: readonly string[]): string | undefined {
  let fd: number;
  try {
    fd = openFromTop(ops, dir, DIR_FLAGS);
  } catch {
    return undefined;
  }
  try {
    return readSmallFileAt(ops, fd, names);
  } finally {
    ops.close(fd);
  }
}

/**
 * Opens `root` (a folder) from '/' through no link: the folder at the canonical path the policy
 * judged, or a refusal. `pathOnly`: an O_PATH handle, for the folder of a single file (it needs no
 * read right there).
 */
function openRoot(ops: FolderOps, root: string, pathOnly = false): number {
  try {
    return openFromTop(ops, root, pathOnly ? O_PATH | O_DIRECTORY : DIR_FLAGS);
  } catch (error) {
    throw new WalkError(rootProblem(root, error));
  }
}

function rootProblem(root: string, error: unknown): string {
  const code = openError(error);
  return code === 'ELOOP' || code === 'ENOTDIR'
    ? `${root} changed while it was opened (a symbolic link is on the way now): refused`
    : `cannot open ${root}: ${code}`;
}

/**
 * Walks `options.root`, calling onFile for each regular file that no rule refuses. Throws
 * WalkError when the root cannot be opened safely; every later problem is counted in the stats.
 */
export function walk(options: WalkOptions): void {
  const { root, guard, stats } = options;
  const refused = guard.walkRefusal(root);
  if (refused) throw new WalkError(`${root} is inside ${refused}`);

  let rootFd: number;
  try {
    rootFd = openFromTop(options.ops, root, O_PATH);
  } catch (error) {
    throw new WalkError(
      openError(error) === 'ENOENT' ? `cannot read ${root}: ENOENT` : rootProblem(root, error),
    );
  }
  let rootStat: Stats;
  try {
    rootStat = fstatSync(rootFd);
  } finally {
    options.ops.close(rootFd);
  }
  if (!rootStat.isDirectory()) {
    // One file: opened through its verified folder like any other entry.
    if (!rootStat.isFile()) throw new WalkError(`${root} is not a regular file or folder`);
    const parentFd = openRoot(options.ops, dirname(root), true);
    try {
      stats.files++;
      options.onFile({ dirFd: parentFd, name: basename(root), path: root, rel: basename(root) });
    } finally {
      options.ops.close(parentFd);
    }
    return;
  }

  const fd = openRoot(options.ops, root);
  try {
    const st = fstatSync(fd);
    const identity = guard.identityRefusal(st);
    if (identity) throw new WalkError(`${root} is ${identity}`);
    walkFolder(options, fd, root, '', options.rules, guard.entriesWithin(root), 0);
  } finally {
    options.ops.close(fd);
  }
}

/** Returns true when the walk was stopped by onFile. */
function walkFolder(
  options: WalkOptions,
  fd: number,
  path: string,
  rel: string,
  parentRules: IgnoreRules,
  protectedWithin: readonly string[],
  depth: number,
): boolean {
  const { guard, stats, ops } = options;
  stats.folders++;
  let entries: ReturnType<FolderOps['list']>;
  try {
    entries = ops.list(fd);
  } catch {
    stats.unreadable++;
    return false;
  }
  const rules = parentRules.enter(rel, new Set(entries.map((e) => e.name)), (names) =>
    readSmallFileAt(ops, fd, names),
  );
  // In git's order (ops.list lists so).
  for (const { name, kind } of entries) {
    if (kind === 'symlink') {
      stats.symlinks++;
      continue;
    }
    if (kind === 'special') {
      stats.special++;
      continue;
    }
    if (kind === 'dir' && VCS_DIRS.has(name)) continue;
    if (name === '.git') continue;
    const childPath = path === '/' ? `/${name}` : `${path}/${name}`;
    const childRel = rel === '' ? name : `${rel}/${name}`;
    // Only folders that hold a protected entry need the name check: most folders hold none.
    if (protectedWithin.length > 0 && guard.walkRefusal(childPath)) {
      stats.protected++;
      continue;
    }
    if (rules.ignored(childRel, kind === 'dir')) {
      stats.ignored++;
      continue;
    }
    if (kind === 'file') {
      stats.files++;
      if (options.onFile({ dirFd: fd, name, path: childPath, rel: childRel })) return true;
      continue;
    }
    if (options.enterFolder && !options.enterFolder(childRel)) continue;
    if (depth >= MAX_DEPTH) {
      stats.unreadable++;
      continue;
    }
    let child: number;
    try {
      child = ops.openAt(fd, name, DIR_FLAGS);
    } catch (error) {
      // ELOOP / ENOTDIR: it became a symlink or a file after the listing.
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ELOOP' || code === 'ENOTDIR') stats.symlinks++;
      else stats.unreadable++;
      continue;
    }
    try {
      if (guard.identityRefusal(fstatSync(child))) {
        stats.protected++;
        continue;
      }
      const within = protectedWithin.filter((entry) => isUnder(entry, childPath));
      if (walkFolder(options, child, childPath, childRel, rules, within, depth + 1)) return true;
    } finally {
      ops.close(child);
    }
  }
  return false;
}

export interface OpenedFile {
  fd: number;
  size: number;
  mtimeMs: number;
}

// openRead's fstat, reused for every file (the walk is synchronous, one file at a time).
const opened = new Float64Array(OpenedStat.length);
const S_IFMT = 0o170000;
const S_IFREG = 0o100000;
const openedIdentity: Identity = {
  get dev() {
    return opened[OpenedStat.dev]!;
  },
  get ino() {
    return opened[OpenedStat.ino]!;
  },
  get nlink() {
    return opened[OpenedStat.nlink]!;
  },
  isDirectory: () => false,
};

/**
 * Opens a file the walk found, without following a symlink and without blocking on a FIFO, and
 * refuses one that is not a regular file, is the same object as a protected file, or is larger
 * than `maxBytes` (counted in stats). Read it with ops.readClose, or close it with ops.close.
 */
export function openEntry(
  entry: FileEntry,
  guard: PathGuard,
  stats: WalkStats,
  maxBytes: number,
  ops: FolderOps,
): OpenedFile | undefined {
  let fd: number;
  try {
    fd = ops.openRead(entry.dirFd, entry.name, opened);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP') stats.symlinks++;
    else stats.unreadable++;
    return undefined;
  }
  const size = opened[OpenedStat.size]!;
  let reason: keyof WalkStats | undefined;
  if ((opened[OpenedStat.mode]! & S_IFMT) !== S_IFREG) reason = 'special';
  else if (guard.identityRefusal(openedIdentity)) reason = 'protected';
  else if (size > maxBytes) reason = 'large';
  if (reason) {
    stats[reason]++;
    ops.close(fd);
    return undefined;
  }
  return { fd, size, mtimeMs: opened[OpenedStat.mtimeMs]! };
}
