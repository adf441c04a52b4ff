// The git guard's file access to folders a hostile command may have written, all through src/core/fd:
// every path is resolved from '/' through no symbolic link (the roots are real paths, so a link on
// the way is one the command made), a FIFO is never opened blocking, and only regular files are
// read. A missing or unreadable file is nothing there (never an error). Changes happen inside the
// folder that holds the file, opened the same way (`folderOf`), never through a link.
import { basename, dirname } from 'node:path';
import { type Entry, type Kind, kindWords, type Listed, Root } from '../core/fd/index.ts';
import { canonicalise } from '../core/paths.ts';
import { type ConfigEntry, parseGitConfig } from './git-config.ts';

/** Config files git would read are this small; anything larger is not read. */
const MAX_TEXT = 4 * 1024 * 1024;

const below = (path: string): string => (path === '/' ? '' : path.slice(1));

/**
 * During a search (`searching`), the folder that holds the last path looked at stays open: the
 * next path in the same folder is looked at from it with one fstatat, not resolved again from '/'.
 * It was opened through no link; what it holds is only read (judges open their folder afresh).
 */
let held: { path: string; root: Root | undefined } | undefined;
let searchDepth = 0;

/** Runs a search of many folders with the folder cache above. */
export function searching<T>(search: () => T): T {
  searchDepth++;
  try {
    return search();
  } finally {
    if (--searchDepth === 0) {
      held?.root?.close();
      held = undefined;
    }
  }
}

/** The folder `dir` held open (during a search), or undefined when it cannot be opened through no link. */
function heldFolder(dir: string): Root | undefined {
  if (held?.path === dir) return held.root;
  held?.root?.close();
  let root: Root | undefined;
  try {
    root = Root.open(dir);
  } catch {
    root = undefined;
  }
  held = { path: dir, root };
  return root;
}

/** What is at `path` itself (a link is reported, not followed), or undefined (nothing, or a link on the way). */
export function lstat(path: string): Entry | undefined {
  try {
    if (searchDepth > 0 && path !== '/') return heldFolder(dirname(path))?.stat(basename(path));
    return Root.system().stat(below(path));
  } catch {
    return undefined; // a link on the way, ENOTDIR (a .git file in the way), EACCES: nothing to see
  }
}

/** A regular file's bytes as git sees them (one character per byte), or null for anything else. */
export function readText(path: string): string | null {
  return Root.system().readText(below(path), 'latin1', MAX_TEXT);
}

/** The real path (every link resolved): for computing where git would look, never for opening. */
export function real(path: string): string {
  return canonicalise(path);
}

/**
 * What a watched file is now, for comparing with how it was: its text for a regular file, null
 * when nothing is there, else a marker naming what is there instead (`\0link:TARGET`, `\0fifo`).
 */
export function snapshot(path: string): string | null {
  const st = lstat(path);
  if (!st) return null;
  if (st.kind === 'file') return readText(path);
  return st.kind === 'symlink' ? linkPrint(path).replace(/^link:/, '\0link:') : `\0${st.kind}`;
}

/** Whether a snapshot is a marker for something other than a regular file. */
export const isMarker = (value: string | null | undefined): boolean => value?.startsWith('\0') ?? false;

/** A config file's entries, read where its links lead (to learn where git looks; never written). */
export function configEntries(path: string): ConfigEntry[] {
  const text = readText(real(path));
  return text === null ? [] : parseGitConfig(text).entries;
}

/** The fingerprint of a link (where it points), or 'gone'. */
export function linkPrint(path: string): string {
  let folder: Root | undefined;
  try {
    folder = Root.open(dirname(path));
    return `link:${folder.readLink(basename(path))}`;
  } catch {
    return 'gone';
  } finally {
    folder?.close();
  }
}

/** The entries of a folder (not through a link), or none. */
export function listFolder(dir: string): Listed[] {
  try {
    if (searchDepth > 0 && dir !== '/') return heldFolder(dirname(dir))?.list(basename(dir)) ?? [];
    return Root.system().list(below(dir));
  } catch {
    return [];
  }
}

/** lstat fingerprints of the entries of a hooks folder (a link in its place is not followed). */
export function hookPrints(dir: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  let root: Root | undefined;
  try {
    root = Root.open(dir);
    for (const { name } of root.list()) {
      const st = root.stat(name);
      if (st) out.push([`${dir}/${name}`, `${st.mode}:${st.size}:${st.mtimeMs}:${st.ino}`]);
    }
  } catch {
    // Gone, or a link: judged as such by the caller.
  } finally {
    root?.close();
  }
  return out;
}

/**
 * The folder that holds `path`, opened from '/' through no link, for a change inside it; a link on
 * the way (a folder the command swapped) is a PathRefused that names it.
 */
export function folderOf(path: string): Root {
  return Root.open(dirname(path));
}

/** "a symbolic link (to T)", "a FIFO", … for what is at `path`. */
export function describeEntry(path: string, kind: Kind): string {
  const words = kindWords(kind);
  if (kind !== 'symlink') return words;
  const print = linkPrint(path);
  return print.startsWith('link:') ? `${words} (to ${print.slice(5)})` : words;
}
