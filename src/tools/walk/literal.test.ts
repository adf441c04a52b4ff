import { describe, expect, it } from 'vitest';
import { requiredLiterals } from './literal.ts';

describe('requiredLiterals', () => {
  const table: Array<[string, string[] | undefined]> = [
    ['createHash', ['createHash']],
    ['foo\\.bar\\(', ['foo.bar(']],
    ['\\bhandleRequest\\b', ['handleRequest']],
    ['function\\s+\\w+Error', ['function']],
    ['colou?r', ['colo']],
    ['ab+c', ['ab']],
    ['xa*yz', ['yz']],
    ['a{0,3}bcd', ['bcd']],
    ['ab{2}cd', ['ab']],
    ['foo|barbaz', ['foo', 'barbaz']],
    ['(foo|bar)baz', ['baz']],
    ['[abc]def', ['def']],
    ['x[|]yy', ['yy']],
    ['^import .* from', ['import ']],
    ['TODO:?\\s', ['TODO']],
    ['a.b', ['a']],
    ['\\w+', undefined],
    ['(a|b)c?', undefined],
    ['foo|\\d+', undefined],
    ['', undefined],
    ['*x', undefined],
    ['(unbalanced', undefined],
    ['lazy.*?end', ['lazy']],
    ['{literal}', ['{literal}']],
    ['\\u0041BC', ['BC']],
    ['\\/path\\/to', ['/path/to']],
    ['\\u{1F600}xy', ['xy']],
    ['\\x41zz', ['zz']],
    ['(a)\\12345q', ['q']],
    ['\\p{Lu}ab', ['ab']],
    ['\\k<name>cd', ['cd']],
    ['\\cJef', ['ef']],
  ];
  it.each(table)('%s → %j', (pattern, expected) => {
    expect(requiredLiterals(pattern)).toEqual(expected);
  });

  it('every match of each pattern contains one of its literals (so the pre-check never drops a match)', () => {
    const samples = ['color', 'colour', 'abbbc', 'xyz', 'xaaayz', 'bcd', 'aaabcd', 'abbcd', 'foo', 'barbaz'];
    for (const [pattern, literals] of table) {
      if (!literals) continue;
      let regex: RegExp;
      try {
        regex = new RegExp(pattern);
      } catch {
        continue;
      }
      for (const sample of samples) {
        if (regex.test(sample))
          expect(
            literals.some((l) => sample.includes(l)),
            `${pattern} / ${sample}`,
          ).toBe(true);
      }
    }
  });
});
