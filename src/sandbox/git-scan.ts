// Finds every git directory under the writable roots (the root's, nested repositories, submodules
// under .git/modules, linked worktrees, bare repositories, `.git` files and links pointing
// elsewhere): a walk level by level, up to a limit, that re-reads only the folders that changed.
import { basename, join, resolve } from 'node:path';
import type { Entry } from '../core/fd/index.ts';
import { gitFileTarget, looksLikeGitDir } from './git-config.ts';
import { listFolder, lstat, readText, real, searching } from './git-fs.ts';
import { type GitRepo, repoAt } from './git-repo.ts';
import { isInside } from './plan.ts';

/** Inside a git folder these hold objects, refs and logs only: never a git folder to find. */
const SKIP_IN_GIT_DIR = new Set(['objects', 'refs', 'logs', 'lfs', 'rr-cache']);
/**
 * Folders looked at per search. A writable root as large as a whole home folder would otherwise
 * cost seconds per call; the search goes level by level, so what is cut off is the deepest, and
 * the person is told.
 */
export const MAX_SCAN_DIRS = 100_000;

interface DirInfo {
  mtimeMs: number;
  ctimeMs: number;
  ino: number;
  subdirs: string[];
  /** Kind of the `.git` entry in this folder, when there is one. */
  dotGit?: 'dir' | 'file' | 'link';
  /** This folder is a git directory by git's own test (HEAD + objects + refs, or HEAD + commondir). */
  isGitDir: boolean;
}

function readDirInfo(dir: string, st: Entry): DirInfo {
  const info: DirInfo = {
    mtimeMs: st.mtimeMs,
    ctimeMs: st.ctimeMs,
    ino: st.ino,
    subdirs: [],
    isGitDir: false,
  };
  const names = new Set<string>();
  for (const entry of listFolder(dir)) {
    names.add(entry.name);
    if (entry.kind === 'dir') info.subdirs.push(entry.name);
    if (entry.name === '.git')
      info.dotGit = entry.kind === 'dir' ? 'dir' : entry.kind === 'symlink' ? 'link' : 'file';
  }
  info.isGitDir = looksLikeGitDir(names);
  return info;
}

/** The git directories found under the roots searched so far, kept between searches. */
export class GitFolders {
  private readonly dirs = new Map<string, DirInfo>();
  private readonly scanned = new Set<string>();
  private readonly repos = new Map<string, GitRepo>();
  /** Set when the last search stopped at the folder limit: the roots and the limit. */
  private cut: string | undefined;

  constructor(private readonly maxDirs = MAX_SCAN_DIRS) {}

  /** What the person should be told when the last search stopped at the limit. */
  get cutOff(): string | undefined {
    return this.cut;
  }

  isScanned(root: string): boolean {
    return this.scanned.has(root);
  }

  /** The roots searched so far. */
  roots(): string[] {
    return [...this.scanned];
  }

  /** The git directories known so far. */
  gitDirs(): string[] {
    return [...this.repos.keys()];
  }

  /** Takes a git directory known from elsewhere (a dead rune's journal) unless already known. */
  adopt(gitDir: string): void {
    if (!this.repos.has(gitDir)) this.repos.set(gitDir, repoAt(gitDir));
  }

  /** The repositories whose git directory, or a `.git` file pointing at it, lies under a root. */
  under(roots: readonly string[]): GitRepo[] {
    return [...this.repos.values()].filter(
      (repo) =>
        roots.some((root) => isInside(repo.gitDir, root)) ||
        repo.gitFiles.some((file) => roots.some((root) => isInside(file, root))),
    );
  }

  /** Searches the roots again, re-reading only the folders that changed since the last search. */
  scan(roots: readonly string[]): void {
    searching(() => this.search(roots));
  }

  private search(roots: readonly string[]): void {
    const visited = new Map<string, DirInfo>();
    const found = new Map<string, GitRepo>();
    // `inModules`: below a git folder's modules/ or worktrees/, where every folder may be (or
    // become) the git folder of a submodule or linked worktree.
    const queue: Array<{ dir: string; inModules: boolean }> = roots.map((dir) => ({ dir, inModules: false }));
    this.cut = undefined;
    for (let head = 0; head < queue.length; head++) {
      const { dir, inModules } = queue[head] as { dir: string; inModules: boolean };
      if (visited.has(dir)) continue;
      if (visited.size >= this.maxDirs) {
        this.cut = `git folders: the search under ${roots.join(', ')} stopped after ${this.maxDirs} folders; git folders deeper than ${dir} are not protected or checked (make the writable folders smaller)`;
        break;
      }
      const st = lstat(dir);
      if (st?.kind !== 'dir') continue;
      const cached = this.dirs.get(dir);
      const info =
        cached && cached.mtimeMs === st.mtimeMs && cached.ctimeMs === st.ctimeMs && cached.ino === st.ino
          ? cached
          : readDirInfo(dir, st);
      visited.set(dir, info);
      // A folder named .git counts even before it is complete: what makes it a repository (HEAD,
      // objects, refs) may be added later, and its hooks and config must not be ours to plant.
      const gitLike = info.isGitDir || inModules || basename(dir) === '.git';
      if (gitLike) found.set(dir, { ...repoAt(dir), gitFiles: found.get(dir)?.gitFiles ?? [] });
      if (info.dotGit === 'file' || info.dotGit === 'link') {
        const dotGit = join(dir, '.git');
        const target =
          info.dotGit === 'file'
            ? gitFileTarget(readText(dotGit) ?? '')
            : lstat(real(dotGit))?.kind === 'dir'
              ? dotGit
              : undefined;
        if (target) {
          const gitDir = real(resolve(dir, target));
          const repo = found.get(gitDir) ?? repoAt(gitDir);
          found.set(gitDir, { ...repo, gitFiles: [...repo.gitFiles, dotGit] });
        }
      }
      for (const sub of info.subdirs) {
        if (gitLike && SKIP_IN_GIT_DIR.has(sub)) continue;
        const below = inModules || (gitLike && (sub === 'modules' || sub === 'worktrees'));
        queue.push({ dir: join(dir, sub), inModules: below && sub !== 'hooks' && sub !== 'info' });
      }
    }
    for (const [dir, info] of visited) this.dirs.set(dir, info);
    for (const [dir] of this.dirs)
      if (roots.some((root) => isInside(dir, root)) && !visited.has(dir)) this.dirs.delete(dir);
    for (const [gitDir, repo] of this.repos) {
      const owners = [gitDir, ...repo.gitFiles];
      if (owners.some((o) => roots.some((root) => isInside(o, root))) && !found.has(gitDir))
        this.repos.delete(gitDir);
    }
    for (const [gitDir, repo] of found) this.repos.set(gitDir, repo);
    for (const root of roots) this.scanned.add(root);
  }
}
