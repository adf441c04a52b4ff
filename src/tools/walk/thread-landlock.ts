// The second, kernel-enforced layer of a walk: the worker thread confines itself with Landlock to
// reading the walk's root, minus every protected entry inside it. Landlock cannot carve a hole out
// of a granted tree, so a folder that holds a protected entry is granted for listing only and its
// other children are granted one by one. Landlock binds only the calling thread here: the main
// thread and every tool process keep their own rules.
import { constants, fstatSync } from 'node:fs';
import type { SandboxMode } from '../../config/schema.ts';
import { O_PATH } from '../../core/fd/sys.ts';
import { isUnder } from '../../core/paths.ts';
import { runeNative } from '../../sandbox/native.ts';
import type { LayerReport } from '../../sandbox/types.ts';
import { folderOps } from './folder-ops.ts';
import type { PathGuard } from './guard.ts';
import { openFromTop } from './walk.ts';

export interface Grants {
  /** Trees the thread may read (files and listings). */
  read: string[];
  /** Folders the thread may only list: they hold a protected entry somewhere below. */
  list: string[];
}

export type ListFolder = (dir: string) => Array<{ name: string; kind: 'dir' | 'file' | 'other' }>;

/** A folder's entries, the folder opened from '/' through no link (src/core/fd, folder-ops.ts). */
const listFolder: ListFolder = (dir) => {
  const ops = folderOps();
  const fd = openFromTop(ops, dir, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    return ops.list(fd).map((entry) => ({
      name: entry.name,
      kind: entry.kind === 'dir' || entry.kind === 'file' ? entry.kind : 'other',
    }));
  } finally {
    ops.close(fd);
  }
};

/** Whether `root` is a folder (looked at through no link). */
function isFolder(root: string): boolean {
  const ops = folderOps();
  const fd = openFromTop(ops, root, O_PATH);
  try {
    return fstatSync(fd).isDirectory();
  } finally {
    ops.close(fd);
  }
}

/** The Landlock grants of a walk from `root` that leave out every path in `protectedWithin`. */
export function planGrants(
  root: string,
  protectedWithin: readonly string[],
  list: ListFolder = listFolder,
): Grants {
  const grants: Grants = { read: [], list: [] };
  if (protectedWithin.length === 0) {
    grants.read.push(root);
    return grants;
  }
  const visit = (dir: string): void => {
    grants.list.push(dir);
    let children: ReturnType<ListFolder>;
    try {
      children = list(dir);
    } catch {
      return;
    }
    for (const child of children) {
      const path = dir === '/' ? `/${child.name}` : `${dir}/${child.name}`;
      if (protectedWithin.some((entry) => isUnder(path, entry))) continue;
      if (protectedWithin.some((entry) => isUnder(entry, path))) {
        if (child.kind === 'dir') visit(path);
        continue;
      }
      // Symlinks are never followed by the walk, and a rule on one would grant its target.
      if (child.kind !== 'other') grants.read.push(path);
    }
  };
  visit(root);
  return grants;
}

interface ThreadLandlockResult {
  abi: number;
  rules: number;
  skipped: number;
  error: number;
  step: string;
}

/** Applies the grants to the calling thread; the report says what was enforced or why not. */
export function confineThread(guard: PathGuard, root: string, mode: SandboxMode): LayerReport[] {
  if (mode === 'off') return [{ layer: 'landlock', applied: false, detail: 'sandbox.mode = off' }];
  // What the guard needs from the protected folders is read while the thread still can.
  guard.prime();
  let why: string;
  try {
    const grants = isFolder(root) ? planGrants(root, guard.entriesWithin(root)) : { read: [root], list: [] };
    const native = runeNative() as {
      restrictThread?: (read: string[], list: string[]) => ThreadLandlockResult;
    };
    if (!native.restrictThread) throw new Error('this build of the native addon has no restrictThread');
    const result = native.restrictThread(grants.read, grants.list);
    if (result.abi > 0) {
      const listOnly = grants.list.length > 0 ? `, ${grants.list.length} folder(s) list-only` : '';
      return [
        {
          layer: 'landlock',
          applied: true,
          detail: `walk thread: ABI ${result.abi}, read-only ${grants.read.length} path(s)${listOnly}`,
        },
      ];
    }
    why = `landlock ${result.step} failed (errno ${result.error})`;
  } catch (error) {
    why = (error as Error).message;
  }
  if (mode === 'strict') throw new Error(`sandbox strict: the walk thread could not be confined: ${why}`);
  return [{ layer: 'landlock', applied: false, detail: `walk thread not confined: ${why}` }];
}
