import { describe, expect, it } from 'vitest';
import { applyEdits, closestLines, joinText, splitText } from './edit-apply.ts';

describe('splitText / joinText', () => {
  const table: Array<[string, string, boolean, '\n' | '\r\n', string]> = [
    ['LF', 'a\nb\n', false, '\n', 'a\nb\n'],
    ['CRLF', 'a\r\nb\r\n', false, '\r\n', 'a\nb\n'],
    ['BOM + CRLF', '\uFEFFa\r\nb', true, '\r\n', 'a\nb'],
    ['mixed endings stay literal', 'a\r\nb\nc', false, '\n', 'a\r\nb\nc'],
    ['no line break', 'abc', false, '\n', 'abc'],
    ['lone CR (old Mac) untouched', 'a\rb', false, '\n', 'a\rb'],
  ];
  it.each(table)('%s', (_name, raw, bom, eol, text) => {
    const form = splitText(raw);
    expect(form).toEqual({ bom, eol, text });
    expect(joinText(form, form.text)).toBe(raw);
  });

  it('new lines written into a CRLF file get CRLF', () => {
    const form = splitText('\uFEFFone\r\ntwo\r\n');
    expect(joinText(form, 'one\nnew\ntwo\n')).toBe('\uFEFFone\r\nnew\r\ntwo\r\n');
  });
});

describe('applyEdits', () => {
  const text = 'alpha\nbeta\ngamma\nbeta\ndelta\n';

  it('replaces a unique match', () => {
    expect(applyEdits(text, [{ old_string: 'gamma', new_string: 'GAMMA' }])).toEqual({
      ok: true,
      text: 'alpha\nbeta\nGAMMA\nbeta\ndelta\n',
      replacements: 1,
    });
  });

  it('applies edits in order, each to the result of the one before', () => {
    const outcome = applyEdits(text, [
      { old_string: 'gamma', new_string: 'renamed' },
      { old_string: 'renamed\nbeta', new_string: 'renamed\nBETA' },
    ]);
    expect(outcome).toMatchObject({ ok: true, text: 'alpha\nbeta\nrenamed\nBETA\ndelta\n', replacements: 2 });
  });

  it('refuses an ambiguous match and says where, unless replace_all', () => {
    const outcome = applyEdits(text, [{ old_string: 'beta', new_string: 'B' }]);
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) expect(outcome.message).toMatch(/found 2 times .*at lines 2, 4.*replace_all/);
    expect(applyEdits(text, [{ old_string: 'beta', new_string: 'B', replace_all: true }])).toMatchObject({
      ok: true,
      text: 'alpha\nB\ngamma\nB\ndelta\n',
      replacements: 2,
    });
  });

  it('all or nothing: a failing later edit reports its number', () => {
    const outcome = applyEdits(text, [
      { old_string: 'alpha', new_string: 'A' },
      { old_string: 'nope', new_string: 'x' },
    ]);
    expect(outcome).toMatchObject({ ok: false, index: 1 });
    if (!outcome.ok)
      expect(outcome.message).toMatch(/^edit 2 of 2: old_string was not found .*after the edits before it/);
  });

  it('a missing match shows the most similar lines with their numbers', () => {
    const source = Array.from({ length: 50 }, (_, i) => `const value${i} = compute(${i});`).join('\n');
    const outcome = applyEdits(source, [{ old_string: 'const value27 = compute(72);', new_string: 'x' }]);
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) {
      expect(outcome.message).toContain('The most similar lines are 28-28');
      expect(outcome.message).toContain('28| const value27 = compute(27);');
    }
  });

  it('a match that differs only in indentation is pointed out exactly', () => {
    const source = 'function f() {\n    return 1;\n}\n';
    const outcome = applyEdits(source, [{ old_string: 'function f() {\n  return 1;\n}', new_string: 'x' }]);
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) {
      expect(outcome.message).toMatch(/matches lines 1-3 only when spaces and indentation are ignored/);
      expect(outcome.message).toContain('2|     return 1;');
    }
  });

  it('says so when nothing looks alike, and refuses empty and no-op edits', () => {
    const none = applyEdits('aaa\nbbb\n', [{ old_string: 'zzzzzz qqqq', new_string: 'x' }]);
    if (!none.ok) expect(none.message).toMatch(/No lines of the file look like it/);
    expect(applyEdits('abc', [{ old_string: '', new_string: 'x' }])).toMatchObject({ ok: false });
    expect(applyEdits('abc', [{ old_string: 'b', new_string: 'b' }])).toMatchObject({ ok: false });
    const undone = applyEdits('abc', [
      { old_string: 'b', new_string: 'x' },
      { old_string: 'x', new_string: 'b' },
    ]);
    expect(undone).toMatchObject({ ok: false, message: 'the edits leave the file unchanged' });
  });

  it('CRLF files are matched in LF form, whichever endings the model sends', () => {
    const form = splitText('one\r\ntwo\r\nthree\r\n');
    const outcome = applyEdits(form.text, [{ old_string: 'one\r\ntwo', new_string: 'one\r\n2' }], form.eol);
    expect(outcome).toMatchObject({ ok: true, text: 'one\n2\nthree\n' });
    if (outcome.ok) expect(joinText(form, outcome.text)).toBe('one\r\n2\r\nthree\r\n');
  });

  it('dollar signs in new_string are inserted as they are', () => {
    expect(applyEdits('x = 1', [{ old_string: '1', new_string: "$& $1 $$ $'" }])).toMatchObject({
      ok: true,
      text: "x = $& $1 $$ $'",
    });
  });
});

describe('closestLines', () => {
  it('finds a multi-line window and stays cheap for a long needle', () => {
    const lines = Array.from({ length: 5000 }, (_, i) => `line number ${i} with some words`);
    const needle = lines.slice(3000, 3040).join('\n').replace('3020', 'XXXX');
    const best = closestLines(lines.join('\n'), needle);
    expect(best).toMatchObject({ first: 3001, last: 3040 });
  });
});
