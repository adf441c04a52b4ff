// What a client and the operator are told when the server's storage refuses a write (a full disk,
// a read-only or failing database): the change was not saved, why, and what to do. A plain 500
// "internal error" told neither that the disk was full nor that sending again later would work.
import { RuneError } from '../core/errors.ts';
import { ApiError } from './http.ts';

type Kind = 'full' | 'readonly' | 'io';

/** SQLite's and the file system's codes for each kind of storage failure. */
function kindOf(error: unknown): Kind | null {
  const code = (error as { code?: unknown } | null)?.code;
  if (typeof code !== 'string') return null;
  if (code === 'SQLITE_FULL' || code === 'ENOSPC' || code === 'EDQUOT' || code === 'EFBIG') return 'full';
  if (
    code.startsWith('SQLITE_READONLY') ||
    code === 'EROFS' ||
    code === 'EACCES' ||
    code === 'EPERM' ||
    code === 'SQLITE_CANTOPEN'
  )
    return 'readonly';
  if (code.startsWith('SQLITE_IOERR') || code === 'EIO' || code === 'SQLITE_CORRUPT') return 'io';
  return null;
}

/** The answer to a request whose write the storage refused, or null when `error` is something else. */
export function storageFailure(error: unknown): ApiError | null {
  switch (kindOf(error)) {
    case 'full':
      return new ApiError(
        'STORAGE_FULL',
        "the server's disk is full, so this change was not saved; send it again once an administrator has freed space",
      );
    case 'readonly':
      return new ApiError(
        'STORAGE_ERROR',
        "the server's database cannot be written (read-only), so this change was not saved; send it again once an administrator has fixed it",
        {},
        { 'Retry-After': '30' },
      );
    case 'io':
      return new ApiError(
        'STORAGE_ERROR',
        "the server's disk reported an error, so this change was not saved; send it again later (an administrator should check the disk)",
        {},
        { 'Retry-After': '30' },
      );
    default:
      return null;
  }
}

/**
 * What the operator is told when the database cannot be opened or written at start (a read-only
 * file or folder, a full disk); other errors pass as they are.
 */
export function openFailure(file: string, error: unknown): unknown {
  if (kindOf(error) === null) return error;
  const reason = (error as Error).message;
  const fix: Record<Kind, string> = {
    full: 'free disk space there',
    readonly: `make ${file} and its folder writable by this user (SQLite also writes -wal and -shm files beside it), or point RUNE_HOME elsewhere`,
    io: 'check the disk and the file (restore it from a backup if it is damaged)',
  };
  const kind = kindOf(error);
  return new RuneError('IO', `cannot open the notes database ${file}: ${reason}; ${fix[kind!]}`, {
    cause: error,
  });
}
