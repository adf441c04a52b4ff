// The session's terminal: the transcript scrolls above, and a live pane at the bottom holds the
// line being streamed, the status (spinner, time, tokens) and the prompt (or a question). Output
// erases the pane, writes the new transcript lines, and draws the pane again, in one write, so
// typing stays possible while an answer streams. Without a terminal it only writes the transcript.
import type { PaneRows } from './prompt-view.ts';
import { wrapRows } from './width.ts';

export interface ScreenIo {
  /** Writes bytes to the terminal as they are (the transcript was sanitized before). */
  write(raw: string): void;
  columns(): number;
  rows(): number;
  /** A terminal that takes cursor movement; false: a plain stream, nothing is redrawn. */
  tty: boolean;
}

// Terminals that know synchronized output (mode 2026) paint the whole update at once; others ignore it.
const BEGIN = '\x1b[?2026h\x1b[?25l';
const END = '\x1b[?25h\x1b[?2026l';

export class Screen {
  /** Rows of the pane on screen now, and the row of the terminal's cursor within it. */
  #shown = 0;
  #cursorRow = 0;
  /** The transcript's unfinished last line, shown as the pane's first rows until it ends. */
  #partial = '';
  #closed = false;
  /** The pane is drawn once the session starts reading prompts; before that output is plain. */
  #active = false;

  constructor(
    private readonly io: ScreenIo,
    private readonly pane: (width: number) => PaneRows,
  ) {}

  /** The terminal's width now. */
  get columns(): number {
    return Math.max(10, this.io.columns());
  }

  /** Adds transcript text: complete lines go above the pane for good; an unfinished one is shown live. */
  print(text: string): void {
    if (!text) return;
    if (!this.io.tty) {
      this.io.write(text);
      return;
    }
    const all = this.#partial + text;
    const cut = all.lastIndexOf('\n') + 1;
    this.#partial = all.slice(cut);
    this.#paint(all.slice(0, cut));
  }

  /** Ends an unfinished transcript line (before something that must start on its own line). */
  endLine(): void {
    if (this.#partial) this.print('\n');
  }

  /** Starts drawing the pane. */
  activate(): void {
    this.#active = true;
    this.redraw();
  }

  redraw(): void {
    if (this.io.tty && this.#active && !this.#closed) this.#paint('');
  }

  /** Erases the pane, lets `fn` write (to stderr, say), and draws the pane again under it. */
  aside(fn: () => void): void {
    if (!this.io.tty || this.#closed || !this.#active) {
      fn();
      return;
    }
    this.io.write(this.#erase());
    this.#shown = 0;
    this.#cursorRow = 0;
    fn();
    this.redraw();
  }

  /** Clears the screen and its scrollback (`/clear`), then draws the pane at the top. */
  clear(): void {
    if (!this.io.tty) return;
    this.#shown = 0;
    this.#cursorRow = 0;
    this.io.write('\x1b[2J\x1b[3J\x1b[H');
    this.redraw();
  }

  /** Erases the pane for good (the session ends); the transcript stays. */
  close(): void {
    if (this.#closed) return;
    if (this.io.tty) this.io.write(`${this.#erase()}${this.#partial ? `${this.#partial}\n` : ''}`);
    this.#closed = true;
    this.#shown = 0;
  }

  /**
   * Erases the pane's rows one by one (EL, not ED: tmux moves the whole screen into its history
   * when ED clears it from the top, its scroll-on-clear), leaving the cursor on the pane's first row.
   */
  #erase(): string {
    if (this.#shown === 0) return '';
    const up = this.#cursorRow > 0 ? `\x1b[${this.#cursorRow}A` : '';
    const rest = this.#shown - 1;
    return `\r${up}\x1b[2K${'\x1b[B\x1b[2K'.repeat(rest)}${rest > 0 ? `\x1b[${rest}A` : ''}`;
  }

  #paint(lines: string): void {
    if (this.#closed || !this.#active) {
      this.io.write(lines);
      return;
    }
    const width = Math.max(10, this.io.columns());
    const pane = this.pane(width);
    const partial = this.#partial ? wrapRows(this.#partial, width) : [];
    let rows = [...partial, ...pane.rows];
    let cursorRow = partial.length + pane.cursorRow;
    // A pane taller than the terminal would scroll its top away, where it cannot be erased.
    const max = Math.max(1, this.io.rows() - 1);
    if (rows.length > max) {
      const first = Math.max(0, Math.min(cursorRow - max + 1, rows.length - max));
      rows = rows.slice(first, first + max);
      cursorRow -= first;
    }
    const up = rows.length - 1 - cursorRow;
    const place = `${up > 0 ? `\x1b[${up}A` : ''}\r${pane.cursorCol > 0 ? `\x1b[${pane.cursorCol}C` : ''}`;
    this.io.write(`${BEGIN}${this.#erase()}${lines}${rows.join('\n')}${place}${END}`);
    this.#shown = rows.length;
    this.#cursorRow = cursorRow;
  }
}
