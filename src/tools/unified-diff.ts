// A unified diff of one file's change, as edit_file returns it and confirm mode shows it: the `diff`
// library's hunks, formatted like `git diff` and cut to a size with a note saying so.
import { structuredPatch } from 'diff';

export interface DiffSummary {
  text: string;
  added: number;
  removed: number;
}

/** Past this many changed lines the diff is not computed (Myers' cost grows with the edit size). */
const MAX_EDIT_LENGTH = 20_000;

export function unifiedDiff(label: string, before: string, after: string, maxBytes = 8 * 1024): DiffSummary {
  const patch = structuredPatch(`a/${label}`, `b/${label}`, before, after, '', '', {
    context: 3,
    maxEditLength: MAX_EDIT_LENGTH,
  });
  if (!patch) {
    return {
      text: `(the change is too large to show as a diff: over ${MAX_EDIT_LENGTH} lines)`,
      added: 0,
      removed: 0,
    };
  }
  let added = 0;
  let removed = 0;
  const lines = [`--- a/${label}`, `+++ b/${label}`];
  for (const hunk of patch.hunks) {
    lines.push(`@@ -${hunk.oldStart},${hunk.oldLines} +${hunk.newStart},${hunk.newLines} @@`);
    for (const line of hunk.lines) {
      if (line.startsWith('+')) added++;
      else if (line.startsWith('-')) removed++;
      lines.push(line);
    }
  }
  let text = '';
  let bytes = 0;
  let shown = 0;
  for (const line of lines) {
    bytes += Buffer.byteLength(line) + 1;
    if (bytes > maxBytes) break;
    text += `${line}\n`;
    shown++;
  }
  if (shown < lines.length) {
    text += `[diff truncated: ${lines.length - shown} more diff lines not shown; read the file to see the result]\n`;
  }
  return { text: text.trimEnd(), added, removed };
}
