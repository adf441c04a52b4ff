// The smallest character edits that turn a collaborative text (Y.Text) into a new one, so editors
// with the file open keep their cursors and their own edits when a whole text is set (a restore,
// a script's save, the agent's write).
import { diffChars } from 'diff';
import type * as Y from 'yjs';

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;
const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff;

/** Applies the smallest character edits that turn the Y.Text into `target`. */
export function setText(text: Y.Text, target: string): void {
  const current = text.toString();
  if (current === target) return;
  // The common start and end stay untouched; only the changed middle is diffed (diffing whole
  // documents is quadratic in the worst case), and a very large middle is replaced in one splice.
  let start = 0;
  const max = Math.min(current.length, target.length);
  while (start < max && current.charCodeAt(start) === target.charCodeAt(start)) start++;
  // Never cut between the two halves of a surrogate pair: Yjs would replace each half with U+FFFD.
  if (start > 0 && isHighSurrogate(current.charCodeAt(start - 1))) start--;
  let end = 0;
  while (
    end < max - start &&
    current.charCodeAt(current.length - 1 - end) === target.charCodeAt(target.length - 1 - end)
  ) {
    end++;
  }
  if (end > 0 && isLowSurrogate(current.charCodeAt(current.length - end))) end--;
  const oldMiddle = current.slice(start, current.length - end);
  const newMiddle = target.slice(start, target.length - end);
  // Character diffs are O(N·D): past a few thousand edits (or 50 ms) one splice is cheaper for
  // everyone, and live editors see the same text either way.
  const parts =
    oldMiddle.length === 0 || newMiddle.length === 0 || oldMiddle.length + newMiddle.length > 20_000
      ? undefined
      : diffChars(oldMiddle, newMiddle, { maxEditLength: 2000, timeout: 50 });
  if (!parts) {
    if (oldMiddle.length > 0) text.delete(start, oldMiddle.length);
    if (newMiddle.length > 0) text.insert(start, newMiddle);
    return;
  }
  let index = start;
  for (const part of parts) {
    if (part.removed) text.delete(index, part.value.length);
    else if (part.added) {
      text.insert(index, part.value);
      index += part.value.length;
    } else index += part.value.length;
  }
}
