// How the walk opens and lists relative to an open folder. Native: openat(2) and a listing of the
// descriptor (rune's addon), one component at a time with O_NOFOLLOW. Without the addon (a source
// checkout before `npm run build:native`): the same through /proc/self/fd/N/<name>, the path form
// of openat, which costs the kernel a /proc lookup per call but follows no symlink either.
//
// Node closes the descriptors a worker opened through node:fs when the worker is terminated, but
// not those the addon opened: those are written into a shared registry (one Int32Array slot each,
// -1 when free) that the main thread closes after the worker is gone (FdRegistry).
import { closeSync, constants as fsConstants, lstatSync, openSync, readdirSync } from 'node:fs';
import { constants as osConstants } from 'node:os';
import { runeNative } from '../../sandbox/native.ts';

export type EntryKind = 'dir' | 'file' | 'symlink' | 'special';

export interface FolderEntry {
  name: string;
  kind: EntryKind;
}

export interface FolderOps {
  readonly kind: 'native' | 'proc';
  /** Opens one entry of the open folder without following a symlink; throws an error with `code`. */
  openAt(dirFd: number, name: string, flags: number): number;
  /** The entries of the open folder (not . and ..). */
  list(dirFd: number): FolderEntry[];
  /** Closes what openAt opened. */
  close(fd: number): void;
}

export const fdPath = (fd: number): string => `/proc/self/fd/${fd}`;

/** What lstat says of an entry whose type the listing did not give (DT_UNKNOWN). */
function kindByStat(dirFd: number, name: string): EntryKind {
  try {
    const st = lstatSync(`${fdPath(dirFd)}/${name}`);
    if (st.isDirectory()) return 'dir';
    if (st.isFile()) return 'file';
    if (st.isSymbolicLink()) return 'symlink';
  } catch {
    // Gone meanwhile.
  }
  return 'special';
}

/** One component below the folder: a slash, `.` or `..` would lead elsewhere than the walk checked. */
function oneComponent(name: string): void {
  if (name === '' || name === '.' || name === '..' || name.includes('/')) {
    const error: NodeJS.ErrnoException = new Error(`EINVAL: not a single file name: ${name}`);
    error.code = 'EINVAL';
    throw error;
  }
}

export const procOps: FolderOps = {
  kind: 'proc',
  openAt(dirFd, name, flags) {
    oneComponent(name);
    return openSync(`${fdPath(dirFd)}/${name}`, flags | fsConstants.O_NOFOLLOW);
  },
  close: (fd) => closeSync(fd),
  list(dirFd) {
    return readdirSync(fdPath(dirFd), { withFileTypes: true }).map((entry) => ({
      name: entry.name,
      kind: entry.isDirectory()
        ? 'dir'
        : entry.isFile()
          ? 'file'
          : entry.isSymbolicLink()
            ? 'symlink'
            : entry.isFIFO() || entry.isSocket() || entry.isCharacterDevice() || entry.isBlockDevice()
              ? 'special'
              : kindByStat(dirFd, entry.name),
    }));
  },
};

interface NativeFolder {
  openat(dirFd: number, name: string, flags: number): number;
  listFd(dirFd: number): [string[], number[]] | number;
  closeFd(fd: number): number;
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

const ERRNO_NAMES = new Map(Object.entries(osConstants.errno).map(([name, value]) => [value, name]));

function errnoError(negative: number, what: string): NodeJS.ErrnoException {
  const code = ERRNO_NAMES.get(-negative) ?? `E${-negative}`;
  const error: NodeJS.ErrnoException = new Error(`${code}: ${what}`);
  error.code = code;
  error.errno = negative;
  return error;
}

// d_type values (dirent.h).
const DT_DIR = 4;
const DT_REG = 8;
const DT_LNK = 10;
const DT_UNKNOWN = 0;

function nativeOps(native: NativeFolder): FolderOps {
  return {
    kind: 'native',
    openAt(dirFd, name, flags) {
      oneComponent(name);
      const fd = native.openat(dirFd, name, flags);
      if (fd < 0) throw errnoError(fd, `openat ${name}`);
      remember(fd);
      return fd;
    },
    close(fd) {
      forget(fd);
      const result = native.closeFd(fd);
      if (result < 0) throw errnoError(result, 'close');
    },
    list(dirFd) {
      const listed = native.listFd(dirFd);
      if (typeof listed === 'number') throw errnoError(listed, 'list folder');
      const [names, types] = listed;
      return names.map((name, i) => {
        const type = types[i];
        const kind: EntryKind =
          type === DT_DIR
            ? 'dir'
            : type === DT_REG
              ? 'file'
              : type === DT_LNK
                ? 'symlink'
                : type === DT_UNKNOWN
                  ? kindByStat(dirFd, name)
                  : 'special';
        return { name, kind };
      });
    },
  };
}

let chosen: FolderOps | undefined;

/** The native operations when this build's addon has them, else the /proc form. */
export function folderOps(): FolderOps {
  if (chosen) return chosen;
  try {
    const native = runeNative() as unknown as Partial<NativeFolder>;
    if (
      typeof native.openat === 'function' &&
      typeof native.listFd === 'function' &&
      typeof native.closeFd === 'function'
    ) {
      chosen = nativeOps(native as NativeFolder);
      return chosen;
    }
  } catch {
    // No addon here (unit tests before it is built): the /proc form is as safe, only slower.
  }
  chosen = procOps;
  return chosen;
}
