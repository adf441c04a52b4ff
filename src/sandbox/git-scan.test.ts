import { symlinkSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { GitFolders } from './git-scan.ts';
import { gitDir, project, tempRoot } from './test-git.ts';

describe('GitFolders.scan', () => {
  it('finds every kind of git folder, and the .git files and links that point at one', () => {
    const root = project();
    gitDir(join(root, 'a/b/c/d'), '[core]\n\tbare = true\n');
    const elsewhere = gitDir(join(tempRoot(), 'repo.git'));
    symlinkSync(elsewhere, join(root, 'a/.git'));
    const folders = new GitFolders();
    folders.scan([root]);
    const found = Object.fromEntries(folders.under([root]).map((r) => [r.gitDir, r]));
    expect(Object.keys(found).sort()).toEqual(
      [
        join(root, '.git'),
        // Every folder below modules/ and worktrees/ may become a submodule's or worktree's.
        join(root, '.git/modules'),
        join(root, '.git/modules/sub'),
        join(root, '.git/worktrees'),
        join(root, '.git/worktrees/wt'),
        join(root, 'a/b/c/d'),
        join(root, 'nested/.git'),
        elsewhere,
      ].sort(),
    );
    expect(found[join(root, '.git/modules/sub')]?.gitFiles).toEqual([join(root, 'sub/.git')]);
    expect(found[join(root, '.git/worktrees/wt')]?.commonDir).toBe(join(root, '.git'));
    // Outside the root, found through the link in it.
    expect(found[elsewhere]?.gitFiles).toEqual([join(root, 'a/.git')]);
    expect(folders.isScanned(root)).toBe(true);
  });

  it('forgets what went away under the roots it searches again', () => {
    const root = project();
    const folders = new GitFolders();
    folders.scan([root]);
    expect(folders.gitDirs()).toContain(join(root, 'nested/.git'));
    const other = tempRoot();
    folders.adopt(join(other, '.git'));
    folders.scan([root]);
    expect(folders.gitDirs()).toContain(join(other, '.git')); // not under the root searched
  });

  it('searches level by level up to its limit and says where it stopped', () => {
    const root = project();
    gitDir(join(root, 'a/b/c/d/e/deep'));
    const folders = new GitFolders(12);
    folders.scan([root]);
    const gitDirs = folders.gitDirs();
    // The shallow ones are still found.
    expect(gitDirs).toContain(join(root, '.git'));
    expect(gitDirs).not.toContain(join(root, 'a/b/c/d/e/deep'));
    expect(folders.cutOff).toMatch(/stopped after 12 folders/);
    folders.scan([join(root, 'nested')]);
    expect(folders.cutOff).toBeUndefined();
  });
});
