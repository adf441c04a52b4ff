// Group commit for acknowledgements. SQLite commits without waiting for the disk (WAL,
// synchronous = NORMAL): a committed transaction is in the WAL file, so it survives a crash of the
// process at once. An acknowledgement that must also survive a power cut waits for an fsync of the
// WAL that began after its commit. The fsyncs run on libuv's thread pool, so the event loop never
// waits for the disk, and one fsync covers every commit made while the previous one ran.
import { closeSync, fsync as fsyncCallback, fsyncSync, openSync } from 'node:fs';
import { dirname } from 'node:path';

export type Fsync = (fd: number, done: (error: Error | null) => void) => void;

interface Waiter {
  resolve(): void;
  reject(error: Error): void;
}

export class WalSync {
  private readonly fd: number;
  private readonly fsync: Fsync;
  private queue: Waiter[] = [];
  private running = false;
  private timer: NodeJS.Timeout | null = null;
  private closed = false;

  /** `walFile` must exist (SQLite creates it at the first read of a WAL database). */
  constructor(walFile: string, options: { fsync?: Fsync } = {}) {
    this.fsync = options.fsync ?? ((fd, done) => fsyncCallback(fd, done));
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
    return new Promise((resolve, reject) => {
      this.queue.push({ resolve, reject });
      if (!this.running) this.start();
    });
  }

  private start(): void {
    // Waiters that arrive while this fsync runs may have committed after it began: they wait for
    // the next one.
    const batch = this.queue;
    this.queue = [];
    this.running = true;
    this.fsync(this.fd, (error) => {
      this.running = false;
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
      if (!this.running) this.flush().catch(onError);
    }, ms);
    this.timer.unref();
  }

  /** Waits for a last fsync, then lets the descriptor go (before the database closes). */
  async close(): Promise<void> {
    if (this.closed) return;
    if (this.timer) clearInterval(this.timer);
    try {
      await this.flush();
    } finally {
      this.closed = true;
      closeSync(this.fd);
    }
  }
}
