// The prompt's line editor: text of one or more lines with a cursor, history (Up/Down, Ctrl-R
// search), a completion menu (slash commands, @mentions), folded pastes and the Emacs keys people
// know from shells. Pure state: keys in, actions out; the session draws it (prompt-view.ts).
import type { Key } from './keys.ts';

export interface MenuItem {
  /** What replaces the completed span. */
  value: string;
  /** What the menu shows (default: the value). */
  label?: string;
  detail?: string;
}

export interface Completion {
  /** The span of the text the chosen value replaces. */
  start: number;
  end: number;
  items: MenuItem[];
  /** Enter runs the line with the chosen item (slash commands) rather than only completing it. */
  enterSubmits: boolean;
}

export type Completer = (text: string, cursor: number) => Completion | undefined;

export type EditorAction =
  | { type: 'submit'; text: string }
  /** Ctrl-C; `cleared` when it wiped typed text (the session then only redraws). */
  | { type: 'interrupt'; cleared: boolean }
  | { type: 'eof' }
  | { type: 'cycle-mode' }
  | { type: 'redraw' }
  | { type: 'escape' };

/** A paste longer than this many lines (or characters) is folded into a placeholder. */
const FOLD_LINES = 3;
const FOLD_CHARS = 1000;

export interface SearchState {
  query: string;
  /** Index into history of the match shown, when there is one. */
  match: number | undefined;
}

export class LineEditor {
  text = '';
  cursor = 0;
  /** Oldest first. */
  readonly history: string[];
  #browse: number | undefined;
  #draft = '';
  search: SearchState | undefined;
  menu: { completion: Completion; selected: number } | undefined;
  readonly #pastes = new Map<string, string>();
  #pasteCount = 0;

  constructor(
    history: readonly string[] = [],
    private readonly completer: Completer = () => undefined,
  ) {
    this.history = [...history];
  }

  handle(key: Key): EditorAction | undefined {
    if (this.search) return this.#searchKey(key);
    if (key.type === 'text') {
      this.#insert(key.text);
      return undefined;
    }
    if (key.type === 'paste') {
      this.#paste(key.text);
      return undefined;
    }
    switch (key.name) {
      case 'enter':
        return this.#enter();
      case 'newline':
        this.#insert('\n');
        return undefined;
      case 'tab':
        this.#tab();
        return undefined;
      case 'shift-tab':
        return { type: 'cycle-mode' };
      case 'escape':
        if (this.menu) {
          this.menu = undefined;
          return undefined;
        }
        return { type: 'escape' };
      case 'up':
      case 'ctrl-p':
        this.#vertical(-1);
        return undefined;
      case 'down':
      case 'ctrl-n':
        this.#vertical(1);
        return undefined;
      case 'ctrl-r':
        this.search = { query: '', match: undefined };
        this.menu = undefined;
        return undefined;
      case 'ctrl-c': {
        const cleared = this.text !== '';
        this.reset();
        return { type: 'interrupt', cleared };
      }
      case 'ctrl-d':
        if (this.text === '') return { type: 'eof' };
        this.#edit(this.text.slice(0, this.cursor) + this.text.slice(this.cursor + 1), this.cursor);
        return undefined;
      case 'ctrl-l':
        return { type: 'redraw' };
      default:
        this.#motion(key.name);
        return undefined;
    }
  }

  /** Empties the editor (after a submit or Ctrl-C). */
  reset(): void {
    this.text = '';
    this.cursor = 0;
    this.#browse = undefined;
    this.#draft = '';
    this.menu = undefined;
    this.search = undefined;
    this.#pastes.clear();
  }

  /** Puts `text` in the editor, as if typed (a prompt to edit again). */
  setText(text: string): void {
    this.#edit(text, text.length);
  }

  /** The text with folded pastes put back. */
  expanded(): string {
    let text = this.text;
    for (const [placeholder, content] of this.#pastes) text = text.split(placeholder).join(content);
    return text;
  }

  /** The history entry Ctrl-R shows for the query, searching back from `before`. */
  #find(query: string, before: number): number | undefined {
    if (!query) return undefined;
    for (let i = Math.min(before, this.history.length) - 1; i >= 0; i--)
      if (this.history[i]!.includes(query)) return i;
    return undefined;
  }

  #searchKey(key: Key): EditorAction | undefined {
    const search = this.search!;
    if (key.type !== 'key') {
      search.query += key.text.replace(/\n/g, ' ');
      search.match = this.#find(search.query, (search.match ?? this.history.length - 1) + 1);
      return undefined;
    }
    switch (key.name) {
      case 'ctrl-r':
        search.match = this.#find(search.query, search.match ?? this.history.length) ?? search.match;
        return undefined;
      case 'backspace':
        search.query = search.query.slice(0, -1);
        search.match = this.#find(search.query, this.history.length);
        return undefined;
      case 'escape':
      case 'ctrl-g':
      case 'ctrl-c':
        this.search = undefined;
        return undefined;
      default: {
        // Enter runs the match, as in a shell; any other key takes it into the editor to change.
        const found = search.match === undefined ? undefined : this.history[search.match];
        this.search = undefined;
        if (found !== undefined) this.setText(found);
        return key.name === 'enter' ? this.#enter() : undefined;
      }
    }
  }

  #enter(): EditorAction | undefined {
    if (this.menu && this.menu.completion.items.length > 0) {
      const { completion } = this.menu;
      this.#accept();
      if (!completion.enterSubmits) return undefined;
    }
    // A backslash at the end of a line continues the prompt on the next one.
    if (this.cursor === this.text.length && this.text.endsWith('\\')) {
      this.#edit(`${this.text.slice(0, -1)}\n`, this.text.length);
      return undefined;
    }
    const text = this.expanded();
    if (text.trim() !== '') {
      const entry = text.trim();
      if (this.history.at(-1) !== entry) this.history.push(entry);
    }
    this.reset();
    return { type: 'submit', text };
  }

  #insert(text: string): void {
    this.#edit(
      this.text.slice(0, this.cursor) + text + this.text.slice(this.cursor),
      this.cursor + text.length,
    );
  }

  #paste(text: string): void {
    const lines = text.split('\n').length;
    if (lines <= FOLD_LINES && text.length <= FOLD_CHARS) {
      this.#insert(text);
      return;
    }
    const placeholder = `[paste #${++this.#pasteCount}: ${lines} lines]`;
    this.#pastes.set(placeholder, text);
    this.#insert(placeholder);
  }

  #edit(text: string, cursor: number): void {
    this.text = text;
    this.cursor = Math.max(0, Math.min(cursor, text.length));
    this.#browse = undefined;
    this.#refreshMenu();
  }

  #refreshMenu(): void {
    const completion = this.completer(this.text, this.cursor);
    if (!completion || completion.items.length === 0) {
      this.menu = undefined;
      return;
    }
    this.menu = { completion, selected: 0 };
  }

  #tab(): void {
    if (!this.menu) {
      this.#refreshMenu();
      // A single candidate is taken at once; several open the menu to choose from.
      if ((this.menu as LineEditor['menu'])?.completion.items.length !== 1) return;
    }
    this.#accept();
  }

  /** Replaces the completed span with the chosen item, then offers what follows it (a folder's entries). */
  #accept(): void {
    const { completion, selected } = this.menu!;
    const item = completion.items[selected]!;
    const before = this.text.slice(0, completion.start);
    const after = this.text.slice(completion.end);
    this.#edit(before + item.value + after, before.length + item.value.length);
    // Completed to the only entry left: nothing more to choose.
    const next = this.menu as LineEditor['menu'];
    if (next?.completion.items.length === 1 && next.completion.items[0]!.value === item.value)
      this.menu = undefined;
  }

  #vertical(step: -1 | 1): void {
    if (this.menu) {
      const count = this.menu.completion.items.length;
      this.menu.selected = (this.menu.selected + step + count) % count;
      return;
    }
    const lineStart = this.text.lastIndexOf('\n', this.cursor - 1) + 1;
    const lineEnd = this.text.indexOf('\n', this.cursor);
    const onEdge = step < 0 ? lineStart === 0 : lineEnd === -1;
    if (!onEdge) {
      const column = this.cursor - lineStart;
      if (step < 0) {
        const prevStart = this.text.lastIndexOf('\n', lineStart - 2) + 1;
        this.cursor = Math.min(prevStart + column, lineStart - 1);
      } else {
        const nextEnd = this.text.indexOf('\n', lineEnd + 1);
        this.cursor = Math.min(lineEnd + 1 + column, nextEnd === -1 ? this.text.length : nextEnd);
      }
      return;
    }
    this.#historyStep(step);
  }

  #historyStep(step: -1 | 1): void {
    if (this.history.length === 0) return;
    const at = this.#browse ?? this.history.length;
    const next = at + step;
    if (next < 0 || next > this.history.length) return;
    if (this.#browse === undefined) this.#draft = this.text;
    const text = next === this.history.length ? this.#draft : this.history[next]!;
    this.text = text;
    this.cursor = text.length;
    this.menu = undefined;
    this.#browse = next === this.history.length ? undefined : next;
  }

  #motion(name: string): void {
    const { text, cursor } = this;
    const lineStart = text.lastIndexOf('\n', cursor - 1) + 1;
    const newline = text.indexOf('\n', cursor);
    const lineEnd = newline === -1 ? text.length : newline;
    const wordLeft = (): number => {
      let i = cursor;
      while (i > 0 && /\s/.test(text[i - 1]!)) i--;
      while (i > 0 && !/\s/.test(text[i - 1]!)) i--;
      return i;
    };
    switch (name) {
      case 'left':
      case 'ctrl-b':
        this.cursor = Math.max(0, cursor - 1);
        break;
      case 'right':
      case 'ctrl-f':
        this.cursor = Math.min(text.length, cursor + 1);
        break;
      case 'home':
      case 'ctrl-a':
        this.cursor = lineStart;
        break;
      case 'end':
      case 'ctrl-e':
        this.cursor = lineEnd;
        break;
      case 'word-left':
        this.cursor = wordLeft();
        break;
      case 'word-right': {
        let i = cursor;
        while (i < text.length && /\s/.test(text[i]!)) i++;
        while (i < text.length && !/\s/.test(text[i]!)) i++;
        this.cursor = i;
        break;
      }
      case 'backspace': {
        const placeholder = [...this.#pastes.keys()].find((p) => text.slice(0, cursor).endsWith(p));
        const from = placeholder ? cursor - placeholder.length : Math.max(0, cursor - 1);
        this.#edit(text.slice(0, from) + text.slice(cursor), from);
        break;
      }
      case 'delete':
        this.#edit(text.slice(0, cursor) + text.slice(cursor + 1), cursor);
        break;
      case 'delete-word': {
        const from = wordLeft();
        this.#edit(text.slice(0, from) + text.slice(cursor), from);
        break;
      }
      case 'ctrl-u':
        this.#edit(text.slice(0, lineStart) + text.slice(cursor), lineStart);
        break;
      case 'ctrl-k':
        this.#edit(text.slice(0, cursor) + text.slice(lineEnd), cursor);
        break;
      default:
        break;
    }
  }
}
