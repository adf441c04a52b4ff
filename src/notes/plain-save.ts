// A save from a script (PUT with the revision it was based on): applied when that is the current
// text, merged 3-way against it off the event loop otherwise, or refused as a conflict. Applied
// through the live document (collab.ts), so editors with the file open see it at once.
import type { Collab } from './collab.ts';
import type { FileRow, Store } from './db.ts';
import { DEFAULT_MERGE_BUDGET } from './merge.ts';
import type { TaskRunner } from './worker-pool.ts';

export type PutResult =
  | { ok: true; file: FileRow; merged: boolean }
  | { ok: false; current: { content: string; revision: number }; tooLarge?: boolean };

export interface PlainSaveContext {
  collab: Collab;
  store: Store;
  /** Where 3-way merges run (the server's worker pool). */
  runner: TaskRunner;
}

/**
 * A save from a script: applied when based on the current text, merged or refused otherwise.
 * The merge runs off the event loop; if live edits moved the text on meanwhile, it is merged
 * again against the newer text (a few times at most, then refused like any conflict).
 */
export async function plainSave(
  { collab, store, runner }: PlainSaveContext,
  file: FileRow,
  content: string,
  baseRevision: number,
  author: string,
): Promise<PutResult> {
  collab.checkSize(content);
  let row = file;
  for (let attempt = 0; ; attempt++) {
    const live = collab.text(row);
    const current = { content: live, revision: row.revision };
    const unchanged = baseRevision === row.revision && live === row.content;
    if (unchanged) return { ok: true, file: collab.replace(row, content, author), merged: false };
    const base = store.revision(row.id, baseRevision);
    if (!base || attempt >= 3) return { ok: false, current };
    const merged = await runner.run(
      { kind: 'merge', base: base.content, ours: content, theirs: live, budget: DEFAULT_MERGE_BUDGET },
      DEFAULT_MERGE_BUDGET.timeoutMs * 4,
    );
    const fresh = store.fileById(row.id);
    if (!fresh || fresh.deleted_at) return { ok: false, current };
    if (collab.text(fresh) !== live || fresh.revision !== row.revision) {
      row = fresh;
      continue;
    }
    if (merged === null || merged === 'too-large')
      return { ok: false, current, tooLarge: merged === 'too-large' };
    return { ok: true, file: collab.replace(fresh, merged, author), merged: true };
  }
}
