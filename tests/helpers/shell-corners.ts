// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the lines are shell text, not templates
// Command lines built from the corners where shells and a judge can disagree: operators and
// control characters, backslashes before blanks and newlines, words after a redirection target,
// `&>`, braces, quoting, expansions, keywords, descriptors, globs, and the programs that run others
// or write files (git, sed, awk, sort, grep, find, tee, test). Deterministic for a seed.

/** Programs the differential test lists; anything else executed is off the list. */
export const LISTED = [
  'ls',
  'cat',
  'echo',
  'grep',
  'sed',
  'awk',
  'sort',
  'find',
  'git',
  'tee',
  'head',
  'wc',
  'printf',
];

/** The marker file a hidden command tries to create. */
export const PWN = 'PWNED';

const OFF_LIST = [`touch ${PWN}`, 'id', `sh -c 'touch ${PWN}'`, `mkdir ${PWN}`, `env touch ${PWN}`];

const SIMPLE = [
  'ls',
  'ls -la',
  'ls sub',
  'cat a.txt',
  'cat a.txt b.txt',
  'echo hi',
  'echo "a b" c',
  "echo 'it'\\''s'",
  'grep a a.txt',
  'grep -n -e b a.txt',
  'head -n 1 a.txt',
  'wc -l a.txt',
  'sort a.txt',
  'sort -r -n a.txt',
  'find . -name a.txt',
  'git log --oneline -1',
  'git status --short',
  'git diff --stat',
  'printf "%s\\n" x',
  '[ -f a.txt ]',
  'test -d sub',
];

const PROGRAM_CORNERS = [
  // sed
  "sed -n '1e touch PWNED' a.txt",
  "sed -ne '/a/{p;q}' a.txt",
  "sed -n '/a/{p;q}' a.txt",
  "sed 'w out/sedw' a.txt",
  "sed 's/a/b/w /tmp/rune-diff-sedw' a.txt",
  "sed -e 'a\\' -e 'w out/sedx' a.txt",
  "sed ':a;N;$!ba;s/\\n/ /g' a.txt",
  "sed '1i hello' a.txt",
  "sed '$a bye; w /tmp/rune-diff-x' a.txt",
  "sed -n 's/a/b/gp;3q' a.txt",
  "sed 's/a/b/e' a.txt",
  'sed -i s/a/b/ out/c.txt',
  'sed -i s/a/b/ a.txt',
  // awk
  "awk '$1 > 1' a.txt",
  'awk \'{print > "out/awk"}\' a.txt',
  'awk \'{print > "/tmp/rune-diff-awk"}\' a.txt',
  'awk \'BEGIN{system("touch PWNED")}\'',
  'awk \'BEGIN{"touch PWNED" | getline}\'',
  'awk \'BEGIN{print | "touch PWNED"}\'',
  'awk \'NR==1 && $1 != "x" {print $1}\' a.txt',
  'awk -W exec PWNED',
  'awk \'/[/]"/ {x=1}; BEGIN{ system("touch PWNED") } "/"\' a.txt',
  'awk \'BEGIN { ARGV[1] = "a.txt"; ARGC = 2 } { print }\'',
  "awk -F: '{print $1}' a.txt",
  // git
  'git -c core.pager=touch log',
  'git --bare log',
  'git help log',
  'git log --output=/tmp/rune-diff-git',
  'git log --outp=out/gitlog',
  'git archive -o /tmp/rune-diff-a.tar HEAD',
  "git remote-ext x 'touch PWNED'",
  'git for-each-repo --config=x gc',
  'git checkout-index --prefix=/tmp/rune-diff-ci/ -a',
  'git init /tmp/rune-diff-repo',
  'git log --format=%s -1',
  'git commit',
  'git -C sub log --oneline -1',
  'git --exec-path=. version',
  // sort, grep, tee, find
  'sort -uo /tmp/rune-diff-sort a.txt',
  'sort -o out/sorted a.txt',
  'sort --compress-program=touch a.txt',
  'grep -r a ~',
  'grep --recu a ~',
  'grep -d rec a ~',
  'grep -rn a .',
  'ls | tee out/log',
  'ls | tee /tmp/rune-diff-tee',
  'ls | tee ~/.bashrc',
  'find . -exec touch PWNED \\;',
  'find . -fprint out/found',
  'find . -fprint /tmp/rune-diff-found',
  // test
  "[ -v 'a[$(touch PWNED)]' ]",
  '[ a = b ] || echo no',
  '[ -f a.txt ] && echo yes',
  // cd
  'cd sub && ls',
  'cd sub && cat ../a.txt',
  'cd ~/.ssh && cat id_rsa',
  'cd ~ && grep -r a .',
  'cd out && echo x > y',
];

const SYNTAX_CORNERS = [
  'echo {-exec,touch,PWNED}',
  'find . {-exec,touch,PWNED,\\;}',
  'echo {a,b}',
  'git log -1 @{0}',
  'ls {x}',
  'find . </dev/null -exec touch PWNED \\;',
  'ls >out/r1 -R',
  'grep a 2>&1 -r ~',
  'cat a.txt >out/r2 b.txt',
  'ls &> out/amp',
  'ls &>> out/amp',
  'ls >& out/amp',
  'ls >| out/bar',
  'ls <> out/rw',
  'ls 2>out/e',
  'ls 10>out/x',
  'ls 2>&1',
  'ls >&-',
  'cat <a.txt',
  'cat < ~/.ssh/id_rsa',
  'ls 1>out/x 2>&1',
  "ec'h'o hi",
  '"ls" -la',
  'l\\s',
  "'ls -la'",
  'echo "a\\"b"',
  'echo "$HOME"',
  'echo \\$HOME',
  'echo a#b',
  'echo #c',
  'echo a\\ b',
  'echo ~ ~/x "~" \\~',
  'cat ~root/x',
  'echo $(touch PWNED)',
  'echo `touch PWNED`',
  'echo ${x:-touch}',
  'echo $((1))',
  "echo $'\\x41'",
  'cat <(touch PWNED)',
  'X=1 ls',
  'if true; then touch PWNED; fi',
  '! ls',
  '{ ls; }',
  '(ls)',
  'time ls',
  'for i in 1; do touch PWNED; done',
  'ls *',
  'ls [ab].txt',
  'ls ?.txt',
  'cat *.txt',
  'grep a *',
  'ls -- *',
  'echo [',
  'echo ]',
  'ls [!a]*',
  'echo $',
  'echo a$ b',
  'cat a.txt | head -n 1 | wc -l',
  'echo x\\\n;touch PWNED',
];

/** Ways one command can be followed by another, including the ones rune must refuse or read right. */
const JOINS = [
  ' ; ',
  ' && ',
  ' || ',
  ' | ',
  '\n',
  ' & ',
  ' |& ',
  ' ;; ',
  ';',
  '&&',
  '\r',
  '\f',
  '\v',
  '\r\n',
  ' \\\n',
  '\\\n',
  ' \\ #',
  ' \\ ;',
  ' # ',
  '#',
  ' &> out/j ',
  ' 2>&1 ',
];

/** A small seeded generator (mulberry32): the same seed gives the same lines. */
function random(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Quotes a word one of several equivalent ways (or leaves it), as a model might write it. */
function requote(word: string, next: () => number): string {
  if (!/^[\w./-]+$/.test(word)) return word;
  const way = Math.floor(next() * 6);
  if (way === 0) return `'${word}'`;
  if (way === 1) return `"${word}"`;
  if (way === 2 && word.length > 1) return `${word[0]}\\${word.slice(1)}`;
  if (way === 3 && word.length > 2) return `${word.slice(0, 2)}''${word.slice(2)}`;
  return word;
}

export function cornerLines(count: number, seed = 34): string[] {
  const next = random(seed);
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)]!;
  const out = new Set<string>([...SIMPLE, ...PROGRAM_CORNERS, ...SYNTAX_CORNERS]);
  for (const join of JOINS) {
    out.add(`ls${join}touch ${PWN}`);
    out.add(`echo hi${join}${pick(OFF_LIST)}`);
  }
  const pools = [SIMPLE, SIMPLE, PROGRAM_CORNERS, SYNTAX_CORNERS, OFF_LIST];
  while (out.size < count) {
    const parts = Array.from({ length: 1 + Math.floor(next() * 3) }, () => pick(pick(pools)));
    const written = parts.map((part) =>
      part
        .split(' ')
        .map((word) => (next() < 0.2 ? requote(word, next) : word))
        .join(' '),
    );
    let line = written[0]!;
    for (const part of written.slice(1)) line += pick(JOINS) + part;
    if (next() < 0.1) line = line.replace(' ', pick(['\t', '  ', ' \\\n']));
    out.add(line);
  }
  return [...out];
}
