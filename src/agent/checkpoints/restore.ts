// Putting paths back as a checkpoint holds them, through src/core/fd/ (every path below its pinned
// folder, no link followed, files replaced by a temporary file renamed over them). A path that holds
// something else than what rune left there was changed by someone else since: it is a conflict, and
// the caller decides — keep theirs, take the checkpoint, or both (the checkpoint's copy beside theirs).
import { constants, fchmodSync } from 'node:fs';
import {
  createFile,
  isPathRefused,
  kindWords,
  makeFolder,
  Root,
  removeEntry,
  replaceFile,
} from '../../core/fd/index.ts';
import { makeFifo, makeLink } from '../../core/fd/special.ts';
import { captureAt } from './capture.ts';
import type { Step } from './history.ts';
import type { CheckpointStore } from './store.ts';
import { type Change, type Held, type State, sameState } from './types.ts';

export type Resolution = 'theirs' | 'checkpoint' | 'both';

export interface Conflict extends Step {
  /** What is there now. */
  current: State;
}

export interface RestoreReport {
  /** What was written, as changes (was: what was there, now: what the checkpoint held). */
  applied: Change[];
  /** Conflicts left as they are. */
  kept: string[];
  /** The checkpoint's copy written beside a file someone else changed. */
  beside: string[];
  /** What could not be put back, one line each. */
  failed: string[];
}

/** A look at what each step's path holds now (content digested, nothing stored). */
export function currentStates(steps: readonly Step[]): Map<string, State> {
  const roots = new RootCache();
  const out = new Map<string, State>();
  try {
    for (const step of steps) out.set(step.p, roots.lookAt(step));
  } finally {
    roots.close();
  }
  return out;
}

/**
 * Whether `now` is what rune left (`left`). A file whose content was not kept can only be told by
 * its size and permissions.
 */
export function asLeft(now: State, left: State): boolean {
  if (left?.k === 'f' && left.h === undefined) return now?.k === 'f' && now.z === left.z && now.m === left.m;
  return sameState(now, left);
}

/** The steps whose path holds neither what rune left nor what it would put back. */
export function conflictsOf(steps: readonly Step[], current: ReadonlyMap<string, State>): Conflict[] {
  return steps
    .map((step) => ({ ...step, current: current.get(step.p) ?? null }))
    .filter((c) => !asLeft(c.current, c.expect) && !sameState(c.current, c.want));
}

/** Applies `steps`; `choices` answers each conflict by path (a conflict without an answer is kept). */
export function applySteps(
  store: CheckpointStore,
  steps: readonly Step[],
  current: ReadonlyMap<string, State>,
  choices: ReadonlyMap<string, Resolution>,
): RestoreReport {
  const report: RestoreReport = { applied: [], kept: [], beside: [], failed: [] };
  const roots = new RootCache();
  const depth = (p: string) => p.split('/').length;
  const todo: { step: Step; now: State }[] = [];
  for (const step of steps) {
    const now = current.get(step.p) ?? null;
    if (sameState(now, step.want)) continue;
    const conflict = !asLeft(now, step.expect);
    const choice = conflict ? (choices.get(step.p) ?? 'theirs') : 'checkpoint';
    if (choice === 'theirs') {
      report.kept.push(step.p);
      continue;
    }
    if (choice === 'both') {
      besideCopy(store, roots, step, report);
      continue;
    }
    todo.push({ step, now });
  }
  const run = (items: typeof todo, act: (step: Step, now: State) => void) => {
    for (const { step, now } of items) {
      try {
        act(step, now);
        report.applied.push({ p: step.p, r: step.r, was: now, now: step.want });
      } catch (error) {
        report.failed.push(`${step.p}: ${(error as Error).message}`);
      }
    }
  };
  try {
    const removals = todo.filter((t) => t.step.want === null || (t.now?.k === 'd' && t.step.want.k !== 'd'));
    const rest = todo.filter((t) => !removals.includes(t));
    // Deepest first, so a folder is empty when its turn comes; then folders, shallowest first.
    run(
      removals.sort((a, b) => depth(b.step.p) - depth(a.step.p)),
      (step, now) => {
        roots.remove(step, now);
        if (step.want !== null) roots.put(store, step);
      },
    );
    run(
      rest.filter((t) => t.step.want?.k === 'd').sort((a, b) => depth(a.step.p) - depth(b.step.p)),
      (step) => roots.put(store, step),
    );
    run(
      rest.filter((t) => t.step.want?.k !== 'd'),
      (step) => roots.put(store, step),
    );
  } finally {
    roots.close();
  }
  return report;
}

/** The checkpoint's file written beside theirs as NAME.rune-undo (or .rune-undo-2, …). */
function besideCopy(store: CheckpointStore, roots: RootCache, step: Step, report: RestoreReport): void {
  const want = step.want;
  if (want?.k !== 'f' || !want.h) {
    report.kept.push(step.p);
    return;
  }
  try {
    const { root, rel } = roots.at(step);
    const bytes = store.readBlob(want.h);
    for (let n = 1; n < 100; n++) {
      const name = `${rel}.rune-undo${n === 1 ? '' : `-${n}`}`;
      if (root.stat(name)) continue;
      createFile(root, name, bytes, want.m);
      report.beside.push(root.where(name));
      return;
    }
    report.failed.push(`${step.p}: no free name for the checkpoint's copy`);
  } catch (error) {
    report.failed.push(`${step.p}: ${(error as Error).message}`);
  }
}

/** The pinned folders steps are acted on through, opened once each. */
class RootCache {
  readonly #roots = new Map<string, Root>();

  at(step: { p: string; r: string }): { root: Root; rel: string } {
    let root = this.#roots.get(step.r);
    if (!root) {
      root = Root.open(step.r);
      this.#roots.set(step.r, root);
    }
    return { root, rel: step.p === step.r ? '' : step.p.slice(step.r.length + 1) };
  }

  lookAt(step: Step): State {
    let located: { root: Root; rel: string };
    try {
      located = this.at(step);
    } catch {
      return null;
    }
    const { root, rel } = located;
    let entry: ReturnType<Root['stat']>;
    try {
      entry = root.stat(rel);
    } catch (error) {
      // A link (or another kind) on the way: not what rune left, and nothing is written through it.
      if (isPathRefused(error)) return { k: 'l', m: 0o777, t: `(${error.message})` };
      throw error;
    }
    if (!entry) return null;
    const { dir, name, done } = root.parentOf(rel);
    try {
      return captureAt(root.sys, dir, name, entry, { maxFileBytes: Number.MAX_SAFE_INTEGER });
    } finally {
      done();
    }
  }

  /** Removes what is at the step's path: an entry, or an empty folder. */
  remove(step: Step, now: State): void {
    if (now === null) return;
    const { root, rel } = this.at(step);
    if (now.k !== 'd') {
      removeEntry(root, rel);
      return;
    }
    const { dir, name, done } = root.parentOf(rel);
    try {
      root.sys.unlinkAt(dir, name, true);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOTEMPTY')
        throw new Error('the folder holds files the checkpoint does not track (ignored or protected); left');
      throw error;
    } finally {
      done();
    }
  }

  /** Puts the step's `want` at its path (whatever other than a folder is there is replaced). */
  put(store: CheckpointStore, step: Step): void {
    const want = step.want as Held;
    const { root, rel } = this.at(step);
    const here = root.stat(rel);
    switch (want.k) {
      case 'f': {
        if (!want.h) throw new Error(`its content was not kept (${want.x ?? 'unknown'})`);
        replaceFile(root, rel, store.readBlob(want.h), { over: 'any', parents: true, mode: want.m });
        return;
      }
      case 'd':
        if (here?.kind !== 'dir') makeFolder(root, rel, { parents: true, mode: want.m });
        else if ((here.mode & 0o7777) !== want.m) changeFolderMode(root, rel, want.m);
        return;
      case 'l':
        if (here) removeEntry(root, rel);
        makeLink(root, rel, want.t ?? '');
        return;
      case 'p':
        if (here) removeEntry(root, rel);
        makeFifo(root, rel, want.m);
        return;
      default:
        throw new Error(
          `${kindWords(want.k === 's' ? 'socket' : want.k === 'c' ? 'char-device' : 'block-device')} cannot be made again`,
        );
    }
  }

  close(): void {
    for (const root of this.#roots.values()) root.close();
    this.#roots.clear();
  }
}

/** A folder's permissions, through a descriptor of the folder itself (opened through no link). */
function changeFolderMode(root: Root, rel: string, mode: number): void {
  const fd = root.resolveIn(rel, constants.O_RDONLY | constants.O_DIRECTORY);
  try {
    fchmodSync(fd, mode);
  } finally {
    root.sys.close(fd);
  }
}
