// The pieces the program rules stand on: options read as getopt_long and git read them, the sed
// script reader and the awk lexer. decide-command.test.ts has the decisions they lead to.
import { describe, expect, it } from 'vitest';
import { awkProgram } from './awk.ts';
import { judgeProgram } from './index.ts';
import { getopt, named, parseOptions } from './options.ts';
import { sedScript } from './sed.ts';

describe('options', () => {
  const sort = getopt('uo:k:', 'output= unique key= ignore-case');

  it.each([
    [['-uo', 'out', 'f'], 'out', ['f']],
    [['-uoout', 'f'], 'out', ['f']],
    [['f', '-o', 'out'], 'out', ['f']],
    [['--output=out', 'f'], 'out', ['f']],
    [['--outp', 'out', 'f'], 'out', ['f']],
    [['--', '-o', 'out'], undefined, ['-o', 'out']],
    [['-k', '-o', 'f'], undefined, ['f']],
  ])('%j: the output is %s, the operands %j', (args, output, operands) => {
    const parsed = parseOptions(args, sort);
    expect(named(parsed, 'o', 'output').at(-1)?.value).toBe(output);
    expect(parsed.operands).toEqual(operands);
  });

  it('a glob word is an operand, whatever the file names it expands to', () => {
    expect(parseOptions(['*'], sort, [true]).operands).toEqual(['*']);
  });

  it('reports what it does not know and prefixes that are ambiguous', () => {
    const parsed = parseOptions(['-x', '--frob', '--u'], getopt('u', 'unique unset'));
    expect(parsed.unknown).toEqual(['-x', '--frob']);
    expect(parsed.ambiguous).toEqual(['--u']);
  });
});

describe('sed scripts', () => {
  it.each([
    ['s/a/b/g', [], []],
    ['/x/{p;q}', [], []],
    [':a;N;$!ba;s/\\n/ /g', [], []],
    ['1i\\\nheader', [], []],
    ['$a text; w /etc/x', [], []],
    ['/x/ s/a/b/w out/log', ['out/log'], []],
    ['w /dev/stdout', ['/dev/stdout'], []],
    ['2r in.txt', [], ['in.txt']],
    ['s/a/b\\\n/', [], []],
    ['y/abc/xyz/;=;l 40;q5', [], []],
  ])('%j writes %j and reads %j', (script, writes, reads) => {
    expect(sedScript(script)).toEqual({ writes, reads });
  });

  it.each(['e id', '1e id', 's/a/b/e', 's/a/b/ge', 'k', '{p', 'p}', 's/a/b', 'p x'])(
    '%j is refused',
    (script) => {
      expect(sedScript(script).problem).toBeDefined();
    },
  );
});

describe('awk programs', () => {
  it.each([
    '$3 > 10',
    '$1 >= 2 && $2 <= 3 || NR < 5',
    '{ a[$1] += $2 } END { for (k in a) print k, a[k] }',
    '{ print ($1 > $2) }',
    '/a\\/b|c/ { n++ }',
    '{ x = $1 / 2 / 3; print x }',
    '{ print "a > b | c" }',
    'BEGIN { while ((getline line) > 0) n++ }',
    '{ print > "/dev/stderr" }',
    '# system("id")\n{ print }',
  ])('%j runs nothing', (program) => {
    expect(awkProgram(program).problem).toBeUndefined();
  });

  it.each([
    ['BEGIN { system("id") }', 'system()'],
    ['{ print | "sh" }', '| runs'],
    ['{ "date" | getline d }', '| runs'],
    ['{ print |& "sh" }', '|& runs'],
    ['BEGIN { getline x < "/etc/passwd" }', 'getline <'],
    ['BEGIN { getline < f }', 'getline <'],
    ['BEGIN { ARGV[1] = "x" }', 'ARGV'],
    ['@load "x"', '@'],
    ['{ print > $2 }', 'not a plain'],
    ['{ printf "%s", $1 > 5 }', 'not a plain'],
    ['/[/]"/ { system("id") }', 'bracket expression'],
    ['{ print "x }', 'unterminated string'],
  ])('%j: %s', (program, problem) => {
    expect(awkProgram(program).problem).toContain(problem);
  });

  it('a literal output file is a write', () => {
    expect(awkProgram('{ print > "out/a"; printf "x" >> "out/b" }').writes).toEqual(['out/a', 'out/b']);
  });
});

describe('rules by program name', () => {
  it('judges a program named by its path as the program', () => {
    expect(judgeProgram({ argv: ['/usr/bin/sed', '-i', 's/a/b/', 'f'], globs: [] }).writes).toEqual(['f']);
    expect(judgeProgram({ argv: ['/usr/bin/env', 'x'], globs: [] }).refused).toContain(
      'runs another command',
    );
  });

  it('a program without a rule gets the generic checks only', () => {
    expect(judgeProgram({ argv: ['jq', '.', 'f'], globs: [] })).toEqual({ writes: [], reads: [], trees: [] });
  });
});
