// Runs search, diff and merge tasks off the event loop: worker threads, each with its own read-only
// SQLite connection (WAL lets it read while the server writes). Two lanes: merges of saves have a
// worker of their own, so a save never waits behind searches; in the lane of searches and diffs,
// signed-in people's tasks go first, and a client that is not signed in may have only a few tasks
// waiting (per address, and anonymous ones in all). Bounded queues say "busy" instead of growing,
// and a task past its hard deadline costs its worker, which is replaced. Without the worker bundle
// (unit tests run the TypeScript sources) tasks run inline.
import { mkdtempSync } from 'node:fs';
import { availableParallelism, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { AssetMissingError, readAsset, readAssetText } from '../core/assets.ts';
import { removeFolderAt } from '../core/fd/index.ts';
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

/** Who asks for a task: anonymous callers' tasks wait behind everyone else's, a few per address. */
export interface Asker {
  anonymous: boolean;
  /** The person or client address, for the per-client cap of anonymous tasks. */
  client: string;
}

export interface TaskRunner {
  readonly threaded: boolean;
  /** Runs a task; rejects with BusyError when the queue is full or the task overran `deadlineMs`. */
  run<T extends Task>(task: T, deadlineMs: number, asker?: Asker): Promise<TaskResult<T>>;
  close(): Promise<void>;
}

/** Tasks of anonymous callers that may wait or run at once: per client address, and in all. */
const ANONYMOUS_PER_CLIENT = 2;
const ANONYMOUS_QUEUED = 8;

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
  /** Set for anonymous callers' tasks: their client, counted until the task ends. */
  anonymous: string | null;
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
  /** Signed-in people's tasks, then anonymous ones: each served in order, the first before the second. */
  private readonly queue: Job[] = [];
  private readonly anonymousQueue: Job[] = [];
  /** Anonymous tasks waiting or running, per client. */
  private readonly anonymousByClient = new Map<string, number>();
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

  run<T extends Task>(task: T, deadlineMs: number, asker?: Asker): Promise<TaskResult<T>> {
    if (this.closed) return Promise.reject(new BusyError('the server is shutting down'));
    const anonymous = asker?.anonymous ? asker.client : null;
    if (anonymous !== null) {
      if ((this.anonymousByClient.get(anonymous) ?? 0) >= ANONYMOUS_PER_CLIENT) {
        return Promise.reject(new BusyError('this address already has searches waiting'));
      }
      if (this.anonymousQueue.length >= ANONYMOUS_QUEUED) {
        return Promise.reject(new BusyError('too many searches of visitors are waiting'));
      }
    } else if (this.queue.length >= this.maxQueue) {
      return Promise.reject(new BusyError('too many searches and diffs are waiting'));
    }
    return new Promise((resolve, reject) => {
      const job: Job = {
        request: { id: this.nextId++, task },
        deadlineMs,
        anonymous,
        resolve: resolve as (value: unknown) => void,
        reject,
      };
      if (anonymous !== null) {
        this.anonymousByClient.set(anonymous, (this.anonymousByClient.get(anonymous) ?? 0) + 1);
        this.anonymousQueue.push(job);
      } else this.queue.push(job);
      this.dispatch();
    });
  }

  /** An anonymous task ended (answered, failed or dropped): its client may ask again. */
  private settled(job: Job): void {
    if (job.anonymous === null) return;
    const left = (this.anonymousByClient.get(job.anonymous) ?? 1) - 1;
    if (left <= 0) this.anonymousByClient.delete(job.anonymous);
    else this.anonymousByClient.set(job.anonymous, left);
  }

  private spawn(slot: Slot): Worker {
    const worker = new Worker(this.source, { eval: true, workerData: this.init });
    worker.unref();
    worker.on('message', (reply: TaskReply) => {
      const job = slot.job;
      if (!job || job.request.id !== reply.id) return;
      this.finish(slot);
      this.settled(job);
      if (reply.ok) job.resolve(reply.value);
      else job.reject(new Error(reply.message));
      this.dispatch();
    });
    const lost = (why: string) => {
      if (slot.worker !== worker) return;
      slot.worker = null;
      const job = slot.job;
      this.finish(slot);
      if (job) this.settled(job);
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
      if (this.closed || this.queue.length + this.anonymousQueue.length === 0) return;
      if (slot.job) continue;
      const job = (this.queue.shift() ?? this.anonymousQueue.shift())!;
      slot.worker ??= this.spawn(slot);
      slot.job = job;
      const worker = slot.worker;
      slot.timer = setTimeout(() => {
        // The task ignored its own budget: the thread is ended, and with it the work.
        slot.worker = null;
        this.finish(slot);
        this.settled(job);
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
    for (const job of [...this.queue.splice(0), ...this.anonymousQueue.splice(0)])
      job.reject(new BusyError('the server is shutting down'));
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
      // of their own, removed at close. The system's tmp is reachable by a chat command whose grant
      // covers it (without namespaces there is no private /tmp), so the folder is removed by
      // descriptor: a link planted in it is removed, never followed.
      const dir = mkdtempSync(join(tmpdir(), 'rune-notes-worker-'));
      addon = {
        path: materialize(dir, SQLITE_ASSET, readAsset(SQLITE_ASSET), loaded.sha256),
        sha256: loaded.sha256,
      };
      cleanup = () => {
        removeFolderAt(dir);
      };
    }
  }
  return { source, init: { dbFile, sqliteAddon: addon }, cleanup };
}

/** Merges of saves in a lane of their own; searches and diffs in the other. */
class Lanes implements TaskRunner {
  readonly threaded = true;
  constructor(
    private readonly saves: WorkerPool,
    private readonly reads: WorkerPool,
    private readonly cleanup: () => void,
  ) {}

  run<T extends Task>(task: T, deadlineMs: number, asker?: Asker): Promise<TaskResult<T>> {
    return task.kind === 'merge' ? this.saves.run(task, deadlineMs) : this.reads.run(task, deadlineMs, asker);
  }

  async close(): Promise<void> {
    await Promise.all([this.saves.close(), this.reads.close()]);
    this.cleanup();
  }
}

/**
 * Worker pools when the binary carries the worker bundle, else the inline runner. Searches and
 * diffs get one worker per spare core (at least one, at most two: the event loop keeps a core of
 * its own), merges of saves one worker of their own.
 */
export function createTaskRunner(db: SqliteDatabase, dbFile: string, logger: Logger): TaskRunner {
  const setup = notesWorkerSetup(dbFile);
  if (!setup) return new InlineRunner(db);
  const size = Math.min(2, Math.max(1, availableParallelism() - 1));
  const none = () => {};
  return new Lanes(
    new WorkerPool(setup.source, setup.init, 1, 32, logger, none),
    new WorkerPool(setup.source, setup.init, size, 32, logger, none),
    setup.cleanup,
  );
}
