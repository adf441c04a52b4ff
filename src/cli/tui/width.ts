// How many terminal columns text takes: wide East Asian characters and emoji take two, combining
// marks and zero-width characters none, and rune's own colour sequences none.

const SGR = /\x1b\[[0-9;:]*m/g;

/** Combining marks, zero-width space/joiners, variation selectors: no column. */
const ZERO_WIDTH: readonly (readonly [number, number])[] = [
  [0x0300, 0x036f],
  [0x0483, 0x0489],
  [0x0591, 0x05bd],
  [0x0610, 0x061a],
  [0x064b, 0x065f],
  [0x1ab0, 0x1aff],
  [0x1dc0, 0x1dff],
  [0x200b, 0x200f],
  [0x20d0, 0x20ff],
  [0xfe00, 0xfe0f],
  [0xfe20, 0xfe2f],
  [0xe0100, 0xe01ef],
];

/** Wide East Asian characters and emoji: two columns. */
const DOUBLE_WIDTH: readonly (readonly [number, number])[] = [
  [0x1100, 0x115f],
  [0x2e80, 0x303e],
  [0x3041, 0x33ff],
  [0x3400, 0x4dbf],
  [0x4e00, 0x9fff],
  [0xa000, 0xa4cf],
  [0xac00, 0xd7a3],
  [0xf900, 0xfaff],
  [0xfe30, 0xfe4f],
  [0xff00, 0xff60],
  [0xffe0, 0xffe6],
  [0x1f300, 0x1f64f],
  [0x1f900, 0x1f9ff],
  [0x1fa70, 0x1faff],
  [0x20000, 0x3fffd],
];

const inRanges = (cp: number, ranges: readonly (readonly [number, number])[]): boolean =>
  ranges.some(([low, high]) => cp >= low && cp <= high);

/** Columns of one code point (a wcwidth for what rune shows: no control characters reach here). */
export function codePointWidth(cp: number): number {
  if (cp === 0 || inRanges(cp, ZERO_WIDTH)) return 0;
  return inRanges(cp, DOUBLE_WIDTH) ? 2 : 1;
}

/** Columns of `text`, colour sequences not counted. */
export function textWidth(text: string): number {
  let width = 0;
  const plain = text.includes('\x1b') ? text.replace(SGR, '') : text;
  for (const ch of plain) width += codePointWidth(ch.codePointAt(0)!);
  return width;
}

/**
 * `text` (one line, may hold colour sequences) cut into rows of at most `width` columns. Colour
 * sequences stay with the character after them; a wide character never straddles two rows.
 */
export function wrapRows(text: string, width: number): string[] {
  if (width <= 0) return [text];
  const rows: string[] = [];
  let row = '';
  let used = 0;
  for (const part of text.split(/(\x1b\[[0-9;:]*m)/)) {
    if (part.startsWith('\x1b[')) {
      row += part;
      continue;
    }
    for (const ch of part) {
      const w = codePointWidth(ch.codePointAt(0)!);
      if (used + w > width) {
        rows.push(row);
        row = '';
        used = 0;
      }
      row += ch;
      used += w;
    }
  }
  rows.push(row);
  return rows;
}
