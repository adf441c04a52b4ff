import { describe, expect, it } from 'vitest';
import { LineEditor } from './editor.ts';
import { renderEditor } from './prompt-view.ts';
import { Screen } from './screen.ts';
import { textWidth, wrapRows } from './width.ts';

/** A tiny terminal: applies the few sequences Screen writes to a grid of rows. */
class FakeTerminal {
  rows: string[] = [''];
  row = 0;
  col = 0;
  write(data: string): void {
    for (let i = 0; i < data.length; i++) {
      const seq = /^\x1b\[(\??)(\d*)([A-Za-z])/.exec(data.slice(i));
      if (seq) {
        i += seq[0].length - 1;
        const n = Number(seq[2] || '1');
        if (seq[1]) continue;
        if (seq[3] === 'A') this.row = Math.max(0, this.row - n);
        if (seq[3] === 'B') this.row += n;
        if (seq[3] === 'C') this.col += n;
        if (seq[3] === 'K') this.rows[this.row] = '';
        if (seq[3] === 'J') this.rows = this.rows.slice(0, this.row + 1);
        while (this.rows.length <= this.row) this.rows.push('');
        continue;
      }
      const ch = data[i]!;
      if (ch === '\r') this.col = 0;
      else if (ch === '\n') {
        this.row++;
        this.col = 0;
        while (this.rows.length <= this.row) this.rows.push('');
      } else {
        const line = this.rows[this.row]!.padEnd(this.col);
        this.rows[this.row] = line.slice(0, this.col) + ch + line.slice(this.col + 1);
        this.col++;
      }
    }
  }
  text(): string {
    return this.rows.join('\n').replace(/\n+$/, '');
  }
}

describe('Screen', () => {
  it('keeps the transcript above and the pane below, redrawn in place', () => {
    const term = new FakeTerminal();
    let pane = ['status', '> typed'];
    const screen = new Screen(
      { write: (raw) => term.write(raw), columns: () => 40, rows: () => 20, tty: true },
      () => ({ rows: pane, cursorRow: pane.length - 1, cursorCol: 2 }),
    );
    screen.activate();
    screen.print('first line\nsecond ');
    // The unfinished line shows in the pane until it ends.
    expect(term.text()).toBe('first line\nsecond \nstatus\n> typed');
    screen.print('half\n');
    pane = ['> '];
    screen.redraw();
    expect(term.text()).toBe('first line\nsecond half\n> ');
    screen.aside(() => term.write('warning: beside\n'));
    expect(term.text()).toBe('first line\nsecond half\nwarning: beside\n> ');
    screen.close();
    expect(term.text()).toBe('first line\nsecond half\nwarning: beside');
  });

  it('without a terminal writes the transcript only', () => {
    const out: string[] = [];
    const screen = new Screen(
      { write: (raw) => out.push(raw), columns: () => 80, rows: () => 24, tty: false },
      () => ({
        rows: ['pane'],
        cursorRow: 0,
        cursorCol: 0,
      }),
    );
    screen.activate();
    screen.print('answer\n');
    expect(out).toEqual(['answer\n']);
  });
});

describe('prompt view', () => {
  it('wraps the prompt and puts the cursor after the typed text, wide characters counted twice', () => {
    const editor = new LineEditor();
    editor.setText(`${'x'.repeat(12)}\n中文ab`);
    const view = renderEditor(editor, '> ', { color: false }, 10);
    expect(view.rows).toEqual(['> xxxxxxxx', 'xxxx', '  中文ab']);
    expect([view.cursorRow, view.cursorCol]).toEqual([2, 8]);
    expect(textWidth('中文ab')).toBe(6);
    expect(wrapRows('中文中文中', 4)).toEqual(['中文', '中文', '中']);
  });
});
