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
//
// This module holds the guard's state and the order of things; the search is git-scan.ts, what
// git reads of a repository git-repo.ts, the repairs git-repair.ts, the journal git-journal.ts.
import { basename, join } from 'node:path';
import type { Logger } from '../core/logger.ts';
import { hookPrints, linkPrint, lstat, real, snapshot } from './git-fs.ts';
import { GitJournal } from './git-journal.ts';
import { judgeCommondir, judgeConfig, judgeGitFile, judgeHooks } from './git-repair.ts';
import {
  commondirs,
  configFiles,
  enclosingRepos,
  hookDirs,
  hooksPath,
  includedFiles,
  userConfigFiles,
} from './git-repo.ts';
import { GitFolders, MAX_SCAN_DIRS } from './git-scan.ts';
import { isInside } from './plan.ts';

export interface GitProtection {
  /** Existing files and folders to bind read-only in the view. */
  protect: string[];
  /** `.git` folders bound onto themselves, so they cannot be renamed away. */
  pin: string[];
  /** Things the person should know (a hooks folder inside a writable root). */
  notes: string[];
}

export class GitGuard {
  private readonly folders: GitFolders;
  /** Contents (config, commondir, .git files) or lstat fingerprints (hooks) at the last look. */
  private baseline = new Map<string, string | null>();
  private told = new Set<string>();
  /** Calls begun (prepare) and not yet ended (check with endsCall). */
  private active = 0;
  private readonly journal: GitJournal;

  /**
   * `journalDir`: a folder of rune's own where each call's starting point is written before the
   * call, so a rune killed during a call leaves the next rune something to judge against.
   */
  constructor(
    private readonly logger: Logger,
    private readonly home: string | undefined,
    journalDir?: string,
    maxDirs = MAX_SCAN_DIRS,
  ) {
    this.folders = new GitFolders(maxDirs);
    this.journal = new GitJournal(logger, journalDir);
  }

  /** Before a call: what to bind read-only. `settled`: no other sandboxed writer is running. */
  prepare(rootsGiven: readonly string[], settled: boolean): GitProtection {
    if (rootsGiven.length === 0) return { protect: [], pin: [], notes: [] };
    const roots = rootsGiven.map(real);
    const fresh = roots.filter((root) => !this.folders.isScanned(root));
    if (fresh.length > 0) {
      this.recover(roots);
      this.folders.scan(roots);
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
      if (path && st && st.kind !== 'symlink') protect.add(path);
    };
    for (const repo of [...this.folders.under(roots), ...enclosingRepos(roots)]) {
      for (const dir of new Set([repo.gitDir, repo.commonDir])) {
        for (const name of ['config', 'config.worktree', 'hooks', 'info', 'commondir']) add(join(dir, name));
      }
      for (const file of repo.gitFiles) add(file);
      if (basename(repo.gitDir) === '.git' && under(repo.gitDir) && lstat(repo.gitDir)?.kind === 'dir')
        pin.add(repo.gitDir);
      for (const file of includedFiles(repo, this.home)) add(file);
      const hooks = hooksPath(repo, this.home);
      if (hooks && under(hooks) && lstat(hooks)) {
        add(hooks);
        const note = `git: core.hooksPath of ${repo.commonDir} points into the writable folder ${hooks}: bound read-only for tools; rune never runs those hooks, but your next commit does, so review changes there`;
        notes.push(note);
        this.tell('sandbox.git_hooks_path', note);
      }
    }
    for (const file of userConfigFiles(this.home)) add(file);
    const cutOff = this.folders.cutOff;
    if (cutOff) {
      notes.push(cutOff);
      this.tell('sandbox.git_search_cut', cutOff);
    }
    this.active++;
    this.writeJournal();
    return { protect: [...protect], pin: [...pin], notes };
  }

  /** Warns once per process about each thing the person should know. */
  private tell(event: 'sandbox.git_hooks_path' | 'sandbox.git_search_cut', message: string): void {
    if (this.told.has(message)) return;
    this.told.add(message);
    this.logger.warn(event, { message });
  }

  private writeJournal(): void {
    this.journal.write({
      roots: this.folders.roots(),
      repos: this.folders.gitDirs(),
      baseline: [...this.baseline],
    });
  }

  /**
   * A journal left by a rune that died during a call (its process is gone): what changed since that
   * call began is judged now, as the call's own check would have judged it.
   */
  private recover(roots: readonly string[]): void {
    this.journal.recover(roots, (left, mine) => {
      for (const [file, value] of left.baseline) if (!this.baseline.has(file)) this.baseline.set(file, value);
      for (const gitDir of left.repos) this.folders.adopt(gitDir);
      const message = this.check(mine);
      if (message)
        this.logger.warn('sandbox.git_recovered', {
          message: `rune ${left.pid} ended during a tool call, before its git check; checked now. ${message}`,
        });
    });
  }

  /**
   * After a call: judges what was created or changed under the roots since the last look, undoes
   * whatever makes git run a program, and returns what was done (for the model), or undefined.
   */
  check(rootsGiven: readonly string[], endsCall = false): string | undefined {
    const roots = rootsGiven.map(real);
    const before = new Set(this.folders.gitDirs());
    this.folders.scan(roots);
    const actions: string[] = [];
    const under = (path: string) => roots.some((root) => isInside(path, root));
    for (const file of userConfigFiles(this.home)) if (under(file)) judgeConfig(file, this.baseline, actions);
    for (const repo of this.folders.under(roots)) {
      for (const file of configFiles(repo, this.home))
        if (under(file)) judgeConfig(file, this.baseline, actions);
      for (const dir of hookDirs(repo, this.home)) if (under(dir)) judgeHooks(dir, this.baseline, actions);
      if (before.has(repo.gitDir))
        for (const file of commondirs(repo.gitDir))
          if (under(file)) judgeCommondir(repo, file, this.baseline, actions);
    }
    for (const [file, was] of this.baseline) {
      if (basename(file) !== '.git' || !was || !under(file)) continue;
      judgeGitFile(file, was, actions);
    }
    this.snapshot(roots);
    if (endsCall && this.active > 0 && --this.active === 0) this.journal.remove();
    else if (this.active > 0) this.writeJournal();
    if (actions.length === 0) return undefined;
    const message = `rune: git: the command left git settings under a writable folder that would run its programs on your next git command; undone:\n${actions.map((a) => `  - ${a}`).join('\n')}`;
    this.logger.warn('sandbox.git_reverted', { message });
    return message;
  }

  /** Records what the watched files look like now. */
  private snapshot(roots: readonly string[]): void {
    const under = (path: string) => roots.some((root) => isInside(path, root));
    for (const file of userConfigFiles(this.home)) if (under(file)) this.baseline.set(file, snapshot(file));
    for (const repo of this.folders.under(roots)) {
      for (const file of [...configFiles(repo, this.home), ...commondirs(repo.gitDir), ...repo.gitFiles])
        if (under(file)) this.baseline.set(file, snapshot(file));
      for (const dir of hookDirs(repo, this.home)) {
        if (!under(dir)) continue;
        if (lstat(dir)?.kind === 'symlink') this.baseline.set(dir, linkPrint(dir));
        else for (const [file, print] of hookPrints(dir)) this.baseline.set(file, print);
      }
    }
  }
}
