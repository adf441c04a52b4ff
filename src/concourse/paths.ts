// Paths that come from params resolve inside the put folder; anything that escapes it (through `..`,
// an absolute path or a symlink) is refused. Also lists the put's input folders for the agent.
import { realpathSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { RuneError } from '../core/errors.ts';
import { Root } from '../core/fd/index.ts';
import { isUnder } from '../core/paths.ts';

/** Canonical path of `path` under `root`, which must exist and stay inside root after symlinks. */
export function resolveInside(root: string, path: string, label: string): string {
  const realRoot = realpathSync(root);
  const outside = (): RuneError =>
    new RuneError('USAGE', `${label} "${path}" resolves outside ${root}; paths must stay inside it`);
  const lexical = resolve(realRoot, path);
  if (!isUnder(lexical, realRoot)) throw outside();
  let real: string;
  try {
    real = realpathSync(lexical);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') throw new RuneError('USAGE', `${label} "${path}" does not exist under ${root}`);
    throw new RuneError('IO', `${label} "${path}": ${(error as Error).message}`, { cause: error });
  }
  if (!isUnder(real, realRoot)) throw outside();
  return real;
}

/**
 * The put's inputs: Concourse mounts each as a folder directly under src. Symlinks are skipped, so
 * a crafted input cannot widen what the agent may read beyond src.
 */
export function inputFolders(src: string): string[] {
  const realSrc = realpathSync(src);
  const folder = Root.open(realSrc);
  try {
    return folder
      .list()
      .filter((entry) => entry.kind === 'dir')
      .map((entry) => join(realSrc, entry.name))
      .sort();
  } finally {
    folder.close();
  }
}
