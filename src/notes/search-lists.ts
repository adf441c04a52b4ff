// Which files a ranked file search checks (search-files.ts), read from the terms' lists. Each list
// holds one word's index rows, heaviest first; a row id's high bits are the word's weight step in
// that file, so the rows not read yet weigh at most the current step. A file that holds every term
// is in every list, so a file not met yet in any list may score at most the sum of the lists'
// current steps: once the `limit`th best score reaches that sum, no file left can beat it (Fagin's
// threshold algorithm; each file met is checked once, by its real score). A list read to its end
// holds every file that can match (all terms are required), so the reading ends there too. Lists
// are read a page at a time, each page twice its last; next the one whose last page lowered the
// bound most per row (any order is exact; this one reads less when a word of low weight holds
// the bound up: two words in 42 % and 34 % of a million files read 3,256 rows instead of 5,248).
import { stepCeiling } from './search-tokens.ts';

export interface List {
  /** The index key read. */
  key: string;
  /** The weight of the query's terms read in this list (their idf): a file's score per step. */
  idf: number;
  /** Rows below this row id are still to be read. */
  below: number;
  /** Rows read next time (each page of a list is twice its last, up to MAX_PAGE). */
  size: number;
  /** How much its last page lowered the bound, per row (undefined before its first page). */
  drop?: number;
}

export interface Reading {
  lists: List[];
  /** The next `size` row ids of the list `key` below `below`, descending. */
  read(key: string, below: number, size: number): number[];
  /** The file of an index row. */
  fileOf(row: number): number;
  /** Checks files, adding those that match to the best; called once per file. */
  check(ids: number[]): void;
  /** The `limit`th best score so far (undefined while fewer are found). */
  kth(): number | undefined;
  /** True once the search's budget is spent. */
  late(): boolean;
}

/** Above every index row id. */
export const TOP = 2 ** 53;
const MAX_PAGE = 1024;
const BATCH = 64;

/** Reads the lists and checks files until the best are known; returns whether the budget ended it. */
export function readLists(r: Reading): boolean {
  const { lists } = r;
  const seen = new Set<number>();
  const ceiling = (l: List) => l.idf * stepCeiling(l.below);
  const bound = () => lists.reduce((sum, l) => sum + ceiling(l), 0);
  // How much reading a list's next page may lower the bound, per row: what its last page did (a
  // list not read yet: all of its ceiling, within its first page).
  const gain = (l: List) => l.drop ?? ceiling(l) / l.size;
  for (;;) {
    const list = lists.reduce((a, b) => (gain(b) > gain(a) ? b : a));
    const before = ceiling(list);
    const rows = r.read(list.key, list.below, list.size);
    // Its last page: every file of the list is met once this page is checked.
    const last = rows.length < list.size;
    list.size = Math.min(list.size * 2, MAX_PAGE);
    for (let at = 0; at < rows.length; at += BATCH) {
      const slice = rows.slice(at, at + BATCH);
      // A file met first here weighs in the other lists at most their current steps: one that
      // cannot pass the `limit`th best even so is not checked.
      const kth = r.kth() ?? Number.NEGATIVE_INFINITY;
      const others = lists.reduce((sum, l) => (l === list ? sum : sum + ceiling(l)), 0);
      const fresh: number[] = [];
      for (const row of slice) {
        const id = r.fileOf(row);
        if (seen.has(id)) continue;
        seen.add(id);
        if (list.idf * stepCeiling(row) + others > kth) fresh.push(id);
      }
      if (fresh.length > 0) r.check(fresh);
      list.below = slice.at(-1)!;
      const best = r.kth();
      if (best !== undefined && best >= bound()) return false;
      if (r.late()) return true;
    }
    if (last) return false;
    list.drop = (before - ceiling(list)) / rows.length;
  }
}
