// Which folders are rune mounts now: /proc/self/mountinfo, whose mount points escape spaces, tabs,
// newlines and backslashes as octal (\040). A rune mount has the file system type fuse.rune.
import { readFileSync, realpathSync } from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';

export const MOUNT_TYPE = 'fuse.rune';

function unescapeOctal(field: string): string {
  return field.replace(/\\([0-7]{3})/g, (_, octal: string) => String.fromCharCode(Number.parseInt(octal, 8)));
}

/** Mount points and their file system types, in the order of the table. */
export function parseMountinfo(text: string): Array<{ mountpoint: string; type: string }> {
  const mounts: Array<{ mountpoint: string; type: string }> = [];
  for (const line of text.split('\n')) {
    const fields = line.split(' ');
    const dash = fields.indexOf('-');
    if (dash < 0 || fields.length < 5 || fields[dash + 1] === undefined) continue;
    mounts.push({ mountpoint: unescapeOctal(fields[4]!), type: fields[dash + 1]! });
  }
  return mounts;
}

/**
 * The path the mount table uses for `dir`: its parent made canonical, then its own name (a dead
 * FUSE mount cannot be stat'ed, so the folder itself is never resolved).
 */
export function mountPath(dir: string, cwd: string): string {
  const absolute = resolve(cwd, dir);
  const name = basename(absolute);
  if (name === '') return absolute;
  try {
    return join(realpathSync(dirname(absolute)), name);
  } catch {
    return absolute;
  }
}

export function isRuneMount(path: string, mountinfo = readFileSync('/proc/self/mountinfo', 'utf8')): boolean {
  return parseMountinfo(mountinfo).some((mount) => mount.mountpoint === path && mount.type === MOUNT_TYPE);
}
