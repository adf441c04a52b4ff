// One search run by several threads (runner.ts): each thread reads its share of the tree's files
// and stops at max_results of its own, so the first max_results matching lines in walk order are
// all among what the shares found. Merged here into what one thread would have answered: the files
// in walk order, cut at max_results, the last file's lines cut as scanBuffer cuts them.
import type { ResultLine } from './scan.ts';

export interface SharedFile {
  /** The file's index in walk order. */
  seq: number;
  path: string;
  lines: ResultLine[];
  matches: number;
}

export interface Merged {
  files: Array<Omit<SharedFile, 'seq'>>;
  /** max_results was reached. */
  stopped: boolean;
}

export function mergeShares(found: readonly SharedFile[], maxResults: number, context: number): Merged {
  const files: Merged['files'] = [];
  let budget = maxResults;
  for (const { path, lines, matches } of [...found].sort((a, b) => a.seq - b.seq)) {
    if (budget <= 0) break;
    files.push(
      matches <= budget
        ? { path, lines, matches }
        : { path, lines: cutAt(lines, budget, context), matches: budget },
    );
    budget -= Math.min(matches, budget);
  }
  return { files, stopped: budget <= 0 };
}

/**
 * The lines up to the `hits`-th matching one, then the `context` lines after it: as scanBuffer
 * shows them with a budget of `hits`, later matching lines among them shown as context.
 */
function cutAt(lines: readonly ResultLine[], hits: number, context: number): ResultLine[] {
  const out: ResultLine[] = [];
  let seen = 0;
  let i = 0;
  for (; i < lines.length && seen < hits; i++) {
    out.push(lines[i]!);
    if (lines[i]!.match) seen++;
  }
  for (
    let after = 0;
    after < context && i < lines.length && lines[i]!.n === out[out.length - 1]!.n + 1;
    after++, i++
  ) {
    out.push({ ...lines[i]!, match: false });
  }
  return out;
}
