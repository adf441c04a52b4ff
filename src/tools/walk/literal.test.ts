import fc from 'fast-check';
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

describe('requiredLiterals (property)', () => {
  // Patterns built from pieces with sharp edges: optional atoms, classes, groups, alternation,
  // escapes, anchors and counted repetition. Whatever a pattern matches holds one of its literals.
  const piece = fc.oneof(
    fc.constantFrom(
      'a',
      'b',
      'ab',
      'ba',
      'x',
      '.',
      '\\.',
      '\\d',
      '\\w',
      '\\s',
      '\\b',
      '^',
      '$',
      '[ab]',
      '[^a]',
    ),
    fc.constantFrom(
      '(a|b)',
      '(ab)?',
      '(?:ba)+',
      'a?',
      'b*',
      'a+',
      'b{0,2}',
      'a{2}',
      'x|y',
      '\\x61',
      '\\u0062',
    ),
  );
  const pattern = fc.array(piece, { minLength: 1, maxLength: 6 }).map((parts) => parts.join(''));
  const subject = fc.string({ unit: fc.constantFrom('a', 'b', 'x', 'y', '.', ' ', '1'), maxLength: 12 });

  it('never rules out a line the regex matches', () => {
    fc.assert(
      fc.property(pattern, fc.array(subject, { minLength: 1, maxLength: 20 }), (source, lines) => {
        let regex: RegExp;
        try {
          regex = new RegExp(source);
        } catch {
          return;
        }
        const literals = requiredLiterals(source);
        if (!literals) return;
        for (const line of lines) {
          if (regex.test(line))
            expect(
              literals.some((l) => line.includes(l)),
              `${source} / ${line}`,
            ).toBe(true);
        }
      }),
      { numRuns: 3000, seed: 16 },
    );
  });
});
