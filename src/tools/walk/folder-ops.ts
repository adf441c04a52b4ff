// How the walk opens and lists relative to an open folder: src/core/fd's system calls (rune's addon:
// openat2 through no link, or one component at a time with O_NOFOLLOW; without the addon, the path
// form /proc/self/fd/N/<name>, which follows no symlink either).
//
// Node closes the descriptors a worker opened through node:fs when the worker is terminated, but
// not those the addon opened: those are written into a shared registry (one Int32Array slot each,
// -1 when free) that the main thread closes after the worker is gone (FdRegistry).
import { closeSync } from 'node:fs';
import { type FdSys, fdSys, isComponent, type Kind, procSys } from '../../core/fd/sys.ts';

export type EntryKind = 'dir' | 'file' | 'symlink' | 'special';

export interface FolderEntry {
  name: string;
  kind: EntryKind;
}

export interface FolderOps {
  readonly kind: 'native' | 'proc';
  /** Opens one entry of the open folder without following a symlink; throws an error with `code`. */
  openAt(dirFd: number, name: string, flags: number): number;
  /** Opens a relative path below the open folder, following no symlink anywhere on the way. */
  openPath(dirFd: number, path: string, flags: number): number;
  /** The entries of the open folder (not . and ..), in git's order (gitOrder). */
  list(dirFd: number): FolderEntry[];
  /** Closes what openAt opened. */
  close(fd: number): void;
  /** Opens one entry for reading (a FIFO cannot block), its fstat into `stat` (OpenedStat). */
  openRead(dirFd: number, name: string, stat: Float64Array): number;
  /** Reads what openRead opened from its start (FdSys.readClose), and closes it. */
  readClose(fd: number, buffer: Buffer, size: number, sniff: number): number;
}

/** Slots of open descriptors shared with the main thread: enough for the deepest walk. */
export const FD_REGISTRY_SLOTS = 512;

/** A new registry, every slot free. */
export function newFdRegistry(): Int32Array {
  return new Int32Array(new SharedArrayBuffer(FD_REGISTRY_SLOTS * 4)).fill(-1);
}

/** Closes what a terminated worker left open (the main thread, after its 'exit'). */
export function closeLeftovers(registry: Int32Array): number {
  let closed = 0;
  for (let i = 0; i < registry.length; i++) {
    const fd = Atomics.exchange(registry, i, -1);
    if (fd < 0) continue;
    try {
      closeSync(fd);
      closed++;
    } catch {
      // Already closed.
    }
  }
  return closed;
}

let registry: Int32Array | undefined;

/** The worker's registry (set before the first folderOps() call). */
export function useFdRegistry(shared: Int32Array): void {
  registry = shared;
}

// Recorded after the open and cleared before the close, so a descriptor the registry names is one
// the worker still holds: closing it later can never hit a number the process reused.
function remember(fd: number): void {
  if (!registry) return;
  for (let i = 0; i < registry.length; i++) {
    if (Atomics.compareExchange(registry, i, -1, fd) === -1) return;
  }
}

function forget(fd: number): void {
  if (!registry) return;
  for (let i = 0; i < registry.length; i++) {
    if (Atomics.compareExchange(registry, i, fd, -1) === fd) return;
  }
}

function entryKind(sys: FdSys, dirFd: number, name: string, kind: Kind): EntryKind {
  if (kind === 'unknown') {
    try {
      kind = sys.statAt(dirFd, name).kind;
    } catch {
      // Gone meanwhile.
    }
  }
  return kind === 'dir' || kind === 'file' || kind === 'symlink' ? kind : 'special';
}

function opsOver(sys: FdSys): FolderOps {
  // Node itself closes what a terminated worker opened through node:fs (the /proc form).
  const opened = (fd: number) => {
    if (sys.kind === 'native') remember(fd);
    return fd;
  };
  return {
    kind: sys.kind,
    openAt(dirFd, name, flags) {
      if (!isComponent(name)) {
        const error: NodeJS.ErrnoException = new Error(`EINVAL: not a single file name: ${name}`);
        error.code = 'EINVAL';
        throw error;
      }
      return opened(sys.resolve(dirFd, name, flags));
    },
    openPath: (dirFd, path, flags) => opened(sys.resolve(dirFd, path, flags)),
    close(fd) {
      if (sys.kind === 'native') forget(fd);
      sys.close(fd);
    },
    openRead: (dirFd, name, stat) => opened(sys.openRead(dirFd, name, stat)),
    readClose(fd, buffer, size, sniff) {
      if (sys.kind === 'native') forget(fd);
      return sys.readClose(fd, buffer, size, sniff);
    },
    list(dirFd) {
      const entries = sys
        .list(dirFd)
        .map((e) => ({ name: e.name, kind: entryKind(sys, dirFd, e.name, e.kind) }));
      // The addon lists in git's order already (native/src/addon.c).
      return sys.kind === 'native' ? entries : gitOrder(entries);
    },
  };
}

/**
 * Git's order (what `git ls-files` prints): names compared as UTF-8 bytes, a folder's as if it
 * ended with '/'.
 */
export function gitOrder(entries: readonly FolderEntry[]): FolderEntry[] {
  return entries
    .map((entry) => ({ entry, key: Buffer.from(entry.kind === 'dir' ? `${entry.name}/` : entry.name) }))
    .sort((a, b) => Buffer.compare(a.key, b.key))
    .map(({ entry }) => entry);
}

/** The /proc form, also where the addon is present (tests compare the two). */
export const procOps: FolderOps = opsOver(procSys);

let chosen: FolderOps | undefined;

/** The addon's operations when this build has them, else the /proc form. */
export function folderOps(): FolderOps {
  chosen ??= fdSys().kind === 'native' ? opsOver(fdSys()) : procOps;
  return chosen;
}
