// The CPU-heavy work a notes request can ask for (search, revision diff, 3-way merge of a save on
// an old revision), as plain messages: the same function runs them in a worker thread
// (src/notes/worker-entry.ts) or, where no worker bundle exists (unit tests), in the calling thread.
import type { SqliteDatabase } from '../core/sqlite.ts';
import { boundedDiff, type DiffResult } from './diff.ts';
import { type MergeBudget, mergeText } from './merge.ts';
import { type ParsedQuery, runSearch, type SearchAnswer, type SearchOptions } from './search.ts';

export type Task =
  | { kind: 'search'; query: ParsedQuery; options: Omit<SearchOptions, 'now'> }
  | {
      kind: 'diff';
      oldName: string;
      newName: string;
      older: string;
      newer: string;
      budgetMs: number;
      maxEditLines?: number;
    }
  | { kind: 'merge'; base: string; ours: string; theirs: string; budget: MergeBudget };

export type MergeResult = string | null | 'too-large';

export type TaskResult<T extends Task> = T extends { kind: 'search' }
  ? SearchAnswer
  : T extends { kind: 'diff' }
    ? DiffResult
    : MergeResult;

/** Runs one task; `db` is a connection the caller owns (a read-only one in the worker). */
export function runTask(db: SqliteDatabase | null, task: Task): SearchAnswer | DiffResult | MergeResult {
  switch (task.kind) {
    case 'search':
      if (!db) throw new Error('search needs a database connection');
      return runSearch(db, task.query, task.options);
    case 'diff':
      return boundedDiff(task.oldName, task.newName, task.older, task.newer, {
        budgetMs: task.budgetMs,
        ...(task.maxEditLines !== undefined ? { maxEditLines: task.maxEditLines } : {}),
      });
    case 'merge':
      return mergeText(task.base, task.ours, task.theirs, task.budget);
  }
}

/** Messages between the pool and a worker. */
export interface TaskRequest {
  id: number;
  task: Task;
}
export type TaskReply = { id: number; ok: true; value: unknown } | { id: number; ok: false; message: string };

/** What a worker needs to open the database: the file and the SQLite addon to load. */
export interface WorkerInit {
  dbFile: string;
  /** `checkpoint`: a writable connection that only checkpoints the WAL (see checkpointer.ts). */
  role?: 'tasks' | 'checkpoint';
  /** A native addon file and its sha256, checked before loading; null: resolve as Node does. */
  sqliteAddon: { path: string; sha256: string } | null;
}
