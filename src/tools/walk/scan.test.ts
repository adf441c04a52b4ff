import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compileMatcher, type ResultLine, scanBuffer } from './scan.ts';

const scan = (text: string | Buffer, pattern: string, context = 0, insensitive = false, budget = 100) =>
  scanBuffer(
    Buffer.isBuffer(text) ? text : Buffer.from(text),
    compileMatcher(pattern, insensitive),
    context,
    budget,
  );

const lines = (outcome: ReturnType<typeof scan>): string[] =>
  outcome.kind === 'lines'
    ? outcome.lines.map((l: ResultLine) => `${l.n}${l.match ? ':' : '-'}${l.text}`)
    : [];

describe('scanBuffer', () => {
  const text = [
    'one',
    'two hit',
    'three',
    'four',
    'five hit',
    'six hit',
    'seven',
    'eight',
    'nine',
    'ten hit',
  ].join('\n');

  it('matches per line, numbering from 1', () => {
    expect(lines(scan(text, 'hit'))).toEqual(['2:two hit', '5:five hit', '6:six hit', '10:ten hit']);
  });

  it('merges overlapping context and never repeats a line', () => {
    expect(lines(scan(text, 'hit', 1))).toEqual([
      '1-one',
      '2:two hit',
      '3-three',
      '4-four',
      '5:five hit',
      '6:six hit',
      '7-seven',
      '9-nine',
      '10:ten hit',
    ]);
  });

  it('stops at the budget of matching lines', () => {
    const outcome = scan(text, 'hit', 0, false, 2);
    expect(outcome).toMatchObject({ kind: 'lines', matches: 2 });
  });

  it('a pattern cannot match across lines, as in grep (\\s does not reach the next line)', () => {
    expect(scan('foo\nbar\n', 'foo\\s+bar')).toEqual({ kind: 'none' });
    expect(scan('foo\nbar\n', '^bar$').kind).toBe('lines');
  });

  it('CRLF lines are matched and shown without their CR, $ included', () => {
    expect(lines(scan('a end\r\nb\r\n', 'end$'))).toEqual(['1:a end']);
  });

  it('binary: a NUL in the first 8000 bytes; later NULs do not count (as git decides)', () => {
    expect(scan(Buffer.from('hit\0'), 'hit')).toEqual({ kind: 'binary' });
    expect(
      scan(Buffer.concat([Buffer.from('hit\n'), Buffer.alloc(9000, 'x'), Buffer.from([0])]), 'hit').kind,
    ).toBe('lines');
  });

  it('case-insensitive literal pre-check on the raw bytes, non-ASCII text decoded properly', () => {
    expect(lines(scan('Grüße CreateHASH\n', 'createhash', 0, true))).toEqual(['1:Grüße CreateHASH']);
    expect(lines(scan('ÄRGER\n', 'ärger', 0, true))).toEqual(['1:ÄRGER']);
    expect(scan('nothing here\n', 'createhash', 0, true)).toEqual({ kind: 'none' });
  });

  it('unicode property escapes switch on unicode mode', () => {
    expect(lines(scan('abc\nДом\n', '^\\p{Lu}\\p{Ll}+$'))).toEqual(['2:Дом']);
  });
});

describe('scanBuffer against matching line by line', () => {
  // Pieces that cross or sit at line ends in the whole text: \s and [^x] match a newline there,
  // anchors and \b sit at one; the lookarounds see past the line's end.
  const piece = fc.constantFrom(
    'a',
    'b',
    'ab',
    '.',
    '\\s',
    '\\s*',
    '[^x]',
    '[^x]+',
    '^',
    '$',
    '\\b',
    'a+',
    'b?',
    '(a|b)',
    '(?=b)',
    '(?!a)',
    '(?<=a)',
    '(?!\\s)',
    '(?<=\\s)',
    '\\1',
  );
  const pattern = fc.array(piece, { minLength: 1, maxLength: 5 }).map((parts) => parts.join(''));
  const text = fc.string({ unit: fc.constantFrom('a', 'b', 'x', ' ', '\n'), maxLength: 40 });

  it('a lookahead that sees the line end matches there, with context too (the whole text has a newline there)', () => {
    expect(lines(scan('xa\nb\n', 'a(?!\\s)', 1))).toEqual(['1:xa', '2-b']);
    expect(lines(scan('xa\nb\n', 'a(?!\\s)'))).toEqual(['1:xa']);
  });

  it('finds exactly the lines a per-line match finds, with any budget', () => {
    fc.assert(
      fc.property(pattern, text, fc.integer({ min: 1, max: 4 }), (source, body, budget) => {
        let line: RegExp;
        try {
          line = new RegExp(source);
        } catch {
          return;
        }
        // An empty file has no lines (as for grep).
        const all = body === '' ? [] : body.split('\n');
        if (all.length > 1 && all[all.length - 1] === '') all.pop();
        const expected = all
          .map((l, i) => ({ n: i + 1, l }))
          .filter(({ l }) => line.test(l))
          .slice(0, budget)
          .map(({ n, l }) => `${n}:${l}`);
        expect(lines(scan(body, source, 0, false, budget)), `${source} / ${JSON.stringify(body)}`).toEqual(
          expected,
        );
      }),
      { numRuns: 4000, seed: 27 },
    );
  });
});
