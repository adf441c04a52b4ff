// What git reads of one git directory: its config files and the files they include, its hooks
// folders (core.hooksPath resolved as git resolves it), its commondirs; and the repositories git
// finds above a folder. Read from the files (git-fs.ts), never by running git.
import { basename, dirname, isAbsolute, join, resolve } from 'node:path';
import { expandHome } from '../core/paths.ts';
import { gitFileTarget, hooksPathOf, includePaths } from './git-config.ts';
import { configEntries, listFolder, lstat, readText, real } from './git-fs.ts';

const MAX_INCLUDE_DEPTH = 10;

/** One git directory and what of it matters. */
export interface GitRepo {
  gitDir: string;
  /** Where config and hooks come from: the commondir target, or gitDir itself. */
  commonDir: string;
  /** `.git` files that point here (a submodule's or linked worktree's work tree). */
  gitFiles: string[];
}

export function repoAt(gitDir: string): GitRepo {
  const commondir = readText(join(gitDir, 'commondir'))?.trim();
  return { gitDir, commonDir: commondir ? real(resolve(gitDir, commondir)) : gitDir, gitFiles: [] };
}

/** The repositories git finds above each root (their config may point into it). */
export function enclosingRepos(roots: readonly string[]): GitRepo[] {
  const out: GitRepo[] = [];
  for (const root of roots) {
    for (let dir = dirname(root); ; dir = dirname(dir)) {
      const dotGit = join(dir, '.git');
      const st = lstat(dotGit);
      if (st?.kind === 'dir' || st?.kind === 'symlink') out.push(repoAt(real(dotGit)));
      else if (st?.kind === 'file') {
        const target = gitFileTarget(readText(dotGit) ?? '');
        if (target) out.push({ ...repoAt(real(resolve(dir, target))), gitFiles: [dotGit] });
      }
      if (st || dir === dirname(dir)) break;
    }
  }
  return out;
}

function baseConfigFiles(repo: GitRepo): string[] {
  const dirs = [...new Set([repo.gitDir, repo.commonDir])];
  return dirs.flatMap((dir) => [join(dir, 'config'), join(dir, 'config.worktree')]);
}

/**
 * The person's own git config (~/.gitconfig, $XDG_CONFIG_HOME/git/config) and what it includes:
 * git reads it in every repository, so under a writable root (a writable home folder) it is one
 * more file a command could plant a program in.
 */
export function userConfigFiles(home: string | undefined): string[] {
  if (!home) return [];
  const xdg = process.env.XDG_CONFIG_HOME || join(home, '.config');
  const files = [join(home, '.gitconfig'), join(xdg, 'git', 'config')];
  return withTargets([...files, ...includesOf(files, home)]);
}

/** Files pulled in by include.path / includeIf.*.path, followed as git follows them. */
export function includedFiles(repo: GitRepo, home: string | undefined): string[] {
  return includesOf(baseConfigFiles(repo), home);
}

function includesOf(files: readonly string[], home: string | undefined): string[] {
  const out: string[] = [];
  const visit = (file: string, depth: number) => {
    if (depth > MAX_INCLUDE_DEPTH) return;
    for (const path of includePaths(configEntries(file))) {
      const expanded = expandHome(path, home);
      const target = real(isAbsolute(expanded) ? expanded : resolve(dirname(file), expanded));
      if (out.includes(target)) continue;
      out.push(target);
      visit(target, depth + 1);
    }
  };
  for (const file of files) visit(file, 1);
  return out;
}

/** Every config file git reads in this repository (the person's own aside). */
export function configFiles(repo: GitRepo, home: string | undefined): string[] {
  return withTargets([...baseConfigFiles(repo), ...includedFiles(repo, home)]);
}

/**
 * The files and, for those that are links, where they lead: git reads the target, so a target under
 * a writable root is judged as a file of its own (the link is never written through).
 */
function withTargets(files: readonly string[]): string[] {
  const out = new Set(files);
  for (const file of files) if (lstat(file)?.kind === 'symlink') out.add(real(file));
  return [...out];
}

/** core.hooksPath, resolved as git resolves it: relative to the work tree (or a bare repository). */
export function hooksPath(repo: GitRepo, home: string | undefined): string | undefined {
  let value: string | undefined;
  let workTree: string | undefined;
  for (const file of baseConfigFiles(repo)) {
    const entries = configEntries(file);
    value = hooksPathOf(entries) ?? value;
    const configured = entries.filter((e) => e.section === 'core' && e.key === 'worktree' && e.value).at(-1);
    if (configured?.value) workTree = resolve(repo.gitDir, configured.value);
  }
  if (!value) return undefined;
  const expanded = expandHome(value, home);
  if (isAbsolute(expanded)) return real(expanded);
  workTree ??= repo.gitFiles[0]
    ? dirname(repo.gitFiles[0])
    : basename(repo.gitDir) === '.git'
      ? dirname(repo.gitDir)
      : repo.gitDir;
  return real(resolve(workTree, expanded));
}

/** The hooks folders git may run hooks from: its own, the common one's, core.hooksPath. */
export function hookDirs(repo: GitRepo, home: string | undefined): string[] {
  const hooks = hooksPath(repo, home);
  return [...new Set([join(repo.gitDir, 'hooks'), join(repo.commonDir, 'hooks'), ...(hooks ? [hooks] : [])])];
}

/** A git folder's commondir and those of its linked worktrees (worktrees/NAME/commondir). */
export function commondirs(gitDir: string): string[] {
  const names = listFolder(join(gitDir, 'worktrees')).map((entry) => entry.name);
  return [join(gitDir, 'commondir'), ...names.map((name) => join(gitDir, 'worktrees', name, 'commondir'))];
}
