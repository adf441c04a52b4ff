// Group commit for acknowledgements. SQLite commits without waiting for the disk (WAL,
// synchronous = NORMAL): a committed transaction is in the WAL file, so it survives a crash of the
// process at once. An acknowledgement that must also survive a power cut waits for an fsync of the
// WAL that began after its commit. The fsyncs run on libuv's thread pool, so the event loop never
// waits for the disk, and one fsync covers every commit made while the previous one ran. When
// everything committed is already synced (no change since), nothing waits.
import { closeSync, fdatasync, fsyncSync, openSync } from 'node:fs';
import { dirname } from 'node:path';

export type Fsync = (fd: number, done: (error: Error | null) => void) => void;

interface Waiter {
  resolve(): void;
  reject(error: Error): void;
}

export interface WalSyncOptions {
  fsync?: Fsync;
  /**
   * A counter that grows with every change committed through the connection (SQLite's
   * total_changes()); without it every flush syncs.
   */
  changes?: () => number;
}

export class WalSync {
  private readonly fd: number;
  private readonly fsync: Fsync;
  private readonly changes: () => number;
  /** `changes()` as it was when the last successful fsync began. */
  private synced = -1;
  private queue: Waiter[] = [];
  /** The fsync under way: who waits for it, and `changes()` when it began. */
  private current: { batch: Waiter[]; upTo: number } | null = null;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;

  /** `walFile` must exist (SQLite creates it at the first read of a WAL database). */
  constructor(walFile: string, options: WalSyncOptions = {}) {
    // fdatasync, as SQLite syncs its own WAL on Linux: it flushes the data and the size a growing
    // WAL needs, but not timestamps, so overwriting a WAL after a checkpoint costs no journal commit.
    this.fsync = options.fsync ?? ((fd, done) => fdatasync(fd, done));
    let calls = 0;
    this.changes = options.changes ?? (() => ++calls);
    // fsync(2) flushes the file, whichever descriptor wrote it: ours only ever syncs.
    this.fd = openSync(walFile, 'r');
    // The WAL's name in its folder must be durable too, or a power cut can lose the whole file.
    const dir = openSync(dirname(walFile), 'r');
    try {
      fsyncSync(dir);
    } finally {
      closeSync(dir);
    }
  }

  /** Resolves once every transaction committed before the call is on stable storage. */
  flush(): Promise<void> {
    if (this.closed) return Promise.reject(new Error('the database is closed'));
    let now: number;
    try {
      now = this.changes();
    } catch (error) {
      // The counter reads the database: closed under us, it throws. A flush only ever rejects, so
      // the background sync's timer cannot take the process down with an uncaught exception.
      return Promise.reject(error);
    }
    if (!this.current && now === this.synced) return Promise.resolve();
    return new Promise((resolve, reject) => {
      // Nothing committed since the running fsync began: that one covers this caller too.
      if (this.current?.upTo === now) this.current.batch.push({ resolve, reject });
      else {
        this.queue.push({ resolve, reject });
        if (!this.current) this.start();
      }
    });
  }

  private start(): void {
    // Waiters that arrive while this fsync runs may have committed after it began: they wait for
    // the next one.
    const batch = this.queue;
    this.queue = [];
    const upTo = this.changes();
    this.current = { batch, upTo };
    this.fsync(this.fd, (error) => {
      this.current = null;
      if (!error) this.synced = upTo;
      for (const waiter of batch) {
        if (error) waiter.reject(new Error(`could not sync the notes database to disk: ${error.message}`));
        else waiter.resolve();
      }
      if (this.queue.length > 0) this.start();
    });
  }

  /** Syncs in the background every `ms` (synchronous = normal: bounds what a power cut can lose). */
  every(ms: number, onError: (error: Error) => void): void {
    this.timer = setInterval(() => {
      if (!this.current) this.flush().catch(onError);
    }, ms);
    this.timer.unref();
  }

  /** Waits for a last fsync, then lets the descriptor go (before the database closes). */
  async close(): Promise<void> {
    if (this.closed) return;
    if (this.timer) clearInterval(this.timer);
    try {
      // A last fsync whatever the counter says: the descriptor goes, and SQLite's own checkpoint
      // at close must find the WAL on disk.
      this.synced = -1;
      await this.flush();
      // An fsync started meanwhile must end before its descriptor is closed.
      while (this.current) await this.flush();
    } finally {
      this.closed = true;
      closeSync(this.fd);
    }
  }
}
