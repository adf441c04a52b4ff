// The git guard's journal: what every watched file looked like when a call began, written to a
// folder of rune's own before the call, so a rune killed during a call leaves the next rune
// something to judge that call's changes against.
import { mkdirSync, readdirSync, readFileSync, renameSync, unlinkSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Logger } from '../core/logger.ts';
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

  /** Writes what every watched file looked like at the start of this call. */
  write(state: JournalState): void {
    if (!this.file) return;
    const data = JSON.stringify({ pid: process.pid, ...state });
    try {
      mkdirSync(dirname(this.file), { recursive: true, mode: 0o700 });
      const tmp = `${this.file}.${process.pid}.tmp`;
      writeFileSync(tmp, data, { mode: 0o600 });
      renameSync(tmp, this.file);
    } catch (error) {
      this.logger.debug('sandbox.git_journal', {
        message: `cannot write ${this.file}: ${(error as Error).message}`,
      });
    }
  }

  /** No call in flight: nothing left to recover. */
  remove(): void {
    if (!this.file) return;
    try {
      unlinkSync(this.file);
    } catch {
      // Never written.
    }
  }

  /**
   * Each journal left by a rune that died during a call (its process is gone) over any of `roots`
   * goes to `judge` with those of its roots that are among them, and is then deleted.
   */
  recover(roots: readonly string[], judge: Judge): void {
    if (!this.dir) return;
    let names: string[] = [];
    try {
      names = readdirSync(this.dir).filter((name) => /^git-guard-\d+\.json$/.test(name));
    } catch {
      return;
    }
    for (const name of names) this.recoverFrom(join(this.dir, name), roots, judge);
  }

  private recoverFrom(file: string, roots: readonly string[], judge: Judge): void {
    let data: LeftJournal;
    try {
      data = JSON.parse(readFileSync(file, 'utf8'));
    } catch {
      return;
    }
    if (data.pid === process.pid || processAlive(data.pid)) return;
    const mine = data.roots.filter((root) => roots.includes(root));
    if (mine.length === 0) return;
    judge(data, mine);
    try {
      unlinkSync(file);
    } catch {
      // Another rune took it first.
    }
  }
}
