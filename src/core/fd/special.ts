// The entries besides files and folders that a restore may have to put back below a held folder: a
// symbolic link (its text, never followed) and a FIFO. Through rune's addon (native/src/fdwatch.c),
// or the /proc path form of the parent descriptor without it; the name is one component either way.
import { symlinkSync } from 'node:fs';
import { runeAddon } from '../native.ts';
import type { Root } from './root.ts';
import { errnoError, isComponent } from './sys.ts';

interface NativeSpecial {
  fdSymlinkat(target: string, dirFd: number, name: string): number;
  fdMkfifoat(dirFd: number, name: string, mode: number): number;
}

function native(): NativeSpecial | undefined {
  try {
    const addon = runeAddon<Partial<NativeSpecial>>();
    return typeof addon.fdSymlinkat === 'function' ? (addon as NativeSpecial) : undefined;
  } catch {
    return undefined;
  }
}

function inParent(root: Root, rel: string, act: (dir: number, name: string) => void): void {
  const { dir, name, done } = root.parentOf(rel);
  try {
    if (!isComponent(name)) throw errnoError(-22, `not a name: ${name}`);
    act(dir, name);
  } finally {
    done();
  }
}

/** Creates the symbolic link `rel` holding `target` (nothing may be at `rel`). */
export function makeLink(root: Root, rel: string, target: string): void {
  inParent(root, rel, (dir, name) => {
    const n = native();
    if (!n) {
      symlinkSync(target, `/proc/self/fd/${dir}/${name}`);
      return;
    }
    const rc = n.fdSymlinkat(target, dir, name);
    if (rc < 0) throw errnoError(rc, `symlink ${name}`);
  });
}

/** Creates the FIFO `rel` with permissions `mode` (nothing may be at `rel`). */
export function makeFifo(root: Root, rel: string, mode: number): void {
  inParent(root, rel, (dir, name) => {
    const n = native();
    if (!n) throw errnoError(-38, "mkfifoat needs rune's native code");
    const rc = n.fdMkfifoat(dir, name, mode);
    if (rc < 0) throw errnoError(rc, `mkfifo ${name}`);
  });
}
