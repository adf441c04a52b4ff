// One server per data folder (PostgreSQL's postmaster.pid, with a lock the kernel owns): `rune
// notes` holds a write lock on `notes.lock` for as long as it runs, so a second start on the same
// folder (a stray start, an overlapping deploy on a shared volume) refuses instead of compacting
// the first one's collaborative log under it. The lock is SQLite's own (a POSIX record lock on the
// file, taken by BEGIN IMMEDIATE and never committed): the kernel drops it when the process ends,
// however it ends, so a SIGKILL leaves nothing to clean up. `notes.pid` says who holds it.
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { join } from 'node:path';
import { RuneError } from '../core/errors.ts';
import { openDatabase, type SqliteDatabase } from '../core/sqlite.ts';

export const LOCK_FILE = 'notes.lock';
export const PID_FILE = 'notes.pid';

export interface DataLock {
  /** Ends the lock (at a clean stop; a dead process loses it by itself). */
  release(): void;
}

interface Holder {
  pid: number;
  host: string;
  since: string;
}

function readHolder(dir: string): Holder | null {
  try {
    const [pid, host, since] = readFileSync(join(dir, PID_FILE), 'utf8').split('\n');
    const n = Number(pid);
    return Number.isSafeInteger(n) && n > 0 ? { pid: n, host: host ?? '', since: since ?? '' } : null;
  } catch {
    return null;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * The holder named in notes.pid, once it names a live process other than this one: the holder
 * writes the file just after it took the lock, so a start that lost the race may need a moment.
 */
function waitForHolder(dir: string, waitMs: number): Holder | null {
  const until = Date.now() + waitMs;
  for (;;) {
    const holder = readHolder(dir);
    const here = holder?.host === hostname();
    if (holder && holder.pid !== process.pid && (!here || alive(holder.pid))) return holder;
    if (Date.now() >= until) return null;
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
  }
}

function cannotWrite(dir: string, error: unknown): RuneError {
  return new RuneError(
    'IO',
    `cannot use the notes data folder ${dir}: ${(error as Error).message}; make it writable by this user, or point RUNE_HOME elsewhere`,
    { cause: error },
  );
}

/**
 * Takes the data folder for this process, or throws `DATA_LOCKED` naming the process that holds
 * it; `IO` when the folder cannot be made or written (a read-only volume).
 */
export function lockDataFolder(dir: string, options: { waitMs?: number } = {}): DataLock {
  let db: SqliteDatabase;
  try {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    db = openDatabase(join(dir, LOCK_FILE));
    db.pragma('busy_timeout = 0');
    // No journal: nothing is ever written; the lock is all this file is for.
    db.pragma('journal_mode = OFF');
  } catch (error) {
    throw cannotWrite(dir, error);
  }
  try {
    db.exec('BEGIN IMMEDIATE');
  } catch (error) {
    db.close();
    if ((error as { code?: string }).code !== 'SQLITE_BUSY') throw cannotWrite(dir, error);
    const holder = waitForHolder(dir, options.waitMs ?? 2000);
    const who = holder
      ? `pid ${holder.pid}${holder.host && holder.host !== hostname() ? ` on host ${holder.host}` : ''}${holder.since ? `, since ${holder.since}` : ''}`
      : 'a process that has not said who it is yet';
    throw new RuneError(
      'DATA_LOCKED',
      `the notes data folder ${dir} is in use by another rune notes (${who}); stop that one first, or give this one another RUNE_HOME`,
    );
  }
  const pidFile = join(dir, PID_FILE);
  try {
    const tmp = `${pidFile}.${process.pid}.tmp`;
    writeFileSync(tmp, `${process.pid}\n${hostname()}\n${new Date().toISOString()}\n`, { mode: 0o644 });
    renameSync(tmp, pidFile);
  } catch (error) {
    db.close();
    throw cannotWrite(dir, error);
  }
  let released = false;
  return {
    release() {
      if (released) return;
      released = true;
      if (readHolder(dir)?.pid === process.pid) rmSync(pidFile, { force: true });
      db.close();
    },
  };
}
