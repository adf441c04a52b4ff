// A write grant on a file that does not exist yet (`echo hi > proof.txt`, approved): the sandbox
// can only let a command write a file that is there to be bound, and letting it create files in
// the folder would grant more than was asked. So the file is created empty before the call, in the
// folder the policy resolved (opened once, no link followed), and removed after the call when the
// command never opened it for writing (still empty, its change time untouched).
import {
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readlinkSync,
  type Stats,
  unlinkSync,
} from 'node:fs';
import { basename, dirname } from 'node:path';

interface Created {
  dirFd: number;
  name: string;
  stat: { ino: bigint; ctimeNs: bigint };
}

/** Creates each missing file of `paths` (absolute, canonical); the returned function undoes what the call left unused. */
export function createGrantedFiles(paths: readonly string[]): () => void {
  const created: Created[] = [];
  for (const path of paths) {
    const made = createEmpty(path);
    if (made) created.push(made);
  }
  return () => {
    for (const { dirFd, name, stat } of created) {
      const at = `/proc/self/fd/${dirFd}/${name}`;
      try {
        const now = lstatSync(at, { bigint: true });
        if (now.isFile() && now.ino === stat.ino && now.size === 0n && now.ctimeNs === stat.ctimeNs) {
          unlinkSync(at);
        }
      } catch {
        // Gone or replaced: nothing of ours to remove.
      } finally {
        closeSync(dirFd);
      }
    }
  };
}

function createEmpty(path: string): Created | undefined {
  const folder = dirname(path);
  const name = basename(path);
  let dirFd: number;
  try {
    dirFd = openSync(folder, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch {
    // No such folder: the command's own redirection fails the way the shell reports it.
    return undefined;
  }
  try {
    // The folder opened must be the one the policy judged (no link swapped in since).
    if (readlinkSync(`/proc/self/fd/${dirFd}`) !== folder) throw new Error('moved');
    let existing: Stats | undefined;
    try {
      existing = lstatSync(`/proc/self/fd/${dirFd}/${name}`);
    } catch {
      existing = undefined;
    }
    if (existing) throw new Error('exists');
    const fd = openSync(
      `/proc/self/fd/${dirFd}/${name}`,
      constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW | constants.O_NONBLOCK,
      0o644,
    );
    try {
      const stat = fstatSync(fd, { bigint: true });
      return { dirFd, name, stat: { ino: stat.ino, ctimeNs: stat.ctimeNs } };
    } finally {
      closeSync(fd);
    }
  } catch {
    closeSync(dirFd);
    return undefined;
  }
}
