import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { setText } from './set-text.ts';

describe('setText', () => {
  it('turns the text into the target with small edits', () => {
    const doc = new Y.Doc();
    const text = doc.getText('content');
    text.insert(0, 'hello world');
    setText(text, 'hello brave new world!');
    expect(text.toString()).toBe('hello brave new world!');
    const big = `start ${'x'.repeat(30_000)} end`;
    setText(text, big);
    expect(text.toString()).toBe(big);
    setText(text, '');
    expect(text.toString()).toBe('');
  });
});

describe('setText with characters outside the BMP', () => {
  it('never cuts a surrogate pair (Yjs would turn each half into U+FFFD)', () => {
    const doc = new Y.Doc();
    const text = doc.getText('content');
    for (const [from, to] of [
      ['𐐀', '𐐁'],
      ['a😀b', 'a😃b'],
      ['😀😀', '😀'],
      ['x\ud83d\ude00', 'x\ud83d\ude03y'],
    ] as const) {
      setText(text, from);
      setText(text, to);
      expect(text.toString()).toBe(to);
    }
  });
});

describe('setText on any texts', () => {
  it('always ends at the target, one edit at a time from any start', () => {
    fc.assert(
      fc.property(
        fc.array(fc.string({ unit: 'grapheme', maxLength: 40 }), { minLength: 1, maxLength: 6 }),
        (texts) => {
          const doc = new Y.Doc();
          const text = doc.getText('content');
          for (const target of texts) {
            setText(text, target);
            expect(text.toString()).toBe(target);
          }
        },
      ),
    );
  });
});
