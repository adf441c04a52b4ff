import { describe, expect, it } from 'vitest';
import { resolveLimits } from './limits.ts';
import { parseQuery, SNIPPET_SCAN, snippet } from './search.ts';

const shape = resolveLimits({});

describe('parseQuery', () => {
  const cases: Array<[string, string | RegExp]> = [
    ['zebra', '"zebra"'],
    ['Zebra zebra ZEBRA', '"Zebra"'],
    ['"zebra crossing" zebra', '"zebra crossing" "zebra"'],
    ['NEAR(a b) OR x*', '"NEAR a" "b" "OR" "x"'],
    ['col:value', '"col value"'],
    ['café cafe', '"café"'],
    ['"unclosed phrase', '"unclosed phrase"'],
    ['\u0000', /give at least one word/],
    ['"" ***', /give at least one word/],
    ['a b c d e f g h i j k', /at most 10 different words/],
    ['"one two three four five six seven eight nine"', /at most 8 words/],
    ['x'.repeat(257), /at most 256 characters/],
  ];
  for (const [input, expected] of cases) {
    it(`${JSON.stringify(input.slice(0, 40))} → ${expected}`, () => {
      const parsed = parseQuery(input, shape);
      if (typeof expected === 'string') {
        expect(parsed.ok).toBe(true);
        expect(parsed.ok && parsed.query.fts).toBe(expected);
      } else {
        expect(parsed.ok).toBe(false);
        expect(!parsed.ok && parsed.message).toMatch(expected);
      }
    });
  }
  it('dedupes before counting: forty copies of one word are one term', () => {
    const parsed = parseQuery(Array(40).fill('zebra').join(' '), shape);
    expect(parsed.ok && parsed.query.terms.length).toBe(1);
  });
});

describe('snippet', () => {
  const parsed = parseQuery('zebra crossing', shape);
  if (!parsed.ok) throw new Error(parsed.message);
  const terms = parsed.query.terms;
  it('marks matching words, as plain text, with ellipses where text was left out', () => {
    const text = `${'lorem ipsum '.repeat(20)}a Zebra <b>crossing</b> here ${'dolor '.repeat(30)}`;
    const out = snippet(text, terms);
    expect(out).toContainEqual({ text: 'Zebra', match: true });
    expect(out).toContainEqual({ text: 'crossing', match: true });
    expect(out[0]!.text.startsWith('…')).toBe(true);
    expect(out.at(-1)!.text.endsWith('…')).toBe(true);
    expect(out.map((s) => s.text).join('').length).toBeLessThan(200);
  });
  it('looks only at the first SNIPPET_SCAN characters, whatever the size of the text', () => {
    const far = `${'x '.repeat(SNIPPET_SCAN)}zebra`;
    const out = snippet(far, terms);
    expect(out.some((s) => s.match)).toBe(false);
    expect(out.map((s) => s.text).join('').length).toBeLessThan(200);
  });
  it('gives nothing for an empty text', () => {
    expect(snippet('', terms)).toEqual([]);
  });
});
