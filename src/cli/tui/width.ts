// How many terminal columns text takes: wide East Asian characters and emoji take two, combining
// marks and zero-width characters none, and rune's own colour sequences none.

const SGR = /\x1b\[[0-9;:]*m/g;

/** Columns of one code point (a wcwidth for what rune shows: no control characters reach here). */
export function codePointWidth(cp: number): number {
  if (cp === 0) return 0;
  // Combining marks, zero-width space/joiners, variation selectors.
  if (
    (cp >= 0x0300 && cp <= 0x036f) ||
    (cp >= 0x0483 && cp <= 0x0489) ||
    (cp >= 0x0591 && cp <= 0x05bd) ||
    (cp >= 0x0610 && cp <= 0x061a) ||
    (cp >= 0x064b && cp <= 0x065f) ||
    (cp >= 0x1ab0 && cp <= 0x1aff) ||
    (cp >= 0x1dc0 && cp <= 0x1dff) ||
    (cp >= 0x200b && cp <= 0x200f) ||
    (cp >= 0x20d0 && cp <= 0x20ff) ||
    (cp >= 0xfe00 && cp <= 0xfe0f) ||
    (cp >= 0xfe20 && cp <= 0xfe2f) ||
    (cp >= 0xe0100 && cp <= 0xe01ef)
  )
    return 0;
  if (
    (cp >= 0x1100 && cp <= 0x115f) ||
    (cp >= 0x2e80 && cp <= 0x303e) ||
    (cp >= 0x3041 && cp <= 0x33ff) ||
    (cp >= 0x3400 && cp <= 0x4dbf) ||
    (cp >= 0x4e00 && cp <= 0x9fff) ||
    (cp >= 0xa000 && cp <= 0xa4cf) ||
    (cp >= 0xac00 && cp <= 0xd7a3) ||
    (cp >= 0xf900 && cp <= 0xfaff) ||
    (cp >= 0xfe30 && cp <= 0xfe4f) ||
    (cp >= 0xff00 && cp <= 0xff60) ||
    (cp >= 0xffe0 && cp <= 0xffe6) ||
    (cp >= 0x1f300 && cp <= 0x1f64f) ||
    (cp >= 0x1f900 && cp <= 0x1f9ff) ||
    (cp >= 0x1fa70 && cp <= 0x1faff) ||
    (cp >= 0x20000 && cp <= 0x3fffd)
  )
    return 2;
  return 1;
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
