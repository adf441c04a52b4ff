import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { enclosingRepos, type GitRepo, hooksPath, includedFiles, repoAt } from './git-repo.ts';
import { gitDir, tempRoot } from './test-git.ts';

describe('hooksPath resolves core.hooksPath as git does', () => {
  const home = '/home/someone';
  // Each case: the layout (a work tree's .git folder, a bare repository, a .git file's target),
  // the config, and where the hooks are, relative to the temporary root.
  it.each([
    [
      'a work tree: relative to it',
      'wt/.git',
      undefined,
      '[core]\n\thooksPath = .githooks\n',
      'wt/.githooks',
    ],
    ['a bare repository: relative to it', 'bare.git', undefined, '[core]\n\thooksPath = h\n', 'bare.git/h'],
    ['a .git file: relative to its folder', 'mods/x', 'sub/.git', '[core]\n\thooksPath = h\n', 'sub/h'],
    ['core.worktree set', 'g/.git', undefined, '[core]\n\tworktree = ../../w\n\thooksPath = h\n', 'w/h'],
    ['absolute', 'a/.git', undefined, '[core]\n\thooksPath = /opt/hooks\n', '/opt/hooks'],
    ['~ is the home folder', 'b/.git', undefined, '[core]\n\thooksPath = ~/hooks\n', `${home}/hooks`],
    ['the last one wins', 'c/.git', undefined, '[core]\n\thooksPath = 1\n\thooksPath = 2\n', 'c/2'],
    ['none set', 'd/.git', undefined, '[core]\n\tbare = false\n', undefined],
  ])('%s', (_name, dir, gitFile, config, expected) => {
    const root = tempRoot();
    const repo: GitRepo = { ...repoAt(gitDir(join(root, dir), config)) };
    if (gitFile) repo.gitFiles = [join(root, gitFile)];
    const want = expected === undefined || expected.startsWith('/') ? expected : join(root, expected);
    expect(hooksPath(repo, home)).toBe(want);
  });
});

describe('what git reads of a repository', () => {
  it('follows include.path as git does: relative to the including file, nested, once each', () => {
    const root = tempRoot();
    const repo = repoAt(gitDir(join(root, '.git'), '[include]\n\tpath = ../a.gitconfig\n'));
    writeFileSync(join(root, 'a.gitconfig'), '[include]\n\tpath = b.gitconfig\n');
    writeFileSync(join(root, 'b.gitconfig'), '[include]\n\tpath = a.gitconfig\n');
    expect(includedFiles(repo, undefined)).toEqual([join(root, 'a.gitconfig'), join(root, 'b.gitconfig')]);
  });

  it('takes commondir for where config and hooks come from', () => {
    const root = tempRoot();
    gitDir(join(root, '.git'));
    mkdirSync(join(root, '.git/worktrees/wt'), { recursive: true });
    writeFileSync(join(root, '.git/worktrees/wt/commondir'), '../..\n');
    expect(repoAt(join(root, '.git/worktrees/wt')).commonDir).toBe(join(root, '.git'));
    expect(repoAt(join(root, '.git')).commonDir).toBe(join(root, '.git'));
  });

  it('finds the repository above a folder, through a .git file too', () => {
    const root = tempRoot();
    gitDir(join(root, '.git'));
    mkdirSync(join(root, 'src/deep'), { recursive: true });
    expect(enclosingRepos([join(root, 'src/deep')]).map((r) => r.gitDir)).toEqual([join(root, '.git')]);
    gitDir(join(root, 'elsewhere'));
    writeFileSync(join(root, 'src/.git'), 'gitdir: ../elsewhere\n');
    expect(enclosingRepos([join(root, 'src/deep')])).toEqual([
      {
        gitDir: join(root, 'elsewhere'),
        commonDir: join(root, 'elsewhere'),
        gitFiles: [join(root, 'src/.git')],
      },
    ]);
  });
});
