import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, symlinkSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { splitGlob } from './find-files.ts';
import { callTool, toolContext } from './test-helpers.ts';

const SECRET = 'BEGIN-OPENSSH-PRIVATE-KEY-TODO-b3BlbnNzaC1rZXktdjEA';

/** A repository whose non-ignored files are exactly its tracked files, plus what the policy refuses. */
function fixture() {
  const home = realpathSync(mkdtempSync(join(tmpdir(), 'rune-search-home-')));
  mkdirSync(join(home, '.ssh'));
  writeFileSync(join(home, '.ssh/id_rsa'), `${SECRET}\n`);
  const repo = join(home, 'repo');
  const files: Record<string, string> = {
    'README.md': '# Demo\n\nTODO: write the docs\n',
    'src/server.ts':
      'export function handleRequest(req) {\n  // TODO validate\n  return handleResponse(req);\n}\n',
    'src/client.ts': 'import { handleRequest } from "./server";\n\nhandleRequest({});\n',
    'src/a.c': 'int todo = 1; /* todo lower case */\n',
    'src/a/b.ts': 'const x = "TODO nested";\n',
    'src/unicode.txt': 'Grüße TODO — ünïcödé\nnoch eine Zeile\n',
    'src/no-newline.txt': 'last line TODO without newline',
    'src/spaces.txt': '   TODO indented   \n\n\tTODO tab\n',
    '.github/workflows/ci.yml': 'name: ci # TODO pin versions\n',
    '.gitignore': 'dist/\n*.log\n',
    'docs/guide.md': 'See handleRequest and HandleRequest and HANDLEREQUEST.\n',
  };
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(repo, path, '..'), { recursive: true });
    writeFileSync(join(repo, path), content);
  }
  const git = (...args: string[]) =>
    execFileSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', ...args], {
      cwd: repo,
      encoding: 'utf8',
    });
  git('init', '-q');
  git('add', '-A');
  git('commit', '-qm', 'fixture');
  // Not tracked, and each must stay out of search_files' results for its own reason:
  mkdirSync(join(repo, 'dist'));
  writeFileSync(join(repo, 'dist/bundle.js'), 'TODO in a build output (ignored)\n');
  writeFileSync(join(repo, 'debug.log'), 'TODO in a log (ignored)\n');
  writeFileSync(
    join(repo, 'image.bin'),
    Buffer.concat([Buffer.from('TODO'), Buffer.from([0, 1, 2, 3]), Buffer.from('TODO')]),
  );
  symlinkSync(join(home, '.ssh'), join(repo, 'ssh'));
  symlinkSync(join(home, '.ssh/id_rsa'), join(repo, 'key.txt'));
  mkdirSync(join(repo, 'private'));
  writeFileSync(join(repo, 'private/notes.txt'), 'TODO private (denied_paths)\n');
  return { home, repo, git };
}

/** search_files' match lines in git grep's `file:line:text` form. */
function asGitGrep(content: string): string[] {
  return content
    .split('\n')
    .map((line) => /^(.+?):(\d+): (.*)$/.exec(line))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => `${m[1]}:${m[2]}:${m[3]}`);
}

describe('search_files', () => {
  let f: ReturnType<typeof fixture>;
  beforeAll(() => {
    f = fixture();
  });
  const ctx = () => toolContext(f.repo, f.home, { denied_paths: [join(f.repo, 'private')] });

  const cases: Array<[string, string[], Record<string, unknown>]> = [
    ['a literal', ['TODO'], { pattern: 'TODO' }],
    ['a regex', ['-E', 'handle[A-Z][a-z]+'], { pattern: 'handle[A-Z][a-z]+' }],
    ['case-insensitive', ['-i', 'handlerequest'], { pattern: 'handlerequest', case_insensitive: true }],
    ['an alternation', ['-E', 'Zeile|pin'], { pattern: 'Zeile|pin' }],
    ['anchors', ['-E', '^\\s+TODO'], { pattern: '^\\s+TODO' }],
    ['non-ASCII', ['ünïcödé'], { pattern: 'ünïcödé' }],
  ];
  it.each(cases)('gives exactly git grep -n’s results for %s', async (_name, gitArgs, args) => {
    const expected = f
      .git('grep', '-n', ...gitArgs)
      .trimEnd()
      .split('\n');
    const out = await callTool('search_files', args, ctx());
    expect(out.isError, out.content).toBeFalsy();
    expect(asGitGrep(out.content)).toEqual(expected);
  });

  it('never shows what the floor, denied_paths, .gitignore, symlinks or binary files hold, and says what it skipped', async () => {
    const out = await callTool('search_files', { pattern: 'TODO' }, ctx());
    expect(out.content).not.toContain(SECRET);
    expect(out.content).not.toMatch(/ssh|key\.txt|private|dist\/|debug\.log|image\.bin/);
    expect(out.content).toMatch(
      /skipped: .*ignored by \.gitignore.*1 binary file.*1 protected entry.*2 symbolic links/,
    );
    // The secret's own text as the pattern finds nothing either.
    const again = await callTool('search_files', { pattern: 'b3BlbnNzaC1rZXktdjEA' }, ctx());
    expect(again.content).toMatch(/^No matches/);
    expect(again.content).not.toContain(SECRET);
  });

  it('searches from the home folder without entering ~/.ssh', async () => {
    const out = await callTool(
      'search_files',
      { pattern: 'OPENSSH', path: f.home },
      toolContext(f.home, f.home),
    );
    expect(out.content).toMatch(/^No matches/);
    expect(out.content).toMatch(/protected entr/);
  });

  it('refuses a path inside the floor, whatever the policy said', async () => {
    const out = await callTool('search_files', { pattern: 'x', path: join(f.home, '.ssh') }, ctx());
    expect(out).toMatchObject({ isError: true });
    expect(out.content).toMatch(/secrets floor/);
  });

  it('groups by file with context lines and separators, and filters with include', async () => {
    const out = await callTool('search_files', { pattern: 'validate', context: 1, include: '*.ts' }, ctx());
    expect(out.content).toBe(
      [
        'src/server.ts-1- export function handleRequest(req) {',
        'src/server.ts:2:   // TODO validate',
        'src/server.ts-3-   return handleResponse(req);',
        '',
        '[1 matching line in 1 file; skipped: 2 entries ignored by .gitignore/.ignore, 1 protected entry (secrets floor, denied_paths), 2 symbolic links (never followed)]',
      ].join('\n'),
    );
    const docs = await callTool('search_files', { pattern: 'TODO', include: 'src/**/*.txt' }, ctx());
    expect(asGitGrep(docs.content).map((l) => l.split(':')[0])).toEqual([
      'src/no-newline.txt',
      'src/spaces.txt',
      'src/spaces.txt',
      'src/unicode.txt',
    ]);
  });

  it('stops at max_results with a note, and cuts a minified line around the match', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'rune-search-many-'));
    writeFileSync(join(dir, 'many.txt'), 'hit\n'.repeat(50));
    writeFileSync(join(dir, 'min.js'), `${'x'.repeat(5000)}NEEDLE${'y'.repeat(5000)}\n`);
    const many = await callTool('search_files', { pattern: 'hit', max_results: 5 }, toolContext(dir, dir));
    expect(asGitGrep(many.content)).toHaveLength(5);
    expect(many.content).toMatch(/\[stopped at max_results=5: there are more matches/);
    const min = await callTool('search_files', { pattern: 'NEEDLE' }, toolContext(dir, dir));
    expect(min.content).toMatch(/^min\.js:1: …x+NEEDLEy+… \[line of 10006 characters\]/);
    expect(min.content.length).toBeLessThan(600);
  });

  it('explains a bad pattern and a missing path', async () => {
    expect((await callTool('search_files', { pattern: '(' }, ctx())).content).toMatch(
      /invalid regular expression: .*Unterminated group; use JavaScript syntax, and escape \( \) \[/,
    );
    expect((await callTool('search_files', { pattern: 'x', path: 'nope' }, ctx())).content).toMatch(
      /nope does not exist/,
    );
  });
});

describe('find_files', () => {
  let f: ReturnType<typeof fixture>;
  beforeAll(() => {
    f = fixture();
    // Newest first: give the files distinct times.
    utimesSync(join(f.repo, 'src/client.ts'), 3000, 3000);
    utimesSync(join(f.repo, 'src/server.ts'), 2000, 2000);
    utimesSync(join(f.repo, 'src/a/b.ts'), 1000, 1000);
  });
  const ctx = () => toolContext(f.repo, f.home, { denied_paths: [join(f.repo, 'private')] });

  it('matches globs over the walk, newest first', async () => {
    const out = await callTool('find_files', { pattern: 'src/**/*.ts' }, ctx());
    expect(out.content.split('\n').slice(0, 3)).toEqual(['src/client.ts', 'src/server.ts', 'src/a/b.ts']);
    expect(out.content).toContain('[3 files match, newest first]');
  });

  it('a pattern without a slash matches names at any depth; the same skips as search_files apply', async () => {
    const out = await callTool('find_files', { pattern: '*.txt' }, ctx());
    const paths = out.content.split('\n').filter((l) => l && !l.startsWith('['));
    expect(paths.sort()).toEqual(['src/no-newline.txt', 'src/spaces.txt', 'src/unicode.txt']);
    expect(out.content).not.toMatch(/key\.txt|private|id_rsa/);
  });

  it('refuses patterns that leave path, and says when nothing matches', async () => {
    expect((await callTool('find_files', { pattern: '../**' }, ctx())).content).toMatch(
      /must not contain "\.\."/,
    );
    expect((await callTool('find_files', { pattern: '/etc/*' }, ctx())).content).toMatch(/relative to path/);
    expect((await callTool('find_files', { pattern: '**/*.rs' }, ctx())).content).toMatch(
      /^No files match \*\*\/\*\.rs/,
    );
    expect((await callTool('find_files', { pattern: 'ssh/*' }, ctx())).content).toMatch(/leads outside/);
  });
});

describe('find_files patterns', () => {
  it.each([
    ['**/*.ts', { base: '', glob: '**/*.ts' }],
    ['src/**/test*', { base: 'src', glob: '**/test*' }],
    ['./src/**/*.ts', { base: 'src', glob: '**/*.ts' }],
    ['src/', { base: 'src', glob: '**' }],
    ['src/index.ts', { base: 'src', glob: 'index.ts' }],
    ['*.md', { base: '', glob: '*.md' }],
    ['{src,lib}/**/*.js', { base: '', glob: '{src,lib}/**/*.js' }],
  ])('%s → %j', (pattern, expected) => {
    expect(splitGlob(pattern)).toEqual(expected);
  });
});
