import { describe, expect, it } from 'vitest';
import { KeyDecoder } from './keys.ts';

describe('KeyDecoder', () => {
  it.each([
    ['typed text', 'hello', [{ type: 'text', text: 'hello' }]],
    [
      'Enter and Ctrl+J',
      '\r\n',
      [
        { type: 'key', name: 'enter' },
        { type: 'key', name: 'newline' },
      ],
    ],
    ['Alt+Enter', '\x1b\r', [{ type: 'key', name: 'newline' }]],
    ['Shift+Enter (CSI u)', '\x1b[13;2u', [{ type: 'key', name: 'newline' }]],
    ['Shift+Enter (modifyOtherKeys)', '\x1b[27;2;13~', [{ type: 'key', name: 'newline' }]],
    [
      'arrows',
      '\x1b[A\x1b[B\x1bOC\x1b[D',
      ['up', 'down', 'right', 'left'].map((name) => ({ type: 'key', name })),
    ],
    ['Shift+Tab', '\x1b[Z', [{ type: 'key', name: 'shift-tab' }]],
    [
      'Ctrl keys',
      '\x03\x04\x12\x01',
      ['ctrl-c', 'ctrl-d', 'ctrl-r', 'ctrl-a'].map((name) => ({ type: 'key', name })),
    ],
    [
      'Backspace both ways, Alt+Backspace',
      '\x7f\x08\x1b\x7f',
      ['backspace', 'backspace', 'delete-word'].map((name) => ({ type: 'key', name })),
    ],
    [
      'Delete, Home, End',
      '\x1b[3~\x1b[H\x1b[4~',
      ['delete', 'home', 'end'].map((name) => ({ type: 'key', name })),
    ],
    [
      'a bracketed paste keeps its newlines as text',
      'a\x1b[200~one\r\ntwo\rthree\x1b[201~b',
      [
        { type: 'text', text: 'a' },
        { type: 'paste', text: 'one\ntwo\nthree' },
        { type: 'text', text: 'b' },
      ],
    ],
    ['unknown sequences are dropped', '\x1b[99;9qx', [{ type: 'text', text: 'x' }]],
  ])('%s', (_name, input, keys) => {
    expect(new KeyDecoder().feed(input)).toEqual(keys);
  });

  it('waits for a sequence or a paste cut between reads', () => {
    const decoder = new KeyDecoder();
    expect(decoder.feed('x\x1b[')).toEqual([{ type: 'text', text: 'x' }]);
    expect(decoder.feed('A')).toEqual([{ type: 'key', name: 'up' }]);
    expect(decoder.feed('\x1b[200~line 1\nli')).toEqual([]);
    expect(decoder.feed('ne 2\x1b[20')).toEqual([]);
    expect(decoder.feed('1~')).toEqual([{ type: 'paste', text: 'line 1\nline 2' }]);
  });

  it('a lone ESC is the Escape key only after the pause', () => {
    const decoder = new KeyDecoder();
    expect(decoder.feed('\x1b')).toEqual([]);
    expect(decoder.waiting).toBe(true);
    expect(decoder.flush()).toEqual([{ type: 'key', name: 'escape' }]);
    expect(decoder.waiting).toBe(false);
  });
});
