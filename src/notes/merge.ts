// Line-based 3-way merge with a bounded cost, for saves made on an older revision. The merge is
// two 2-way diffs against the base (Myers with a cap on the edit length and on time), whose
// changes are applied together when they touch different lines. node-diff3's LCS took minutes on
// texts of many equal lines; here a merge that would cost more than the budget is not attempted.
import { diffArrays } from 'diff';

export interface MergeBudget {
  /** Time each of the two diffs may take. */
  timeoutMs: number;
  /** Most changed lines each diff may hold. */
  maxEditLines: number;
}

export const DEFAULT_MERGE_BUDGET: MergeBudget = { timeoutMs: 500, maxEditLines: 10_000 };

/** Splits text into lines that keep their line ends, so joining them gives the text back. */
export function lines(text: string): string[] {
  return text === '' ? [] : text.split(/(?<=\n)/);
}

interface Hunk {
  /** Replaced range of the base, in lines: [start, end). */
  start: number;
  end: number;
  lines: string[];
}

function hunks(base: string[], other: string[], budget: MergeBudget): Hunk[] | undefined {
  const changes = diffArrays(base, other, { maxEditLength: budget.maxEditLines, timeout: budget.timeoutMs });
  if (!changes) return undefined;
  const out: Hunk[] = [];
  let at = 0;
  let open: Hunk | null = null;
  for (const change of changes) {
    if (!change.added && !change.removed) {
      if (open) out.push(open);
      open = null;
      at += change.count;
      continue;
    }
    open ??= { start: at, end: at, lines: [] };
    if (change.removed) {
      at += change.count;
      open.end = at;
    } else open.lines.push(...change.value);
  }
  if (open) out.push(open);
  return out;
}

const same = (a: Hunk, b: Hunk) =>
  a.start === b.start &&
  a.end === b.end &&
  a.lines.length === b.lines.length &&
  a.lines.every((l, i) => l === b.lines[i]);

/**
 * 3-way line merge: `ours` and `theirs` both derived from `base`. Null when both changed the same
 * or adjacent lines differently; 'too-large' when the diffs would cost more than the budget.
 */
export function mergeText(
  base: string,
  ours: string,
  theirs: string,
  budget: MergeBudget = DEFAULT_MERGE_BUDGET,
): string | null | 'too-large' {
  if (ours === theirs) return ours;
  if (base === theirs) return ours;
  if (base === ours) return theirs;
  const baseLines = lines(base);
  const a = hunks(baseLines, lines(ours), budget);
  const b = a && hunks(baseLines, lines(theirs), budget);
  if (!a || !b) return 'too-large';
  const out: string[] = [];
  let at = 0;
  let i = 0;
  let j = 0;
  const take = (hunk: Hunk) => {
    for (let k = at; k < hunk.start; k++) out.push(baseLines[k]!);
    out.push(...hunk.lines);
    at = hunk.end;
  };
  while (i < a.length || j < b.length) {
    const x = a[i];
    const y = b[j];
    if (x && y && x.start <= y.end && y.start <= x.end) {
      // Touching or overlapping changes merge only when they are the same change.
      if (!same(x, y)) return null;
      take(x);
      i++;
      j++;
    } else if (x && (!y || x.start < y.start)) {
      take(x);
      i++;
    } else {
      take(y!);
      j++;
    }
  }
  for (let k = at; k < baseLines.length; k++) out.push(baseLines[k]!);
  return out.join('');
}
