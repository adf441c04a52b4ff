// `rune mount --unmount DIR`: fusermount3 -u (umount as root without it), also for the mount of a
// rune that died. The serving rune sees the kernel end the mount and stops by itself.
import { spawnSync } from 'node:child_process';
import { RuneError } from '../core/errors.ts';
import { isRuneMount, mountPath } from './mountinfo.ts';
import { findFusermount } from './status.ts';

export function unmountCommand(
  dir: string,
  cwd: string,
  env: NodeJS.ProcessEnv,
  stderr: (text: string) => void,
  euid = process.geteuid?.() ?? -1,
): number {
  const path = mountPath(dir, cwd);
  if (!isRuneMount(path)) {
    throw new RuneError(
      'NOT_FOUND',
      `rune mount --unmount ${dir}: ${path} is not a rune mount (nothing to unmount)`,
    );
  }
  const fusermount = findFusermount(env);
  if (!fusermount && euid !== 0) {
    throw new RuneError(
      'FUSE_UNAVAILABLE',
      `rune mount --unmount ${dir}: fusermount3 is missing, which unmounting as a user needs; install fuse3`,
    );
  }
  const [command, args] = fusermount ? [fusermount, ['-u', path]] : ['umount', [path]];
  const result = spawnSync(command, args, { encoding: 'utf8', stdio: ['ignore', 'ignore', 'pipe'] });
  if (result.status !== 0) {
    const why = (result.stderr || result.error?.message || `exit ${result.status}`).trim();
    const busy = /busy/i.test(why)
      ? `; a process has a file open in it (fuser -m ${path}); or detach it now: ${fusermount ? 'fusermount3 -uz' : 'umount -l'} ${path}`
      : '';
    throw new RuneError('IO', `rune mount --unmount ${dir}: ${command} failed: ${why}${busy}`);
  }
  stderr(`rune mount: ${path} unmounted\n`);
  return 0;
}
