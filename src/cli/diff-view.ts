// A file change in the transcript: the unified diff of write_file/edit_file as a header with the
// +/− counts, then numbered lines (additions green, removals red), folded past a limit with a hint.
import { terminalText } from '../core/terminal-text.ts';
import { paint, type Style } from './format.ts';

export interface DiffView {
  lines: string[];
  added: number;
  removed: number;
  /** Diff lines left out by folding. */
  folded: number;
}

/** Diff lines shown before the rest is folded away. */
export const FOLD_AT = 40;

/**
 * `diff` (unified, as edit_file returns it) as transcript lines. `limit` diff lines are shown;
 * the header names the file from its `+++` line and counts what the hunks add and remove.
 */
export function renderDiff(diff: string, style: Style, limit = FOLD_AT): DiffView {
  const source = terminalText(diff).split('\n');
  let file = '';
  let added = 0;
  let removed = 0;
  const body: string[] = [];
  let oldLine = 0;
  let newLine = 0;
  const width = String(maxLineNumber(source)).length;
  const number = (n: number | undefined): string =>
    n === undefined ? ' '.repeat(width) : String(n).padStart(width);
  for (const line of source) {
    if (line.startsWith('--- ')) continue;
    if (line.startsWith('+++ ')) {
      file = line.slice(4).replace(/^b\//, '');
      continue;
    }
    const hunk = /^@@ -(\d+)(?:,\d+)? \+(\d+)(?:,\d+)? @@/.exec(line);
    if (hunk) {
      if (body.length > 0) body.push(paint(style, 'dim', `${' '.repeat(width)}   ⋮`));
      oldLine = Number(hunk[1]);
      newLine = Number(hunk[2]);
      continue;
    }
    if (line.startsWith('+')) {
      added++;
      body.push(paint(style, 'green', `${number(newLine++)} + ${line.slice(1)}`));
    } else if (line.startsWith('-')) {
      removed++;
      body.push(paint(style, 'red', `${number(oldLine++)} - ${line.slice(1)}`));
    } else if (line.startsWith(' ')) {
      body.push(paint(style, 'dim', `${number(newLine++)}   ${line.slice(1)}`));
      oldLine++;
    } else if (line.startsWith('\\') || line.startsWith('[diff truncated') || line.startsWith('(')) {
      body.push(paint(style, 'dim', `${' '.repeat(width)}   ${line}`));
    }
  }
  const header = `${paint(style, 'bold', file || 'file')} ${paint(style, 'green', `+${added}`)} ${paint(style, 'red', `−${removed}`)}`;
  const folded = Math.max(0, body.length - limit);
  const shown = folded > 0 ? body.slice(0, limit) : body;
  const lines = [header, ...shown.map((line) => `  ${line}`)];
  if (folded > 0)
    lines.push(paint(style, 'dim', `  … ${folded} more diff lines (/diff shows the whole change)`));
  return { lines, added, removed, folded };
}

function maxLineNumber(lines: readonly string[]): number {
  let max = 1;
  for (const line of lines) {
    const hunk = /^@@ -(\d+)(?:,(\d+))? \+(\d+)(?:,(\d+))? @@/.exec(line);
    if (hunk)
      max = Math.max(max, Number(hunk[1]) + Number(hunk[2] ?? 1), Number(hunk[3]) + Number(hunk[4] ?? 1));
  }
  return max;
}
