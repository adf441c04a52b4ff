// edit_file, search_files and find_files through the built binary against the scripted model, on
// real files: a fresh `rune` in a repository searches with no configuration and no prompt, never
// shows what the floor, denied_paths, .gitignore, symlinks or binary files hold (a bind mount of
// ~/.ssh included), matches `git grep -n` on tracked files, and edits in place as documented.
import { execFileSync, spawnSync } from 'node:child_process';
import { chmodSync, linkSync, mkdirSync, readFileSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { useMockLlm } from '../helpers/mock-llm.ts';
import { cleanEnv, requireBinary, run, runRune, tempDir } from '../helpers/rune.ts';

const KEY = 'sk-test-file-tools-0a1b2c3d4e5f';
const SECRET = 'PRIVATE-KEY-MATERIAL-c2VjcmV0LWtleQ';
const mock = useMockLlm();

beforeAll(() => {
  requireBinary();
});

function makeHome(toml = '') {
  const home = tempDir('rune-ft-home-');
  const runeHome = join(home, '.rune');
  mkdirSync(runeHome, { recursive: true, mode: 0o700 });
  if (toml) writeFileSync(join(runeHome, 'rune.toml'), toml);
  mkdirSync(join(home, '.ssh'), { mode: 0o700 });
  writeFileSync(join(home, '.ssh/id_ed25519'), `${SECRET} TODO\n`);
  const repo = join(home, 'repo');
  mkdirSync(repo);
  return { home, runeHome, repo, env: { ...cleanEnv(home), RUNE_HOME: runeHome } };
}
type Home = ReturnType<typeof makeHome>;

const args = (extra: string[]) => ['--base-url', mock.baseUrl, '--api-key', KEY, '--model', 'm', ...extra];

function rune(h: Home, extra: string[]) {
  return runRune(args(extra), { cwd: h.repo, env: h.env });
}

type WireMessage = { role: string; content: string };
/** Every tool result the model was sent, in order. */
const toolResults = (): string[] => {
  const last = mock.requests.at(-1)!.body.messages as WireMessage[];
  return last.filter((m) => m.role === 'tool').map((m) => m.content);
};
/** Everything the model was ever sent, to prove a secret never reached it. */
const everythingSent = () => JSON.stringify(mock.requests.map((r) => r.body));

function repoFixture(h: Home) {
  const files: Record<string, string> = {
    'README.md': '# Demo\nTODO: docs\n',
    'src/server.ts':
      'export function handleRequest(req: Request) {\n  // TODO validate\n  return route(req);\n}\n',
    'src/client.ts': "import { handleRequest } from './server';\nhandleRequest(new Request('x'));\n",
    'src/util/strings.ts': 'export const todo = "TODO: lower";\n',
    '.gitignore': 'dist/\n*.log\n',
  };
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(join(h.repo, path, '..'), { recursive: true });
    writeFileSync(join(h.repo, path), content);
  }
  const git = (...a: string[]) =>
    execFileSync('git', ['-c', 'user.email=t@t', '-c', 'user.name=t', ...a], {
      cwd: h.repo,
      encoding: 'utf8',
    });
  git('init', '-q');
  git('add', '-A');
  git('commit', '-qm', 'fixture');
  mkdirSync(join(h.repo, 'dist'));
  writeFileSync(join(h.repo, 'dist/app.js'), 'TODO built\n');
  writeFileSync(join(h.repo, 'run.log'), 'TODO logged\n');
  writeFileSync(join(h.repo, 'blob.bin'), Buffer.from('TODO\0\x01\x02binary TODO'));
  symlinkSync(join(h.home, '.ssh'), join(h.repo, 'keys'));
  symlinkSync(join(h.home, '.ssh/id_ed25519'), join(h.repo, 'deploy-key.txt'));
  // A hard link: the same file as the key under an innocent name, refused by identity.
  linkSync(join(h.home, '.ssh/id_ed25519'), join(h.repo, 'notes.txt'));
  mkdirSync(join(h.repo, 'vault'));
  writeFileSync(join(h.repo, 'vault/passwords.txt'), 'TODO rotate hunter2\n');
  return git;
}

describe('search_files and find_files', () => {
  it('answer "where is X handled?" with no configuration, as git grep -n does, and skip what they must', async () => {
    const h = makeHome('[policy]\ndenied_paths = ["vault"]\n');
    const git = repoFixture(h);
    mock.script([
      { toolCalls: [{ name: 'search_files', arguments: { pattern: 'TODO' } }] },
      { toolCalls: [{ name: 'search_files', arguments: { pattern: 'handleRequest\\(' } }] },
      { toolCalls: [{ name: 'find_files', arguments: { pattern: '**/*' } }] },
      { toolCalls: [{ name: 'search_files', arguments: { pattern: 'PRIVATE-KEY', path: '~' } }] },
      { text: 'handleRequest is in src/server.ts' },
    ]);
    const result = await rune(h, ['--json', 'where is handleRequest handled?']);
    expect(result.code, result.stderr).toBe(0);
    const calls = JSON.parse(result.stdout).tool_calls as Array<{ decision: string; rule: string }>;
    // No prompt, no configuration: the working directory is readable; the home folder is not.
    expect(calls.map((c) => `${c.decision}:${c.rule}`)).toEqual([
      'allow:allowed_paths_ro',
      'allow:allowed_paths_ro',
      'allow:allowed_paths_ro',
      'deny:path.not-allowed',
    ]);
    const [todo, handle, found] = toolResults();
    const matchLines = (text: string) =>
      text
        .split('\n')
        .map((l) => /^(.+?):(\d+): (.*)$/.exec(l))
        .filter((m) => m !== null)
        .map((m) => `${m[1]}:${m[2]}:${m[3]}`);
    expect(matchLines(todo!)).toEqual(git('grep', '-n', 'TODO').trimEnd().split('\n'));
    expect(matchLines(handle!)).toEqual(git('grep', '-n', 'handleRequest(').trimEnd().split('\n'));
    // find_files lists the files search_files searches: the ignored, binary, protected and linked ones never.
    expect(
      found!
        .split('\n')
        .filter((l) => l && !l.startsWith('['))
        .sort(),
    ).toEqual(git('ls-files').trimEnd().split('\n').sort());
    expect(found).toMatch(
      /skipped: 2 entries ignored by \.gitignore\/\.ignore, 1 binary file, 2 protected entries/,
    );
    expect(everythingSent()).not.toContain(SECRET);
    expect(everythingSent()).not.toContain('hunter2');
    expect(todo).not.toMatch(/dist\/|run\.log|blob\.bin|keys\/|deploy-key|vault|notes\.txt/);
    expect(todo).toMatch(
      /skipped: 2 entries ignored by \.gitignore\/\.ignore, 1 binary file, 2 protected entries/,
    );
  });

  it('runs the walk in a worker thread confined by Landlock, reported as a sandbox layer', async () => {
    const h = makeHome();
    repoFixture(h);
    mock.script([{ toolCalls: [{ name: 'search_files', arguments: { pattern: 'TODO' } }] }, { text: 'ok' }]);
    const result = await rune(h, ['--output', 'ndjson', 'search']);
    expect(result.code, result.stderr).toBe(0);
    const events = result.stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    const toolResult = events.find((e) => e.type === 'tool_result');
    const landlock = toolResult.layers?.find((l: { layer: string }) => l.layer === 'landlock');
    const doctor = spawnSync(requireBinary(), ['doctor', '--json'], { env: h.env, encoding: 'utf8' });
    if (JSON.parse(doctor.stdout).sandbox.landlock.available) {
      expect(landlock).toMatchObject({ applied: true });
      expect(landlock.detail).toMatch(/^walk thread: ABI \d+, read-only 1 path/);
    } else {
      expect(landlock).toMatchObject({ applied: false });
    }
  });

  // A bind mount needs a private mount namespace: root (as in CI) or a user allowed to unshare.
  const canMount = spawnSync('unshare', ['-m', 'true']).status === 0;
  it.skipIf(!canMount)('a bind mount of ~/.ssh inside the repository is refused by identity', async () => {
    const h = makeHome();
    repoFixture(h);
    mkdirSync(join(h.repo, 'mnt'));
    mock.script([
      { toolCalls: [{ name: 'search_files', arguments: { pattern: 'PRIVATE' } }] },
      { toolCalls: [{ name: 'find_files', arguments: { pattern: 'mnt/**' } }] },
      { text: 'ok' },
    ]);
    const env = { ...h.env };
    const result = await run(
      'unshare',
      [
        '-m',
        'sh',
        '-c',
        `mount --bind "${h.home}/.ssh" "${h.repo}/mnt" && exec "$0" "$@"`,
        requireBinary(),
        ...args(['search']),
      ],
      { cwd: h.repo, env },
    );
    expect(result.code, result.stderr).toBe(0);
    const [search, find] = toolResults();
    expect(everythingSent()).not.toContain(SECRET);
    expect(search).toMatch(/^No matches/);
    // The mount and the hard-linked notes.txt.
    expect(search).toMatch(/2 protected entries/);
    // Named as the folder to walk, the mount is refused outright: it is the same folder as ~/.ssh.
    expect(find).toMatch(/^error: .*\/repo\/mnt is the same file as .*\/\.ssh$/);
  });
});

describe('edit_file', () => {
  const rw = '[policy]\nallowed_paths_rw = ["."]\n';

  it('changes three lines of a 5,000-line file; CRLF, BOM and mode survive; dependent edits apply in order', async () => {
    const h = makeHome(rw);
    const big = Array.from({ length: 5000 }, (_, i) => `row ${i + 1}`).join('\n');
    writeFileSync(join(h.repo, 'big.txt'), `${big}\n`);
    writeFileSync(join(h.repo, 'win.ini'), '\uFEFF[core]\r\nname = old\r\nsize = 1\r\n');
    chmodSync(join(h.repo, 'win.ini'), 0o640);
    writeFileSync(join(h.repo, 'mod.py'), 'def old():\n    return 1\n');
    mock.script([
      {
        toolCalls: [
          {
            name: 'edit_file',
            arguments: {
              path: 'big.txt',
              edits: [{ old_string: 'row 4000\nrow 4001\nrow 4002\n', new_string: 'A\nB\nC\n' }],
            },
          },
        ],
      },
      {
        toolCalls: [
          {
            name: 'edit_file',
            arguments: {
              path: 'win.ini',
              edits: [{ old_string: 'name = old\nsize = 1', new_string: 'name = new\nsize = 2\nmore = yes' }],
            },
          },
        ],
      },
      {
        toolCalls: [
          {
            name: 'edit_file',
            arguments: {
              path: 'mod.py',
              edits: [
                { old_string: 'def old():', new_string: 'def renamed():' },
                { old_string: 'def renamed():\n    return 1', new_string: 'def renamed():\n    return 2' },
              ],
            },
          },
        ],
      },
      { text: 'edited' },
    ]);
    const result = await rune(h, ['edit']);
    expect(result.code, result.stderr).toBe(0);
    const [bigResult, iniResult, pyResult] = toolResults();
    expect(bigResult).toMatch(
      /^edited big\.txt: 1 replacement, \+3 -3 lines\n--- a\/big\.txt\n\+\+\+ b\/big\.txt\n@@ -3997,9 \+3997,9 @@/,
    );
    const lines = readFileSync(join(h.repo, 'big.txt'), 'utf8').split('\n');
    expect(lines).toHaveLength(5001);
    expect(lines.slice(3998, 4003)).toEqual(['row 3999', 'A', 'B', 'C', 'row 4003']);
    expect(iniResult).toMatch(/^edited win\.ini/);
    expect(readFileSync(join(h.repo, 'win.ini'), 'utf8')).toBe(
      '\uFEFF[core]\r\nname = new\r\nsize = 2\r\nmore = yes\r\n',
    );
    expect(statSync(join(h.repo, 'win.ini')).mode & 0o777).toBe(0o640);
    expect(pyResult).toMatch(/^edited mod\.py: 2 replacements/);
    expect(readFileSync(join(h.repo, 'mod.py'), 'utf8')).toBe('def renamed():\n    return 2\n');
  });

  it('ambiguous and missing matches tell the model why and change nothing', async () => {
    const h = makeHome(rw);
    const text = 'x = 1\ny = 1\nprint(x + y)\n';
    writeFileSync(join(h.repo, 'a.py'), text);
    mock.script([
      {
        toolCalls: [
          {
            name: 'edit_file',
            arguments: { path: 'a.py', edits: [{ old_string: ' = 1', new_string: ' = 2' }] },
          },
        ],
      },
      {
        toolCalls: [
          {
            name: 'edit_file',
            arguments: { path: 'a.py', edits: [{ old_string: 'print(x - y)', new_string: 'print(0)' }] },
          },
        ],
      },
      { text: 'could not' },
    ]);
    const result = await rune(h, ['--json', 'edit']);
    expect(result.code, result.stderr).toBe(0);
    const [ambiguous, missing] = toolResults();
    expect(ambiguous).toMatch(
      /old_string was found 2 times \(at lines 1, 2\); include more of the surrounding lines/,
    );
    expect(missing).toMatch(
      /old_string was not found in the file\. The most similar lines are 3-3:\n3\| print\(x \+ y\)/,
    );
    expect(readFileSync(join(h.repo, 'a.py'), 'utf8')).toBe(text);
    const calls = JSON.parse(result.stdout).tool_calls as Array<{ is_error: boolean }>;
    expect(calls.map((c) => c.is_error)).toEqual([true, true]);
  });

  it('outside allowed_paths_rw an edit is blocked in allowlist mode (and not asked in pipe mode)', async () => {
    const h = makeHome();
    writeFileSync(join(h.repo, 'a.txt'), 'one\n');
    mock.script([
      {
        toolCalls: [
          {
            name: 'edit_file',
            arguments: { path: 'a.txt', edits: [{ old_string: 'one', new_string: 'two' }] },
          },
        ],
      },
      { text: 'blocked' },
    ]);
    const result = await rune(h, ['edit']);
    expect(result.code, result.stderr).toBe(0);
    expect(toolResults()[0]).toMatch(
      /blocked by policy \(path\.not-allowed\): .*a\.txt is outside the writable paths \(add '.*a\.txt' to \[policy\] allowed_files_rw/,
    );
    expect(readFileSync(join(h.repo, 'a.txt'), 'utf8')).toBe('one\n');
  });
});
