// Git folders under a writable root, against a command that tries every way to leave the person a
// git setting that runs its program: the project's own repository, a nested repository, a
// submodule, a linked worktree (its `.git` is a file), a repository the command creates, a bare
// repository planted in a plain folder, a planted commondir. Real git on both sides: afterwards no
// program-running key is left in any config, and git run here on the host (status, log through a
// pager, an alias, diff with a textconv, commit with hooks) runs nothing of the command's; git
// init/add/commit inside the sandbox still work. Through the built binary.
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { useMockLlm } from '../helpers/mock-llm.ts';
import { type RunResult, requireBinary, runRune, tempDir } from '../helpers/rune.ts';

const base = tempDir('rune-git-');
const home = join(base, 'home');
const proj = join(base, 'proj');
const wt = join(base, 'wt');
// Outside every writable root: only a program run on the host can create files here.
const canaries = join(base, 'canaries');

const env = {
  PATH: '/usr/local/bin:/usr/bin:/bin',
  HOME: home,
  LANG: 'C.UTF-8',
  GIT_CONFIG_NOSYSTEM: '1',
  GIT_AUTHOR_NAME: 't',
  GIT_AUTHOR_EMAIL: 't@example.invalid',
  GIT_COMMITTER_NAME: 't',
  GIT_COMMITTER_EMAIL: 't@example.invalid',
};
const git = (cwd: string, ...args: string[]) =>
  execFileSync('git', args, { cwd, env, encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });

/** A program that leaves a canary named after the key that ran it. */
const evil = (name: string) => `touch ${join(canaries, name)}`;

// Every key of the class, as `git config` would set it.
const KEYS: Array<[string, string]> = [
  ['core.fsmonitor', evil('fsmonitor')],
  ['core.pager', evil('pager')],
  ['core.sshCommand', evil('sshcommand')],
  ['core.editor', evil('editor')],
  ['core.hooksPath', join(base, 'planted-hooks')],
  ['alias.st', `!${evil('alias')}`],
  ['filter.x.clean', evil('clean')],
  ['filter.x.smudge', evil('smudge')],
  ['diff.x.textconv', evil('textconv')],
  ['credential.helper', `!${evil('credential')}`],
  ['include.path', join(base, 'planted.gitconfig')],
  ['pager.log', evil('pager-log')],
];

function runSandbox(script: string, extra: string[] = []): Promise<RunResult> {
  return runRune(
    [
      'sandbox',
      '--allow-read',
      home,
      '--allow-write',
      proj,
      '--allow-write',
      wt,
      ...extra,
      '--',
      '/bin/sh',
      '-c',
      script,
    ],
    { cwd: proj, env, timeoutMs: 60_000 },
  );
}

/** Config keys (from git's own reading of each file) that would run a program. */
function programKeys(file: string): string[] {
  const out = spawnSync('git', ['config', '--file', file, '--no-includes', '--list'], {
    env,
    encoding: 'utf8',
  });
  return out.stdout
    .split('\n')
    .filter((line) =>
      /^(core\.(fsmonitor|pager|sshcommand|editor|hookspath)|alias\.|filter\.|diff\..*\.textconv|credential\.|include\.|pager\.)/i.test(
        line,
      ),
    );
}

function allConfigs(): string[] {
  const found: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory() && entry.name !== 'objects') walk(path);
      else if (entry.isFile() && (entry.name === 'config' || entry.name === 'config.worktree'))
        found.push(path);
    }
  };
  walk(proj);
  return found;
}

beforeAll(() => {
  requireBinary();
  for (const dir of [home, canaries]) mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(home, '.gitconfig'),
    '[user]\n\tname = t\n\temail = t@example.invalid\n[protocol "file"]\n\tallow = always\n',
  );
  const lib = join(base, 'lib');
  mkdirSync(lib);
  git(lib, 'init', '-q');
  writeFileSync(join(lib, 'a'), 'a\n');
  git(lib, 'add', 'a');
  git(lib, 'commit', '-qm', 'a');
  mkdirSync(proj);
  git(proj, 'init', '-q');
  writeFileSync(join(proj, 'x.bin'), 'x\n');
  writeFileSync(join(proj, '.gitattributes'), '*.bin diff=x filter=x\n');
  git(proj, 'add', '.');
  git(proj, 'commit', '-qm', 'x');
  git(proj, 'submodule', 'add', '-q', lib, 'sub');
  git(proj, 'commit', '-qm', 'sub');
  mkdirSync(join(proj, 'nested'));
  git(join(proj, 'nested'), 'init', '-q');
  git(proj, 'worktree', 'add', '-q', wt);
});

describe('git folders under a writable root', () => {
  let attack: RunResult;
  beforeAll(async () => {
    const setKeys = (dir: string) =>
      KEYS.map(([key, value]) => `git -C ${dir} config '${key}' '${value}' 2>/dev/null`).join('; ');
    const appendEvil = (file: string) =>
      `printf '[core]\\n\\tfsmonitor = ${evil('appended')}\\n' >> ${file} 2>/dev/null; cp ${file} /tmp/c 2>/dev/null && printf '[alias]\\n\\tst = !${evil('replaced')}\\n' >> /tmp/c && mv -f /tmp/c ${file} 2>/dev/null`;
    const script = [
      // The repositories that were there before: every write must fail.
      ...['.', 'nested', 'sub', wt].map(setKeys),
      ...['.git/config', 'nested/.git/config', '.git/modules/sub/config'].map(appendEvil),
      `printf '#!/bin/sh\\n${evil('hook')}\\n' > .git/hooks/pre-commit 2>/dev/null; chmod +x .git/hooks/pre-commit 2>/dev/null`,
      `printf 'gitdir: ${join(proj, 'planted')}\\n' > sub/.git 2>/dev/null`,
      // The project's own repository is still usable: add and commit (config and hooks stay read-only).
      'echo z > z.txt && git add z.txt && git commit -qm z && echo PROJ-COMMITTED',
      // A repository the command creates, used as a developer would: init, add, commit.
      'mkdir -p made && cd made && git init -q && echo y > y && git add y && git commit -qm y && echo MADE-COMMITTED; cd ..',
      setKeys('made'),
      `printf '#!/bin/sh\\n${evil('made-hook')}\\n' > made/.git/hooks/post-checkout && chmod +x made/.git/hooks/post-checkout`,
      // A bare repository planted in a plain folder, and a .git file pointing at it.
      `mkdir -p planted/objects planted/refs && echo 'ref: refs/heads/main' > planted/HEAD && printf '[core]\\n\\tbare = true\\n\\tfsmonitor = ${evil('bare')}\\n' > planted/config`,
      `mkdir -p redirected && printf 'gitdir: ${join(proj, 'planted')}\\n' > redirected/.git`,
      // A commondir in an old git folder, pointing git at the planted config.
      `echo ${join(proj, 'planted')} > nested/.git/commondir`,
      'echo ATTACK-DONE',
    ].join('\n');
    attack = await runSandbox(script);
  });

  it('the attack ran to its end, and git init/add/commit worked inside', () => {
    expect(attack.code, attack.stderr).toBe(0);
    expect(attack.stdout).toContain('MADE-COMMITTED');
    expect(attack.stdout).toContain('PROJ-COMMITTED');
    expect(git(proj, 'log', '-1', '--format=%s')).toBe('z\n');
    expect(attack.stdout).toContain('ATTACK-DONE');
    expect(git(join(proj, 'made'), 'log', '--format=%s')).toBe('y\n');
  });

  it('no config under the writable roots holds a key that runs a program', () => {
    const configs = allConfigs();
    expect(configs).toEqual(
      expect.arrayContaining([
        join(proj, '.git/config'),
        join(proj, 'nested/.git/config'),
        join(proj, '.git/modules/sub/config'),
        join(proj, 'made/.git/config'),
        join(proj, 'planted/config'),
      ]),
    );
    for (const file of configs) expect(programKeys(file), file).toEqual([]);
  });

  it('tells the person what it undid, and the protected ones were never written', () => {
    expect(attack.stderr).toMatch(/rune: git: the command left git settings/);
    expect(attack.stderr).toContain(`${join(proj, 'made/.git/config')}: removed core.fsmonitor`);
    expect(attack.stderr).toContain(`${join(proj, 'planted/config')}: removed core.fsmonitor`);
    expect(attack.stderr).toContain(`${join(proj, 'made/.git/hooks/post-checkout')}: no longer executable`);
    expect(attack.stderr).toContain(`${join(proj, 'nested/.git/commondir')}: removed`);
    expect(readFileSync(join(proj, 'sub/.git'), 'utf8')).toBe('gitdir: ../.git/modules/sub\n');
    expect(existsSync(join(proj, '.git/hooks/pre-commit'))).toBe(false);
    expect(existsSync(join(proj, 'nested/.git/commondir'))).toBe(false);
  });

  it('git run on the host afterwards runs nothing of the command', () => {
    // The plants were really made (so an empty canary folder means something).
    expect(attack.stdout).toContain('ATTACK-DONE');
    expect(existsSync(join(proj, 'planted/config'))).toBe(true);
    const hostGit = (cwd: string, ...args: string[]) =>
      spawnSync('git', args, {
        cwd,
        env: { ...env, GIT_PAGER: '', PAGER: '' },
        encoding: 'utf8',
        timeout: 20_000,
      });
    for (const dir of [
      proj,
      join(proj, 'nested'),
      join(proj, 'sub'),
      wt,
      join(proj, 'made'),
      join(proj, 'planted'),
      join(proj, 'redirected'),
    ]) {
      hostGit(dir, 'status');
      hostGit(dir, '-c', 'core.pager=', 'log', '-1');
      hostGit(dir, 'st');
      hostGit(dir, 'diff', 'HEAD');
    }
    writeFileSync(join(proj, 'x.bin'), 'changed\n');
    hostGit(proj, 'add', 'x.bin');
    hostGit(proj, 'commit', '-qm', 'host commit');
    hostGit(join(proj, 'made'), 'checkout', '-q', '-b', 'other');
    expect(readdirSync(canaries)).toEqual([]);
  });
});

describe('git folders: the rest of the class', () => {
  it('a writable root that is a linked worktree (its .git is a file) works and keeps its .git', async () => {
    // The worktree's git folder lives in the main repository's .git, which must be readable.
    const result = await runRune(
      [
        'sandbox',
        '--allow-read',
        home,
        '--allow-read',
        join(proj, '.git'),
        '--allow-write',
        wt,
        '--',
        'git',
        'status',
        '--short',
      ],
      { cwd: wt, env },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stderr).not.toMatch(/ENOTDIR/);
  });

  it('reports a core.hooksPath inside the work tree and keeps that folder read-only', async () => {
    const repo = tempDir('rune-git-husky-');
    git(repo, 'init', '-q');
    mkdirSync(join(repo, '.githooks'));
    writeFileSync(join(repo, '.githooks', 'pre-commit'), '#!/bin/sh\nexit 0\n', { mode: 0o755 });
    git(repo, 'config', 'core.hooksPath', '.githooks');
    const result = await runRune(
      [
        'sandbox',
        '--allow-read',
        home,
        '--allow-write',
        repo,
        '--',
        '/bin/sh',
        '-c',
        `echo "${evil('husky')}" >> .githooks/pre-commit 2>/dev/null || echo REFUSED`,
      ],
      { cwd: repo, env },
    );
    expect(result.stdout).toContain('REFUSED');
    expect(result.stderr).toMatch(/core\.hooksPath of .* points into the writable folder .*\.githooks/);
    expect(readFileSync(join(repo, '.githooks', 'pre-commit'), 'utf8')).toBe('#!/bin/sh\nexit 0\n');
  });
});

describe("the person's own git config under a writable home folder", () => {
  // ~/.gitconfig and ~/.config/git/config are also start-up files the view keeps (src/sandbox/
  // absent.ts); the git guard adds what git itself reads from there: the files they include and
  // the config under $XDG_CONFIG_HOME wherever it points.
  it('stays read-only with its includes, a new $XDG_CONFIG_HOME/git/config loses its program keys, and host git runs nothing', async () => {
    const writableHome = tempDir('rune-git-home-rw-');
    writeFileSync(
      join(writableHome, '.gitconfig'),
      '[user]\n\tname = t\n\temail = t@example.invalid\n[include]\n\tpath = ~/team.gitconfig\n',
    );
    writeFileSync(join(writableHome, 'team.gitconfig'), '[color]\n\tui = auto\n');
    const xdgHome = join(writableHome, 'xdg');
    const repo = join(writableHome, 'repo');
    mkdirSync(repo);
    git(repo, 'init', '-q');
    const homeEnv = { ...env, HOME: writableHome, XDG_CONFIG_HOME: xdgHome };
    const result = await runRune(
      [
        'sandbox',
        '--allow-write',
        writableHome,
        '--',
        '/bin/sh',
        '-c',
        [
          `git config --global core.pager '${evil('global-pager')}' 2>/dev/null || echo GLOBAL-REFUSED`,
          `printf '[core]\\n\\tpager = ${evil('include-append')}\\n' >> ~/team.gitconfig 2>/dev/null || echo INCLUDE-REFUSED`,
          `mkdir -p ${xdgHome}/git && printf '[core]\\n\\tfsmonitor = ${evil('xdg-fsmonitor')}\\n[alias]\\n\\tst = !${evil('xdg-alias')}\\n[user]\\n\\tsigningkey = kept\\n' > ${xdgHome}/git/config && echo XDG-WRITTEN`,
        ].join('; '),
      ],
      { cwd: repo, env: homeEnv },
    );
    expect(result.code, result.stderr).toBe(0);
    expect(result.stdout).toContain('GLOBAL-REFUSED');
    expect(result.stdout).toContain('INCLUDE-REFUSED');
    expect(result.stdout).toContain('XDG-WRITTEN');
    const xdg = join(xdgHome, 'git/config');
    expect(result.stderr).toContain(
      `${xdg}: removed core.fsmonitor (runs a program), alias.st (runs a shell command)`,
    );
    expect(programKeys(xdg)).toEqual([]);
    expect(readFileSync(xdg, 'utf8')).toContain('signingkey = kept');
    expect(programKeys(join(writableHome, '.gitconfig'))).toEqual(['include.path=~/team.gitconfig']);
    expect(programKeys(join(writableHome, 'team.gitconfig'))).toEqual([]);
    for (const args of [['status'], ['st'], ['-c', 'core.pager=', 'log']])
      spawnSync('git', args, { cwd: repo, env: homeEnv, timeout: 20_000 });
    expect(readdirSync(canaries)).toEqual([]);
  });
});

describe('a rune killed during a call', () => {
  it('leaves a journal the next rune judges: the planted key is removed then', async () => {
    const repo = tempDir('rune-git-killed-');
    git(repo, 'init', '-q');
    const runeHome = join(tempDir('rune-git-killed-home-'), '.rune');
    mkdirSync(runeHome, { recursive: true });
    const killedEnv = { ...env, RUNE_HOME: runeHome };
    const child = spawn(
      requireBinary(),
      [
        'sandbox',
        '--allow-read',
        home,
        '--allow-write',
        repo,
        '--',
        '/bin/sh',
        '-c',
        `git init -q made && git -C made config core.pager '${evil('killed')}' && echo READY && sleep 20`,
      ],
      { cwd: repo, env: killedEnv, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    await new Promise<void>((resolve) => {
      child.stdout.on('data', (chunk: Buffer) => {
        if (chunk.toString().includes('READY')) resolve();
      });
    });
    // rune dies without its check; its sandboxed tree (in a process group of its own) dies with it.
    const helpers = descendants(child.pid as number);
    expect(helpers.length).toBeGreaterThan(0);
    child.kill('SIGKILL');
    await new Promise((resolve) => child.on('close', resolve));
    const alive = () =>
      helpers.filter(
        (pid) => existsSync(`/proc/${pid}`) && !readFileSync(`/proc/${pid}/stat`, 'utf8').includes(') Z '),
      );
    for (let i = 0; i < 100 && alive().length > 0; i++) await new Promise((r) => setTimeout(r, 50));
    expect(alive()).toEqual([]);
    expect(programKeys(join(repo, 'made/.git/config'))).not.toEqual([]);
    const next = await runRune(['sandbox', '--allow-write', repo, '--', '/bin/true'], {
      cwd: repo,
      env: killedEnv,
    });
    expect(next.code, next.stderr).toBe(0);
    expect(next.stderr).toMatch(/ended during a tool call, before its git check/);
    expect(next.stderr).toContain(`${join(repo, 'made/.git/config')}: removed core.pager`);
    expect(programKeys(join(repo, 'made/.git/config'))).toEqual([]);
  });
});

/** Every process below `root` (from /proc), deepest last. */
function descendants(root: number): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // Gone meanwhile.
    }
  }
  const out: number[] = [];
  const visit = (pid: number) => {
    for (const child of children.get(pid) ?? []) {
      out.push(child);
      visit(child);
    }
  };
  visit(root);
  return out;
}

describe('the model is told, through the agent', () => {
  const mock = useMockLlm();
  it('a tool result says which program-running settings were undone', async () => {
    const repo = tempDir('rune-git-agent-');
    mock.script([
      {
        toolCalls: [
          {
            name: 'execute_cmd',
            arguments: { cmd: `git init -q inner && git -C inner config core.pager '${evil('agent')}'` },
          },
        ],
      },
      { text: 'done' },
    ]);
    const runeHome = join(tempDir('rune-git-home-'), '.rune');
    mkdirSync(runeHome, { recursive: true });
    writeFileSync(
      join(runeHome, 'rune.toml'),
      `[policy]\nallowed_paths_rw = ["${repo}"]\nallowed_paths_ro = ["${home}"]\n`,
    );
    const result = await runRune(
      [
        '--base-url',
        mock.baseUrl,
        '--api-key',
        'sk-test-git-e2e-0123456789',
        '--model',
        'm',
        '--unrestricted',
        'go',
      ],
      { cwd: repo, env: { ...env, RUNE_HOME: runeHome } },
    );
    expect(result.code, result.stderr).toBe(0);
    // biome-ignore lint/suspicious/noExplicitAny: wire JSON
    const tool = (mock.requests[1]!.body.messages as any[]).find((m) => m.role === 'tool');
    expect(tool.content).toContain(`${join(repo, 'inner/.git/config')}: removed core.pager (runs a program)`);
    expect(result.stderr).toContain('removed core.pager');
    expect(programKeys(join(repo, 'inner/.git/config'))).toEqual([]);
  });

  const agent = async (toml: string, script: Parameters<typeof mock.script>[0], cwd: string) => {
    mock.script(script);
    const runeHome = join(tempDir('rune-git-home-'), '.rune');
    mkdirSync(runeHome, { recursive: true });
    writeFileSync(join(runeHome, 'rune.toml'), toml);
    const result = await runRune(
      [
        '--base-url',
        mock.baseUrl,
        '--api-key',
        'sk-test-git-e2e-0123456789',
        '--model',
        'm',
        '--unrestricted',
        'go',
      ],
      { cwd, env: { ...env, RUNE_HOME: runeHome }, timeoutMs: 50_000 },
    );
    expect(result.code, result.stderr).toBe(0);
    // biome-ignore lint/suspicious/noExplicitAny: wire JSON
    return (mock.requests.at(-1)!.body.messages as any[])
      .filter((m) => m.role === 'tool')
      .map((m) => String(m.content));
  };

  it('a bare repository planted with write_file (outside the sandbox) is caught after the write', async () => {
    const repo = tempDir('rune-git-write-');
    const write = (path: string, content: string) => ({
      name: 'write_file',
      arguments: { path: join(repo, path), content },
    });
    const results = await agent(
      `[policy]\nallowed_paths_rw = ["${repo}"]\n`,
      [
        {
          toolCalls: [
            write('plant/config', `[core]\n\tbare = true\n\tfsmonitor = ${evil('write-file')}\n`),
            write('plant/HEAD', 'ref: refs/heads/main\n'),
            write('plant/objects/.keep', ''),
            write('plant/refs/.keep', ''),
          ],
        },
        { text: 'done' },
      ],
      repo,
    );
    expect(results.at(-1)).toContain(`${join(repo, 'plant/config')}: removed core.fsmonitor`);
    expect(programKeys(join(repo, 'plant/config'))).toEqual([]);
  });

  it('a repository completed by an MCP server (its own writable folder) is caught after the MCP call', async () => {
    const filesystem = join(
      dirname(createRequire(import.meta.url).resolve('@modelcontextprotocol/server-filesystem/package.json')),
      'dist/index.js',
    );
    const shared = tempDir('rune-git-mcp-');
    const toml = [
      '[[mcp]]',
      'name = "fs"',
      'command = "node"',
      `args = ["${filesystem}", "${shared}"]`,
      `allowed_paths_rw = ["${shared}"]`,
      '',
    ].join('\n');
    const results = await agent(
      toml,
      [
        {
          toolCalls: [
            {
              name: 'write_file',
              arguments: { path: join(shared, 'p/config'), content: `[alias]\n\tst = !${evil('mcp')}\n` },
            },
            {
              name: 'write_file',
              arguments: { path: join(shared, 'p/HEAD'), content: 'ref: refs/heads/main\n' },
            },
          ],
        },
        {
          toolCalls: [
            { name: 'create_directory', arguments: { path: join(shared, 'p/objects') } },
            { name: 'create_directory', arguments: { path: join(shared, 'p/refs') } },
          ],
        },
        { text: 'done' },
      ],
      tempDir('rune-git-mcp-cwd-'),
    );
    expect(results.at(-1)).toContain(`${join(shared, 'p/config')}: removed alias.st (runs a shell command)`);
    expect(programKeys(join(shared, 'p/config'))).toEqual([]);
  });
});
