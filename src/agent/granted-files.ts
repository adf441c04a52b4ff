// A write grant on a file that does not exist yet (`echo hi > proof.txt`, approved): the sandbox
// can only let a command write a file that is there to be bound, and letting it create files in
// the folder would grant more than was asked. So the file is created empty before the call, in the
// folder the policy resolved (held by descriptor through src/core/fd: no link followed, O_EXCL),
// and removed after the call when the command never opened it for writing (still empty, its
// change time untouched).
import { basename, dirname } from 'node:path';
import { createFile, type Entry, Root, removeEntry } from '../core/fd/index.ts';

interface Created {
  folder: Root;
  name: string;
  made: Entry;
}

/** Creates each missing file of `paths` (absolute, canonical); the returned function undoes what the call left unused. */
export function createGrantedFiles(paths: readonly string[]): () => void {
  const created: Created[] = [];
  for (const path of paths) {
    const made = createEmpty(path);
    if (made) created.push(made);
  }
  return () => {
    for (const { folder, name, made } of created) {
      try {
        const now = folder.stat(name);
        if (now?.kind === 'file' && now.ino === made.ino && now.size === 0 && now.ctimeMs === made.ctimeMs) {
          removeEntry(folder, name);
        }
      } catch {
        // Gone, replaced or moved: nothing of ours to remove.
      } finally {
        folder.close();
      }
    }
  };
}

function createEmpty(path: string): Created | undefined {
  let folder: Root;
  try {
    // The folder the policy judged, opened from '/' through no link (one swapped in since refuses).
    folder = Root.open(dirname(path));
  } catch {
    // No such folder (or not that folder any more): the command's own redirection fails the way
    // the shell reports it.
    return undefined;
  }
  const name = basename(path);
  try {
    if (folder.stat(name)) throw new Error('exists');
    createFile(folder, name, '');
    const made = folder.stat(name);
    if (made?.kind !== 'file') throw new Error('replaced');
    return { folder, name, made };
  } catch {
    folder.close();
    return undefined;
  }
}
