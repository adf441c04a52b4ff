import { execFileSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  lstatSync,
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

  it('moves a symlinked config aside: its target is never read, copied or written', () => {
    const outside = join(tempRoot('rune-gitguard-out-'), 'my.cnf');
    writeFileSync(outside, '[client]\n\tpassword = hunter2\n');
    const config = join(gitDir(join(tempRoot(), 'made', '.git')), 'config');
    const before = readFileSync(config, 'latin1');
    unlinkSync(config);
    symlinkSync(outside, config);
    const actions: string[] = [];
    judgeConfig(config, new Map([[config, before]]), actions);
    expect(actions).toEqual([
      `${config}: refused: it is a symbolic link (to ${outside}); moved aside to ${config}.rune-rejected; the file that was there before the call is back`,
    ]);
    expect(readFileSync(outside, 'utf8')).toBe('[client]\n\tpassword = hunter2\n');
    expect(readFileSync(config, 'latin1')).toBe(before);
    expect(lstatSync(`${config}.rune-rejected`).isSymbolicLink()).toBe(true);
  });

  it('never blocks on a FIFO, socket or dangling link in place of a config; moves it aside', () => {
    for (const make of ['fifo', 'dangling'] as const) {
      const config = join(gitDir(join(tempRoot(), '.git')), 'config');
      unlinkSync(config);
      const target = join(tempRoot('rune-gitguard-out-'), 'authorized_keys');
      if (make === 'fifo') execFileSync('mkfifo', [config]);
      else symlinkSync(target, config);
      const actions: string[] = [];
      judgeConfig(config, new Map(), actions);
      expect(actions.join()).toMatch(
        make === 'fifo'
          ? /config: refused: it is a FIFO; moved aside to/
          : /refused: it is a symbolic link \(to .*authorized_keys\)/,
      );
      expect(existsSync(config)).toBe(false);
      expect(existsSync(target)).toBe(false);
    }
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

describe('judgeCommondir (FIFO)', () => {
  it('removes a FIFO named commondir without opening it', () => {
    const root = tempRoot();
    const repo = repoAt(gitDir(join(root, '.git')));
    const planted = join(root, '.git/commondir');
    execFileSync('mkfifo', [planted]);
    const actions: string[] = [];
    judgeCommondir(repo, planted, new Map(), actions);
    expect(actions).toEqual([`${planted}: removed (it was a FIFO)`]);
    expect(existsSync(planted)).toBe(false);
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

  it('a .git that became a link, dangling or not, is moved aside: nothing is created through it', () => {
    const root = tempRoot();
    const file = join(root, '.git');
    const target = join(tempRoot('rune-gitguard-out-'), 'ld.so.preload');
    symlinkSync(target, file);
    const actions: string[] = [];
    judgeGitFile(file, 'gitdir: ../.git/modules/sub\n', actions);
    expect(actions).toEqual([
      `${file}: refused: it is a symbolic link (to ${target}); moved aside to ${file}.rune-rejected, and the .git file from before the call put back`,
    ]);
    expect(existsSync(target)).toBe(false);
    expect(readFileSync(file, 'utf8')).toBe('gitdir: ../.git/modules/sub\n');
  });

  it('a FIFO named .git is moved aside without being opened', () => {
    const root = tempRoot();
    const file = join(root, '.git');
    execFileSync('mkfifo', [file]);
    const actions: string[] = [];
    judgeGitFile(file, 'gitdir: x\n', actions);
    expect(actions.join()).toMatch(/\.git: refused: it is a FIFO; moved aside to .*\.git\.rune-rejected/);
    expect(readFileSync(file, 'utf8')).toBe('gitdir: x\n');
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
