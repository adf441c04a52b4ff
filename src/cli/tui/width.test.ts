import { describe, expect, it } from 'vitest';
import { codePointWidth, textWidth, wrapRows } from './width.ts';

describe('terminal columns', () => {
  it.each([
    ['a', 1],
    ['é', 1],
    ['\u0301', 0], // a combining acute accent
    ['\u200d', 0], // zero-width joiner
    ['\ufe0f', 0], // a variation selector
    ['中', 2],
    ['한', 2],
    ['😀', 2],
    ['\u{20000}', 2],
    ['│', 1],
  ])('%s takes %i', (ch, width) => {
    expect(codePointWidth(ch.codePointAt(0)!)).toBe(width);
  });

  it('counts text without its colour sequences', () => {
    expect(textWidth('\x1b[1mab\x1b[0m中e\u0301')).toBe(5);
  });

  it('wraps without splitting a wide character, colours kept with what follows', () => {
    expect(wrapRows('ab中cd', 3)).toEqual(['ab', '中c', 'd']);
    expect(wrapRows('\x1b[31mabcd\x1b[0m', 2)).toEqual(['\x1b[31mab', 'cd\x1b[0m']);
  });
});
