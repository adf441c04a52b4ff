// Upload bytes on disk, one file per content hash in `uploads/`. A body is streamed to a temporary
// file as it arrives (never held in memory) and hashed on the way; its bytes and the rename into
// place are fsynced before the row that names them is committed, so a row never outlives its bytes
// (whatever `[notes] synchronous` says). A file already stored under that hash is not trusted: it
// may be a torn or damaged copy, so the verified bytes just received replace it. Temporary files of
// uploads a crash cut short are removed at start (the data folder's lock says no one else writes).
import { createHash, randomBytes } from 'node:crypto';
import { readdirSync, renameSync, rmSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { join } from 'node:path';

export class UploadTooLarge extends Error {}

export interface Received {
  hash: string;
  size: number;
  /**
   * Puts the verified bytes under their hash (replacing whatever was there) and makes the rename
   * durable. The bytes stay pinned (no purge removes them) until `release`.
   */
  place(): Promise<void>;
  /** Unpins the bytes; a temporary file never placed is removed. */
  release(): void;
}

export class UploadStore {
  readonly dir: string;
  /** Hashes whose bytes are being placed: a purge leaves them alone. */
  private readonly pinned = new Map<string, number>();

  constructor(dataDir: string) {
    this.dir = join(dataDir, 'uploads');
  }

  path(hash: string): string {
    return join(this.dir, hash);
  }

  /** Removes what killed uploads left behind; returns how many. */
  cleanTemporary(): number {
    let removed = 0;
    for (const name of readdirSync(this.dir)) {
      if (!name.endsWith('.tmp')) continue;
      rmSync(join(this.dir, name), { force: true });
      removed++;
    }
    return removed;
  }

  /**
   * Streams `body` to a temporary file, hashing it; fails with UploadTooLarge past `maxBytes`.
   * The bytes are fsynced before this resolves (off the event loop).
   */
  async receive(body: AsyncIterable<Buffer>, maxBytes: number): Promise<Received> {
    const tmp = join(this.dir, `${randomBytes(8).toString('hex')}.tmp`);
    const handle = await open(tmp, 'wx', 0o600);
    const hasher = createHash('sha256');
    let size = 0;
    try {
      for await (const chunk of body) {
        size += chunk.length;
        if (size > maxBytes) throw new UploadTooLarge(`more than ${maxBytes} bytes`);
        hasher.update(chunk);
        await handle.write(chunk);
      }
      await handle.sync();
    } catch (error) {
      await handle.close().catch(() => {});
      rmSync(tmp, { force: true });
      throw error;
    }
    await handle.close();
    const hash = hasher.digest('hex');
    this.pin(hash, 1);
    let placed = false;
    let released = false;
    return {
      hash,
      size,
      place: async () => {
        renameSync(tmp, this.path(hash));
        placed = true;
        await syncFolder(this.dir);
      },
      release: () => {
        if (released) return;
        released = true;
        if (!placed) rmSync(tmp, { force: true });
        this.pin(hash, -1);
      },
    };
  }

  private pin(hash: string, by: number): void {
    const n = (this.pinned.get(hash) ?? 0) + by;
    if (n <= 0) this.pinned.delete(hash);
    else this.pinned.set(hash, n);
  }

  /** Removes the bytes of `hashes` that no row names any more and no upload is placing. */
  removeUnused(hashes: readonly string[], stillUsed: (hash: string) => boolean): void {
    for (const hash of hashes) {
      if (this.pinned.has(hash) || stillUsed(hash)) continue;
      rmSync(this.path(hash), { force: true });
    }
  }
}

/** Makes renames in `dir` durable, off the event loop. */
async function syncFolder(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}
