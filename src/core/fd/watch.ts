// Change notification for folders held by descriptor (inotify, through rune's addon: native/src/
// fdwatch.c). A watch is added on the folder a descriptor holds (its /proc/self/fd link), never on a
// path that could have been swapped; events are read without blocking. The kernel queues an event
// in the system call that made the change, so once a command's processes are gone every change they
// made is in the queue. Without the addon or inotify, `Watcher.open()` says why and callers scan.
import { constants } from 'node:fs';
import { runeAddon } from '../native.ts';
import type { Root } from './root.ts';
import { errnoError, O_PATH } from './sys.ts';

/** inotify event bits (linux/inotify.h). */
export const IN = {
  MODIFY: 0x2,
  ATTRIB: 0x4,
  CLOSE_WRITE: 0x8,
  MOVED_FROM: 0x40,
  MOVED_TO: 0x80,
  CREATE: 0x100,
  DELETE: 0x200,
  DELETE_SELF: 0x400,
  MOVE_SELF: 0x800,
  UNMOUNT: 0x2000,
  Q_OVERFLOW: 0x4000,
  IGNORED: 0x8000,
  EXCL_UNLINK: 0x4000000,
  ISDIR: 0x40000000,
} as const;

/** Every change to a folder's entries, or to a file's content, mode or times, reported on its folder. */
export const CHANGE_MASK =
  IN.MODIFY |
  IN.ATTRIB |
  IN.CLOSE_WRITE |
  IN.MOVED_FROM |
  IN.MOVED_TO |
  IN.CREATE |
  IN.DELETE |
  IN.DELETE_SELF |
  IN.MOVE_SELF |
  IN.EXCL_UNLINK;

export interface WatchEvent {
  wd: number;
  mask: number;
  /** The entry of the watched folder the event is about; '' for the folder itself. */
  name: string;
}

interface NativeWatch {
  watchInit(): number;
  watchAdd(inotifyFd: number, dirFd: number, mask: number): number;
  watchRemove(inotifyFd: number, wd: number): number;
  watchRead(inotifyFd: number): [number[], number[], string[]] | number;
  closeFd(fd: number): number;
}

function nativeWatch(): NativeWatch | string {
  try {
    const addon = runeAddon<Partial<NativeWatch>>();
    if (typeof addon.watchInit === 'function') return addon as NativeWatch;
    return 'this build of rune has no change notification';
  } catch (error) {
    return `rune's native code is not available (${(error as Error).message})`;
  }
}

export class Watcher {
  readonly #n: NativeWatch;
  #fd: number;

  private constructor(n: NativeWatch, fd: number) {
    this.#n = n;
    this.#fd = fd;
  }

  /** A new inotify instance, or why there is none (no addon, the per-user instance limit). */
  static open(): Watcher | string {
    const n = nativeWatch();
    if (typeof n === 'string') return n;
    const fd = n.watchInit();
    if (fd < 0) return `inotify is not available (${errnoError(fd, 'inotify_init1').code})`;
    return new Watcher(n, fd);
  }

  /** Watches the folder `rel` below `root` (opened through no link); its watch descriptor. */
  add(root: Root, rel: string, mask: number = CHANGE_MASK): number {
    const fd = root.resolveIn(rel, O_PATH | constants.O_DIRECTORY);
    try {
      return this.addFd(fd, mask);
    } finally {
      root.sys.close(fd);
    }
  }

  /** Watches the folder open as `dirFd`. Throws with `code` (ENOSPC: the watch limit). */
  addFd(dirFd: number, mask: number = CHANGE_MASK): number {
    const wd = this.#n.watchAdd(this.#check(), dirFd, mask);
    if (wd < 0) throw errnoError(wd, 'inotify_add_watch');
    return wd;
  }

  remove(wd: number): void {
    // EINVAL: the kernel already dropped it (its folder was removed).
    this.#n.watchRemove(this.#check(), wd);
  }

  /** Every event queued so far (none: an empty list). */
  read(): WatchEvent[] {
    const got = this.#n.watchRead(this.#check());
    if (typeof got === 'number') throw errnoError(got, 'read inotify events');
    const [wds, masks, names] = got;
    return wds.map((wd, i) => ({ wd, mask: masks[i] ?? 0, name: names[i] ?? '' }));
  }

  close(): void {
    if (this.#fd < 0) return;
    this.#n.closeFd(this.#fd);
    this.#fd = -1;
  }

  #check(): number {
    if (this.#fd < 0) throw new Error('watcher used after close');
    return this.#fd;
  }
}
