// The Markdown editor: CodeMirror 6 bound to the file's Y.Text by y-codemirror.next. Undo is per
// person (a Yjs UndoManager that tracks only this editor's own changes, so Ctrl-Z never takes back
// someone else's typing); other editors' cursors come through PresenceAwareness. This module and
// CodeMirror load only when someone opens a file to edit (a chunk of its own).
import { defaultKeymap, indentLess, indentMore } from '@codemirror/commands';
import { indentUnit } from '@codemirror/language';
import { highlightSelectionMatches, search, searchKeymap } from '@codemirror/search';
import { EditorState, Prec, type StateCommand } from '@codemirror/state';
import {
  drawSelection,
  dropCursor,
  EditorView,
  highlightActiveLine,
  highlightActiveLineGutter,
  highlightSpecialChars,
  type KeyBinding,
  keymap,
  lineNumbers,
  placeholder,
} from '@codemirror/view';
import { yCollab, yUndoManagerKeymap } from 'y-codemirror.next';
import * as Y from 'yjs';
import type { PresenceAwareness } from './awareness.ts';
import { markdownSupport } from './editor-languages.ts';
import { editorTheme } from './editor-theme.ts';
import {
  indentListItem,
  insertLink,
  outdentListItem,
  setHeading,
  toggleInline,
  toggleLinePrefix,
} from './markdown-commands.ts';
import type { LineScroller } from './scroll-sync.ts';

export interface EditorOptions {
  parent: HTMLElement;
  text: Y.Text;
  awareness: PresenceAwareness;
  readOnly: boolean;
  /** Files pasted or dropped into the editor; their links go to `at` once uploaded. */
  onFiles: (files: File[], at: Y.RelativePosition) => void;
  /** Put in the content element's aria-describedby (the keyboard hint). */
  describedBy?: string;
}

const either =
  (first: StateCommand, second: StateCommand): StateCommand =>
  (target) =>
    first(target) || second(target);

/** The Markdown keys, shown in the editor's keyboard help too. */
export const MARKDOWN_KEYS: Array<KeyBinding & { label: string }> = [
  { key: 'Mod-b', run: toggleInline('**'), label: 'bold' },
  { key: 'Mod-i', run: toggleInline('*'), label: 'italic' },
  { key: 'Mod-e', run: toggleInline('`'), label: 'inline code' },
  { key: 'Mod-Shift-x', run: toggleInline('~~'), label: 'strikethrough' },
  { key: 'Mod-k', run: insertLink, label: 'link' },
  ...[1, 2, 3, 4, 5, 6].map((level) => ({
    key: `Mod-Alt-${level}`,
    run: setHeading(level),
    label: `heading ${level}`,
  })),
  { key: 'Mod-Alt-0', run: setHeading(0), label: 'plain paragraph' },
  { key: 'Mod-Shift-8', run: toggleLinePrefix('bullet'), label: 'bullet list' },
  { key: 'Mod-Shift-7', run: toggleLinePrefix('ordered'), label: 'numbered list' },
  { key: 'Mod-Shift-9', run: toggleLinePrefix('task'), label: 'task list' },
  { key: 'Mod-Shift-.', run: toggleLinePrefix('quote'), label: 'quote' },
  {
    key: 'Tab',
    run: either(indentListItem, indentMore),
    shift: either(outdentListItem, indentLess),
    label: 'indent (list item: nest)',
  },
];

export class MarkdownEditor implements LineScroller {
  readonly view: EditorView;
  readonly undoManager: Y.UndoManager;

  constructor(private readonly options: EditorOptions) {
    const { text, awareness, readOnly } = options;
    // Only this editor's own transactions are tracked (y-codemirror.next adds its origin), so
    // remote updates never land on this person's undo stack.
    this.undoManager = new Y.UndoManager(text, { trackedOrigins: new Set() });
    const state = EditorState.create({
      doc: text.toString(),
      extensions: [
        lineNumbers(),
        highlightActiveLineGutter(),
        highlightSpecialChars(),
        drawSelection(),
        dropCursor(),
        highlightActiveLine(),
        EditorView.lineWrapping,
        EditorState.tabSize.of(4),
        indentUnit.of('  '),
        markdownSupport(),
        search({ top: true }),
        highlightSelectionMatches(),
        Prec.high(keymap.of(MARKDOWN_KEYS)),
        keymap.of([...yUndoManagerKeymap, ...searchKeymap, ...defaultKeymap]),
        yCollab(text, awareness, { undoManager: this.undoManager }),
        EditorState.readOnly.of(readOnly),
        EditorView.editable.of(!readOnly),
        placeholder(readOnly ? '' : 'Write Markdown…'),
        EditorView.contentAttributes.of({
          'aria-label': 'Markdown source',
          ...(options.describedBy ? { 'aria-describedby': options.describedBy } : {}),
        }),
        editorTheme,
        EditorView.domEventHandlers({
          paste: (event, view) =>
            this.takeFiles(event.clipboardData?.files, view.state.selection.main.head, event),
          drop: (event, view) => {
            const at =
              view.posAtCoords({ x: event.clientX, y: event.clientY }) ?? view.state.selection.main.head;
            return this.takeFiles(event.dataTransfer?.files, at, event);
          },
        }),
      ],
    });
    this.view = new EditorView({ state, parent: options.parent });
  }

  private takeFiles(files: FileList | undefined, pos: number, event: Event): boolean {
    if (this.options.readOnly || !files || files.length === 0) return false;
    event.preventDefault();
    this.options.onFiles([...files], Y.createRelativePositionFromTypeIndex(this.options.text, pos));
    return true;
  }

  /**
   * Inserts a block (an uploaded file's link) where `at` points now (others may have typed since),
   * on a line of its own, as this person's edit.
   */
  insertAt(at: Y.RelativePosition, block: string): void {
    const doc = this.options.text.doc;
    const absolute = doc ? Y.createAbsolutePositionFromRelativePosition(at, doc) : null;
    const { state } = this.view;
    const from = Math.min(absolute?.index ?? state.selection.main.head, state.doc.length);
    const line = state.doc.lineAt(from);
    const insert = `${from === line.from ? '' : '\n'}${block}${from === line.to ? '' : '\n'}`;
    this.view.dispatch({
      changes: { from, insert },
      selection: { anchor: from + insert.length },
      userEvent: 'input.paste',
      scrollIntoView: true,
    });
  }

  focus(): void {
    this.view.focus();
  }

  destroy(): void {
    this.view.destroy();
    this.undoManager.destroy();
  }

  get scroller(): HTMLElement {
    return this.view.scrollDOM;
  }

  /** Where the document starts inside the scroller (its padding), in scroller coordinates. */
  private documentOffset(): number {
    return (
      this.view.documentTop - this.view.scrollDOM.getBoundingClientRect().top + this.view.scrollDOM.scrollTop
    );
  }

  topLine(): number {
    const height = this.view.scrollDOM.scrollTop - this.documentOffset();
    const block = this.view.lineBlockAtHeight(Math.max(0, height));
    const line = this.view.state.doc.lineAt(block.from).number - 1;
    return line + Math.min(1, Math.max(0, (height - block.top) / Math.max(block.height, 1)));
  }

  topFor(line: number): number {
    const { doc } = this.view.state;
    const whole = Math.min(Math.floor(line), doc.lines - 1);
    const block = this.view.lineBlockAt(doc.line(whole + 1).from);
    return this.documentOffset() + block.top + (line - whole) * block.height;
  }
}
