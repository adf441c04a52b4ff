// A session's checkpoint store: $RUNE_HOME/checkpoints/<session>/ holds `pack` (file contents,
// content-addressed by sha256 and stored once) and `journal` (one JSON record per line: turns,
// calls, changes, undos). Both are only appended to; a record is written after the bytes it names,
// and flush() makes both durable (fdatasync). A line cut short by a kill is dropped when the store is
// opened again. One rune process writes a store at a time (`lock` holds its pid).
import { createHash } from 'node:crypto';
import {
  closeSync,
  constants,
  fdatasync,
  fdatasyncSync,
  fstatSync,
  ftruncateSync,
  openSync,
  readFileSync,
  readSync,
  rmSync,
  unlinkSync,
  writeFileSync,
  writeSync,
  writevSync,
} from 'node:fs';
import { join } from 'node:path';
import { RuneError } from '../../core/errors.ts';
import { makeDir } from '../../core/make-dir.ts';
import { runeHome } from '../../core/paths.ts';
import { processAlive } from '../../core/process-alive.ts';
import type { JournalRecord } from './types.ts';

const ID = /^[A-Za-z0-9-]{1,64}$/;

export function checkpointsDir(env: NodeJS.ProcessEnv): string {
  return join(runeHome(env), 'checkpoints');
}

export function storeDir(env: NodeJS.ProcessEnv, sessionId: string): string {
  if (!ID.test(sessionId)) throw new RuneError('USAGE', `not a session id: ${sessionId}`);
  return join(checkpointsDir(env), sessionId);
}

export function sha256Hex(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

export interface StoreLimits {
  /** Whether this store may grow to `bytes` (checkpoints.max_mb less the other sessions' stores). */
  room(bytes: number): boolean;
}

function writeAll(fd: number, data: Uint8Array): void {
  let written = 0;
  while (written < data.length) written += writeSync(fd, data, written, data.length - written);
}

const syncAsync = (fd: number) =>
  new Promise<void>((resolve, reject) => fdatasync(fd, (error) => (error ? reject(error) : resolve())));

/** The records of a journal's text; a last line cut short (a kill mid-write) is left out. */
export function parseJournal(text: string): { records: JournalRecord[]; goodBytes: number } {
  const records: JournalRecord[] = [];
  let at = 0;
  for (;;) {
    const end = text.indexOf('\n', at);
    if (end === -1) break;
    const line = text.slice(at, end);
    try {
      if (line) records.push(JSON.parse(line) as JournalRecord);
    } catch {
      break; // Nothing after a damaged line is trusted.
    }
    at = end + 1;
  }
  return { records, goodBytes: Buffer.byteLength(text.slice(0, at)) };
}

export class CheckpointStore {
  readonly dir: string;
  readonly records: JournalRecord[];
  readonly #blobs = new Map<string, { o: number; z: number }>();
  readonly #limits: StoreLimits;
  #pack: number;
  #journal: number;
  #packSize: number;
  #journalSize: number;
  #flushing: Promise<void> | undefined;
  #dirty = false;
  #readOnly = false;
  /** Appended but not yet written: pack bytes, then journal lines (written together by commit()). */
  #packPending: Buffer[] = [];
  #packPendingBytes = 0;
  #lines: string[] = [];

  private constructor(dir: string, records: JournalRecord[], fds: [number, number], limits: StoreLimits) {
    this.dir = dir;
    this.records = records;
    this.#limits = limits;
    [this.#pack, this.#journal] = fds;
    this.#packSize = fstatSync(this.#pack).size;
    this.#journalSize = fstatSync(this.#journal).size;
    for (const record of records) if (record.t === 'blob') this.#blobs.set(record.h, record);
  }

  /** Opens (or, with `create`, makes) the store of `sessionId` for writing, locked to this process. */
  static open(
    env: NodeJS.ProcessEnv,
    sessionId: string,
    options: { create: boolean; limits: StoreLimits },
  ): CheckpointStore {
    const dir = storeDir(env, sessionId);
    if (!options.create && !hasStore(env, sessionId))
      throw new RuneError('NOT_FOUND', `session ${sessionId} has no checkpoints (${dir})`);
    makeDir(dir);
    lock(dir);
    try {
      const flags = constants.O_RDWR | constants.O_CREAT | constants.O_APPEND;
      const journal = openSync(join(dir, 'journal'), flags, 0o600);
      const text = readFileSync(journal, 'utf8');
      const { records, goodBytes } = parseJournal(text);
      if (goodBytes < Buffer.byteLength(text)) ftruncateSync(journal, goodBytes);
      const pack = openSync(join(dir, 'pack'), flags, 0o600);
      return new CheckpointStore(dir, records, [pack, journal], options.limits);
    } catch (error) {
      unlock(dir);
      throw new RuneError('IO', `cannot open the checkpoints in ${dir}: ${(error as Error).message}`, {
        cause: error,
      });
    }
  }

  /** Opens the store of `sessionId` to read it (`rune diff`): no lock, nothing written. */
  static read(env: NodeJS.ProcessEnv, sessionId: string): CheckpointStore {
    const dir = storeDir(env, sessionId);
    if (!hasStore(env, sessionId))
      throw new RuneError('NOT_FOUND', `session ${sessionId} has no checkpoints (${dir})`);
    const journal = openSync(join(dir, 'journal'), constants.O_RDONLY);
    const { records } = parseJournal(readFileSync(journal, 'utf8'));
    const pack = openSync(join(dir, 'pack'), constants.O_RDONLY);
    const store = new CheckpointStore(dir, records, [pack, journal], { room: () => false });
    store.#readOnly = true;
    return store;
  }

  /** Bytes on disk (pack and journal). */
  get bytes(): number {
    return this.#packSize + this.#journalSize;
  }

  /** Adds a record; it is written with the next commit(). */
  append(record: JournalRecord): void {
    if (this.#readOnly) throw new RuneError('INTERNAL', `${this.dir} was opened to read`);
    const line = `${JSON.stringify(record)}\n`;
    this.#lines.push(line);
    this.#journalSize += Buffer.byteLength(line);
    this.records.push(record);
    this.#dirty = true;
  }

  /**
   * Writes what was appended: the pack's new bytes first, then the journal's lines (a record is
   * never in the file before the bytes it names). Each in one system call; a kill after this keeps
   * them (the page cache), a power cut only after flush().
   */
  commit(): void {
    if (this.#packPending.length > 0) {
      const chunks = this.#packPending;
      this.#packPending = [];
      this.#packPendingBytes = 0;
      let at = 0;
      while (at < chunks.length) {
        const written = writevSync(this.#pack, chunks.slice(at, at + 512));
        let left = written;
        while (at < chunks.length && left >= chunks[at]!.length) left -= chunks[at++]!.length;
        if (left > 0) {
          chunks[at] = chunks[at]!.subarray(left);
        }
      }
    }
    if (this.#lines.length > 0) {
      const text = Buffer.from(this.#lines.join(''), 'utf8');
      this.#lines = [];
      writeAll(this.#journal, text);
    }
  }

  hasBlob(hash: string): boolean {
    return this.#blobs.has(hash);
  }

  /** Stores `bytes` once; false when the store's bound leaves no room for them. */
  putBlob(hash: string, bytes: Uint8Array): boolean {
    if (this.#blobs.has(hash)) return true;
    if (!this.#limits.room(this.bytes + bytes.length + 128)) return false;
    const at = this.#packSize;
    this.#packPending.push(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
    this.#packPendingBytes += bytes.length;
    this.#packSize += bytes.length;
    this.append({ t: 'blob', h: hash, o: at, z: bytes.length });
    this.#blobs.set(hash, { o: at, z: bytes.length });
    // Held in memory only up to a bound: a first look at a large folder is written as it goes.
    if (this.#packPendingBytes > 16 * 1024 * 1024) this.commit();
    return true;
  }

  readBlob(hash: string): Buffer {
    const where = this.#blobs.get(hash);
    if (!where) throw new RuneError('NOT_FOUND', `the checkpoint store ${this.dir} lacks content ${hash}`);
    if (this.#packPending.length > 0) this.commit();
    const out = Buffer.allocUnsafe(where.z);
    let read = 0;
    while (read < where.z) {
      const n = readSync(this.#pack, out, read, where.z - read, where.o + read);
      if (n === 0) throw new RuneError('IO', `the checkpoint store ${this.dir} is cut short`);
      read += n;
    }
    return out;
  }

  /** Makes what was appended durable; resolves when both files are on disk. */
  flush(): Promise<void> {
    this.commit();
    if (!this.#dirty) return this.#flushing ?? Promise.resolve();
    this.#dirty = false;
    const previous = this.#flushing ?? Promise.resolve();
    const pack = this.#pack;
    const journal = this.#journal;
    // The pack first: a record must never be on disk before the bytes it names.
    const next = previous.then(() => syncAsync(pack)).then(() => syncAsync(journal));
    this.#flushing = next;
    return next;
  }

  flushSync(): void {
    this.commit();
    if (!this.#dirty) return;
    this.#dirty = false;
    fdatasyncSync(this.#pack);
    fdatasyncSync(this.#journal);
  }

  async close(): Promise<void> {
    await this.flush().catch(() => undefined);
    closeSync(this.#pack);
    closeSync(this.#journal);
    if (!this.#readOnly) unlock(this.dir);
  }
}

export function hasStore(env: NodeJS.ProcessEnv, sessionId: string): boolean {
  try {
    return fstatExists(join(storeDir(env, sessionId), 'journal'));
  } catch {
    return false;
  }
}

function fstatExists(path: string): boolean {
  try {
    closeSync(openSync(path, constants.O_RDONLY));
    return true;
  } catch {
    return false;
  }
}

/** Takes the store's lock: `lock` holds the writer's pid; one left by a dead process is taken over. */
function lock(dir: string): void {
  const file = join(dir, 'lock');
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(file, `${process.pid}\n`, { flag: 'wx', mode: 0o600 });
      return;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
    }
    const pid = Number.parseInt(readFileSync(file, 'utf8'), 10);
    if (Number.isInteger(pid) && pid !== process.pid && processAlive(pid)) {
      throw new RuneError('USAGE', `the checkpoints of this session are in use by rune process ${pid}`);
    }
    rmSync(file, { force: true });
  }
  throw new RuneError('IO', `cannot lock ${dir}`);
}

function unlock(dir: string): void {
  try {
    const file = join(dir, 'lock');
    if (Number.parseInt(readFileSync(file, 'utf8'), 10) === process.pid) unlinkSync(file);
  } catch {
    // Already gone.
  }
}
