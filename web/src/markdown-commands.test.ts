import { EditorSelection, EditorState, type StateCommand } from '@codemirror/state';
import { describe, expect, it } from 'vitest';
import {
  indentListItem,
  insertLink,
  outdentListItem,
  setHeading,
  toggleInline,
  toggleLinePrefix,
} from './markdown-commands.ts';

/**
 * Runs a command on text where `«` and `»` mark the selection (`|` a cursor) and returns the result
 * in the same notation, or null when the command declined.
 */
function apply(command: StateCommand, marked: string): string | null {
  const ranges: Array<[number, number]> = [];
  let doc = '';
  let start = -1;
  for (const char of marked) {
    if (char === '|') ranges.push([doc.length, doc.length]);
    else if (char === '«') start = doc.length;
    else if (char === '»') ranges.push([start, doc.length]);
    else doc += char;
  }
  let state = EditorState.create({
    doc,
    selection: EditorSelection.create(ranges.map(([from, to]) => EditorSelection.range(from, to))),
    extensions: EditorState.allowMultipleSelections.of(true),
  });
  const done = command({ state, dispatch: (tr) => (state = tr.state) });
  if (!done) return null;
  let out = state.doc.toString();
  for (const range of [...state.selection.ranges].reverse()) {
    out = range.empty
      ? `${out.slice(0, range.from)}|${out.slice(range.from)}`
      : `${out.slice(0, range.from)}«${out.slice(range.from, range.to)}»${out.slice(range.to)}`;
  }
  return out;
}

describe('toggleInline', () => {
  it.each([
    ['**', 'a «word» b', 'a **«word»** b'],
    ['**', 'a **«word»** b', 'a «word» b'],
    ['**', 'a «**word**» b', 'a «word» b'],
    ['**', 'x|', 'x**|**'],
    ['*', 'a «word» b', 'a *«word»* b'],
    ['*', 'a *«word»* b', 'a «word» b'],
    // Bold is not italic: italic inside bold makes bold italic, and back.
    ['*', '**«bold»**', '***«bold»***'],
    ['*', '***«both»***', '**«both»**'],
    ['**', '*«it»*', '***«it»***'],
    ['**', '***«both»***', '*«both»*'],
    ['`', 'run «ls» now', 'run `«ls»` now'],
    ['~~', '«gone» and «here»', '~~«gone»~~ and ~~«here»~~'],
  ])('%s on %j → %j', (mark, before, after) => {
    expect(apply(toggleInline(mark), before)).toBe(after);
  });
});

describe('insertLink', () => {
  it.each([
    ['see «the docs»', 'see [the docs](«url»)'],
    ['|', '[](«url»)'],
    ['«https://example.com/x»', '[|](https://example.com/x)'],
  ])('%j → %j', (before, after) => {
    expect(apply(insertLink, before)).toBe(after);
  });
});

describe('setHeading', () => {
  it.each([
    [1, 'Title|', '# Title|'],
    [2, '# Title|', '## Title|'],
    [2, '## Title|', 'Title|'],
    [0, '### Title|', 'Title|'],
    [1, '«a\nb»', '# «a\n# b»'],
  ])('level %d on %j → %j', (level, before, after) => {
    expect(apply(setHeading(level), before)).toBe(after);
  });
});

describe('toggleLinePrefix', () => {
  it.each([
    ['bullet', '«one\ntwo»', '- «one\n- two»'],
    ['bullet', '«- one\n- two»', '«one\ntwo»'],
    ['ordered', '«- one\n- two»', '«1. one\n2. two»'],
    ['task', '  - item|', '  - [ ] item|'],
    ['quote', 'said|', '> said|'],
    ['quote', '> said|', 'said|'],
  ] as const)('%s on %j → %j', (kind, before, after) => {
    expect(apply(toggleLinePrefix(kind), before)).toBe(after);
  });
});

describe('Tab and Shift-Tab on list items', () => {
  it.each([
    ['- a\n- b|', '- a\n  - b|'],
    ['1. a\n2. b|', '1. a\n   2. b|'],
    ['- a\n  - b\n  - c|', '- a\n  - b\n    - c|'],
    ['* [x] a\n* [ ] b|', '* [x] a\n  * [ ] b|'],
  ])('Tab: %j → %j', (before, after) => {
    expect(apply(indentListItem, before)).toBe(after);
  });

  it.each([
    // The first item cannot nest; a plain line is not an item: Tab does its usual indent then.
    ['- a|', null],
    ['text|', null],
    ['- a\n\nparagraph\n- b|', null],
  ])('Tab declines on %j', (before, after) => {
    expect(apply(indentListItem, before)).toBe(after);
  });

  it.each([
    ['- a\n  - b|', '- a\n- b|'],
    ['1. a\n   1. b\n      - c|', '1. a\n   1. b\n   - c|'],
    ['  - stray|', '- stray|'],
    ['- top|', null],
  ])('Shift-Tab: %j → %j', (before, after) => {
    expect(apply(outdentListItem, before)).toBe(after);
  });
});
