// Concourse's own reads and writes in its folders (the destination of `in`, the put folder of
// `out`, scratch folders), through src/core/fd: a folder is held by descriptor (from before the run
// where an agent works in it), a link, FIFO or device in it is refused, never written through,
// read or blocked on, and a scratch folder is removed without following a link.
import { basename, dirname, relative } from 'node:path';
import { RuneError } from '../core/errors.ts';
import { isPathRefused, Root, removeTree, replaceFile } from '../core/fd/index.ts';
import { realPath } from '../core/paths.ts';

/** The folder `path` held by descriptor (opened through no link once its real path is known). */
export function holdFolder(step: string, path: string, what: string): Root {
  try {
    return Root.open(realPath(path));
  } catch (error) {
    throw new RuneError('IO', `${step}: ${what} ${path} cannot be opened: ${(error as Error).message}`, {
      cause: error,
    });
  }
}

/**
 * Writes the file `name` of the held folder `dest` (a temporary file renamed over it): refused when
 * the folder moved since it was held or something other than a regular file is at `name`.
 */
export function writeInto(step: string, dest: Root, name: string, data: string): void {
  try {
    dest.verify();
    replaceFile(dest, name, data);
  } catch (error) {
    const why = isPathRefused(error)
      ? error.message
      : ((error as NodeJS.ErrnoException).code ?? String(error));
    throw new RuneError(
      'IO',
      `${step}: cannot write ${dest.where(name)}: ${why}; nothing was written there`,
      {
        cause: error,
      },
    );
  }
}

/** A regular file's text at the real path `file` inside the real folder `root`, read through no link. */
export function readInside(root: string, file: string): string {
  const held = Root.open(root);
  try {
    return held.readFile(relative(root, file)).bytes.toString('utf8');
  } finally {
    held.close();
  }
}

/** Removes a scratch folder by descriptor; what could not go is returned, one line each. */
export function removeScratch(path: string): string[] {
  try {
    const parent = Root.open(realPath(dirname(path)));
    try {
      return removeTree(parent, basename(path));
    } finally {
      parent.close();
    }
  } catch (error) {
    return [`${path}: ${(error as Error).message}`];
  }
}
