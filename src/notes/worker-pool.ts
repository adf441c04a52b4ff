// Runs search and diff tasks off the event loop: a small pool of worker threads, each with its own
// read-only SQLite connection (WAL lets it read while the server writes). A bounded queue says
// "busy" instead of growing, and a task past its hard deadline costs its worker, which is replaced.
// Without the worker bundle (unit tests run the TypeScript sources) tasks run inline.
import { mkdtempSync, rmSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { AssetMissingError, readAsset, readAssetText } from '../core/assets.ts';
import type { Logger } from '../core/logger.ts';
import { loadedNatives, materialize } from '../core/native.ts';
import { SQLITE_ASSET, type SqliteDatabase } from '../core/sqlite.ts';
import {
  runTask,
  type Task,
  type TaskReply,
  type TaskRequest,
  type TaskResult,
  type WorkerInit,
} from './tasks.ts';

/** The pool is full or a task overran its deadline: the request should be retried later. */
export class BusyError extends Error {}

export interface TaskRunner {
  readonly threaded: boolean;
  /** Runs a task; rejects with BusyError when the queue is full or the task overran `deadlineMs`. */
  run<T extends Task>(task: T, deadlineMs: number): Promise<TaskResult<T>>;
  close(): Promise<void>;
}

export class InlineRunner implements TaskRunner {
  readonly threaded = false;
  constructor(private readonly db: SqliteDatabase | null) {}
  async run<T extends Task>(task: T): Promise<TaskResult<T>> {
    return runTask(this.db, task) as TaskResult<T>;
  }
  async close(): Promise<void> {}
}

interface Job {
  request: TaskRequest;
  deadlineMs: number;
  resolve(value: unknown): void;
  reject(error: Error): void;
}

interface Slot {
  worker: Worker | null;
  job: Job | null;
  timer: NodeJS.Timeout | null;
}

class WorkerPool implements TaskRunner {
  readonly threaded = true;
  private readonly slots: Slot[];
  private readonly queue: Job[] = [];
  private nextId = 1;
  private closed = false;

  constructor(
    private readonly source: string,
    private readonly init: WorkerInit,
    size: number,
    private readonly maxQueue: number,
    private readonly logger: Logger,
    private readonly cleanup: () => void,
  ) {
    this.slots = Array.from({ length: size }, () => ({ worker: null, job: null, timer: null }));
  }

  run<T extends Task>(task: T, deadlineMs: number): Promise<TaskResult<T>> {
    if (this.closed) return Promise.reject(new BusyError('the server is shutting down'));
    if (this.queue.length >= this.maxQueue) {
      return Promise.reject(new BusyError('too many searches and diffs are waiting'));
    }
    return new Promise((resolve, reject) => {
      this.queue.push({
        request: { id: this.nextId++, task },
        deadlineMs,
        resolve: resolve as (value: unknown) => void,
        reject,
      });
      this.dispatch();
    });
  }

  private spawn(slot: Slot): Worker {
    const worker = new Worker(this.source, { eval: true, workerData: this.init });
    worker.unref();
    worker.on('message', (reply: TaskReply) => {
      const job = slot.job;
      if (!job || job.request.id !== reply.id) return;
      this.finish(slot);
      if (reply.ok) job.resolve(reply.value);
      else job.reject(new Error(reply.message));
      this.dispatch();
    });
    const lost = (why: string) => {
      if (slot.worker !== worker) return;
      slot.worker = null;
      const job = slot.job;
      this.finish(slot);
      if (!this.closed) this.logger.warn('notes.worker_lost', { message: `notes worker stopped: ${why}` });
      job?.reject(new Error(`the worker stopped (${why})`));
      this.dispatch();
    };
    worker.on('error', (error) => lost(error.message));
    worker.on('exit', (code) => lost(`exit ${code}`));
    return worker;
  }

  private finish(slot: Slot): void {
    if (slot.timer) clearTimeout(slot.timer);
    slot.timer = null;
    slot.job = null;
  }

  private dispatch(): void {
    for (const slot of this.slots) {
      if (this.closed || this.queue.length === 0) return;
      if (slot.job) continue;
      const job = this.queue.shift()!;
      slot.worker ??= this.spawn(slot);
      slot.job = job;
      const worker = slot.worker;
      slot.timer = setTimeout(() => {
        // The task ignored its own budget: the thread is ended, and with it the work.
        slot.worker = null;
        this.finish(slot);
        void worker.terminate();
        job.reject(new BusyError('the task took longer than its deadline'));
        this.dispatch();
      }, job.deadlineMs);
      slot.timer.unref();
      worker.postMessage(job.request);
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    for (const job of this.queue.splice(0)) job.reject(new BusyError('the server is shutting down'));
    await Promise.all(
      this.slots.map(async (slot) => {
        const worker = slot.worker;
        slot.worker = null;
        slot.job?.reject(new BusyError('the server is shutting down'));
        this.finish(slot);
        if (worker) await worker.terminate();
      }),
    );
    this.cleanup();
  }
}

/**
 * What a notes worker thread needs: the worker bundle's source and how to load SQLite; null when
 * the binary carries no worker bundle (unit tests run the TypeScript sources). `cleanup` removes a
 * private copy of the addon made for the workers.
 */
export function notesWorkerSetup(
  dbFile: string,
): { source: string; init: WorkerInit; cleanup: () => void } | null {
  let source: string;
  try {
    source = readAssetText('js/notes-worker.cjs');
  } catch (error) {
    if (error instanceof AssetMissingError) return null;
    throw error;
  }
  let cleanup = () => {};
  let addon: WorkerInit['sqliteAddon'] = null;
  const loaded = loadedNatives().find((n) => n.asset === SQLITE_ASSET);
  if (loaded) {
    addon = { path: loaded.path, sha256: loaded.sha256 };
    if (loaded.ephemeral) {
      // The addon file was removed after loading (no usable cache folder): the workers get a copy
      // of their own, removed at close.
      const dir = mkdtempSync(join(tmpdir(), 'rune-notes-worker-'));
      addon = {
        path: materialize(dir, SQLITE_ASSET, readAsset(SQLITE_ASSET), loaded.sha256),
        sha256: loaded.sha256,
      };
      cleanup = () => rmSync(dir, { recursive: true, force: true });
    }
  }
  return { source, init: { dbFile, sqliteAddon: addon }, cleanup };
}

/**
 * A pool when the binary carries the worker bundle, else the inline runner. One worker per spare
 * core (at least one, at most two): the event loop keeps a core of its own.
 */
export function createTaskRunner(db: SqliteDatabase, dbFile: string, logger: Logger): TaskRunner {
  const setup = notesWorkerSetup(dbFile);
  if (!setup) return new InlineRunner(db);
  const size = Math.min(2, Math.max(1, availableParallelism() - 1));
  return new WorkerPool(setup.source, setup.init, size, 32, logger, setup.cleanup);
}
