// What src/core/fd/ says when it will not act on a path: which path, and why, in words the model and
// the person read as they are ("… is a symbolic link: refused", "… moved during the call: refused").
import { RuneError } from '../errors.ts';
import type { Kind } from './sys.ts';

export type RefusalReason = 'symlink' | 'kind' | 'moved' | 'mount' | 'changed';

const KIND_WORDS: Record<Kind, string> = {
  file: 'a regular file',
  dir: 'a folder',
  symlink: 'a symbolic link',
  fifo: 'a FIFO',
  socket: 'a socket',
  'char-device': 'a character device',
  'block-device': 'a block device',
  unknown: 'not a regular file or folder',
};

/** "a FIFO", "a symbolic link", … */
export function kindWords(kind: Kind): string {
  return KIND_WORDS[kind];
}

/** A path rune did not act on, and why (an IO error when it ends a run). */
export class PathRefused extends RuneError {
  constructor(
    readonly reason: RefusalReason,
    readonly path: string,
    message: string,
    /** What is at `path` now, when that is why. */
    readonly kind?: Kind,
  ) {
    super('IO', message);
    this.name = 'PathRefused';
  }
}

/** "PATH is a symbolic link: refused" (the path is the link itself, wherever on the way it was). */
export function linkRefused(path: string): PathRefused {
  return new PathRefused('symlink', path, `${path} is a symbolic link: refused`, 'symlink');
}

/** "PATH is a FIFO: refused", or a folder where a file was wanted, and so on. */
export function kindRefused(path: string, kind: Kind): PathRefused {
  return new PathRefused(
    kind === 'symlink' ? 'symlink' : 'kind',
    path,
    `${path} is ${kindWords(kind)}: refused`,
    kind,
  );
}

/** A pinned folder whose path now names something else. */
export function movedRefused(path: string, now: string): PathRefused {
  return new PathRefused('moved', path, `${path} moved during the call (${now}): refused`);
}

export function isPathRefused(error: unknown): error is PathRefused {
  return error instanceof PathRefused;
}
