import { describe, expect, it } from 'vitest';
import { checkFileName, checkNoteName } from './http.ts';

describe('names', () => {
  const ok: Array<[string, string, string]> = [
    ['plain', 'notes', 'notes'],
    ['trimmed', '  notes ', 'notes'],
    ['NFD becomes NFC', 'cafe\u0301', 'café'],
    ['Devanagari with vowel signs', 'नमस्ते', 'नमस्ते'],
    ['120 astral letters', '𝒜'.repeat(120), '𝒜'.repeat(120)],
  ];
  for (const [what, input, stored] of ok) {
    it(`note name: ${what}`, () => expect(checkNoteName(input)).toBe(stored));
  }
  const emoji = '👨\u200d👩\u200d👧 family.md';
  it('file name keeps zero-width joiners of emoji sequences', () => expect(checkFileName(emoji)).toBe(emoji));
  const bad: Array<[string, string]> = [
    ['empty', '   '],
    ['121 characters', 'x'.repeat(121)],
    ['only digits', '123'],
    ['dot', '.'],
    ['dot dot', '..'],
    ['C0 control', 'a\u0001b'],
    ['DEL', 'a\u007fb'],
    ['C1 control (NEL)', 'a\u0085b'],
    ['right-to-left override', 'evil\u202etxt.md'],
    ['left-to-right isolate', 'a\u2066b'],
    ['Arabic letter mark', 'a\u061cb'],
    ['zero-width space', 'a\u200bb'],
    ['byte order mark inside', 'a\ufeffb'],
    ['line separator', 'a\u2028b'],
    ['lone high surrogate', 'a\ud800b'],
    ['lone low surrogate', 'a\udc00'],
    ['slash', 'a/b'],
    ['backslash', 'a\\b'],
  ];
  for (const [what, input] of bad) {
    it(`refuses ${what}`, () => {
      expect(() => checkFileName(input)).toThrow(/^name: /);
      expect(() => checkNoteName(input)).toThrow(/^name: /);
    });
  }
  it('refuses what note names do not allow but file names do', () => {
    expect(checkFileName('plan (v2).md')).toBe('plan (v2).md');
    expect(() => checkNoteName('plan (v2)')).toThrow(/letters, digits/);
  });
  it('refuses non-strings', () => {
    for (const value of [null, 1, {}, ['a']]) expect(() => checkFileName(value)).toThrow(/expected a string/);
  });
});
