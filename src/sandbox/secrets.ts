// The host's secrets in a system folder, found as a class: every file others may not read
// (shadow, gshadow and their backups, sudoers, host keys, TLS private keys, database passwords…)
// and every folder others may not enter. A list of names would miss the next backup or variant.
// The view hides what this finds; Landlock leaves it out of the folder's rules. Scanning /etc
// costs milliseconds, so it runs once per process and again only when the folder changed.
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

let cache: { folder: string; stamp: string; entries: string[] } | undefined;

/** findClosedEntries, kept for the process while the folder's own entries are unchanged. */
export function closedSystemEntries(folder: string): string[] {
  let stamp: string;
  try {
    const st = statSync(folder);
    stamp = `${st.ino}:${st.mtimeMs}:${st.ctimeMs}`;
  } catch {
    return [];
  }
  if (cache?.folder !== folder || cache.stamp !== stamp)
    cache = { folder, stamp, entries: findClosedEntries(folder) };
  return cache.entries;
}
