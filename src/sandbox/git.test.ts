import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  renameSync,
  rmSync,
  statSync,
  symlinkSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import type { Logger } from '../core/logger.ts';
import { GitGuard } from './git.ts';

const warnings: string[] = [];
const logger = {
  debug: () => {},
  info: () => {},
  warn: (_event: string, fields?: { message?: string }) => warnings.push(fields?.message ?? ''),
  error: () => {},
} as unknown as Logger;

/** A fake git folder as git's discovery sees one. */
function gitDir(path: string, config = '[core]\n\tbare = false\n'): string {
  mkdirSync(join(path, 'objects'), { recursive: true });
  mkdirSync(join(path, 'refs'), { recursive: true });
  mkdirSync(join(path, 'hooks'), { recursive: true });
  mkdirSync(join(path, 'info'), { recursive: true });
  writeFileSync(join(path, 'HEAD'), 'ref: refs/heads/main\n');
  writeFileSync(join(path, 'config'), config);
  return path;
}

function project() {
  const root = realpathSync(mkdtempSync(join(tmpdir(), 'rune-gitguard-')));
  gitDir(join(root, '.git'));
  gitDir(join(root, '.git', 'modules', 'sub'));
  mkdirSync(join(root, 'sub'));
  writeFileSync(join(root, 'sub', '.git'), 'gitdir: ../.git/modules/sub\n');
  gitDir(join(root, 'nested', '.git'));
  mkdirSync(join(root, '.git', 'worktrees', 'wt'), { recursive: true });
  writeFileSync(join(root, '.git', 'worktrees', 'wt', 'HEAD'), 'ref: refs/heads/wt\n');
  writeFileSync(join(root, '.git', 'worktrees', 'wt', 'commondir'), '../..\n');
  return root;
}

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
    const top = realpathSync(mkdtempSync(join(tmpdir(), 'rune-gitguard-up-')));
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

  it('replaces a symlinked config by a plain file and leaves its target alone', () => {
    const root = project();
    const outside = join(realpathSync(mkdtempSync(join(tmpdir(), 'rune-gitguard-out-'))), 'config');
    writeFileSync(outside, '[core]\n\teditor = mine\n');
    const guard = new GitGuard(logger, undefined);
    guard.prepare([root], true);
    gitDir(join(root, 'made', '.git'));
    writeFileSync(join(root, 'made/.git/config'), '');
    const config = join(root, 'made/.git/config');
    unlinkSync(config);
    symlinkSync(outside, config);
    expect(guard.check([root])).toMatch(/made\/\.git\/config: removed core\.editor .*the symlink/);
    expect(readFileSync(outside, 'utf8')).toBe('[core]\n\teditor = mine\n');
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

  it('keeps the commondir git worktree add writes', () => {
    const root = project();
    const guard = new GitGuard(logger, undefined);
    guard.prepare([root], true);
    mkdirSync(join(root, '.git/worktrees/two'));
    writeFileSync(join(root, '.git/worktrees/two/HEAD'), 'ref: refs/heads/two\n');
    writeFileSync(join(root, '.git/worktrees/two/commondir'), '../..\n');
    expect(guard.check([root])).toBeUndefined();
    expect(existsSync(join(root, '.git/worktrees/two/commondir'))).toBe(true);
  });

  it('a hook file made executable later is caught too', () => {
    const root = project();
    writeFileSync(join(root, 'nested/.git/hooks/post-merge'), '#!/bin/sh\n', { mode: 0o644 });
    const guard = new GitGuard(logger, undefined);
    guard.prepare([root], true);
    chmodSync(join(root, 'nested/.git/hooks/post-merge'), 0o755);
    expect(guard.check([root])).toMatch(/post-merge: no longer executable/);
  });
});

describe('GitGuard after a rune that died during a call', () => {
  it('judges what changed since that call began, and only then', () => {
    const root = project();
    const state = realpathSync(mkdtempSync(join(tmpdir(), 'rune-gitguard-state-')));
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
    const state = realpathSync(mkdtempSync(join(tmpdir(), 'rune-gitguard-state-')));
    const guard = new GitGuard(logger, undefined, state);
    guard.prepare([root], true);
    expect(readdirSync(state)).toEqual([`git-guard-${process.pid}.json`]);
    guard.check([root], true);
    expect(readdirSync(state)).toEqual([]);
  });
});

describe('GitGuard on a very large writable root', () => {
  it('searches level by level up to its limit and says where it stopped', () => {
    const root = project();
    gitDir(join(root, 'a/b/c/d/e/deep'));
    warnings.length = 0;
    const guard = new GitGuard(logger, undefined, undefined, 12);
    const { protect, notes } = guard.prepare([root], true);
    // The shallow ones are still found.
    expect(protect).toContain(join(root, '.git/config'));
    expect(protect).not.toContain(join(root, 'a/b/c/d/e/deep/config'));
    expect(notes.join()).toMatch(/stopped after 12 folders/);
    expect(warnings.join()).toMatch(/stopped after 12 folders/);
  });
});
