import { spawnSync } from 'node:child_process';
import {
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Logger } from '../core/logger.ts';
import { GitGuard } from './git.ts';
import { gitDir, project, tempRoot } from './test-git.ts';

const warnings: string[] = [];
const logger = {
  debug: () => {},
  info: () => {},
  warn: (_event: string, fields?: { message?: string }) => warnings.push(fields?.message ?? ''),
  error: () => {},
} as unknown as Logger;

describe('GitGuard.prepare', () => {
  it('protects config, hooks and info of every git folder, the .git files, and pins .git folders', () => {
    const root = project();
    const guard = new GitGuard(logger, undefined);
    const { protect, pin } = guard.prepare([root], true);
    expect(protect).toEqual(
      expect.arrayContaining([
        join(root, '.git/config'),
        join(root, '.git/hooks'),
        join(root, '.git/info'),
        join(root, '.git/modules/sub/config'),
        join(root, '.git/modules/sub/hooks'),
        join(root, 'sub/.git'),
        join(root, 'nested/.git/config'),
        join(root, '.git/worktrees/wt/commondir'),
      ]),
    );
    expect(pin.sort()).toEqual([join(root, '.git'), join(root, 'nested/.git')]);
  });

  it('follows include.path and core.hooksPath into the writable root and says so', () => {
    const root = project();
    writeFileSync(
      join(root, '.git/config'),
      '[include]\n\tpath = ../shared.gitconfig\n[core]\n\thooksPath = .githooks\n',
    );
    writeFileSync(join(root, 'shared.gitconfig'), '[include]\n\tpath = deeper.gitconfig\n');
    writeFileSync(join(root, 'deeper.gitconfig'), '');
    mkdirSync(join(root, '.githooks'));
    warnings.length = 0;
    const { protect, notes } = new GitGuard(logger, undefined).prepare([root], true);
    expect(protect).toEqual(
      expect.arrayContaining([
        join(root, 'shared.gitconfig'),
        join(root, 'deeper.gitconfig'),
        join(root, '.githooks'),
      ]),
    );
    expect(notes.join()).toMatch(/core\.hooksPath .* points into the writable folder .*\.githooks/);
    expect(warnings.join()).toMatch(/hooksPath/);
  });

  it('reads the repository above a writable root too (its hooksPath may point into the root)', () => {
    const top = tempRoot('rune-gitguard-up-');
    gitDir(join(top, '.git'), '[core]\n\thooksPath = src/hooks\n');
    mkdirSync(join(top, 'src', 'hooks'), { recursive: true });
    const { protect } = new GitGuard(logger, undefined).prepare([join(top, 'src')], true);
    expect(protect).toContain(join(top, 'src/hooks'));
  });
});

describe('GitGuard.check', () => {
  it('undoes program-running keys and hooks of a repository the call created, nothing else', () => {
    const root = project();
    const guard = new GitGuard(logger, undefined);
    guard.prepare([root], true);
    gitDir(join(root, 'made', '.git'), '[core]\n\tbare = false\n\tfsmonitor = /evil\n[user]\n\tname = x\n');
    writeFileSync(join(root, 'made/.git/hooks/pre-commit'), '#!/bin/sh\n', { mode: 0o755 });
    writeFileSync(join(root, 'made/.git/hooks/pre-commit.sample'), '#!/bin/sh\n', { mode: 0o755 });
    const message = guard.check([root]);
    expect(message).toMatch(/made\/\.git\/config: removed core\.fsmonitor \(runs a program\)/);
    expect(message).toMatch(/made\/\.git\/hooks\/pre-commit: no longer executable/);
    expect(readFileSync(join(root, 'made/.git/config'), 'utf8')).toBe(
      '[core]\n\tbare = false\n\t\n[user]\n\tname = x\n',
    );
    expect(statSync(join(root, 'made/.git/hooks/pre-commit')).mode & 0o111).toBe(0);
    expect(statSync(join(root, 'made/.git/hooks/pre-commit.sample')).mode & 0o111).not.toBe(0);
    expect(guard.check([root])).toBeUndefined(); // nothing new the second time
  });

  it('finds a bare repository planted in a plain folder, at any depth', () => {
    const root = project();
    const guard = new GitGuard(logger, undefined);
    guard.prepare([root], true);
    gitDir(join(root, 'a/b/c/d'), '[core]\n\tbare = true\n\tpager = evil\n');
    expect(guard.check([root])).toMatch(/a\/b\/c\/d\/config: removed core\.pager/);
  });

  it('takes changes between calls as the person own when no sandboxed writer runs, and judges them when one does', () => {
    const root = project();
    const guard = new GitGuard(logger, undefined);
    guard.prepare([root], true);
    expect(guard.check([root])).toBeUndefined();
    writeFileSync(join(root, 'nested/.git/config'), '[core]\n\tpager = less\n');
    guard.prepare([root], true);
    expect(guard.check([root])).toBeUndefined();
    expect(readFileSync(join(root, 'nested/.git/config'), 'utf8')).toContain('pager = less');
    writeFileSync(join(root, 'nested/.git/config'), '[core]\n\tpager = less\n\teditor = evil\n');
    guard.prepare([root], false);
    expect(readFileSync(join(root, 'nested/.git/config'), 'utf8')).toBe('[core]\n\tpager = less\n\t\n');
  });

  it('puts a redirected .git file back and removes a planted commondir and hooks link', () => {
    const root = project();
    const guard = new GitGuard(logger, undefined);
    guard.prepare([root], true);
    gitDir(join(root, 'evil'));
    writeFileSync(join(root, 'sub/.git'), `gitdir: ${join(root, 'evil')}\n`);
    writeFileSync(join(root, 'nested/.git/commondir'), `${join(root, 'evil')}\n`);
    rmSync(join(root, 'nested/.git/hooks'), { recursive: true });
    symlinkSync(join(root, 'evil/hooks'), join(root, 'nested/.git/hooks'));
    const message = guard.check([root]) ?? '';
    expect(message).toMatch(/sub\/\.git: restored/);
    expect(message).toMatch(/nested\/\.git\/commondir: removed/);
    expect(message).toMatch(/nested\/\.git\/hooks: removed \(a link/);
    expect(readFileSync(join(root, 'sub/.git'), 'utf8')).toBe('gitdir: ../.git/modules/sub\n');
    expect(existsSync(join(root, 'nested/.git/commondir'))).toBe(false);
  });
});

describe('GitGuard after a rune that died during a call', () => {
  it('judges what changed since that call began, and only then', () => {
    const root = project();
    const state = tempRoot('rune-gitguard-state-');
    // A first rune begins a call (its journal is written) and is killed before its check.
    const first = new GitGuard(logger, undefined, state);
    first.prepare([root], true);
    const [journal] = readdirSync(state);
    const dead = spawnSync('/bin/true').pid as number;
    renameSync(join(state, journal as string), join(state, `git-guard-${dead}.json`));
    const data = JSON.parse(readFileSync(join(state, `git-guard-${dead}.json`), 'utf8'));
    writeFileSync(join(state, `git-guard-${dead}.json`), JSON.stringify({ ...data, pid: dead }));
    // The call planted a key before rune died.
    writeFileSync(join(root, 'nested/.git/config'), '[core]\n\tbare = false\n\tsshCommand = evil\n');
    warnings.length = 0;
    new GitGuard(logger, undefined, state).prepare([root], true);
    expect(warnings.join()).toMatch(
      /ended during a tool call.*nested\/\.git\/config: removed core\.sshcommand/s,
    );
    expect(readFileSync(join(root, 'nested/.git/config'), 'utf8')).not.toContain('evil');
    expect(readdirSync(state).filter((n) => n.includes(String(dead)))).toEqual([]);
  });

  it('leaves no journal once every call has ended', () => {
    const root = project();
    const state = tempRoot('rune-gitguard-state-');
    const guard = new GitGuard(logger, undefined, state);
    guard.prepare([root], true);
    expect(readdirSync(state)).toEqual([`git-guard-${process.pid}.json`]);
    guard.check([root], true);
    expect(readdirSync(state)).toEqual([]);
  });
});

describe('GitGuard on a very large writable root', () => {
  it('says where the search stopped (what it found is git-scan.test.ts)', () => {
    const root = project();
    gitDir(join(root, 'a/b/c/d/e/deep'));
    warnings.length = 0;
    const { notes } = new GitGuard(logger, undefined, undefined, 12).prepare([root], true);
    expect(notes.join()).toMatch(/stopped after 12 folders/);
    expect(warnings.join()).toMatch(/stopped after 12 folders/);
  });
});

describe('GitGuard and odd folder names', () => {
  it('takes a folder whose name begins with two dots for one inside the root', () => {
    const root = project();
    gitDir(join(root, '..x', '.git'));
    const guard = new GitGuard(logger, undefined);
    expect(guard.prepare([root], true).protect).toContain(join(root, '..x/.git/config'));
    writeFileSync(join(root, '..x/.git/config'), '[core]\n\tfsmonitor = evil\n');
    expect(guard.check([root])).toMatch(/\.\.x\/\.git\/config: removed core\.fsmonitor/);
  });
});
