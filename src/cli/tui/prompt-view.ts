// What the line editor looks like on screen: the prompt (showing the policy mode), the text wrapped
// to the terminal's width with the cursor's row and column, the Ctrl-R search line, and the
// completion menu under it. Pure: the screen (screen.ts) writes the rows.
import { fitLine, paint, type Style } from '../format.ts';
import type { LineEditor } from './editor.ts';
import { textWidth, wrapRows } from './width.ts';

export interface PaneRows {
  rows: string[];
  /** Where the terminal's cursor goes, in rows from the first and columns. */
  cursorRow: number;
  cursorCol: number;
}

/** Menu entries shown at once; the list scrolls with the selection. */
const MENU_ROWS = 8;

/** The rows of `text` (one logical line) after `prefix`, and the cursor after `beforeCursor` of it. */
function wrapLine(
  prefix: string,
  line: string,
  width: number,
  beforeCursor?: string,
): { rows: string[]; cursor?: [number, number] } {
  const rows = wrapRows(prefix + line, width);
  if (beforeCursor === undefined) return { rows };
  const upTo = wrapRows(prefix + beforeCursor, width);
  let row = upTo.length - 1;
  let col = textWidth(upTo[row]!);
  if (col >= width) {
    row += 1;
    col = 0;
  }
  while (rows.length <= row) rows.push('');
  return { rows, cursor: [row, col] };
}

export function renderEditor(editor: LineEditor, prompt: string, style: Style, width: number): PaneRows {
  if (editor.search) {
    const { query, match } = editor.search;
    const found = match === undefined ? '' : (editor.history[match] ?? '').split('\n')[0]!;
    const label = paint(style, 'dim', `history search${match === undefined && query ? ' (no match)' : ''}: `);
    const line = wrapLine(label, `${query}  ${paint(style, 'dim', found)}`, width, query);
    return { rows: line.rows, cursorRow: line.cursor![0], cursorCol: line.cursor![1] };
  }
  const continuation = ' '.repeat(textWidth(prompt));
  const rows: string[] = [];
  let cursorRow = 0;
  let cursorCol = 0;
  let offset = 0;
  const lines = editor.text.split('\n');
  lines.forEach((line, index) => {
    const prefix = index === 0 ? prompt : continuation;
    const end = offset + line.length;
    const here = editor.cursor >= offset && editor.cursor <= end;
    const wrapped = wrapLine(prefix, line, width, here ? line.slice(0, editor.cursor - offset) : undefined);
    if (wrapped.cursor) {
      cursorRow = rows.length + wrapped.cursor[0];
      cursorCol = wrapped.cursor[1];
    }
    rows.push(...wrapped.rows);
    offset = end + 1;
  });
  rows.push(...menuRows(editor, style, width));
  return { rows, cursorRow, cursorCol };
}

function menuRows(editor: LineEditor, style: Style, width: number): string[] {
  if (!editor.menu) return [];
  const { completion, selected } = editor.menu;
  const items = completion.items;
  const first = Math.max(0, Math.min(selected - Math.floor(MENU_ROWS / 2), items.length - MENU_ROWS));
  const shown = items.slice(first, first + MENU_ROWS);
  const labelWidth = Math.min(32, Math.max(...shown.map((item) => textWidth(item.label ?? item.value))));
  const rows = shown.map((item, i) => {
    const label = (item.label ?? item.value).padEnd(labelWidth);
    const chosen = first + i === selected;
    const text = `${chosen ? '›' : ' '} ${label}  ${item.detail ? paint(style, 'dim', item.detail) : ''}`;
    return fitLine(chosen ? paint(style, 'cyan', text) : text, width);
  });
  if (items.length > MENU_ROWS) rows.push(paint(style, 'dim', `  (${selected + 1}/${items.length})`));
  return rows;
}
