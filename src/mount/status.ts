// Whether `rune mount` can work on this machine, and why not: libfuse 3 loads, /dev/fuse opens, and
// fusermount3 is there (needed to mount as a user, and for auto_unmount: a rune that dies leaves no
// mount). `rune doctor` shows it; `rune mount` checks it before anything starts.
import { accessSync, closeSync, constants, openSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { RuneError } from '../core/errors.ts';
import { fuseNative } from './native.ts';

export interface FuseStatus {
  usable: boolean;
  /** libfuse's path and version, or why it does not load. */
  library: { path: string; version: string } | { error: string };
  device: { ok: true } | { ok: false; error: string };
  /** fusermount3's path, or undefined when it is not found. */
  fusermount?: string;
  /** One line: what works, or what is missing and how to get it. */
  detail: string;
}

/** Where Debian, Fedora and Arch put fusermount3, when PATH does not lead to it. */
const USUAL_DIRS = ['/usr/bin', '/bin', '/usr/local/bin'];

/** fusermount3 on PATH or in the usual folders. */
export function findFusermount(env: NodeJS.ProcessEnv = process.env, usual = USUAL_DIRS): string | undefined {
  const dirs = [...(env.PATH ?? '').split(delimiter).filter(Boolean), ...usual];
  for (const dir of dirs) {
    const file = join(dir, 'fusermount3');
    try {
      accessSync(file, constants.X_OK);
      return file;
    } catch {
      // Not here.
    }
  }
  return undefined;
}

function probeDevice(): FuseStatus['device'] {
  try {
    closeSync(openSync('/dev/fuse', constants.O_RDWR));
    return { ok: true };
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? (error as Error).message;
    return { ok: false, error: `/dev/fuse cannot be opened (${code})` };
  }
}

const INSTALL = 'install fuse3 (apt-get install fuse3, dnf install fuse3, pacman -S fuse3)';

/** What this machine offers `rune mount`; the user and the folders searched are injected for tests. */
export function fuseStatus(
  env: NodeJS.ProcessEnv = process.env,
  { euid = process.geteuid?.() ?? -1, usualDirs = USUAL_DIRS }: { euid?: number; usualDirs?: string[] } = {},
): FuseStatus {
  let library: FuseStatus['library'];
  try {
    const found = fuseNative().fuseStatus();
    library = 'error' in found ? found : { path: found.library, version: found.version };
  } catch (error) {
    library = { error: `the native addon could not be loaded: ${(error as Error).message}` };
  }
  const device = probeDevice();
  const fusermount = findFusermount(env, usualDirs);
  const problems: string[] = [];
  if ('error' in library) problems.push(`libfuse 3 is not available (${library.error}); ${INSTALL}`);
  if (!device.ok)
    problems.push(
      `${device.error}; load the fuse module (modprobe fuse) or, in a container, pass the device (--device /dev/fuse)`,
    );
  if (!fusermount && euid !== 0)
    problems.push(`fusermount3 is missing, which mounting as a user needs; ${INSTALL}`);
  const usable = problems.length === 0;
  const detail = usable
    ? `libfuse ${'version' in library ? library.version : ''}, /dev/fuse, ${
        fusermount
          ? `${fusermount} (auto_unmount: a rune that dies leaves no mount)`
          : 'no fusermount3 (as root rune mounts itself; a rune that dies leaves its mount: umount DIR)'
      }`
    : problems.join('; ');
  return { usable, library, device, ...(fusermount ? { fusermount } : {}), detail };
}

/** Throws FUSE_UNAVAILABLE naming what is missing. */
export function requireFuse(status: FuseStatus): void {
  if (!status.usable)
    throw new RuneError('FUSE_UNAVAILABLE', `rune mount cannot use FUSE here: ${status.detail}`);
}
