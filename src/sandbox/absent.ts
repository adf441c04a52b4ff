// Paths the view hides or keeps read-only inside a writable root are mounted over, and only what
// exists can be mounted over. One that is absent when a call starts (no ~/.ssh yet, no ~/.bashrc)
// could be created by the command — an authorized_keys, a shell start-up file, a git config that
// runs a program on the person's next command — so it is watched instead: when the call has made
// it, the topmost folder or file the call created on its way is moved aside afterwards, and the
// model and the person are told (ADR 0016).
import { basename, dirname, relative } from 'node:path';
import { isPathRefused, Root, renameWithin } from '../core/fd/index.ts';
import { isInside } from './plan.ts';

export interface Watched {
  /** The path that must not appear. */
  path: string;
  /** The topmost part of it missing before the call (the path itself, or a folder on its way). */
  top: string;
}

function exists(path: string): boolean {
  try {
    return Root.system().stat(path.slice(1)) !== undefined;
  } catch (error) {
    return isPathRefused(error); // a link on the way: something is there; EACCES: nothing to use
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

/** What the call made of one watched path, looked at from the folder above `top` (through no link). */
function created(parent: Root, path: string, top: string): boolean {
  const below = relative(parent.path, path);
  try {
    return parent.stat(below) !== undefined;
  } catch (error) {
    // A link on the way to `path`: `top` (or what it holds) was made by the call.
    if (isPathRefused(error)) return parent.stat(basename(top)) !== undefined;
    return false;
  }
}

/**
 * After a call: moves aside what it created of the watched paths, by descriptor: the folder above
 * each is opened through no link and the rename happens inside it, so nothing is renamed through a
 * link the command made. Returns what was done.
 */
export function moveAsideCreated(watched: readonly Watched[]): string[] {
  const actions: string[] = [];
  const moved = new Set<string>();
  for (const { path, top } of watched) {
    if (moved.has(top)) continue;
    let parent: Root;
    try {
      parent = Root.open(dirname(top));
    } catch (error) {
      if (isPathRefused(error))
        actions.push(
          `${path}: created through a link the command made (${error.message}); remove ${top} yourself`,
        );
      continue;
    }
    try {
      if (!created(parent, path, top)) continue;
      const aside = moveAside(parent, basename(top));
      moved.add(top);
      actions.push(`${path}: created by the command; ${top} moved to ${aside}`);
    } catch (error) {
      actions.push(
        `${path}: created by the command and could not be moved aside (${(error as Error).message}): delete it`,
      );
    } finally {
      parent.close();
    }
  }
  return actions;
}

/** Renames `name` to `name.rune-rejected` (or -2, -3, …: never over something) in the same folder. */
export function moveAside(parent: Root, name: string): string {
  for (let n = 1; n < 100; n++) {
    const aside = `${name}.rune-rejected${n === 1 ? '' : `-${n}`}`;
    try {
      renameWithin(parent, name, aside, { noReplace: true });
      return parent.where(aside);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
  }
  throw new Error(`no free name beside ${parent.where(name)}`);
}
