// Revision diffs with a bounded cost. Myers' diff is O((N+M)·D): two unrelated texts of thousands
// of lines take seconds to tens of seconds. Here the edit distance and the time are capped (jsdiff gives up and returns nothing),
// and the answer then says the revisions are too different to diff instead of computing on.
import { createTwoFilesPatch } from 'diff';

export interface DiffBudget {
  budgetMs: number;
  /** Most changed lines considered; past it the diff is "too large". */
  maxEditLines?: number;
}

export type DiffResult = { diff: string } | { diff: null; too_large: true; message: string };

export const DEFAULT_MAX_EDIT_LINES = 20_000;

export function boundedDiff(
  oldName: string,
  newName: string,
  older: string,
  newer: string,
  budget: DiffBudget,
): DiffResult {
  const maxEditLength = budget.maxEditLines ?? DEFAULT_MAX_EDIT_LINES;
  const diff = createTwoFilesPatch(oldName, newName, older, newer, undefined, undefined, {
    context: 3,
    maxEditLength,
    timeout: budget.budgetMs,
  });
  if (diff === undefined) {
    return {
      diff: null,
      too_large: true,
      message: `the revisions differ too much to diff within the server's budget (${maxEditLength} changed lines, ${budget.budgetMs} ms); open both revisions instead`,
    };
  }
  return { diff };
}
