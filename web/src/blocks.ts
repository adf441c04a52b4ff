// Splits Markdown into top-level blocks that render the same alone as in the whole document, so
// the live preview re-renders only the blocks an edit touched. It splits only at blank lines that
// CommonMark treats as a boundary; where a line may or may not open a fence (say, inside an HTML
// block or as the lazy continuation of a list item) it follows both readings and splits only where
// they agree. Erring means a bigger block (slower), never a wrong rendering; blocks.test.ts checks
// that rendering by blocks gives the HTML of rendering the whole document.
//
// At a block boundary the splitter is back in its initial state, so after an edit it resumes a
// block before the change and stops as soon as it meets an old boundary past it (`resplit`): the
// cost of an edit is the blocks around it, not the document.

export interface Block {
  /**
   * The block's lines as in the source, with the newline after its last line when there is one (a
   * fence at the very end opens only when a newline follows it), without the blank lines around.
   */
  text: string;
  /** 0-based number of its first line in the source. */
  line: number;
  /** How many source lines it spans. */
  lines: number;
  /** Offset of its first character in the source. */
  offset: number;
}

/** After a blank line, an indented line or a list item still belongs to what came before. */
const CONTINUES = /^(?:[ \t]|[-*+](?:[ \t]|$)|\d{1,9}[.)](?:[ \t]|$))/;
/**
 * Lines that start a container or an HTML block: in the lines after them (until a blank line) a
 * fence or "$$" may be content rather than an opener, depending on how the container parses.
 */
const AMBIGUOUS = /^ {0,3}(?:[-*+>]|\d{1,9}[.)]|<[A-Za-z/!?])|\|/;
const FENCE = /^ {0,3}(`{3,}|~{3,})/;
/** HTML blocks that may hold blank lines, and what ends each (CommonMark kinds 1, 2, 3 and 5). */
const RAW_HTML: Array<[RegExp, RegExp]> = [
  [/^ {0,3}<(?:pre|script|style|textarea)(?:[\s>]|$)/i, /<\/(?:pre|script|style|textarea)>/i],
  [/^ {0,3}<!--/, /-->/],
  [/^ {0,3}<\?/, /\?>/],
  [/^ {0,3}<!\[CDATA\[/, /\]\]>/],
];

interface Opener {
  key: string;
  closes: (line: string) => boolean;
  fence: boolean;
}

function isBlank(line: string): boolean {
  for (let i = 0; i < line.length; i++) {
    const c = line.charCodeAt(i);
    if (c !== 32 && c !== 9 && c !== 13) return false;
  }
  return true;
}

/** What the line opens that blank lines cannot end, or null. */
function opener(line: string): Opener | null {
  // Cheap first: every opener starts (after at most three spaces) with ` ~ $ or <.
  let i = 0;
  while (i < 3 && line.charCodeAt(i) === 32) i++;
  const first = line[i];
  if (first !== '`' && first !== '~' && first !== '$' && first !== '<') return null;
  const fence = FENCE.exec(line);
  if (fence) {
    const mark = fence[1]!;
    // Backtick fences may not have backticks in their info string; then this is not a fence.
    if (mark[0] === '`' && line.slice(fence[0].length).includes('`')) return null;
    const close = new RegExp(`^ {0,3}${mark[0] === '`' ? '`' : '~'}{${mark.length},}[ \\t]*$`);
    return { key: `${mark[0]}${mark.length}`, closes: (next) => close.test(next), fence: true };
  }
  // Display math as markdown.ts reads it: "$$" at the start, ended by the next "$$".
  if (line.startsWith('$$')) {
    if (line.indexOf('$$', 2) >= 0) return null;
    return { key: '$$', closes: (next) => next.includes('$$'), fence: false };
  }
  for (const [index, [open, end]] of RAW_HTML.entries()) {
    if (open.test(line)) {
      if (end.test(line)) return null;
      return { key: `html${index}`, closes: (next) => end.test(next), fence: false };
    }
  }
  return null;
}

/**
 * Blocks of `source` from `offset` (line number `line`), which must be the start of a line where a
 * block starts (or the start of the source). Stops early at a block boundary where `stop(offset)`
 * is true (the block starting there is not emitted) and returns that offset; otherwise -1.
 */
function scan(
  source: string,
  offset: number,
  line: number,
  emit: (block: Block) => void,
  stop: (offset: number) => boolean = () => false,
): number {
  let start = -1;
  let startOffset = 0;
  let last = -1;
  let lastEnd = 0;
  // The readings still open: what each waits for. `idle` is the reading where nothing is open.
  let pending: Map<string, (line: string) => boolean> | null = null;
  let idle = true;
  // Where the current run of non-blank lines began (container and HTML starts make openers unsure).
  let runStart = offset;
  let pos = offset;
  let number = line;
  const finish = () => {
    if (start < 0) return;
    let end = lastEnd;
    if (end < source.length) end++; // the newline after the last line
    emit({ text: source.slice(startOffset, end), line: start, lines: last - start + 1, offset: startOffset });
    start = -1;
  };
  while (pos <= source.length) {
    let eol = source.indexOf('\n', pos);
    if (eol < 0) eol = source.length;
    const text = source.slice(pos, eol);
    if (isBlank(text)) {
      runStart = eol + 1;
    } else {
      const afterBlank = start < 0 || last < number - 1;
      const settled = pending === null;
      if (settled && start >= 0 && afterBlank && !CONTINUES.test(text)) {
        finish();
        if (stop(pos)) return pos;
      }
      if (start < 0) {
        start = number;
        startOffset = pos;
      }
      last = number;
      lastEnd = eol;
      const next = new Map<string, (line: string) => boolean>();
      let nextIdle = false;
      if (pending) {
        for (const [key, closes] of pending) {
          if (closes(text)) nextIdle = true;
          else next.set(key, closes);
        }
      }
      if (idle) {
        const open = opener(text);
        if (open) {
          next.set(open.key, open.closes);
          // A line opens for sure at a clean block start, or (fences, "$$") after plain lines.
          const certain =
            (settled && afterBlank) ||
            ((open.fence || open.key === '$$') && !ambiguousIn(source, runStart, pos));
          if (!certain) nextIdle = true;
        } else {
          nextIdle = true;
        }
      }
      pending = next.size > 0 ? next : null;
      idle = nextIdle;
    }
    pos = eol + 1;
    number++;
  }
  finish();
  return -1;
}

/** Does a line of source[from, to) start a container or HTML block (see AMBIGUOUS)? */
function ambiguousIn(source: string, from: number, to: number): boolean {
  for (let pos = from; pos < to; ) {
    let eol = source.indexOf('\n', pos);
    if (eol < 0 || eol > to) eol = to;
    if (AMBIGUOUS.test(source.slice(pos, eol))) return true;
    pos = eol + 1;
  }
  return false;
}

/** marked reads "\r\n" and "\r" as "\n"; so does the splitter (the line count stays the same). */
function normalise(source: string): string {
  return source.includes('\r') ? source.replace(/\r\n?/g, '\n') : source;
}

export function splitBlocks(source: string): Block[] {
  const blocks: Block[] = [];
  scan(normalise(source), 0, 0, (block) => blocks.push(block));
  return blocks;
}

/**
 * The blocks of `source`, given the blocks of `previous` (the text before an edit): only the part
 * around what changed is split again; the blocks after it are the old ones, moved.
 */
export function resplit(previous: string, blocks: Block[], next: string): Block[] {
  const before = normalise(previous);
  const source = normalise(next);
  if (before === source) return blocks;
  // The changed span: before[from, before.length - tail) became source[from, source.length - tail).
  const max = Math.min(before.length, source.length);
  const from = common(max, (lo, hi) => before.slice(lo, hi) === source.slice(lo, hi));
  const tail = common(
    max - from,
    (lo, hi) =>
      before.slice(before.length - hi, before.length - lo) ===
      source.slice(source.length - hi, source.length - lo),
  );
  const delta = source.length - before.length;
  const changedEnd = source.length - tail;
  // Resume one block before the one holding the change: an edit at a block's start (or in the
  // blank lines before it) can join it to the block before.
  let first = 0;
  while (first + 1 < blocks.length && blocks[first + 1]!.offset <= from) first++;
  first = Math.max(0, first - 1);
  if (blocks.length > 0 && blocks[first]!.offset > from) first = 0;
  const startOffset = blocks.length > 0 && first > 0 ? blocks[first]!.offset : 0;
  const startLine = blocks.length > 0 && first > 0 ? blocks[first]!.line : 0;
  // Old blocks by their start offset, as it is in the new source.
  const oldStarts = new Map<number, number>();
  for (let i = first; i < blocks.length; i++) {
    if (blocks[i]!.offset + delta >= changedEnd) oldStarts.set(blocks[i]!.offset + delta, i);
  }
  const out = blocks.slice(0, first);
  const resumed = scan(
    source,
    startOffset,
    startLine,
    (block) => out.push(block),
    (offset) => offset >= changedEnd && oldStarts.has(offset),
  );
  if (resumed >= 0) {
    const index = oldStarts.get(resumed)!;
    const lineDelta =
      countLines(source, startOffset, resumed) - countLines(before, startOffset, resumed - delta);
    for (let i = index; i < blocks.length; i++) {
      const block = blocks[i]!;
      out.push({ ...block, line: block.line + lineDelta, offset: block.offset + delta });
    }
  }
  return out;
}

/**
 * The length of the longest common prefix (up to `max`), where `same(lo, hi)` compares the span
 * [lo, hi) of both. Halving spans compared as whole strings (the engine's memcmp) is ~100 times
 * faster than comparing character by character in JavaScript, over a 300 KB file.
 */
function common(max: number, same: (lo: number, hi: number) => boolean): number {
  let lo = 0;
  let hi = max;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (same(lo, mid)) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

function countLines(text: string, from: number, to: number): number {
  let count = 0;
  for (let pos = text.indexOf('\n', from); pos >= 0 && pos < to; pos = text.indexOf('\n', pos + 1)) count++;
  return count;
}

/** Could this block hold a reference link (`[text][label]`, `[label][]`, `[label]`)? Errs towards yes. */
export function mayUseReferences(text: string): boolean {
  return /\[[^\]]*\](?!\()/.test(text);
}
