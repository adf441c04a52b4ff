// The FUSE half of rune's native addon (native/src/fuse_*.c): libfuse 3 loaded at run time, a mount
// whose FUSE thread posts events here and waits for nothing, and the answers to those events.
import { join } from 'node:path';
import { loadNative } from '../core/native.ts';
import { NATIVE_ASSET } from '../sandbox/native.ts';

/** What the FUSE thread hands over: one request to answer by `id` (or a notice, id 0). */
export type FuseEvent =
  | { op: 'open'; id: number; ino: number; pid: number; sid: number; uid: number; flags: number }
  | { op: 'read'; id: number; ino: number; fh: number; offset: number; size: number; pid: number }
  | { op: 'write'; id: number; ino: number; fh: number; offset: number; data: Buffer }
  | { op: 'release'; ino: number; fh: number }
  /** The reader of a pending read was interrupted (Ctrl-C): answer it now. */
  | { op: 'interrupt'; id: number }
  /** The kernel ended the mount (fusermount3 -u, umount): nothing more will come. */
  | { op: 'ended' };

export interface FuseNode {
  ino: number;
  parent: number;
  name: string;
  dir: boolean;
  mode: number;
  /** Fixed content, served by the FUSE thread itself; absent for a file answered from here. */
  content?: Buffer;
}

export type FuseHandle = { readonly brand: 'FuseHandle' };

/** How fuseReply answers: an open (the handle number), data, a write (bytes taken), an errno. */
export const Reply = { Open: 0, Data: 1, Written: 2, Error: 3 } as const;
export type ReplyKind = (typeof Reply)[keyof typeof Reply];

export interface FuseNative {
  fuseStatus(): { library: string; version: string } | { error: string };
  /** Throws with libfuse's own reason when the mount fails. */
  fuseMount(mountpoint: string, options: string, onEvent: (event: FuseEvent) => void): FuseHandle;
  /** Replaces the tree (a no-op once the mount has ended). */
  fuseSetTree(handle: FuseHandle, nodes: readonly FuseNode[]): void;
  /** False when `id` was not pending (answered before, interrupted and answered, or the mount ended). */
  fuseReply(handle: FuseHandle, id: number, kind: ReplyKind, value: number | Buffer): boolean;
  fuseUnmount(handle: FuseHandle, errno: number): void;
}

export function fuseNative(): FuseNative {
  return loadNative<FuseNative>(
    NATIVE_ASSET,
    join(process.cwd(), 'native', 'build', 'Release', 'rune_native.node'),
  );
}
