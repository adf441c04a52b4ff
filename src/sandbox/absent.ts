// Paths the view hides or keeps read-only inside a writable root are mounted over, and only what
// exists can be mounted over. One that is absent when a call starts (no ~/.ssh yet, no ~/.bashrc)
// could be created by the command — an authorized_keys, a shell start-up file, a git config that
// runs a program on the person's next command — so it is watched instead: when the call has made
// it, the topmost folder or file the call created on its way is moved aside afterwards, and the
// model and the person are told (ADR 0016).
import { lstatSync, realpathSync, renameSync } from 'node:fs';
import { dirname } from 'node:path';
import { isInside } from './plan.ts';

export interface Watched {
  /** The path that must not appear. */
  path: string;
  /** The topmost part of it missing before the call (the path itself, or a folder on its way). */
  top: string;
}

function exists(path: string): boolean {
  try {
    // No thrown error for the usual answer (missing): planning asks this for many paths per call.
    return lstatSync(path, { throwIfNoEntry: false }) !== undefined;
  } catch {
    return false; // ENOENT, ENOTDIR, EACCES: not there for anyone to use
  }
}

/** Of `paths` (real, absolute), those missing now under one of `roots`, with their topmost missing part. */
export function watchAbsent(paths: readonly string[], roots: readonly string[]): Watched[] {
  const out: Watched[] = [];
  for (const path of new Set(paths)) {
    const root = roots.find((r) => isInside(path, r));
    if (!root || path === root || exists(path)) continue;
    let top = path;
    while (dirname(top) !== root && isInside(dirname(top), root) && !exists(dirname(top))) top = dirname(top);
    out.push({ path, top });
  }
  return out;
}

/** Whether `path`'s folder is where its name says: a repair never renames through a link. */
function folderIsReal(path: string): boolean {
  try {
    return realpathSync(dirname(path)) === dirname(path);
  } catch {
    return false;
  }
}

/** After a call: moves aside what it created of the watched paths; returns what was done. */
export function moveAsideCreated(watched: readonly Watched[]): string[] {
  const actions: string[] = [];
  const moved = new Set<string>();
  for (const { path, top } of watched) {
    if (moved.has(top) || !exists(path) || !exists(top)) continue;
    if (!folderIsReal(top)) {
      actions.push(`${path}: created through a link the command made; remove ${top} yourself`);
      continue;
    }
    let aside = `${top}.rune-rejected`;
    for (let n = 2; exists(aside); n++) aside = `${top}.rune-rejected-${n}`;
    try {
      renameSync(top, aside);
      moved.add(top);
      actions.push(`${path}: created by the command; ${top} moved to ${aside}`);
    } catch (error) {
      actions.push(
        `${path}: created by the command and could not be moved aside (${(error as Error).message}): delete it`,
      );
    }
  }
  return actions;
}
