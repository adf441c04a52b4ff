// The system calls under src/core/fd/: descriptor-relative opens, listings and changes, from rune's
// addon (native/src/fdops.c: openat2 with RESOLVE_BENEATH | RESOLVE_NO_SYMLINKS, or a walk with
// O_NOFOLLOW on kernels without it). Without the addon (a source checkout before `npm run
// build:native`) the same through /proc/self/fd/N/<name>, the path form of each *at call, which
// costs a /proc lookup per call but follows no symlink either. Failures throw an error with `code`.
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  mkdirSync,
  openSync,
  readdirSync,
  readlinkSync,
  readSync,
  renameSync,
  rmdirSync,
  type Stats,
  unlinkSync,
} from 'node:fs';
import { constants as osConstants } from 'node:os';
import { runeAddon } from '../native.ts';

/** Linux's O_PATH (x86-64 and arm64); Node does not export it. */
export const O_PATH = 0o10000000;
/** renameat2 flags. */
export const RENAME_NOREPLACE = 1;
export const RENAME_EXCHANGE = 2;

export type Kind =
  | 'file'
  | 'dir'
  | 'symlink'
  | 'fifo'
  | 'socket'
  | 'char-device'
  | 'block-device'
  | 'unknown';

/** What lstat says of one entry (never of a link's target). */
export interface Entry {
  kind: Kind;
  mode: number;
  nlink: number;
  uid: number;
  gid: number;
  dev: number;
  ino: number;
  size: number;
  mtimeMs: number;
  ctimeMs: number;
}

export interface Listed {
  name: string;
  /** From the listing's d_type; 'unknown' when the file system does not say. */
  kind: Kind;
}

export interface FdSys {
  readonly kind: 'native' | 'proc';
  /** Opens a relative path (or ".") below `dirFd`, following no link anywhere; O_NOFOLLOW and O_CLOEXEC added. */
  resolve(dirFd: number, path: string, flags: number, mode?: number): number;
  mkdirAt(dirFd: number, name: string, mode: number): void;
  unlinkAt(dirFd: number, name: string, removeDir: boolean): void;
  readlinkAt(dirFd: number, name: string): string;
  renameAt(fromDir: number, from: string, toDir: number, to: string, flags?: number): void;
  /** lstat of one entry of `dirFd`, or of `dirFd` itself for ''. */
  statAt(dirFd: number, name: string): Entry;
  /**
   * lstat of the last component of a relative path below `dirFd`, its folders resolved through no
   * link (ELOOP); undefined when nothing is there (ENOENT, ENOTDIR) — no error is made for that.
   */
  statPath(dirFd: number, path: string): Entry | undefined;
  list(dirFd: number): Listed[];
  close(fd: number): void;
  /**
   * Opens one entry of `dirFd` for reading (O_NONBLOCK: a FIFO cannot block the open), following no
   * link, and writes its fstat into `stat` (OpenedStat): one call where a walk opens every file.
   */
  openRead(dirFd: number, name: string, stat: Float64Array): number;
  /**
   * Reads `fd` from offset 0 into `buffer`, at most `size` bytes, the first `sniff` alone (the rest
   * is not read when they hold a NUL: a binary file), then closes `fd`, also on failure. The length.
   */
  readClose(fd: number, buffer: Buffer, size: number, sniff: number): number;
}

/** The slots of openRead's `stat`. */
export const OpenedStat = { mode: 0, nlink: 1, dev: 2, ino: 3, size: 4, mtimeMs: 5, length: 6 } as const;

const S_IFMT = 0o170000;
// File types of st_mode (a Map: biome's fixer rewrites octal object keys into wrong decimals).
const KINDS = new Map<number, Kind>([
  [0o100000, 'file'],
  [0o040000, 'dir'],
  [0o120000, 'symlink'],
  [0o010000, 'fifo'],
  [0o140000, 'socket'],
  [0o020000, 'char-device'],
  [0o060000, 'block-device'],
]);

export function kindOf(mode: number): Kind {
  return KINDS.get(mode & S_IFMT) ?? 'unknown';
}

const ERRNO_NAMES = new Map(Object.entries(osConstants.errno).map(([name, value]) => [value, name]));

export function errnoError(negative: number, what: string): NodeJS.ErrnoException {
  const code = ERRNO_NAMES.get(-negative) ?? `E${-negative}`;
  // Mostly control flow (ENOENT for a path that is not there): no stack trace, which costs more
  // than the system call.
  const limit = Error.stackTraceLimit;
  Error.stackTraceLimit = 0;
  const error: NodeJS.ErrnoException = new Error(`${code}: ${what}`);
  Error.stackTraceLimit = limit;
  error.code = code;
  error.errno = negative;
  return error;
}

function einval(what: string): NodeJS.ErrnoException {
  return errnoError(-osConstants.errno.EINVAL, what);
}

/** One path component: a slash, `.` or `..` would lead elsewhere than the caller checked. */
export function isComponent(name: string): boolean {
  return name !== '' && name !== '.' && name !== '..' && !name.includes('/') && !name.includes('\0');
}

interface NativeFd {
  fdResolve(dirFd: number, path: string, flags: number, mode: number): number;
  fdOpenat2(forceWalk: number): number;
  fdMkdirat(dirFd: number, name: string, mode: number): number;
  fdUnlinkat(dirFd: number, name: string, removeDir: number): number;
  fdReadlinkat(dirFd: number, name: string): string | number;
  fdRenameat(fromDir: number, from: string, toDir: number, to: string, flags: number): number;
  fdStatat(dirFd: number, name: string): number[] | number;
  fdStatPath(dirFd: number, path: string): number[] | number;
  listFd(dirFd: number): [string[], number[]] | number;
  closeFd(fd: number): number;
  fdOpenRead(dirFd: number, name: string, stat: Float64Array): number;
  fdReadClose(fd: number, buffer: Buffer, size: number, sniff: number): number;
}

// d_type values (dirent.h).
const DT_KINDS: Record<number, Kind> = {
  1: 'fifo',
  2: 'char-device',
  4: 'dir',
  6: 'block-device',
  8: 'file',
  10: 'symlink',
  12: 'socket',
};

const { ENOENT, ENOTDIR } = osConstants.errno;

function entryFrom(st: number[]): Entry {
  const [mode = 0, nlink = 0, uid = 0, gid = 0, dev = 0, ino = 0, size = 0, mtimeMs = 0, ctimeMs = 0] = st;
  return { kind: kindOf(mode), mode, nlink, uid, gid, dev, ino, size, mtimeMs, ctimeMs };
}

function check(result: number, what: string): void {
  if (result < 0) throw errnoError(result, what);
}

function nativeSys(n: NativeFd): FdSys {
  return {
    kind: 'native',
    resolve(dirFd, path, flags, mode = 0) {
      const fd = n.fdResolve(dirFd, path, flags, mode);
      check(fd, `open ${path}`);
      return fd;
    },
    mkdirAt: (dirFd, name, mode) => check(n.fdMkdirat(dirFd, name, mode), `mkdir ${name}`),
    unlinkAt: (dirFd, name, removeDir) =>
      check(n.fdUnlinkat(dirFd, name, removeDir ? 1 : 0), `remove ${name}`),
    readlinkAt(dirFd, name) {
      const target = n.fdReadlinkat(dirFd, name);
      if (typeof target === 'number') throw errnoError(target, `readlink ${name}`);
      return target;
    },
    renameAt: (fromDir, from, toDir, to, flags = 0) =>
      check(n.fdRenameat(fromDir, from, toDir, to, flags), `rename ${from} to ${to}`),
    statAt(dirFd, name) {
      const st = n.fdStatat(dirFd, name);
      if (typeof st === 'number') throw errnoError(st, `stat ${name}`);
      return entryFrom(st);
    },
    statPath(dirFd, path) {
      const st = n.fdStatPath(dirFd, path);
      if (typeof st !== 'number') return entryFrom(st);
      if (st === -ENOENT || st === -ENOTDIR) return undefined;
      throw errnoError(st, `stat ${path}`);
    },
    list(dirFd) {
      const listed = n.listFd(dirFd);
      if (typeof listed === 'number') throw errnoError(listed, 'list folder');
      const [names, types] = listed;
      return names.map((name, i) => ({ name, kind: DT_KINDS[types[i] ?? 0] ?? 'unknown' }));
    },
    close: (fd) => check(n.closeFd(fd), 'close'),
    openRead(dirFd, name, stat) {
      const fd = n.fdOpenRead(dirFd, name, stat);
      check(fd, `open ${name}`);
      return fd;
    },
    readClose(fd, buffer, size, sniff) {
      const length = n.fdReadClose(fd, buffer, size, sniff);
      check(length, 'read');
      return length;
    },
  };
}

const at = (fd: number, name: string) => `/proc/self/fd/${fd}/${name}`;

function entryOf(st: Stats): Entry {
  const { mode, nlink, uid, gid, dev, ino, size, mtimeMs, ctimeMs } = st;
  return { kind: kindOf(mode), mode, nlink, uid, gid, dev, ino, size, mtimeMs, ctimeMs };
}

/** The /proc path form: the magic link leads exactly to the open folder, the name is one component. */
export const procSys: FdSys = {
  kind: 'proc',
  resolve(dirFd, path, flags, mode = 0) {
    const parts = path === '.' ? ['.'] : path.split('/');
    if (path !== '.' && !parts.every(isComponent)) throw einval(`not a relative path: ${path}`);
    let current = dirFd;
    const last = parts.pop() as string;
    try {
      for (const part of parts) {
        let next: number;
        try {
          next = openSync(at(current, part), O_PATH | constants.O_DIRECTORY | constants.O_NOFOLLOW);
        } catch (error) {
          const link = (error as NodeJS.ErrnoException).code === 'ENOTDIR' && isLink(current, part);
          throw link ? errnoError(-osConstants.errno.ELOOP, `open ${path}`) : error;
        }
        if (current !== dirFd) closeSync(current);
        current = next;
      }
      const fd = openSync(at(current, last), flags | constants.O_NOFOLLOW, mode);
      if (flags & O_PATH && fstatSync(fd).isSymbolicLink()) {
        closeSync(fd);
        throw errnoError(-osConstants.errno.ELOOP, `open ${path}`);
      }
      return fd;
    } finally {
      if (current !== dirFd) closeSync(current);
    }
  },
  mkdirAt(dirFd, name, mode) {
    if (!isComponent(name)) throw einval(name);
    mkdirSync(at(dirFd, name), { mode });
  },
  unlinkAt(dirFd, name, removeDir) {
    if (!isComponent(name)) throw einval(name);
    (removeDir ? rmdirSync : unlinkSync)(at(dirFd, name));
  },
  readlinkAt(dirFd, name) {
    if (!isComponent(name)) throw einval(name);
    return readlinkSync(at(dirFd, name));
  },
  renameAt(fromDir, from, toDir, to, flags = 0) {
    if (!isComponent(from) || !isComponent(to)) throw einval(`${from} → ${to}`);
    // No renameat2 here: "no replace" is checked first (a dev fallback; the addon does it atomically).
    if (flags & RENAME_NOREPLACE && lstatSync(at(toDir, to), { throwIfNoEntry: false })) {
      throw errnoError(-osConstants.errno.EEXIST, `rename ${from} to ${to}`);
    }
    if (flags & ~RENAME_NOREPLACE) throw einval('renameat2 flags need the addon');
    renameSync(at(fromDir, from), at(toDir, to));
  },
  statAt(dirFd, name) {
    if (name === '') return entryOf(fstatSync(dirFd));
    if (!isComponent(name)) throw einval(name);
    return entryOf(lstatSync(at(dirFd, name)));
  },
  statPath(dirFd, path) {
    const slash = path.lastIndexOf('/');
    if (slash < 0) return statOrNone(() => procSys.statAt(dirFd, path));
    let parent: number;
    try {
      parent = procSys.resolve(dirFd, path.slice(0, slash), O_PATH | constants.O_DIRECTORY);
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
      throw error;
    }
    try {
      return statOrNone(() => procSys.statAt(parent, path.slice(slash + 1)));
    } finally {
      closeSync(parent);
    }
  },
  list(dirFd) {
    return readdirSync(`/proc/self/fd/${dirFd}`, { withFileTypes: true }).map((entry) => ({
      name: entry.name,
      kind: entry.isDirectory()
        ? 'dir'
        : entry.isFile()
          ? 'file'
          : entry.isSymbolicLink()
            ? 'symlink'
            : entry.isFIFO()
              ? 'fifo'
              : entry.isSocket()
                ? 'socket'
                : entry.isCharacterDevice()
                  ? 'char-device'
                  : entry.isBlockDevice()
                    ? 'block-device'
                    : 'unknown',
    }));
  },
  close: (fd) => closeSync(fd),
  openRead(dirFd, name, stat) {
    if (!isComponent(name)) throw einval(name);
    const fd = openSync(at(dirFd, name), constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
    try {
      const st = fstatSync(fd);
      stat.set([st.mode, st.nlink, st.dev, st.ino, st.size, st.mtimeMs]);
    } catch (error) {
      closeSync(fd);
      throw error;
    }
    return fd;
  },
  readClose(fd, buffer, size, sniff) {
    let length = 0;
    try {
      while (length < size) {
        const want = length === 0 && sniff > 0 ? Math.min(size, sniff) : size - length;
        const n = readSync(fd, buffer, length, want, length);
        if (n === 0) break;
        length += n;
        if (length === n && length < size && buffer.subarray(0, length).includes(0)) break;
      }
    } finally {
      closeSync(fd);
    }
    return length;
  },
};

function statOrNone(stat: () => Entry): Entry | undefined {
  try {
    return stat();
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT' || code === 'ENOTDIR') return undefined;
    throw error;
  }
}

function isLink(dirFd: number, name: string): boolean {
  try {
    return lstatSync(at(dirFd, name)).isSymbolicLink();
  } catch {
    return false;
  }
}

let chosen: FdSys | undefined;

/** The addon's calls when this build has them, else the /proc form. */
export function fdSys(): FdSys {
  if (chosen) return chosen;
  try {
    const native = runeAddon<Partial<NativeFd>>();
    if (typeof native.fdResolve === 'function' && typeof native.fdOpenRead === 'function') {
      chosen = nativeSys(native as NativeFd);
      return chosen;
    }
  } catch {
    // No addon here (unit tests before it is built): the /proc form is as safe, only slower.
  }
  chosen = procSys;
  return chosen;
}

/**
 * Tests: resolve by the component walk instead of openat2 (`walk`), or by the /proc form (`proc`),
 * or as this machine does by default (`auto`). Answers what is used now.
 */
export function useResolution(how: 'auto' | 'walk' | 'proc'): 'openat2' | 'walk' | 'proc' {
  chosen = undefined;
  if (how === 'proc') {
    chosen = procSys;
    return 'proc';
  }
  const sys = fdSys();
  if (sys.kind === 'proc') return 'proc';
  const native = runeAddon<NativeFd>();
  return native.fdOpenat2(how === 'walk' ? 1 : 0) ? 'openat2' : 'walk';
}
