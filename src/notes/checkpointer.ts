// WAL checkpoints on a thread of their own. A checkpoint copies the WAL into the database and
// fsyncs both; SQLite runs it inside a commit by default (every 1000 WAL pages), where that fsync
// would stall the event loop and every request queued behind it. Here a worker thread with its own
// connection checkpoints each second when something was written (a passive checkpoint never
// blocks the writer), and the server's own automatic checkpoint stays as a backstop at a much
// larger WAL size, should the thread fall behind or stop. Without the worker bundle (unit tests)
// SQLite's default applies.
import { Worker } from 'node:worker_threads';
import type { Logger } from '../core/logger.ts';
import type { SqliteDatabase } from '../core/sqlite.ts';
import { notesWorkerSetup } from './worker-pool.ts';

/** WAL pages before the server's own connection checkpoints (SQLite's default is 1000). */
const BACKSTOP_PAGES = 16_000;

export class Checkpointer {
  private readonly worker: Worker;
  private readonly timer: NodeJS.Timeout;
  private busy = false;
  private lastChanges = -1;
  private stopped = false;

  private constructor(
    private readonly db: SqliteDatabase,
    source: string,
    workerData: unknown,
    private readonly cleanup: () => void,
    private readonly logger: Logger,
    changes: () => number,
    everyMs: number,
  ) {
    this.worker = new Worker(source, { eval: true, workerData });
    this.worker.unref();
    this.worker.on('message', (reply: { error?: string; checkpointed?: number; busy?: boolean }) => {
      this.busy = false;
      if (reply.error) this.logger.warn('notes.checkpoint_failed', { message: reply.error });
      else this.logger.debug('notes.checkpoint', { pages: reply.checkpointed, busy: reply.busy });
    });
    const lost = (why: string) => {
      if (this.stopped) return;
      this.stop();
      this.logger.warn('notes.checkpointer_lost', {
        message: `the WAL checkpoint thread stopped (${why}); the server checkpoints by itself from now on`,
      });
    };
    this.worker.on('error', (error) => lost(error.message));
    this.worker.on('exit', (code) => lost(`exit ${code}`));
    db.pragma(`wal_autocheckpoint = ${BACKSTOP_PAGES}`);
    this.timer = setInterval(() => {
      const now = changes();
      if (this.busy || now === this.lastChanges) return;
      this.lastChanges = now;
      this.busy = true;
      this.worker.postMessage('checkpoint');
    }, everyMs);
    this.timer.unref();
  }

  /** A checkpoint thread for `dbFile`, or null when the binary has no worker bundle. */
  static start(
    db: SqliteDatabase,
    dbFile: string,
    logger: Logger,
    changes: () => number,
    everyMs = 1000,
  ): Checkpointer | null {
    const setup = notesWorkerSetup(dbFile);
    if (!setup) return null;
    return new Checkpointer(
      db,
      setup.source,
      { ...setup.init, role: 'checkpoint' },
      setup.cleanup,
      logger,
      changes,
      everyMs,
    );
  }

  private stop(): void {
    this.stopped = true;
    clearInterval(this.timer);
    this.db.pragma('wal_autocheckpoint = 1000');
  }

  async close(): Promise<void> {
    if (!this.stopped) this.stop();
    await this.worker.terminate();
    this.cleanup();
  }
}
