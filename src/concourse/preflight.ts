// What a step needs of its folders, checked before the first model call: a run that cannot save
// its answer, or read its inputs, must fail at once with the I/O exit code and the reason, not
// after the model was paid for with a bare EACCES. Concourse gives an image with a non-root USER
// root-owned volumes (until it chowns them for that user), so this is the common failure there.
// biome-ignore lint/style/noRestrictedImports: checks (and makes) the folders Concourse hands the step before anything of a run is in them, and the system's temporary folder
import { accessSync, constants, mkdirSync, mkdtempSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RuneError } from '../core/errors.ts';

function who(path: string): string {
  const uid = process.getuid?.();
  try {
    const stat = statSync(path);
    const mode = (stat.mode & 0o7777).toString(8).padStart(4, '0');
    return ` (owned by uid ${stat.uid}, mode ${mode}; this step runs as uid ${uid})`;
  } catch {
    return uid === undefined ? '' : ` (this step runs as uid ${uid})`;
  }
}

function codeOf(error: unknown): string {
  return (error as NodeJS.ErrnoException).code ?? (error as Error).message;
}

/** Fails with IO unless `path` is a folder this process may create files in. */
export function requireWritableFolder(step: string, path: string, what: string, hint: string): void {
  try {
    mkdirSync(path, { recursive: true });
    if (!statSync(path).isDirectory()) throw Object.assign(new Error('not a folder'), { code: 'ENOTDIR' });
    accessSync(path, constants.W_OK | constants.X_OK);
  } catch (error) {
    throw new RuneError(
      'IO',
      `${step}: ${what} ${path} is not writable: ${codeOf(error)}${who(path)}; ${hint}`,
      {
        cause: error,
      },
    );
  }
}

/**
 * Whether a process of uid 0 without capabilities (what the sandbox makes of a tool started by
 * root) may list and enter a folder: the mode bits of owner, group or others decide, as for anyone.
 */
export function listableWithoutCapabilities(
  stat: { uid: number; gid: number; mode: number },
  groups: readonly number[],
): boolean {
  const bits = stat.uid === 0 ? stat.mode >> 6 : groups.includes(stat.gid) ? stat.mode >> 3 : stat.mode;
  return (bits & 0o5) === 0o5;
}

/** Fails with IO unless `path` is a folder this process, and the tools it starts, may list and enter. */
export function requireReadableFolder(step: string, path: string, what: string, hint: string): void {
  try {
    accessSync(path, constants.R_OK | constants.X_OK);
  } catch (error) {
    throw new RuneError(
      'IO',
      `${step}: ${what} ${path} is not readable: ${codeOf(error)}${who(path)}; ${hint}`,
      {
        cause: error,
      },
    );
  }
  // Root passes access() on anything; its tools, which hold no capability, do not.
  if (process.getuid?.() !== 0) return;
  const groups = process.getgroups?.() ?? [0];
  if (!listableWithoutCapabilities(statSync(path), groups)) {
    throw new RuneError(
      'IO',
      `${step}: ${what} ${path} is not readable by the agent's tools, which run as root without capabilities${who(path)}; ${hint}`,
    );
  }
}

const TMP_HINT =
  'rune needs a writable temporary folder (scratch folders, and the sandbox helper when $HOME is read-only): set TMPDIR to one, or keep /tmp writable (mode 1777) in the image';

/** The temporary folder the run and its sandbox use. */
export function requireTemporaryFolder(step: string): void {
  requireWritableFolder(step, tmpdir(), 'the temporary folder', TMP_HINT);
}

/** A fresh empty scratch folder (check has no inputs, and the worker's cwd must not leak into the answer). */
export function scratchFolder(step: string): string {
  requireTemporaryFolder(step);
  try {
    return mkdtempSync(join(tmpdir(), `rune-${step}-`));
  } catch (error) {
    throw new RuneError(
      'IO',
      `${step}: cannot create a scratch folder in ${tmpdir()}: ${codeOf(error)}; ${TMP_HINT}`,
      {
        cause: error,
      },
    );
  }
}

/** `in` writes response.txt and payload.json into its destination. */
export function requireDestination(dest: string): void {
  requireWritableFolder(
    'in',
    dest,
    'the destination',
    'the answer could not be saved there, so nothing was run; Concourse mounts volumes owned by root for an image with a non-root USER until it chowns them for that user: run the resource image as a user that can write it, or skip the get with get_params: {skip_download: true}',
  );
}
