import {
  chmodSync,
  existsSync,
  mkdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hookPrints, readText } from './git-fs.ts';
import { judgeCommondir, judgeConfig, judgeGitFile, judgeHooks } from './git-repair.ts';
import { repoAt } from './git-repo.ts';
import { gitDir, tempRoot } from './test-git.ts';

describe('judgeConfig', () => {
  it('removes only the keys that run a program and were not there before', () => {
    const root = tempRoot();
    const config = join(root, 'config');
    const before = '[core]\n\tpager = less\n';
    writeFileSync(config, '[core]\n\tpager = less\n\teditor = evil\n[user]\n\tname = x\n');
    const actions: string[] = [];
    judgeConfig(config, new Map([[config, before]]), actions);
    expect(actions).toEqual([`${config}: removed core.editor (runs a program)`]);
    expect(readFileSync(config, 'utf8')).toBe('[core]\n\tpager = less\n\t\n[user]\n\tname = x\n');
  });

  it('leaves an unchanged file alone', () => {
    const root = tempRoot();
    const config = join(root, 'config');
    writeFileSync(config, '[core]\n\tfsmonitor = mine\n');
    const actions: string[] = [];
    judgeConfig(config, new Map([[config, readText(config)]]), actions);
    expect(actions).toEqual([]);
  });

  it('replaces a symlinked config by a plain file and leaves its target alone', () => {
    const outside = join(tempRoot('rune-gitguard-out-'), 'config');
    writeFileSync(outside, '[core]\n\teditor = mine\n');
    const config = join(gitDir(join(tempRoot(), 'made', '.git')), 'config');
    unlinkSync(config);
    symlinkSync(outside, config);
    const actions: string[] = [];
    judgeConfig(config, new Map(), actions);
    expect(actions.join()).toMatch(/made\/\.git\/config: removed core\.editor .*the symlink/);
    expect(readFileSync(outside, 'utf8')).toBe('[core]\n\teditor = mine\n');
    expect(readFileSync(config, 'utf8')).not.toContain('editor');
  });
});

describe('judgeHooks', () => {
  it('a hook file made executable later is caught too; samples are left alone', () => {
    const hooks = join(gitDir(join(tempRoot(), '.git')), 'hooks');
    writeFileSync(join(hooks, 'post-merge'), '#!/bin/sh\n', { mode: 0o644 });
    const baseline = new Map(hookPrints(hooks));
    chmodSync(join(hooks, 'post-merge'), 0o755);
    writeFileSync(join(hooks, 'pre-push.sample'), '#!/bin/sh\n', { mode: 0o755 });
    const actions: string[] = [];
    judgeHooks(hooks, baseline, actions);
    expect(actions.join()).toMatch(/post-merge: no longer executable/);
    expect(statSync(join(hooks, 'post-merge')).mode & 0o111).toBe(0);
    expect(statSync(join(hooks, 'pre-push.sample')).mode & 0o111).not.toBe(0);
  });

  it('removes a hook that is a link, and a hooks folder that is one', () => {
    const root = tempRoot();
    const hooks = join(gitDir(join(root, '.git')), 'hooks');
    symlinkSync('/bin/true', join(hooks, 'pre-commit'));
    symlinkSync(join(root, 'elsewhere'), join(root, 'linked-hooks'));
    const actions: string[] = [];
    judgeHooks(hooks, new Map(), actions);
    judgeHooks(join(root, 'linked-hooks'), new Map(), actions);
    expect(actions).toEqual([
      `${join(hooks, 'pre-commit')}: removed (a hook link the command made)`,
      `${join(root, 'linked-hooks')}: removed (a link to a hooks folder elsewhere)`,
    ]);
  });
});

describe('judgeCommondir', () => {
  it('keeps the commondir git worktree add writes, removes one planted in an old git folder', () => {
    const root = tempRoot();
    const repo = repoAt(gitDir(join(root, '.git')));
    mkdirSync(join(root, '.git/worktrees/two'), { recursive: true });
    const added = join(root, '.git/worktrees/two/commondir');
    writeFileSync(added, '../..\n');
    const planted = join(root, '.git/commondir');
    writeFileSync(planted, `${join(root, 'evil')}\n`);
    const actions: string[] = [];
    judgeCommondir(repo, added, new Map(), actions);
    judgeCommondir(repo, planted, new Map(), actions);
    expect(existsSync(added)).toBe(true);
    expect(existsSync(planted)).toBe(false);
    expect(actions).toEqual([`${planted}: removed (it pointed git at other config and hooks)`]);
  });
});

describe('judgeGitFile', () => {
  it('puts a redirected .git file back', () => {
    const root = tempRoot();
    const file = join(root, '.git');
    writeFileSync(file, 'gitdir: /elsewhere\n');
    const actions: string[] = [];
    judgeGitFile(file, 'gitdir: ../.git/modules/sub\n', actions);
    expect(actions).toEqual([`${file}: restored (it had been pointed at another git folder)`]);
    expect(readFileSync(file, 'utf8')).toBe('gitdir: ../.git/modules/sub\n');
  });

  it('never writes through a folder swapped for a link', () => {
    const root = tempRoot();
    const outside = tempRoot('rune-gitguard-out-');
    writeFileSync(join(outside, '.git'), 'gitdir: /elsewhere\n');
    symlinkSync(outside, join(root, 'wt'));
    const actions: string[] = [];
    judgeGitFile(join(root, 'wt/.git'), 'gitdir: ../.git/worktrees/wt\n', actions);
    expect(actions.join()).toMatch(/replaced by a link; its \.git was not restored/);
    expect(readFileSync(join(outside, '.git'), 'utf8')).toBe('gitdir: /elsewhere\n');
  });
});
