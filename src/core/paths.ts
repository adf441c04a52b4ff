// What a path means, decided in one place: where rune keeps its files (RUNE_HOME), how `~` and
// relative paths become absolute, the real path of a path that may not exist yet, and whole-component
// containment. Every caller (policy, tools, agent, sandbox plan, notes workspace, Concourse) uses
// these, so a path the gate checked is the path the sandbox grants.
import { realpathSync } from 'node:fs';
import { homedir } from 'node:os';
import { basename, dirname, isAbsolute, join, resolve, sep } from 'node:path';

export interface PathEnv {
  RUNE_HOME?: string | undefined;
  HOME?: string | undefined;
}

/** The home folder: HOME when set (tests and services set it), else the account's. */
export function homeDir(env: PathEnv = process.env): string {
  return env.HOME || homedir();
}

export function runeHome(env: PathEnv = process.env): string {
  if (env.RUNE_HOME) return env.RUNE_HOME;
  return join(homeDir(env), '.rune');
}

export function configFile(env: PathEnv = process.env): string {
  return join(runeHome(env), 'rune.toml');
}

export function cacheDir(env: PathEnv = process.env): string {
  return join(runeHome(env), 'cache');
}

/**
 * `~` and `~/x` with the home folder put in; anything else unchanged (`~user` is not expanded: that
 * is another account's home). Without a home folder the path stays as it is.
 */
export function expandHome(path: string, home: string | undefined): string {
  if (home && (path === '~' || path.startsWith('~/'))) return join(home, path.slice(1));
  return path;
}

/** `~` and `~/x` become the home folder; relative paths are taken from `cwd`; `..` is folded. Lexical only. */
export function absolutePath(path: string, cwd: string, home: string): string {
  const expanded = expandHome(path, home);
  return isAbsolute(expanded) ? resolve(expanded) : resolve(cwd, expanded);
}

/** True when `path` is `root` or lies below it, comparing whole components (`/proj-evil` is not under `/proj`). */
export function isUnder(path: string, root: string): boolean {
  if (path === root) return true;
  const prefix = root.endsWith(sep) ? root : root + sep;
  return path.startsWith(prefix);
}

/** realpath of the longest existing prefix, with the rest appended: files not yet created still resolve symlinked folders. */
export function canonicalise(path: string): string {
  const missing: string[] = [];
  let current = path;
  for (;;) {
    try {
      return join(realpathSync(current), ...missing.reverse());
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      const parent = dirname(current);
      if ((code !== 'ENOENT' && code !== 'ENOTDIR') || parent === current)
        return join(current, ...missing.reverse());
      missing.push(basename(current));
      current = parent;
    }
  }
}

/** The real path of `path`, or `path` itself when it cannot be resolved (gone, unreadable). */
export function realPath(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    return path;
  }
}
