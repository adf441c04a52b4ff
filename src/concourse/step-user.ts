// Who a step runs as. The image starts as root so that every volume layout works: Concourse mounts
// a step's folder owned by root (mode 0700 in the standard resource-test layout), or, for an image
// with a non-root USER, owned by that user. Started as root, a step becomes the owner of its own
// folder (check: of $HOME, the image's `rune` user) before it reads or writes anything, and keeps
// root only when root owns that folder; tools never hold a capability either way (the sandbox
// helper drops them all). Started as anyone else, nothing changes here.
// biome-ignore lint/style/noRestrictedImports: the owner of the folder Concourse hands the step, read at start, before any run could have changed it
import { statSync } from 'node:fs';
import { dirname } from 'node:path';
import { RuneError } from '../core/errors.ts';
import type { Step } from './schema.ts';

export interface Owner {
  uid: number;
  gid: number;
  /** The folder whose owner it is. */
  of: string;
}

/** The folder that decides who the step runs as: in's destination, out's source, check's HOME. */
export function decidingFolder(
  step: Step,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
): string | undefined {
  if (step === 'check') return env.HOME || undefined;
  return args[0] || undefined;
}

/** The owner of `folder`, or of its nearest existing parent (in's destination may not exist yet). */
export function ownerOf(
  folder: string,
  stat: (path: string) => { uid: number; gid: number } = statSync,
): Owner | undefined {
  for (let path = folder; ; path = dirname(path)) {
    try {
      const { uid, gid } = stat(path);
      return { uid, gid, of: path };
    } catch {
      if (dirname(path) === path) return undefined;
    }
  }
}

export interface ProcessIdentity {
  getuid(): number;
  setgroups(groups: number[]): void;
  setgid(gid: number): void;
  setuid(uid: number): void;
}

/**
 * Becomes the owner of the step's folder when started as root and that owner is not root. Returns
 * whom it became, or undefined when nothing changed. Groups first, the user last: after setuid a
 * process can change neither.
 */
export function becomeStepOwner(
  step: Step,
  args: readonly string[],
  env: NodeJS.ProcessEnv,
  identity: ProcessIdentity = process as unknown as ProcessIdentity,
  stat?: (path: string) => { uid: number; gid: number },
): Owner | undefined {
  if (typeof identity.getuid !== 'function' || identity.getuid() !== 0) return undefined;
  const folder = decidingFolder(step, args, env);
  const owner = folder ? ownerOf(folder, stat) : undefined;
  if (!owner || owner.uid === 0) return undefined;
  try {
    identity.setgroups([owner.gid]);
    identity.setgid(owner.gid);
    identity.setuid(owner.uid);
  } catch (error) {
    throw new RuneError(
      'IO',
      `${step}: cannot run as uid ${owner.uid}, the owner of ${owner.of}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}; the container's user namespace must map that uid, or the folder must belong to root`,
      { cause: error },
    );
  }
  return owner;
}
