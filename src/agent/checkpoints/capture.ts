// Turning what is at a path into a `Held`, and a file's bytes into a blob of the store: the entry
// is opened below its already opened folder through no link, without blocking (O_NONBLOCK), and
// read only when fstat says it is a regular file no larger than checkpoints.max_file_mb.
import { constants } from 'node:fs';
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
export function stampOf(entry: Entry): string {
  return `${entry.dev}:${entry.ino}:${entry.size}:${entry.mtimeMs}:${entry.ctimeMs}:${entry.mode}`;
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
    const { bytes, cut } = readAll(fd, capture.maxFileBytes);
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
