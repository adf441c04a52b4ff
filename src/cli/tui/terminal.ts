// The session's terminal input and its live pane: stdin in raw mode with bracketed paste, decoded
// into keys for the line editor (or for an open question), prompts submitted while a turn runs
// queued in order, and the pane (status, queue, prompt or question) redrawn as things change.
import { paint, type Style } from '../format.ts';
import { type Completer, LineEditor } from './editor.ts';
import { type Key, KeyDecoder } from './keys.ts';
import { type PaneRows, renderEditor } from './prompt-view.ts';
import { Screen } from './screen.ts';
import { wrapRows } from './width.ts';

export interface TerminalIo {
  input: NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (raw: boolean) => unknown };
  output: NodeJS.WritableStream & { isTTY?: boolean; columns?: number; rows?: number };
}

export interface Choice {
  label: string;
  detail?: string;
  /** A key that picks it at once (besides its number). */
  key?: string;
}

export interface Question {
  /** Rows above the choices (already painted). */
  title: string[];
  choices: Choice[];
  /** The choice Enter takes without moving. */
  initial: number;
}

export interface TerminalHooks {
  /** The prompt's text, painted (it shows the policy mode). */
  prompt(): string;
  /** The status row while something runs; undefined when idle. */
  status(): string | undefined;
  /** Rows of the answer not printed yet, shown above the status. */
  live(): string[];
  /** Ctrl-C or Esc while something runs: cancel it. Returns false when nothing was running. */
  interrupt(): boolean;
  /** Shift+Tab. */
  cycleMode(): void;
}

const FRAMES = ['⠋', '⠙', '⠹', '⠸', '⠼', '⠴', '⠦', '⠧', '⠇', '⠏'];

export class Terminal {
  readonly editor: LineEditor;
  readonly screen: Screen;
  readonly #decoder = new KeyDecoder();
  readonly #queue: string[] = [];
  #waiting: ((text: string | undefined) => void) | undefined;
  #question:
    | { question: Question; selected: number; resolve: (index: number | undefined) => void }
    | undefined;
  /** A free-text answer (after "no, and tell the model"): the editor is borrowed for it. */
  #asking: { label: string; resolve: (text: string | undefined) => void } | undefined;
  #closed = false;
  #escTimer: NodeJS.Timeout | undefined;
  #ticker: NodeJS.Timeout | undefined;
  #frame = 0;
  readonly #onData = (chunk: Buffer | string): void => this.#feed(chunk.toString());
  readonly #onResize = (): void => this.screen.redraw();

  constructor(
    private readonly io: TerminalIo,
    private readonly style: Style,
    history: readonly string[],
    completer: Completer,
    private readonly hooks: TerminalHooks,
  ) {
    this.editor = new LineEditor(history, completer);
    const tty = Boolean(io.output.isTTY && io.input.isTTY);
    this.screen = new Screen(
      {
        write: (raw) => {
          io.output.write(raw);
        },
        columns: () => io.output.columns ?? 80,
        rows: () => io.output.rows ?? 24,
        tty,
      },
      (width) => this.#pane(width),
    );
  }

  start(): void {
    this.io.input.setRawMode?.(true);
    if (this.io.output.isTTY) this.io.output.write('\x1b[?2004h');
    this.io.input.on('data', this.#onData);
    this.io.output.on('resize', this.#onResize);
    this.io.input.resume();
    this.screen.activate();
  }

  close(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.busy(false);
    this.screen.close();
    this.io.input.off('data', this.#onData);
    this.io.output.off('resize', this.#onResize);
    if (this.io.output.isTTY) this.io.output.write('\x1b[?2004l');
    this.io.input.setRawMode?.(false);
    this.io.input.pause();
    this.#waiting?.(undefined);
    this.#question?.resolve(undefined);
    this.#asking?.resolve(undefined);
  }

  /** The next submitted prompt (queued ones first); undefined when the session ends. */
  nextPrompt(): Promise<string | undefined> {
    if (this.#closed) return Promise.resolve(undefined);
    const queued = this.#queue.shift();
    if (queued !== undefined) {
      this.screen.redraw();
      return Promise.resolve(queued);
    }
    return new Promise((resolve) => {
      this.#waiting = resolve;
    });
  }

  /** Shows the question in the pane; the index chosen, or undefined for Esc / Ctrl-C. */
  choose(question: Question): Promise<number | undefined> {
    if (this.#closed) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      this.#question = { question, selected: question.initial, resolve };
      this.screen.redraw();
    });
  }

  /** A line of text typed in the prompt; undefined for Esc / Ctrl-C. */
  askText(label: string): Promise<string | undefined> {
    if (this.#closed) return Promise.resolve(undefined);
    return new Promise((resolve) => {
      this.#asking = { label, resolve };
      this.screen.redraw();
    });
  }

  /** Whether a question is open (Ctrl-C answers it rather than cancelling the turn). */
  get asking(): boolean {
    return this.#question !== undefined || this.#asking !== undefined;
  }

  /** Starts or stops the status row's animation. */
  busy(on: boolean): void {
    if (on && !this.#ticker && this.screen && this.io.output.isTTY) {
      this.#ticker = setInterval(() => {
        this.#frame++;
        this.screen.redraw();
      }, 100);
      this.#ticker.unref();
    } else if (!on && this.#ticker) {
      clearInterval(this.#ticker);
      this.#ticker = undefined;
    }
    this.screen.redraw();
  }

  #feed(chunk: string): void {
    clearTimeout(this.#escTimer);
    for (const key of this.#decoder.feed(chunk)) this.#key(key);
    // A lone ESC is the Escape key only when nothing follows it soon.
    if (this.#decoder.waiting)
      this.#escTimer = setTimeout(() => {
        for (const key of this.#decoder.flush()) this.#key(key);
        this.screen.redraw();
      }, 40);
    this.screen.redraw();
  }

  #key(key: Key): void {
    if (this.#closed) return;
    if (this.#question) {
      this.#questionKey(key);
      return;
    }
    const interrupting = key.type === 'key' && (key.name === 'ctrl-c' || key.name === 'escape');
    if (interrupting && !this.#asking && !this.editor.menu && !this.editor.search && this.hooks.interrupt())
      return;
    const action = this.editor.handle(key);
    if (!action) return;
    switch (action.type) {
      case 'submit':
        this.#submit(action.text);
        return;
      case 'interrupt':
      case 'escape':
        if (this.#asking) {
          const { resolve } = this.#asking;
          this.#asking = undefined;
          resolve(undefined);
          return;
        }
        // Ctrl-C at an empty prompt ends the session; with text it only cleared it.
        if (action.type === 'interrupt' && !action.cleared) this.#end();
        return;
      case 'eof':
        if (!this.#asking) this.#end();
        return;
      case 'cycle-mode':
        this.hooks.cycleMode();
        return;
      case 'redraw':
        this.screen.clear();
        return;
    }
  }

  #submit(text: string): void {
    if (this.#asking) {
      const { resolve } = this.#asking;
      this.#asking = undefined;
      resolve(text);
      return;
    }
    if (text.trim() === '') return;
    if (this.#waiting) {
      const resolve = this.#waiting;
      this.#waiting = undefined;
      resolve(text);
    } else this.#queue.push(text);
  }

  #end(): void {
    const resolve = this.#waiting;
    this.#waiting = undefined;
    if (resolve) resolve(undefined);
    else this.#queue.push('/exit');
  }

  #questionKey(key: Key): void {
    const open = this.#question!;
    const count = open.question.choices.length;
    const pick = (index: number | undefined): void => {
      this.#question = undefined;
      open.resolve(index);
    };
    if (key.type === 'text') {
      const typed = key.text.trim().toLowerCase();
      const byKey = open.question.choices.findIndex((choice) => choice.key === typed);
      if (byKey !== -1) {
        pick(byKey);
        return;
      }
      const number = Number(typed);
      if (Number.isInteger(number) && number >= 1 && number <= count) pick(number - 1);
      return;
    }
    if (key.type !== 'key') return;
    switch (key.name) {
      case 'up':
      case 'ctrl-p':
        open.selected = (open.selected + count - 1) % count;
        return;
      case 'down':
      case 'ctrl-n':
      case 'tab':
        open.selected = (open.selected + 1) % count;
        return;
      case 'enter':
        pick(open.selected);
        return;
      case 'escape':
      case 'ctrl-c':
        pick(undefined);
        return;
      default:
        return;
    }
  }

  #pane(width: number): PaneRows {
    const rows: string[] = this.hooks.live().flatMap((row) => wrapRows(row, width));
    const status = this.hooks.status();
    if (status !== undefined) {
      const frame = this.io.output.isTTY ? `${FRAMES[this.#frame % FRAMES.length]} ` : '';
      rows.push(...wrapRows(paint(this.style, 'dim', `${frame}${status}`), width).slice(0, 2));
    }
    for (const queued of this.#queue)
      rows.push(
        ...wrapRows(paint(this.style, 'dim', `↳ queued: ${queued.replace(/\s+/g, ' ')}`), width).slice(0, 1),
      );
    if (this.#question) {
      const { question, selected } = this.#question;
      for (const line of question.title) rows.push(...wrapRows(line, width));
      question.choices.forEach((choice, i) => {
        const text = `${i === selected ? '›' : ' '} ${i + 1}. ${choice.label}${choice.detail ? paint(this.style, 'dim', ` ${choice.detail}`) : ''}`;
        rows.push(...wrapRows(i === selected ? paint(this.style, 'cyan', text) : text, width));
      });
      rows.push(paint(this.style, 'dim', '  ↑/↓ or a number, Enter to choose, Esc for no'));
      return { rows, cursorRow: rows.length - 1, cursorCol: 0 };
    }
    const prompt = this.#asking ? `${paint(this.style, 'yellow', this.#asking.label)} ` : this.hooks.prompt();
    const editor = renderEditor(this.editor, prompt, this.style, width);
    const top = rows.length;
    rows.push(...editor.rows);
    return { rows, cursorRow: top + editor.cursorRow, cursorCol: Math.min(editor.cursorCol, width - 1) };
  }
}
