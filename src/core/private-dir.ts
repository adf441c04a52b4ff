// A folder only this user can use, for code rune loads (native addons, code caches). A folder that
// exists already is accepted only if it is a real directory owned by us and not writable by others.
import {
  chmodSync,
  closeSync,
  constants as fsConstants,
  fstatSync,
  lstatSync,
  mkdtempSync,
  openSync,
  readFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeDir } from './make-dir.ts';

export type DirCheck = { ok: true } | { ok: false; reason: string };

export function checkPrivateDir(path: string, uid = process.getuid?.() ?? -1): DirCheck {
  let st: ReturnType<typeof lstatSync>;
  try {
    st = lstatSync(path);
  } catch (error) {
    return { ok: false, reason: `cannot stat ${path}: ${(error as Error).message}` };
  }
  if (st.isSymbolicLink()) return { ok: false, reason: `${path} is a symbolic link` };
  if (!st.isDirectory()) return { ok: false, reason: `${path} is not a directory` };
  if (uid >= 0 && st.uid !== uid)
    return { ok: false, reason: `${path} is owned by uid ${st.uid}, not ${uid}` };
  if ((st.mode & 0o077) !== 0) {
    // Ours but too open (an old umask, a copy): tighten it rather than refuse.
    try {
      chmodSync(path, 0o700);
    } catch (error) {
      return { ok: false, reason: `${path} is open to others and chmod failed: ${(error as Error).message}` };
    }
  }
  return { ok: true };
}

/**
 * A file whose content decides what runs (a V8 code cache is code; a cached kernel probe decides
 * which sandbox layers are applied) is read only as a regular file of ours that nobody else can
 * write; the caller checks its folder with checkPrivateDir (a shared RUNE_HOME, `sudo` keeping HOME).
 */
export function readPrivateFile(file: string): Buffer | undefined {
  let fd: number | undefined;
  try {
    fd = openSync(file, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW);
    const st = fstatSync(fd);
    const uid = process.getuid?.() ?? -1;
    if (!st.isFile() || (uid >= 0 && st.uid !== uid) || (st.mode & 0o022) !== 0) return undefined;
    return readFileSync(fd);
  } catch {
    return undefined;
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Creates (0700) or accepts `path`; returns why not when it cannot be used safely. */
export function ensurePrivateDir(path: string): DirCheck {
  try {
    makeDir(path);
  } catch (error) {
    return { ok: false, reason: `cannot create ${path}: ${(error as Error).message}` };
  }
  return checkPrivateDir(path);
}

export interface PrivateDirChoice {
  path: string;
  /** True for a per-process folder that the caller should remove when done. */
  ephemeral: boolean;
  /** Why earlier candidates were passed over. */
  skipped: string[];
}

/**
 * The first usable folder among `candidates`, else a fresh mkdtemp folder (always private, since
 * mkdtemp creates it 0700 with a name nobody could have pre-created).
 */
export function choosePrivateDir(candidates: readonly string[]): PrivateDirChoice {
  const skipped: string[] = [];
  for (const candidate of candidates) {
    const check = ensurePrivateDir(candidate);
    if (check.ok) return { path: candidate, ephemeral: false, skipped };
    skipped.push(check.reason);
  }
  return { path: mkdtempSync(join(tmpdir(), 'rune-cache-')), ephemeral: true, skipped };
}
