// Test support for the git guard's modules: fake git folders as git's discovery sees them, and a
// project holding one of each kind (a submodule, a nested repository, a linked worktree).
import { mkdirSync, mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A fake git folder as git's discovery sees one. */
export function gitDir(path: string, config = '[core]\n\tbare = false\n'): string {
  mkdirSync(join(path, 'objects'), { recursive: true });
  mkdirSync(join(path, 'refs'), { recursive: true });
  mkdirSync(join(path, 'hooks'), { recursive: true });
  mkdirSync(join(path, 'info'), { recursive: true });
  writeFileSync(join(path, 'HEAD'), 'ref: refs/heads/main\n');
  writeFileSync(join(path, 'config'), config);
  return path;
}

/** A fresh real folder under the system's temporary folder. */
export function tempRoot(prefix = 'rune-gitguard-'): string {
  return realpathSync(mkdtempSync(join(tmpdir(), prefix)));
}

/** A repository with a submodule (sub/), a nested repository (nested/) and a linked worktree (wt). */
export function project(): string {
  const root = tempRoot();
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
