import { describe, expect, it } from 'vitest';
import { type Completer, LineEditor } from './editor.ts';
import type { Key } from './keys.ts';

const text = (t: string): Key => ({ type: 'text', text: t });
const key = (name: string): Key => ({ type: 'key', name }) as Key;

function typed(editor: LineEditor, ...keys: Key[]) {
  return keys.map((k) => editor.handle(k)).filter(Boolean);
}

describe('LineEditor', () => {
  it('edits one line with the Emacs keys and submits it', () => {
    const editor = new LineEditor();
    typed(editor, text('hello world'), key('ctrl-a'), key('word-right'), key('ctrl-k'), text('!'));
    expect(editor.text).toBe('hello!');
    expect(typed(editor, key('enter'))).toEqual([{ type: 'submit', text: 'hello!' }]);
    expect(editor.text).toBe('');
  });

  it('takes a new line from Alt/Shift+Enter and from a line ending in a backslash', () => {
    const editor = new LineEditor();
    typed(editor, text('one'), key('newline'), text('two\\'), key('enter'), text('three'));
    expect(editor.text).toBe('one\ntwo\nthree');
    // Up moves within the prompt before it reaches the history.
    typed(editor, key('up'));
    expect(editor.cursor).toBe('one\ntwo'.length);
  });

  it('folds a long paste into a placeholder and sends it whole', () => {
    const editor = new LineEditor();
    const paste = Array.from({ length: 10 }, (_, i) => `line ${i}`).join('\n');
    typed(editor, text('see '), { type: 'paste', text: paste });
    expect(editor.text).toBe('see [paste #1: 10 lines]');
    expect(typed(editor, key('enter'))).toEqual([{ type: 'submit', text: `see ${paste}` }]);
    // A short paste goes in as it is; Backspace removes a placeholder whole.
    typed(editor, { type: 'paste', text: 'a\nb' });
    expect(editor.text).toBe('a\nb');
    typed(
      editor,
      key('ctrl-u'),
      key('backspace'),
      key('ctrl-u'),
      { type: 'paste', text: paste },
      key('backspace'),
    );
    expect(editor.text).toBe('');
  });

  it('walks the history with Up/Down, keeping the draft, and searches it with Ctrl-R', () => {
    const editor = new LineEditor(['git status', 'run the tests', 'fix add']);
    typed(editor, text('draft'), key('up'));
    expect(editor.text).toBe('fix add');
    typed(editor, key('up'), key('down'), key('down'));
    expect(editor.text).toBe('draft');
    typed(editor, key('ctrl-u'), key('ctrl-r'), text('t'));
    expect(editor.history[editor.search!.match!]).toBe('run the tests');
    typed(editor, key('ctrl-r'));
    expect(editor.history[editor.search!.match!]).toBe('git status');
    expect(typed(editor, key('enter'))).toEqual([{ type: 'submit', text: 'git status' }]);
  });

  it('completes from the menu: Tab takes the chosen entry, Enter runs a slash command', () => {
    const completer: Completer = (t, cursor) =>
      t.startsWith('/') && cursor === t.length
        ? {
            start: 0,
            end: t.length,
            items: ['/mode', '/model'].filter((v) => v.startsWith(t) && v !== t).map((value) => ({ value })),
            enterSubmits: true,
          }
        : undefined;
    const editor = new LineEditor([], completer);
    typed(editor, text('/mo'));
    expect(editor.menu?.completion.items.map((i) => i.value)).toEqual(['/mode', '/model']);
    typed(editor, key('down'), key('tab'));
    expect(editor.text).toBe('/model');
    typed(editor, key('ctrl-u'), text('/mo'));
    expect(typed(editor, key('enter'))).toEqual([{ type: 'submit', text: '/mode' }]);
  });

  it('Ctrl-C clears typed text, and at an empty prompt asks to quit; Ctrl-D quits when empty', () => {
    const editor = new LineEditor();
    expect(typed(editor, text('x'), key('ctrl-c'))).toEqual([{ type: 'interrupt', cleared: true }]);
    expect(typed(editor, key('ctrl-c'))).toEqual([{ type: 'interrupt', cleared: false }]);
    expect(typed(editor, key('ctrl-d'))).toEqual([{ type: 'eof' }]);
    expect(typed(editor, key('shift-tab'))).toEqual([{ type: 'cycle-mode' }]);
  });
});
