// Entry of the notes worker thread (its own bundle, js/notes-worker.cjs): a read-only SQLite
// connection and the task loop. Whatever a task costs, it costs here, not on the server's event loop.
import { parentPort, workerData } from 'node:worker_threads';
import Database from 'better-sqlite3';
import { dlopenVerified } from '../core/native.ts';
import { runTask, type TaskReply, type TaskRequest, type WorkerInit } from './tasks.ts';

const init = workerData as WorkerInit;
/** The read-only connections' memory map of the database (capped by SQLite's own maximum). */
const MMAP_BYTES = 2 ** 31;
const binding = init.sqliteAddon ? dlopenVerified(init.sqliteAddon.path, init.sqliteAddon.sha256) : undefined;
const checkpointer = init.role === 'checkpoint';
const db = new Database(init.dbFile, {
  readonly: !checkpointer,
  fileMustExist: true,
  ...(binding ? { nativeBinding: binding as never } : {}),
});
db.pragma('busy_timeout = 5000');
if (!checkpointer) {
  // A search looks up tens to thousands of files' rows, each on a page of its own: mapped, a page is
  // read without a system call and a copy (about 40 % less per row over a million files, measured).
  // SQLite maps at most what its build allows (2 GB); pages past that are read as before.
  db.pragma(`mmap_size = ${MMAP_BYTES}`);
}
if (checkpointer) {
  // Checkpoints fsync the WAL and the database: here, they cost this thread, not the server's.
  db.pragma('synchronous = NORMAL');
  db.pragma('wal_autocheckpoint = 0');
}

parentPort!.on('message', (request: TaskRequest | 'checkpoint') => {
  if (request === 'checkpoint') {
    let reply: { checkpointed: number; busy: boolean } | { error: string };
    try {
      const [row] = db.pragma('wal_checkpoint(PASSIVE)') as Array<{ busy: number; checkpointed: number }>;
      reply = { checkpointed: row?.checkpointed ?? 0, busy: row?.busy === 1 };
    } catch (error) {
      reply = { error: (error as Error).message };
    }
    parentPort!.postMessage(reply);
    return;
  }
  let reply: TaskReply;
  try {
    reply = { id: request.id, ok: true, value: runTask(db, request.task) };
  } catch (error) {
    reply = { id: request.id, ok: false, message: (error as Error).message };
  }
  parentPort!.postMessage(reply);
});
