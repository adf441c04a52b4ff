// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the tables are shell text, not templates
// The shell subset as rune reads it (POSIX sh, where dash and bash agree) and the text rune runs
// instead. tests/e2e/policy-shells.test.ts checks the same against dash and bash themselves.
import { describe, expect, it } from 'vitest';
import { MAX_COMMAND_CHARS, parseShellSyntax, type ShellAnalysis } from './shell.ts';
import { quote } from './shell-words.ts';

function parsed(text: string): Extract<ShellAnalysis, { ok: true }> {
  const analysis = parseShellSyntax(text);
  if (!analysis.ok) throw new Error(analysis.error);
  return analysis;
}

describe('words', () => {
  it.each([
    ['ls -la', [['ls', '-la']]],
    ['\'a b\' "c d" e\\ f', [['a b', 'c d', 'e f']]],
    ["'it'\\''s'", [["it's"]]],
    ['"a\\"b\\$c\\\\d\\e"', [['a"b$c\\d\\e']]],
    ['a"b"\'c\'d', [['abcd']]],
    ['echo a\\\nb', [['echo', 'ab']]],
    ['echo "a\\\nb"', [['echo', 'ab']]],
    ["echo 'a\\\nb'", [['echo', 'a\\\nb']]],
    ['echo a#b # comment', [['echo', 'a#b']]],
    ['echo #only', [['echo']]],
    ['echo $ $/ a$ "$"', [['echo', '$', '$/', 'a$', '$']]],
    ['echo ~ ~/x', [['echo', '~', '~/x']]],
    ['echo {} {x} @{u} {a', [['echo', '{}', '{x}', '@{u}', '{a']]],
    ['echo [ ] a]', [['echo', '[', ']', 'a]']]],
    ['echo ""', [['echo', '']]],
    ['echo \u00a0x', [['echo', '\u00a0x']]],
  ])('%j → %j', (text, argvs) => {
    expect(parsed(text).commands.map((command) => command.argv)).toEqual(argvs);
  });

  it('marks unquoted globs, and only those', () => {
    const { commands } = parsed("ls *.ts '*.md' \\*.js src/[ab].c ? [!x]* [[:alpha:]]z [");
    expect(commands[0]!.globs).toEqual([false, true, false, false, true, true, true, true, false]);
  });
});

describe('lists, pipelines and redirections', () => {
  it('keeps each command with the operator before it', () => {
    const { commands } = parsed('a; b && c || d | e\nf');
    expect(commands.map((command) => [command.argv[0], command.connector])).toEqual([
      ['a', undefined],
      ['b', ';'],
      ['c', '&&'],
      ['d', '||'],
      ['e', '|'],
      ['f', ';'],
    ]);
  });

  it('reads redirections wherever they stand, and the words after a target as arguments', () => {
    const { commands, redirects } = parsed('<in 2>>err cmd a >out b 2>&1 >&- c');
    expect(commands[0]!.argv).toEqual(['cmd', 'a', 'b', 'c']);
    expect(redirects.map((r) => [r.fd, r.operator, r.target, r.writes, r.dup])).toEqual([
      [0, '<', 'in', false, false],
      [2, '>>', 'err', true, false],
      [1, '>', 'out', true, false],
      [2, '>&', '1', false, true],
      [1, '>&', '-', false, true],
    ]);
  });

  it('a digit is a descriptor only right before the operator', () => {
    expect(parsed('echo 2 >x').commands[0]!.argv).toEqual(['echo', '2']);
    expect(parsed('echo "2">x').commands[0]!.argv).toEqual(['echo', '2']);
    expect(parsed('echo 2>x').commands[0]!.argv).toEqual(['echo']);
  });
});

describe('the text rune runs', () => {
  it.each([
    ['ls -la', "'ls' '-la'"],
    ["echo 'it'\\''s'", "'echo' 'it'\\''s'"],
    ['cat *.ts ?x [ab]c', "'cat' ./*'.ts' ./?'x' ./[ab]'c'"],
    ['cat src/*.ts', "'cat' 'src/'*'.ts'"],
    ['ls ~ ~/a ~/', "'ls' ~ ~/'a' ~/"],
    ['a && b || c | d; e', "'a' && 'b' || 'c' | 'd'; 'e'"],
    ['a\n\n\nb\n', "'a'; 'b'"],
    ['a >x 2>&1 <y', "'a' >'x' 2>&1 <'y'"],
    ['>x a', "'a' >'x'"],
    ['a 1>x 0<y', "'a' 1>'x' 0<'y'"],
    ['a # tail', "'a'"],
  ])('%j → %s', (text, script) => {
    expect(parsed(text).script).toBe(script);
  });

  it('quotes any string so that sh reads it back unchanged', () => {
    for (const value of ["'", "''", 'a\'b"c', '$(id)`x`', '\\', '*?[', ' \t\n', '!#;&|<>(){}', '']) {
      expect(quote(value)).toMatch(/^'(?:[^']|'\\'')*'$/);
      expect(quote(value).slice(1, -1).replaceAll("'\\''", "'")).toBe(value);
    }
  });
});

describe('what rune does not judge', () => {
  it.each([
    // A word rune refuses is skipped and the parse reads on: the rest is still judged.
    ['ls $(id) ~/.ssh/x', ['ls', '~/.ssh/x'], 'command substitution'],
    ['cat ~/.ssh/id_rsa `id` b', ['cat', '~/.ssh/id_rsa', 'b'], 'command substitution'],
    ['echo "a $(x "y)" z)" ${b:-}c ~/q', ['echo', '~/q'], 'command substitution'],
    ['echo $HOME/x {a,b} ~root/y f', ['echo', 'f'], 'parameter expansion $HOME'],
    // A construct with no end it can find, or one that is not a word, ends the parse.
    ['ls $(id ~/.ssh/x', ['ls'], 'command substitution'],
    ['a && b <<EOF', ['a', 'b'], 'here document'],
    ['a (b) c', ['a'], 'subshell'],
  ])('%j: the words around the hazard are kept for the path checks', (text, argv, hazard) => {
    const analysis = parsed(text);
    expect(analysis.commands.flatMap((command) => command.argv)).toEqual(argv);
    expect(analysis.hazards.join()).toContain(hazard);
  });

  it('reads the redirections after a substitution (an approval names their files)', () => {
    expect(parsed('echo $(date) > stamp.txt').redirects.map((r) => r.target)).toEqual(['stamp.txt']);
  });

  it('refuses a line longer than the bound without reading it', () => {
    const analysis = parseShellSyntax(`ls ${'a '.repeat(MAX_COMMAND_CHARS)}`);
    expect(analysis).toMatchObject({ ok: false });
    expect(analysis.ok ? '' : analysis.error).toContain(`at most ${MAX_COMMAND_CHARS}`);
  });

  it('parses a long chain without recursion', () => {
    const text = Array.from({ length: 2000 }, (_, index) => `ls f${index}`).join(' && ');
    expect(parsed(text).commands).toHaveLength(2000);
  });
});
