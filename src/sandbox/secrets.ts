// The host's secrets in a system folder, found as a class: every file others may not read
// (shadow, gshadow and their backups, sudoers, host keys, TLS private keys, database passwords…)
// and every folder others may not enter. A list of names would miss the next backup or variant.
// The view hides what this finds; Landlock leaves it out of the folder's rules. The sandbox helper
// scans in C (`--closed DIR`, a few ms; Node takes tens under load), once per process and again
// when the folder changed; the scan here is the fallback when the helper cannot.
import { type Dirent, lstatSync, readdirSync, realpathSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** True when a file (or folder) with this mode is closed to others: not readable, or not enterable. */
export function closedToOthers(mode: number, isDirectory: boolean): boolean {
  const OTHER_READ = 0o004;
  const OTHER_EXEC = 0o001;
  return isDirectory
    ? (mode & (OTHER_READ | OTHER_EXEC)) !== (OTHER_READ | OTHER_EXEC)
    : (mode & OTHER_READ) === 0;
}

const MAX_DEPTH = 8;

/** Real paths of the entries of `folder` closed to others; symlinks are skipped (their targets count where they are). */
export function findClosedEntries(folder: string): string[] {
  const found: string[] = [];
  const walk = (dir: string, depth: number): void => {
    let entries: Dirent[];
    try {
      entries = readdirSync(dir, { withFileTypes: true });
    } catch {
      return;
    }
    for (const entry of entries) {
      if (entry.isSymbolicLink()) continue;
      const path = join(dir, entry.name);
      let mode: number;
      try {
        mode = lstatSync(path).mode;
      } catch {
        continue;
      }
      const isDirectory = entry.isDirectory();
      if (closedToOthers(mode, isDirectory)) found.push(path);
      else if (isDirectory && depth < MAX_DEPTH) walk(path, depth + 1);
    }
  };
  let real: string;
  try {
    real = realpathSync.native(folder);
  } catch {
    return found;
  }
  walk(real, 0);
  return found;
}

/** What identifies the state of a folder's own entries (new, removed or renamed ones). */
export function folderStamp(folder: string): string | undefined {
  try {
    const st = statSync(folder);
    return `${st.ino}:${st.mtimeMs}:${st.ctimeMs}`;
  } catch {
    return undefined;
  }
}

let cache: { folder: string; stamp: string; entries: string[] } | undefined;

/** Records entries found for `folder` at `stamp` (the helper's probe finds them on the way). */
export function rememberClosedEntries(folder: string, stamp: string, entries: string[]): void {
  cache = { folder, stamp, entries };
}

/** The closed entries of `folder`, kept for the process while its own entries are unchanged. */
export function closedSystemEntries(
  folder: string,
  scan: (folder: string) => string[] = findClosedEntries,
): string[] {
  const stamp = folderStamp(folder);
  if (stamp === undefined) return [];
  if (cache?.folder !== folder || cache.stamp !== stamp) cache = { folder, stamp, entries: scan(folder) };
  return cache.entries;
}
