// The git guard's journal: what every watched file looked like when a call began, written to a
// folder of rune's own before the call, so a rune killed during a call leaves the next rune
// something to judge that call's changes against. Read and written through src/core/fd: the folder
// is opened through no link, the file replaced by rename inside it, never blocked on.
import { join } from 'node:path';
import { makeFolder, Root, removeEntry, replaceFile } from '../core/fd/index.ts';
import type { Logger } from '../core/logger.ts';
import { canonicalise } from '../core/paths.ts';
import { processAlive } from '../core/process-alive.ts';

/** One rune's journal: the roots it searched, the git folders it knew, its baseline. */
export interface JournalState {
  roots: string[];
  repos: string[];
  baseline: Array<[string, string | null]>;
}

/** A journal as read back: whose it was, too. */
export type LeftJournal = JournalState & { pid: number };

type Judge = (left: LeftJournal, mine: string[]) => void;

export class GitJournal {
  /** This process's journal, or undefined when there is no folder to keep one in. */
  private readonly file: string | undefined;

  constructor(
    private readonly logger: Logger,
    private readonly dir: string | undefined,
  ) {
    this.file = dir ? join(dir, `git-guard-${process.pid}.json`) : undefined;
  }

  /** rune's folder for journals, opened through no link (made first when `make`), or undefined. */
  private folder(make: boolean): Root | undefined {
    if (!this.dir) return undefined;
    const real = canonicalise(this.dir);
    try {
      if (make) makeFolder(Root.system(), real.slice(1), { parents: true, mode: 0o700 });
      return Root.open(real);
    } catch (error) {
      if (make) {
        this.logger.debug('sandbox.git_journal', {
          message: `cannot use ${this.dir}: ${(error as Error).message}`,
        });
      }
      return undefined;
    }
  }

  /** Writes what every watched file looked like at the start of this call. */
  write(state: JournalState): void {
    if (!this.file) return;
    const data = JSON.stringify({ pid: process.pid, ...state });
    const folder = this.folder(true);
    if (!folder) return;
    try {
      // Only has to outlive a killed rune, not a power loss: no fsync on every call.
      replaceFile(folder, this.name(), data, { mode: 0o600, durable: false });
    } catch (error) {
      this.logger.debug('sandbox.git_journal', {
        message: `cannot write ${this.file}: ${(error as Error).message}`,
      });
    } finally {
      folder.close();
    }
  }

  private name(): string {
    return `git-guard-${process.pid}.json`;
  }

  /** No call in flight: nothing left to recover. */
  remove(): void {
    const folder = this.folder(false);
    if (!folder) return;
    try {
      removeEntry(folder, this.name());
    } catch {
      // Never written.
    } finally {
      folder.close();
    }
  }

  /**
   * Each journal left by a rune that died during a call (its process is gone) over any of `roots`
   * goes to `judge` with those of its roots that are among them, and is then deleted.
   */
  recover(roots: readonly string[], judge: Judge): void {
    const folder = this.folder(false);
    if (!folder) return;
    try {
      const names = folder
        .list()
        .map((entry) => entry.name)
        .filter((name) => /^git-guard-\d+\.json$/.test(name));
      for (const name of names) this.recoverFrom(folder, name, roots, judge);
    } catch {
      // Not readable: nothing to recover.
    } finally {
      folder.close();
    }
  }

  private recoverFrom(folder: Root, name: string, roots: readonly string[], judge: Judge): void {
    let data: LeftJournal;
    try {
      data = JSON.parse(folder.readText(name) ?? '');
    } catch {
      return;
    }
    if (data.pid === process.pid || processAlive(data.pid)) return;
    const mine = data.roots.filter((root) => roots.includes(root));
    if (mine.length === 0) return;
    judge(data, mine);
    try {
      removeEntry(folder, name);
    } catch {
      // Another rune took it first.
    }
  }
}
