import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { WalSync } from './durable.ts';

function wal(): string {
  const file = join(mkdtempSync(join(tmpdir(), 'rune-wal-')), 'notes.db-wal');
  writeFileSync(file, '');
  return file;
}

/** An fsync that completes only when the test says so. */
function heldDisk() {
  const pending: Array<(error: Error | null) => void> = [];
  return {
    pending,
    fsync: (_fd: number, done: (error: Error | null) => void) => {
      pending.push(done);
    },
    finish(error: Error | null = null) {
      pending.shift()!(error);
    },
  };
}

const settled = async (p: Promise<unknown>) => {
  let state = 'pending';
  p.then(
    () => {
      state = 'resolved';
    },
    () => {
      state = 'rejected';
    },
  );
  for (let i = 0; i < 5; i++) await new Promise((r) => setImmediate(r));
  return state;
};

describe('WalSync (group commit)', () => {
  it('resolves a flush only after an fsync that began after it was asked for', async () => {
    const disk = heldDisk();
    const sync = new WalSync(wal(), { fsync: disk.fsync });
    const first = sync.flush();
    expect(disk.pending).toHaveLength(1);
    // Asked while the first fsync runs: its commit may be newer than that fsync, so it waits.
    const second = sync.flush();
    const third = sync.flush();
    expect(disk.pending).toHaveLength(1);
    expect(await settled(first)).toBe('pending');
    disk.finish();
    expect(await settled(first)).toBe('resolved');
    expect(await settled(second)).toBe('pending');
    // One fsync serves everyone who waited meanwhile.
    expect(disk.pending).toHaveLength(1);
    disk.finish();
    expect(await settled(second)).toBe('resolved');
    expect(await settled(third)).toBe('resolved');
    const closing = sync.close();
    disk.finish();
    await closing;
  });

  it('fails every flush the failed fsync was meant to cover, and the next one starts afresh', async () => {
    const disk = heldDisk();
    const sync = new WalSync(wal(), { fsync: disk.fsync });
    const a = sync.flush();
    disk.finish(new Error('EIO'));
    await expect(a).rejects.toThrow(/could not sync the notes database to disk: EIO/);
    const b = sync.flush();
    disk.finish();
    await expect(b).resolves.toBeUndefined();
    const closing = sync.close();
    disk.finish();
    await closing;
    await expect(sync.flush()).rejects.toThrow(/closed/);
  });

  it('syncs a real file', async () => {
    const sync = new WalSync(wal());
    await expect(sync.flush()).resolves.toBeUndefined();
    await sync.close();
  });
});

describe('WalSync with a change counter', () => {
  it('waits only when something was committed since the last completed fsync', async () => {
    const disk = heldDisk();
    let changes = 0;
    const sync = new WalSync(wal(), { fsync: disk.fsync, changes: () => changes });
    changes = 1;
    const first = sync.flush();
    expect(disk.pending).toHaveLength(1);
    // Nothing new since that fsync began: the same fsync answers this one too.
    const same = sync.flush();
    expect(disk.pending).toHaveLength(1);
    disk.finish();
    expect(await settled(first)).toBe('resolved');
    expect(await settled(same)).toBe('resolved');
    expect(disk.pending).toHaveLength(0);
    // Everything is synced: no fsync, no wait (presence updates, idempotent requests).
    expect(await settled(sync.flush())).toBe('resolved');
    expect(disk.pending).toHaveLength(0);
    changes = 2;
    const later = sync.flush();
    expect(disk.pending).toHaveLength(1);
    disk.finish();
    expect(await settled(later)).toBe('resolved');
    const closing = sync.close();
    disk.finish();
    await closing;
  });
});

describe('WalSync over a database closed under it', () => {
  it('rejects the flush instead of throwing, so the background sync reports it and goes on', async () => {
    const closed = () => {
      throw new TypeError('The database connection is not open');
    };
    const sync = new WalSync(wal(), { changes: closed });
    const flushed = (() => {
      try {
        return sync.flush();
      } catch (error) {
        return `threw: ${(error as Error).message}`;
      }
    })();
    expect(flushed).toBeInstanceOf(Promise);
    await expect(flushed).rejects.toThrow('not open');
    const reported = await new Promise<Error>((resolve) => sync.every(1, resolve));
    expect(reported.message).toMatch(/not open/);
    await sync.close().catch(() => undefined);
  });
});
