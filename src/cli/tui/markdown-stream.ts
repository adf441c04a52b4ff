// Markdown rendered as it streams: a block is printed once it is complete (the lexer has seen
// the next one begin), the lines of an open fenced code block one by one, and what is still
// open is offered as a preview for the live area under the transcript. Lexing is throttled so a
// long block costs linear time, not quadratic.
import { lexer, type Token, type Tokens } from 'marked';
import { codeLines, type MarkdownOptions, renderBlock, renderBlocks } from './markdown.ts';

/** Below this the pending text is lexed at every new line; above it only when it grew by a quarter. */
const EAGER_CHARS = 4096;
/** Lexing waits this long after the last time: a fast stream is lexed a few times, not per piece. */
const LEX_INTERVAL_MS = 25;
/** Rows of a long pending block the preview shows (its last ones). */
const PREVIEW_ROWS = 12;

interface OpenFence {
  char: string;
  length: number;
  lang: string;
}

const FENCE_OPEN = /^ {0,3}(`{3,}|~{3,})([^`\n]*)$/;

export class MarkdownStream {
  #pending = '';
  #lexedAt = 0;
  #fence: OpenFence | undefined;
  /** Whether a block was printed: the next one is set off by a blank line. */
  #printed = false;
  #preview: { at: number; rows: string[] } | undefined;
  #lexedTime = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly options: MarkdownOptions,
    private readonly now: () => number = () => performance.now(),
  ) {}

  /** Takes a piece of the answer; returns the lines now complete. */
  push(delta: string): string[] {
    this.#pending += delta;
    if (!delta.includes('\n')) return [];
    return this.#commit(false);
  }

  /** The answer is complete: the lines still pending. */
  finish(): string[] {
    const lines = this.#commit(true);
    this.#pending = '';
    this.#preview = undefined;
    return lines;
  }

  /** What is not printed yet, rendered for the live area (the last rows of a long block). */
  preview(): string[] {
    if (this.#pending === '') return [];
    if (this.#preview?.at === this.#pending.length) return this.#preview.rows;
    let rows: string[];
    if (this.#fence) {
      rows = codeLines({ text: this.#pending, lang: this.#fence.lang }, this.options);
    } else if (this.#pending.length <= EAGER_CHARS) {
      rows = renderBlocks(lexer(this.#pending), this.options);
    } else {
      rows = this.#pending.split('\n');
    }
    rows = rows.slice(-PREVIEW_ROWS);
    this.#preview = { at: this.#pending.length, rows };
    return rows;
  }

  #gap(lines: string[]): void {
    if (this.#printed) lines.push('');
    this.#printed = true;
  }

  #commit(final: boolean): string[] {
    const out: string[] = [];
    for (;;) {
      if (this.#fence) {
        if (!this.#fenceLines(out, final)) return out;
        continue;
      }
      const end = final ? this.#pending.length : this.#pending.lastIndexOf('\n') + 1;
      if (end === 0) return out;
      const complete = this.#pending.slice(0, end);
      const lastLine = complete.slice(complete.lastIndexOf('\n', complete.length - 2) + 1);
      if (
        !final &&
        complete.length > EAGER_CHARS &&
        complete.length < this.#lexedAt * 1.25 &&
        lastLine.trim() !== ''
      )
        return out;
      if (!final && this.now() - this.#lexedTime < LEX_INTERVAL_MS) return out;
      this.#lexedTime = this.now();
      this.#lexedAt = complete.length;
      const tokens = lexer(complete).filter((t) => t.type !== 'def');
      const blocks = tokens.filter((t) => t.type !== 'space');
      const open = openFence(blocks.at(-1));
      // Printed now: every block but the last (which may still grow), all of them at the end.
      const ready = final && !open ? tokens : tokens.slice(0, tokens.lastIndexOf(blocks.at(-1)!));
      let used = 0;
      for (const token of ready) {
        used += token.raw.length;
        if (token.type === 'space') continue;
        this.#gap(out);
        out.push(...renderBlock(token, this.options));
      }
      if (!complete.startsWith(ready.map((t) => t.raw).join(''))) {
        // The tokens do not spell the text (should not happen): keep it for the end, unrendered.
        return out;
      }
      if (open) {
        // The fence's opening line is consumed; its lines follow one by one.
        const rest = this.#pending.slice(used);
        const newline = rest.indexOf('\n');
        this.#gap(out);
        this.#fence = open;
        this.#pending = newline === -1 ? '' : rest.slice(newline + 1);
        this.#lexedAt = 0;
        continue;
      }
      this.#pending = this.#pending.slice(used);
      if (used > 0) this.#lexedAt = 0;
      return out;
    }
  }

  /** Prints complete code lines; true when the fence closed with text after it (lexed next). */
  #fenceLines(out: string[], final: boolean): boolean {
    const fence = this.#fence!;
    const close = new RegExp(`^ {0,3}${fence.char === '`' ? '`' : '~'}{${fence.length},}\\s*$`);
    const code: string[] = [];
    let closed = false;
    let at = 0;
    for (;;) {
      const newline = this.#pending.indexOf('\n', at);
      if (newline === -1) break;
      const line = this.#pending.slice(at, newline);
      at = newline + 1;
      if (close.test(line)) {
        closed = true;
        break;
      }
      code.push(line);
    }
    if (!closed && final && at < this.#pending.length) {
      const last = this.#pending.slice(at);
      at = this.#pending.length;
      if (!close.test(last)) code.push(last);
      closed = true;
    }
    if (code.length > 0) out.push(...codeLines({ text: code.join('\n'), lang: fence.lang }, this.options));
    this.#pending = this.#pending.slice(at);
    if (closed) this.#fence = undefined;
    return closed && this.#pending !== '';
  }
}

/** The fence a code token opens when its closing fence has not come yet. */
function openFence(token: Token | undefined): OpenFence | undefined {
  if (token?.type !== 'code') return undefined;
  const raw = (token as Tokens.Code).raw;
  const first = raw.slice(0, raw.indexOf('\n') === -1 ? raw.length : raw.indexOf('\n'));
  const match = FENCE_OPEN.exec(first);
  if (!match) return undefined;
  const marker = match[1]!;
  const lines = raw.replace(/\n$/, '').split('\n');
  const closing = new RegExp(`^ {0,3}${marker[0] === '`' ? '`' : '~'}{${marker.length},}\\s*$`);
  if (lines.length > 1 && closing.test(lines.at(-1)!)) return undefined;
  return { char: marker[0]!, length: marker.length, lang: match[2]!.trim() };
}
