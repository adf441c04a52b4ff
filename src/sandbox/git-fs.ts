// The git guard's reads of folders a hostile command may have written: each one takes a missing or
// unreadable file for nothing there (never an error), and none reads through a link unawares.
import { lstatSync, readdirSync, readFileSync, readlinkSync, realpathSync, type Stats } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { type ConfigEntry, parseGitConfig } from './git-config.ts';

export function lstat(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined; // ENOENT, ENOTDIR (a .git file in the way), EACCES: nothing to see
  }
}

/** A file's bytes as git sees them (one character per byte), or null when it cannot be read. */
export function readText(path: string): string | null {
  try {
    return readFileSync(path, 'latin1');
  } catch {
    return null;
  }
}

/** The real path (symlinks resolved); for a path that does not exist, its folder's real path. */
export function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    try {
      return join(realpathSync(dirname(path)), basename(path));
    } catch {
      return path;
    }
  }
}

/**
 * Whether `path`'s folder is where its name says (no symlink on the way). The roots are real paths,
 * so a folder under one that resolves elsewhere was swapped for a link by the command: repairs
 * never read, delete or write through it onto a host folder that was not granted.
 */
export function folderIsReal(path: string): boolean {
  try {
    return realpathSync(dirname(path)) === dirname(path);
  } catch {
    return false;
  }
}

/** A config file's entries, or none when it cannot be read. */
export function configEntries(path: string): ConfigEntry[] {
  const text = readText(path);
  return text === null ? [] : parseGitConfig(text).entries;
}

/** The fingerprint of a link (where it points), or 'gone'. */
export function linkPrint(path: string): string {
  try {
    return `link:${readlinkSync(path)}`;
  } catch {
    return 'gone';
  }
}

/** lstat fingerprints of the entries of a hooks folder. */
export function hookPrints(dir: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of names) {
    const file = join(dir, name);
    const st = lstat(file);
    if (st) out.push([file, `${st.mode}:${st.size}:${st.mtimeMs}:${st.ino}`]);
  }
  return out;
}
