// Turning what is at a path into a `Held`, and a file's bytes into a blob of the store: the entry
// is opened below its already opened folder through no link, without blocking (O_NONBLOCK), and
// read only when fstat says it is a regular file no larger than checkpoints.max_file_mb.
import { constants, readSync } from 'node:fs';
import { type Entry, readAll } from '../../core/fd/index.ts';
import type { FdSys } from '../../core/fd/sys.ts';
import type { CheckpointStore } from './store.ts';
import { sha256Hex } from './store.ts';
import { type Held, heldKind } from './types.ts';

export interface Capture {
  /** Where file content goes; without one only its digest is taken (a look before a restore). */
  store?: CheckpointStore;
  maxFileBytes: number;
}

/** lstat fields that change whenever content, kind or permissions do (ctime moves on every write). */
export type Stamp = Pick<Entry, 'dev' | 'ino' | 'size' | 'mtimeMs' | 'ctimeMs' | 'mode'>;

export function sameStamp(a: Stamp | undefined, b: Stamp): boolean {
  return (
    a !== undefined &&
    a.ctimeMs === b.ctimeMs &&
    a.mtimeMs === b.mtimeMs &&
    a.size === b.size &&
    a.ino === b.ino &&
    a.dev === b.dev &&
    a.mode === b.mode
  );
}

/**
 * A file's bytes, read into a buffer of the size fstat gave (one allocation; readAll's chunks cost
 * a first look at 10,000 files most of its time in the garbage collector), up to `max`.
 */
function readFile(fd: number, size: number, max: number): { bytes: Buffer; cut: boolean } {
  if (size >= max) return readAll(fd, max);
  const buffer = Buffer.allocUnsafe(size + 1);
  let read = 0;
  for (;;) {
    const n = readSync(fd, buffer, read, buffer.length - read, read);
    if (n === 0) return { bytes: buffer.subarray(0, read), cut: false };
    read += n;
    // Grew since fstat: the rest the slow way.
    if (read === buffer.length) return readAll(fd, max);
  }
}

/**
 * What the entry `name` of the open folder `dirFd` holds, its file content stored. `entry` is what
 * lstat said; a file that turned into something else meanwhile is looked at again.
 */
export function captureAt(sys: FdSys, dirFd: number, name: string, entry: Entry, capture: Capture): Held {
  const mode = entry.mode & 0o7777;
  switch (entry.kind) {
    case 'file':
      return captureFile(sys, dirFd, name, entry, capture);
    case 'dir':
      return { k: 'd', m: mode };
    case 'symlink':
      try {
        return { k: 'l', m: 0o777, t: sys.readlinkAt(dirFd, name) };
      } catch {
        return { k: 'l', m: 0o777, t: '' };
      }
    default:
      return { k: heldKind(entry.kind), m: mode };
  }
}

function captureFile(sys: FdSys, dirFd: number, name: string, entry: Entry, capture: Capture): Held {
  const mode = entry.mode & 0o7777;
  if (entry.size > capture.maxFileBytes) return { k: 'f', m: mode, z: entry.size, x: 'large' };
  let fd: number;
  try {
    fd = sys.resolve(dirFd, name, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    return { k: 'f', m: mode, z: entry.size, x: 'unreadable' };
  }
  try {
    const opened = sys.statAt(fd, '');
    if (opened.kind !== 'file') return { k: heldKind(opened.kind), m: opened.mode & 0o7777 };
    const { bytes, cut } = readFile(fd, opened.size, capture.maxFileBytes);
    const m = opened.mode & 0o7777;
    if (cut) return { k: 'f', m, z: opened.size, x: 'large' };
    const hash = sha256Hex(bytes);
    if (capture.store && !capture.store.putBlob(hash, bytes))
      return { k: 'f', m, z: bytes.length, x: 'full' };
    return { k: 'f', m, z: bytes.length, h: hash };
  } catch {
    return { k: 'f', m: mode, z: entry.size, x: 'unreadable' };
  } finally {
    sys.close(fd);
  }
}
