// When a bearer token was last used: written at most once a minute per token, so a request made
// with a token is not a commit; the newest use meanwhile is kept in memory, shown by the API and
// written at shutdown.
import type { Store } from './db.ts';

/**
 * How often a token's last_used_at is written at most. Every API request carries a token: writing
 * the time on each made every read a commit (and, with synchronous = full, an fsync for the next
 * writer). Between writes the newest time is kept in memory and shown by the API; a crash loses at
 * most this much of it (docs/notes-api.md, Tokens).
 */
export const LAST_USED_WRITE_MS = 60_000;

export class TokenUse {
  /** Per token id: when last_used_at was last written (ms), and a newer use not written yet. */
  private readonly lastUsed = new Map<number, { writtenAt: number; pending: string | null }>();

  constructor(private readonly store: Store) {}

  /** The row with its newest use, written or not yet. */
  withLastUse<Row extends { id: number; last_used_at: string | null }>(row: Row): Row {
    const pending = this.lastUsed.get(row.id)?.pending;
    return pending ? { ...row, last_used_at: pending } : row;
  }

  /** Notes a use of a token: written at once when the last write is a minute old, else kept in memory. */
  note(id: number): void {
    const at = this.store.stamp();
    const now = Date.parse(at);
    const entry = this.lastUsed.get(id);
    if (entry && now - entry.writtenAt < LAST_USED_WRITE_MS && now >= entry.writtenAt) {
      entry.pending = at;
      return;
    }
    this.store.db.prepare('update tokens set last_used_at = ? where id = ?').run(at, id);
    this.lastUsed.set(id, { writtenAt: now, pending: null });
  }

  /** Writes the uses kept in memory (at shutdown). */
  flush(): void {
    const update = this.store.db.prepare('update tokens set last_used_at = ? where id = ?');
    this.store.tx(() => {
      for (const [id, entry] of this.lastUsed) {
        if (entry.pending) update.run(entry.pending, id);
      }
    });
    this.lastUsed.clear();
  }
}
