// Git folders under the writable roots, held against a hostile command. Before a call every git
// folder found there (the root's, nested repositories, submodules under .git/modules, linked
// worktrees, bare repositories) gets its config, hooks, info and commondir bound read-only in the
// view, and `.git` files (which point git elsewhere) too. After the call the roots are searched
// again: config files the call created or changed lose the keys that make git run a program or
// read more config, hooks it wrote stop being executable, and a commondir it planted in an old git
// folder goes. git itself is never run on these folders to find out (that could run the planted
// program); git-config.ts reads the files as git does, and `git config --list` of a file the
// guard rewrote only double-checks it. The person's own git config (~/.gitconfig, ~/.config/git)
// is treated the same where it lies under a writable root. See docs/adr/0017-sandbox-git.md.
import { spawnSync } from 'node:child_process';
import {
  chmodSync,
  type Dirent,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  realpathSync,
  renameSync,
  type Stats,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, isAbsolute, join, relative, resolve } from 'node:path';
import type { Logger } from '../core/logger.ts';
import { expandHome } from '../core/paths.ts';
import { processAlive } from '../core/process-alive.ts';
import {
  type ConfigEntry,
  entryName,
  gitFileTarget,
  hooksPathOf,
  includePaths,
  looksLikeGitDir,
  parseGitConfig,
  programRunningReason,
  sanitizeConfig,
} from './git-config.ts';

/** Inside a git folder these hold objects, refs and logs only: never a git folder to find. */
const SKIP_IN_GIT_DIR = new Set(['objects', 'refs', 'logs', 'lfs', 'rr-cache']);
const MAX_INCLUDE_DEPTH = 10;
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

/** One git directory and what of it matters. */
export interface GitRepo {
  gitDir: string;
  /** Where config and hooks come from: the commondir target, or gitDir itself. */
  commonDir: string;
  /** `.git` files that point here (a submodule's or linked worktree's work tree). */
  gitFiles: string[];
}

export interface GitProtection {
  /** Existing files and folders to bind read-only in the view. */
  protect: string[];
  /** `.git` folders bound onto themselves, so they cannot be renamed away. */
  pin: string[];
  /** Things the person should know (a hooks folder inside a writable root). */
  notes: string[];
}

function isInside(child: string, parent: string): boolean {
  const rel = relative(parent, child);
  return rel === '' || (!rel.startsWith('..') && !isAbsolute(rel));
}

function lstat(path: string): Stats | undefined {
  try {
    return lstatSync(path);
  } catch {
    return undefined; // ENOENT, ENOTDIR (a .git file in the way), EACCES: nothing to see
  }
}

function readText(path: string): string | null {
  try {
    return readFileSync(path, 'latin1');
  } catch {
    return null;
  }
}

function readDirInfo(dir: string, st: Stats): DirInfo {
  const info: DirInfo = {
    mtimeMs: st.mtimeMs,
    ctimeMs: st.ctimeMs,
    ino: st.ino,
    subdirs: [],
    isGitDir: false,
  };
  let entries: Dirent[];
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return info;
  }
  const names = new Set<string>();
  for (const entry of entries) {
    names.add(entry.name);
    if (entry.isDirectory()) info.subdirs.push(entry.name);
    if (entry.name === '.git')
      info.dotGit = entry.isDirectory() ? 'dir' : entry.isSymbolicLink() ? 'link' : 'file';
  }
  info.isGitDir = looksLikeGitDir(names);
  return info;
}

/** The real path (symlinks resolved); for a path that does not exist, its folder's real path. */
function real(path: string): string {
  try {
    return realpathSync(path);
  } catch {
    try {
      return join(realpathSync(dirname(path)), basename(path));
    } catch {
      return path;
    }
  }
}

/**
 * Whether `path`'s folder is where its name says (no symlink on the way). The roots are real paths,
 * so a folder under one that resolves elsewhere was swapped for a link by the command: repairs
 * never read, delete or write through it onto a host folder that was not granted.
 */
function folderIsReal(path: string): boolean {
  try {
    return realpathSync(dirname(path)) === dirname(path);
  } catch {
    return false;
  }
}

/** A config file's entries, or none when it cannot be read. */
function configEntries(path: string): ConfigEntry[] {
  const text = readText(path);
  return text === null ? [] : parseGitConfig(text).entries;
}

let gitAvailable: boolean | undefined;

/**
 * `git config --list` of one file, as git reads it (an independent second reader): no includes,
 * no system or global config, run from `/`, so nothing of the file is executed.
 */
function listWithGit(file: string): Array<{ name: string; value?: string }> | undefined {
  if (gitAvailable === false) return undefined;
  const result = spawnSync('git', ['config', '--file', file, '--no-includes', '--null', '--list'], {
    cwd: '/',
    encoding: 'latin1',
    env: {
      PATH: process.env.PATH ?? '/usr/bin:/bin',
      GIT_CONFIG_NOSYSTEM: '1',
      GIT_CONFIG_GLOBAL: '/dev/null',
      HOME: '/nonexistent',
    },
    timeout: 5000,
  });
  gitAvailable = !result.error;
  if (result.error || result.status !== 0) return undefined;
  return result.stdout
    .split('\0')
    .filter(Boolean)
    .map((item) => {
      const nl = item.indexOf('\n');
      return nl < 0 ? { name: item } : { name: item.slice(0, nl), value: item.slice(nl + 1) };
    });
}

function entryFromName(name: string, value: string | undefined): ConfigEntry {
  const first = name.indexOf('.');
  const last = name.lastIndexOf('.');
  const section = first < 0 ? '' : name.slice(0, first);
  const key = name.slice(last + 1);
  return {
    section,
    ...(first >= 0 && last > first ? { subsection: name.slice(first + 1, last) } : {}),
    key,
    ...(value !== undefined ? { value } : {}),
    start: 0,
    end: 0,
  };
}

const pairOf = (e: Pick<ConfigEntry, 'section' | 'subsection' | 'key' | 'value'>) =>
  `${entryName(e)}\u0000${e.value ?? '\u0001'}`;

export class GitGuard {
  private dirs = new Map<string, DirInfo>();
  private scanned = new Set<string>();
  private repos = new Map<string, GitRepo>();
  /** Contents (config, commondir, .git files) or lstat fingerprints (hooks) at the last look. */
  private baseline = new Map<string, string | null>();
  private told = new Set<string>();
  /** Calls begun (prepare) and not yet ended (check with endsCall). */
  private active = 0;

  private readonly journal: string | undefined;

  /**
   * `journalDir`: a folder of rune's own where each call's starting point is written before the
   * call, so a rune killed during a call leaves the next rune something to judge against.
   */
  /** Set when the last search stopped at the folder limit: the roots and the limit. */
  private cutOff: string | undefined;

  constructor(
    private readonly logger: Logger,
    private readonly home: string | undefined,
    private readonly journalDir?: string,
    private readonly maxDirs = MAX_SCAN_DIRS,
  ) {
    this.journal = journalDir ? join(journalDir, `git-guard-${process.pid}.json`) : undefined;
  }

  /** Before a call: what to bind read-only. `settled`: no other sandboxed writer is running. */
  prepare(rootsGiven: readonly string[], settled: boolean): GitProtection {
    if (rootsGiven.length === 0) return { protect: [], pin: [], notes: [] };
    const roots = rootsGiven.map(real);
    const fresh = roots.filter((root) => !this.scanned.has(root));
    if (fresh.length > 0) {
      this.recover(roots);
      this.scan(roots);
    }
    // Changes made between calls are the person's own: they become the baseline, unless another
    // sandboxed process (an MCP server) may have made them, in which case they are judged now.
    if (settled) this.snapshot(roots);
    else this.check(roots);
    const protect = new Set<string>();
    const pin = new Set<string>();
    const notes: string[] = [];
    const under = (path: string) => roots.some((root) => isInside(path, root));
    // A link cannot be bound read-only (and the view refuses one): the check after the call covers it.
    const add = (path: string | undefined) => {
      const st = path && under(path) ? lstat(path) : undefined;
      if (path && st && !st.isSymbolicLink()) protect.add(path);
    };
    for (const repo of [...this.reposUnder(roots), ...this.enclosingRepos(roots)]) {
      for (const dir of new Set([repo.gitDir, repo.commonDir])) {
        for (const name of ['config', 'config.worktree', 'hooks', 'info', 'commondir']) add(join(dir, name));
      }
      for (const file of repo.gitFiles) add(file);
      if (basename(repo.gitDir) === '.git' && under(repo.gitDir) && lstat(repo.gitDir)?.isDirectory())
        pin.add(repo.gitDir);
      for (const file of this.includedFiles(repo)) add(file);
      const hooks = this.hooksPath(repo);
      if (hooks && under(hooks) && lstat(hooks)) {
        add(hooks);
        const note = `git: core.hooksPath of ${repo.commonDir} points into the writable folder ${hooks}: bound read-only for tools; rune never runs those hooks, but your next commit does, so review changes there`;
        notes.push(note);
        if (!this.told.has(note)) {
          this.told.add(note);
          this.logger.warn('sandbox.git_hooks_path', { message: note });
        }
      }
    }
    for (const file of this.userConfigFiles()) add(file);
    if (this.cutOff) {
      notes.push(this.cutOff);
      if (!this.told.has(this.cutOff)) {
        this.told.add(this.cutOff);
        this.logger.warn('sandbox.git_search_cut', { message: this.cutOff });
      }
    }
    this.active++;
    this.writeJournal();
    return { protect: [...protect], pin: [...pin], notes };
  }

  /** Writes what every watched file looked like at the start of this call (see the constructor). */
  private writeJournal(): void {
    if (!this.journal) return;
    const data = JSON.stringify({
      pid: process.pid,
      roots: [...this.scanned],
      repos: [...this.repos.keys()],
      baseline: [...this.baseline],
    });
    try {
      mkdirSync(dirname(this.journal), { recursive: true, mode: 0o700 });
      const tmp = `${this.journal}.${process.pid}.tmp`;
      writeFileSync(tmp, data, { mode: 0o600 });
      renameSync(tmp, this.journal);
    } catch (error) {
      this.logger.debug('sandbox.git_journal', {
        message: `cannot write ${this.journal}: ${(error as Error).message}`,
      });
    }
  }

  /**
   * A journal left by a rune that died during a call (its process is gone): what changed since that
   * call began is judged now, as the call's own check would have judged it.
   */
  private recover(roots: readonly string[]): void {
    if (!this.journalDir) return;
    let names: string[] = [];
    try {
      names = readdirSync(this.journalDir).filter((name) => /^git-guard-\d+\.json$/.test(name));
    } catch {
      return;
    }
    for (const name of names) this.recoverFrom(join(this.journalDir, name), roots);
  }

  private recoverFrom(file: string, roots: readonly string[]): void {
    let data: { pid: number; roots: string[]; repos: string[]; baseline: Array<[string, string | null]> };
    try {
      data = JSON.parse(readFileSync(file, 'utf8'));
    } catch {
      return;
    }
    if (data.pid === process.pid || processAlive(data.pid)) return;
    const mine = data.roots.filter((root) => roots.includes(root));
    if (mine.length === 0) return;
    for (const [file, value] of data.baseline) if (!this.baseline.has(file)) this.baseline.set(file, value);
    for (const gitDir of data.repos) if (!this.repos.has(gitDir)) this.repos.set(gitDir, this.repoAt(gitDir));
    const message = this.check(mine);
    if (message)
      this.logger.warn('sandbox.git_recovered', {
        message: `rune ${data.pid} ended during a tool call, before its git check; checked now. ${message}`,
      });
    try {
      unlinkSync(file);
    } catch {
      // Another rune took it first.
    }
  }

  /**
   * After a call: judges what was created or changed under the roots since the last look, undoes
   * whatever makes git run a program, and returns what was done (for the model), or undefined.
   */
  check(rootsGiven: readonly string[], endsCall = false): string | undefined {
    const roots = rootsGiven.map(real);
    const before = new Set(this.repos.keys());
    this.scan(roots);
    const actions: string[] = [];
    const under = (path: string) => roots.some((root) => isInside(path, root));
    for (const file of this.userConfigFiles()) if (under(file)) this.judgeConfig(file, actions);
    for (const repo of this.reposUnder(roots)) {
      for (const file of this.configFiles(repo)) if (under(file)) this.judgeConfig(file, actions);
      for (const dir of this.hookDirs(repo)) if (under(dir)) this.judgeHooks(dir, actions);
      if (before.has(repo.gitDir))
        for (const file of commondirs(repo.gitDir)) if (under(file)) this.judgeCommondir(repo, file, actions);
    }
    for (const [file, was] of this.baseline) {
      if (basename(file) !== '.git' || !was || !under(file)) continue;
      if (!folderIsReal(file)) {
        if (lstat(dirname(file))?.isSymbolicLink())
          actions.push(
            `${dirname(file)}: a linked worktree's folder replaced by a link; its .git was not restored through it`,
          );
        continue;
      }
      const now = readText(file);
      if (now === was) continue;
      // A .git file redirected elsewhere (or replaced): put back where it pointed.
      try {
        if (lstat(file)?.isDirectory()) throw new Error('now a folder');
        if (now !== null) unlinkSync(file);
        writeFileSync(file, was, 'latin1');
        actions.push(`${file}: restored (it had been pointed at another git folder)`);
      } catch (error) {
        actions.push(
          `${file}: was pointed at another git folder and could not be restored (${(error as Error).message})`,
        );
      }
    }
    this.snapshot(roots);
    if (endsCall && this.active > 0 && --this.active === 0 && this.journal) {
      try {
        unlinkSync(this.journal); // no call in flight: nothing left to recover
      } catch {
        // Never written.
      }
    } else if (this.active > 0) {
      this.writeJournal();
    }
    if (actions.length === 0) return undefined;
    const message = `rune: git: the command left git settings under a writable folder that would run its programs on your next git command; undone:\n${actions.map((a) => `  - ${a}`).join('\n')}`;
    this.logger.warn('sandbox.git_reverted', { message });
    return message;
  }

  /** Every git directory under the roots, found with a walk that re-reads only changed folders. */
  private scan(roots: readonly string[]): void {
    const visited = new Map<string, DirInfo>();
    const found = new Map<string, GitRepo>();
    // `inModules`: below a git folder's modules/ or worktrees/, where every folder may be (or
    // become) the git folder of a submodule or linked worktree.
    const queue: Array<{ dir: string; inModules: boolean }> = roots.map((dir) => ({ dir, inModules: false }));
    this.cutOff = undefined;
    for (let head = 0; head < queue.length; head++) {
      const { dir, inModules } = queue[head] as { dir: string; inModules: boolean };
      if (visited.has(dir)) continue;
      if (visited.size >= this.maxDirs) {
        this.cutOff = `git folders: the search under ${roots.join(', ')} stopped after ${this.maxDirs} folders; git folders deeper than ${dir} are not protected or checked (make the writable folders smaller)`;
        break;
      }
      const st = lstat(dir);
      if (!st?.isDirectory()) continue;
      const cached = this.dirs.get(dir);
      const info =
        cached && cached.mtimeMs === st.mtimeMs && cached.ctimeMs === st.ctimeMs && cached.ino === st.ino
          ? cached
          : readDirInfo(dir, st);
      visited.set(dir, info);
      // A folder named .git counts even before it is complete: what makes it a repository (HEAD,
      // objects, refs) may be added later, and its hooks and config must not be ours to plant.
      const gitLike = info.isGitDir || inModules || basename(dir) === '.git';
      if (gitLike) found.set(dir, { ...this.repoAt(dir), gitFiles: found.get(dir)?.gitFiles ?? [] });
      if (info.dotGit === 'file' || info.dotGit === 'link') {
        const dotGit = join(dir, '.git');
        const target =
          info.dotGit === 'file'
            ? gitFileTarget(readText(dotGit) ?? '')
            : (() => {
                try {
                  return statSync(dotGit).isDirectory() ? dotGit : undefined;
                } catch {
                  return undefined;
                }
              })();
        if (target) {
          const gitDir = real(resolve(dir, target));
          const repo = found.get(gitDir) ?? this.repoAt(gitDir);
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

  private repoAt(gitDir: string): GitRepo {
    const commondir = readText(join(gitDir, 'commondir'))?.trim();
    return { gitDir, commonDir: commondir ? real(resolve(gitDir, commondir)) : gitDir, gitFiles: [] };
  }

  private reposUnder(roots: readonly string[]): GitRepo[] {
    return [...this.repos.values()].filter(
      (repo) =>
        roots.some((root) => isInside(repo.gitDir, root)) ||
        repo.gitFiles.some((file) => roots.some((root) => isInside(file, root))),
    );
  }

  /** The repositories git finds above each root (their config may point into it). */
  private enclosingRepos(roots: readonly string[]): GitRepo[] {
    const out: GitRepo[] = [];
    for (const root of roots) {
      for (let dir = dirname(root); ; dir = dirname(dir)) {
        const dotGit = join(dir, '.git');
        const st = lstat(dotGit);
        if (st?.isDirectory() || st?.isSymbolicLink()) out.push(this.repoAt(real(dotGit)));
        else if (st?.isFile()) {
          const target = gitFileTarget(readText(dotGit) ?? '');
          if (target) out.push({ ...this.repoAt(real(resolve(dir, target))), gitFiles: [dotGit] });
        }
        if (st || dir === dirname(dir)) break;
      }
    }
    return out;
  }

  private baseConfigFiles(repo: GitRepo): string[] {
    const dirs = [...new Set([repo.gitDir, repo.commonDir])];
    return dirs.flatMap((dir) => [join(dir, 'config'), join(dir, 'config.worktree')]);
  }

  /**
   * The person's own git config (~/.gitconfig, $XDG_CONFIG_HOME/git/config) and what it includes:
   * git reads it in every repository, so under a writable root (a writable home folder) it is one
   * more file a command could plant a program in.
   */
  private userConfigFiles(): string[] {
    if (!this.home) return [];
    const xdg = process.env.XDG_CONFIG_HOME || join(this.home, '.config');
    const files = [join(this.home, '.gitconfig'), join(xdg, 'git', 'config')];
    return [...files, ...this.includesOf(files)];
  }

  /** Files pulled in by include.path / includeIf.*.path, followed as git follows them. */
  private includedFiles(repo: GitRepo): string[] {
    return this.includesOf(this.baseConfigFiles(repo));
  }

  private includesOf(files: readonly string[]): string[] {
    const out: string[] = [];
    const visit = (file: string, depth: number) => {
      if (depth > MAX_INCLUDE_DEPTH) return;
      for (const path of includePaths(configEntries(file))) {
        const expanded = expandHome(path, this.home);
        const target = real(isAbsolute(expanded) ? expanded : resolve(dirname(file), expanded));
        if (out.includes(target)) continue;
        out.push(target);
        visit(target, depth + 1);
      }
    };
    for (const file of files) visit(file, 1);
    return out;
  }

  private configFiles(repo: GitRepo): string[] {
    return [...this.baseConfigFiles(repo), ...this.includedFiles(repo)];
  }

  /** core.hooksPath, resolved as git resolves it: relative to the work tree (or a bare repository). */
  private hooksPath(repo: GitRepo): string | undefined {
    let value: string | undefined;
    let workTree: string | undefined;
    for (const file of this.baseConfigFiles(repo)) {
      const entries = configEntries(file);
      value = hooksPathOf(entries) ?? value;
      const configured = entries
        .filter((e) => e.section === 'core' && e.key === 'worktree' && e.value)
        .at(-1);
      if (configured?.value) workTree = resolve(repo.gitDir, configured.value);
    }
    if (!value) return undefined;
    const expanded = expandHome(value, this.home);
    if (isAbsolute(expanded)) return real(expanded);
    workTree ??= repo.gitFiles[0]
      ? dirname(repo.gitFiles[0])
      : basename(repo.gitDir) === '.git'
        ? dirname(repo.gitDir)
        : repo.gitDir;
    return real(resolve(workTree, expanded));
  }

  private hookDirs(repo: GitRepo): string[] {
    const hooks = this.hooksPath(repo);
    return [
      ...new Set([join(repo.gitDir, 'hooks'), join(repo.commonDir, 'hooks'), ...(hooks ? [hooks] : [])]),
    ];
  }

  /** Records what the watched files look like now. */
  private snapshot(roots: readonly string[]): void {
    const under = (path: string) => roots.some((root) => isInside(path, root));
    for (const file of this.userConfigFiles()) if (under(file)) this.baseline.set(file, readText(file));
    for (const repo of this.reposUnder(roots)) {
      for (const file of [...this.configFiles(repo), ...commondirs(repo.gitDir), ...repo.gitFiles])
        if (under(file)) this.baseline.set(file, readText(file));
      for (const dir of this.hookDirs(repo)) {
        if (!under(dir)) continue;
        if (lstat(dir)?.isSymbolicLink()) this.baseline.set(dir, linkPrint(dir));
        else for (const [file, print] of hookPrints(dir)) this.baseline.set(file, print);
      }
    }
  }

  private judgeConfig(file: string, actions: string[]): void {
    const now = readText(file);
    const before = this.baseline.get(file);
    if (now === null || now === before) return;
    const known = new Set(before ? parseGitConfig(before).entries.map(pairOf) : []);
    const result = sanitizeConfig(now, (e) => !known.has(pairOf(e)));
    const link = lstat(file)?.isSymbolicLink() ?? false;
    if (!folderIsReal(file)) return; // swapped for a link since the scan: the next check judges its new place
    if (result.removed.length === 0 && result.cutAt === undefined && !link) {
      this.doubleCheck(file, known, actions);
      return;
    }
    try {
      // A symlinked config is replaced by a plain file: its target is left alone.
      if (link) unlinkSync(file);
      writeFileSync(file, result.text, 'latin1');
      const what = [
        ...result.removed.map((r) => `${r.name} (${r.reason})`),
        ...(result.cutAt !== undefined ? ['everything from a line git would refuse on'] : []),
        ...(link ? ['the symlink (now a plain file)'] : []),
      ];
      actions.push(`${file}: removed ${what.join(', ')}`);
      this.doubleCheck(file, known, actions);
    } catch (error) {
      actions.push(
        `${file}: could not remove ${result.removed.map((r) => r.name).join(', ')} (${(error as Error).message}): delete them before running git there`,
      );
    }
  }

  /** git's own reading of a file the guard judged must show nothing new that runs a program. */
  private doubleCheck(file: string, known: ReadonlySet<string>, actions: string[]): void {
    const listed = listWithGit(file);
    if (!listed) return; // no git here, or git refuses the file (and then refuses to run with it)
    const left = listed
      .map((item) => entryFromName(item.name, item.value))
      .filter((e) => !known.has(pairOf(e)) && programRunningReason(e));
    if (left.length === 0) return;
    const aside = `${file}.rune-rejected`;
    try {
      renameSync(file, aside);
      writeFileSync(file, '');
      actions.push(`${file}: git still read ${left.map(entryName).join(', ')} from it; moved it to ${aside}`);
    } catch (error) {
      actions.push(
        `${file}: git still reads ${left.map(entryName).join(', ')} (${(error as Error).message}): delete it`,
      );
    }
  }

  private judgeHooks(dir: string, actions: string[]): void {
    const st = lstat(dir);
    if (st?.isSymbolicLink()) {
      // A hooks folder that is a link: the link itself is what the command may have planted.
      if (this.baseline.get(dir) === linkPrint(dir)) return;
      try {
        unlinkSync(dir);
        actions.push(`${dir}: removed (a link to a hooks folder elsewhere)`);
      } catch (error) {
        actions.push(
          `${dir}: links to a hooks folder elsewhere and could not be removed (${(error as Error).message}): delete it`,
        );
      }
      return;
    }
    for (const [file, print] of hookPrints(dir)) {
      if (this.baseline.get(file) === print) continue;
      const st = lstat(file);
      if (!st || file.endsWith('.sample')) continue;
      if (st.isSymbolicLink()) {
        try {
          unlinkSync(file);
          actions.push(`${file}: removed (a hook link the command made)`);
        } catch (error) {
          actions.push(
            `${file}: a hook link the command made could not be removed (${(error as Error).message}): delete it`,
          );
        }
        continue;
      }
      if (!st.isFile() || (st.mode & 0o111) === 0) continue;
      try {
        chmodSync(file, st.mode & 0o7666);
        actions.push(`${file}: no longer executable (a hook the command wrote; git would run it)`);
      } catch (error) {
        actions.push(
          `${file}: a hook the command wrote stays executable (${(error as Error).message}): delete it`,
        );
      }
    }
  }

  /** A commondir planted in an old git folder points git at other config and hooks. */
  private judgeCommondir(repo: GitRepo, file: string, actions: string[]): void {
    const now = readText(file);
    if (now === null || now === this.baseline.get(file)) return;
    // `git worktree add` writes worktrees/NAME/commondir pointing back at its own git folder.
    if (file !== join(repo.gitDir, 'commondir') && real(resolve(dirname(file), now.trim())) === repo.gitDir)
      return;
    try {
      unlinkSync(file);
      actions.push(`${file}: removed (it pointed git at other config and hooks)`);
    } catch (error) {
      actions.push(
        `${file}: points git at other config and hooks and could not be removed (${(error as Error).message}): delete it`,
      );
    }
  }
}

/** A git folder's commondir and those of its linked worktrees (worktrees/NAME/commondir). */
function commondirs(gitDir: string): string[] {
  let names: string[] = [];
  try {
    names = readdirSync(join(gitDir, 'worktrees'));
  } catch {
    // No linked worktrees.
  }
  return [join(gitDir, 'commondir'), ...names.map((name) => join(gitDir, 'worktrees', name, 'commondir'))];
}

function linkPrint(path: string): string {
  try {
    return `link:${readlinkSync(path)}`;
  } catch {
    return 'gone';
  }
}

/** lstat fingerprints of the entries of a hooks folder. */
function hookPrints(dir: string): Array<[string, string]> {
  const out: Array<[string, string]> = [];
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return out;
  }
  for (const name of names) {
    const file = join(dir, name);
    const st = lstat(file);
    if (st) out.push([file, `${st.mode}:${st.size}:${st.mtimeMs}:${st.ino}`]);
  }
  return out;
}
