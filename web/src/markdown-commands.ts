// Markdown editing commands for the editor (bold, italic, code, links, headings, list and quote
// prefixes, Tab on list items). Pure functions of the editor state: no view, no DOM, so they are
// tested as tables of before/after text (markdown-commands.test.ts).
import {
  type ChangeSpec,
  EditorSelection,
  type EditorState,
  type Line,
  type StateCommand,
  type Transaction,
} from '@codemirror/state';

const run =
  (build: (state: EditorState) => Transaction | null): StateCommand =>
  ({ state, dispatch }) => {
    if (state.readOnly) return false;
    const tr = build(state);
    if (!tr) return false;
    dispatch(tr);
    return true;
  };

/** How many `char` directly before `pos` (or after, with dir 1). */
function runOf(state: EditorState, pos: number, char: string, dir: -1 | 1): number {
  let count = 0;
  while (count < 6) {
    const at = dir < 0 ? pos - count - 1 : pos + count;
    if (at < 0 || at >= state.doc.length || state.sliceDoc(at, at + 1) !== char) break;
    count++;
  }
  return count;
}

/** Is `mark` already around [from, to)? `*` and `**` share a character, so count it. */
function wrappedBy(state: EditorState, from: number, to: number, mark: string): boolean {
  if (mark === '*' || mark === '**') {
    const before = runOf(state, from, '*', -1);
    const after = runOf(state, to, '*', 1);
    return mark === '*' ? before % 2 === 1 && after % 2 === 1 : before >= 2 && after >= 2;
  }
  return state.sliceDoc(from - mark.length, from) === mark && state.sliceDoc(to, to + mark.length) === mark;
}

/**
 * Wraps each selection in `mark` (`**`, `*`, `` ` ``, `~~`), or unwraps it when already wrapped.
 * An empty selection gets an empty pair with the cursor between.
 */
export function toggleInline(mark: string): StateCommand {
  return run((state) =>
    state.update(
      state.changeByRange((range) => {
        const { from, to } = range;
        const n = mark.length;
        if (wrappedBy(state, from, to, mark)) {
          return {
            changes: [
              { from: from - n, to: from },
              { from: to, to: to + n },
            ],
            range: EditorSelection.range(from - n, to - n),
          };
        }
        const text = state.sliceDoc(from, to);
        if (text.length > 2 * n && text.startsWith(mark) && text.endsWith(mark)) {
          return {
            changes: [
              { from, to: from + n },
              { from: to - n, to },
            ],
            range: EditorSelection.range(from, to - 2 * n),
          };
        }
        return {
          changes: [
            { from, insert: mark },
            { from: to, insert: mark },
          ],
          range: EditorSelection.range(from + n, to + n),
        };
      }),
      { scrollIntoView: true, userEvent: 'input.format' },
    ),
  );
}

/**
 * `[selection](url)` with "url" selected to type over; a selected URL becomes the target instead,
 * with the cursor in the empty label.
 */
export const insertLink: StateCommand = run((state) =>
  state.update(
    state.changeByRange((range) => {
      const text = state.sliceDoc(range.from, range.to);
      if (/^(?:https?:\/\/|mailto:)\S+$/.test(text)) {
        return {
          changes: { from: range.from, to: range.to, insert: `[](${text})` },
          range: EditorSelection.cursor(range.from + 1),
        };
      }
      const start = range.from + text.length + 3;
      return {
        changes: { from: range.from, to: range.to, insert: `[${text}](url)` },
        range: EditorSelection.range(start, start + 3),
      };
    }),
    { scrollIntoView: true, userEvent: 'input.format' },
  ),
);

/** The lines a selection touches (a selection ending at a line start leaves that line out). */
function selectedLines(state: EditorState): Line[] {
  const seen = new Set<number>();
  const lines: Line[] = [];
  for (const range of state.selection.ranges) {
    const last =
      range.to > range.from && state.doc.lineAt(range.to).from === range.to ? range.to - 1 : range.to;
    for (let pos = range.from; pos <= last; ) {
      const line = state.doc.lineAt(pos);
      if (!seen.has(line.number)) {
        seen.add(line.number);
        lines.push(line);
      }
      pos = line.to + 1;
    }
  }
  return lines;
}

const HEADING = /^(#{1,6})[ \t]+/;

/** Makes the selected lines headings of `level`; lines already at that level become plain text. */
export function setHeading(level: number): StateCommand {
  return run((state) => {
    const lines = selectedLines(state);
    const unset = lines.every((line) => HEADING.exec(line.text)?.[1]?.length === level);
    const changes: ChangeSpec[] = lines.map((line) => {
      const current = HEADING.exec(line.text);
      return {
        from: line.from,
        to: line.from + (current?.[0].length ?? 0),
        insert: unset || level === 0 ? '' : `${'#'.repeat(level)} `,
      };
    });
    return state.update({ changes, scrollIntoView: true, userEvent: 'input.format' });
  });
}

/** Any list marker (with a task box), so switching between list kinds replaces the marker. */
const LIST_PREFIX = /^([ \t]*)(?:[-*+]|\d{1,9}[.)])[ \t]+(?:\[[ xX]\][ \t]+)?/;
const PREFIXES = { bullet: LIST_PREFIX, ordered: LIST_PREFIX, task: LIST_PREFIX, quote: /^([ \t]*)>[ \t]?/ };

/** Turns the selected lines into a bullet, numbered or task list, or a quote; again turns it off. */
export function toggleLinePrefix(kind: keyof typeof PREFIXES): StateCommand {
  return run((state) => {
    const lines = selectedLines(state).filter((line, _i, all) => all.length === 1 || line.text.trim() !== '');
    const marker = (n: number) =>
      kind === 'bullet' ? '- ' : kind === 'ordered' ? `${n}. ` : kind === 'task' ? '- [ ] ' : '> ';
    const has = (text: string, n: number) => {
      const match = PREFIXES[kind].exec(text);
      return match !== null && match[0].slice(match[1]!.length) === marker(n);
    };
    const remove = lines.every((line, i) => has(line.text, i + 1));
    const changes: ChangeSpec[] = lines.map((line, i) => {
      const match = PREFIXES[kind].exec(line.text);
      const indent = match?.[1]?.length ?? /^[ \t]*/.exec(line.text)![0].length;
      const end = line.from + (match?.[0].length ?? indent);
      return { from: line.from + indent, to: end, insert: remove ? '' : marker(i + 1) };
    });
    return state.update({ changes, scrollIntoView: true, userEvent: 'input.format' });
  });
}

const LIST_ITEM = /^([ \t]*)([-*+]|\d{1,9}[.)])([ \t]+|$)/;

interface Item {
  indent: number;
  /** Column where the item's text starts: where a child item's marker goes. */
  content: number;
}

function listItem(text: string): Item | null {
  const match = LIST_ITEM.exec(text);
  if (!match) return null;
  const indent = match[1]!.replace(/\t/g, '    ').length;
  return { indent, content: indent + match[2]!.length + Math.max(1, match[3]!.length) };
}

/** The indentation Tab (deeper) or Shift-Tab gives the list item on line `number`; null: not one. */
function listIndent(state: EditorState, number: number, deeper: boolean): number | null {
  const item = listItem(state.doc.line(number).text);
  if (!item) return null;
  for (let n = number - 1; n >= 1; n--) {
    const text = state.doc.line(n).text;
    if (text.trim() === '') continue;
    const above = listItem(text);
    if (!above) {
      // A paragraph inside an item is indented; anything else at column 0 ends the list.
      if (/^\S/.test(text)) break;
      continue;
    }
    // Deeper: become a child of the previous sibling. Shallower: take the parent's place.
    if (deeper && above.indent <= item.indent) return above.indent === item.indent ? above.content : null;
    if (!deeper && above.indent < item.indent) return above.indent;
  }
  return deeper ? null : item.indent > 0 ? 0 : null;
}

function reindentList(deeper: boolean): StateCommand {
  return run((state) => {
    const lines = selectedLines(state);
    const changes: ChangeSpec[] = [];
    for (const line of lines) {
      const indent = listIndent(state, line.number, deeper);
      if (indent === null) return null;
      const current = /^[ \t]*/.exec(line.text)![0].length;
      changes.push({ from: line.from, to: line.from + current, insert: ' '.repeat(indent) });
    }
    return state.update({
      changes,
      scrollIntoView: true,
      userEvent: deeper ? 'input.indent' : 'delete.dedent',
    });
  });
}

/** Tab on list items: nest under the previous item at its text column (so numbered lists nest too). */
export const indentListItem = reindentList(true);
/** Shift-Tab on list items: back to the parent item's level. */
export const outdentListItem = reindentList(false);
