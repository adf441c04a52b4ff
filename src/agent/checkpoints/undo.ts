// Going back to before a turn: a call rune was stopped in (kill -9, a crash) is first completed by
// looking at what its folders hold now against what the journal knew before it; then each path is
// put back unless someone else changed it since, which the caller is asked about; the undo is
// recorded, so the turns undone leave /changes and /rewind and the next look starts from the result.
import { Root } from '../../core/fd/index.ts';
import type { ProtectedPaths } from '../../policy/types.ts';
import { folderOps } from '../../tools/walk/folder-ops.ts';
import { rulesAbove } from '../../tools/walk/walk.ts';
import { captureAt } from './capture.ts';
import { TrackFilter } from './filter.ts';
import {
  type History,
  knownState,
  liveTurns,
  planUndo,
  readHistory,
  type Step,
  type TurnInfo,
  unfinishedCall,
} from './history.ts';
import {
  applySteps,
  type Conflict,
  conflictsOf,
  currentStates,
  type Resolution,
  type RestoreReport,
} from './restore.ts';
import type { CheckpointStore } from './store.ts';
import { FolderTracker } from './tracker.ts';
import { type Change, sameState } from './types.ts';

const MIB = 1024 * 1024;

/**
 * Records what the call rune stopped in changed, found by looking again (nothing when every call
 * finished). Returns what the person should know.
 */
export function recoverUnfinished(
  store: CheckpointStore,
  protectedPaths: ProtectedPaths,
  maxFileMb: number,
): string[] {
  const history = readHistory(store.records);
  const call = unfinishedCall(history);
  if (!call) return [];
  const notes = [
    `rune stopped during ${call.tool} (turn ${call.turn}); what it changed was found by looking at its folders again`,
  ];
  const known = knownState(store.records);
  const capture = { store, maxFileBytes: maxFileMb * MIB };
  const changes: Change[] = [];
  for (const root of call.roots) {
    if (!history.based.has(root)) {
      notes.push(`${root}: rune stopped before its first look was complete; its changes cannot be undone`);
      continue;
    }
    const filter = new TrackFilter(root, protectedPaths);
    let opened: Root;
    try {
      opened = Root.open(root);
    } catch (error) {
      notes.push(`${root}: ${(error as Error).message}`);
      continue;
    }
    try {
      const tracker = new FolderTracker({
        root: opened,
        filter,
        rules: rulesAbove(root, filter.guard, folderOps()),
        capture,
        watcher: undefined,
      });
      const prefix = root === '/' ? '/' : `${root}/`;
      for (const [path, { held }] of known)
        if (path.startsWith(prefix)) tracker.index.set(path.slice(prefix.length), { held, stamp: undefined });
      changes.push(...tracker.changes());
      notes.push(...tracker.problems);
    } finally {
      opened.close();
    }
  }
  for (const file of call.files) {
    const change = fileNow(file, known.get(file)?.held ?? null, capture);
    if (change) changes.push(change);
  }
  if (changes.length > 0) store.append({ t: 'change', id: call.id, c: changes });
  store.append({ t: 'done', id: call.id, partial: [notes[0]!] });
  store.flushSync();
  return notes;
}

function fileNow(
  path: string,
  was: Change['was'],
  capture: { store: CheckpointStore; maxFileBytes: number },
): Change | undefined {
  const slash = path.lastIndexOf('/');
  const parent = path.slice(0, slash) || '/';
  let now: Change['now'] = null;
  try {
    const dir = Root.open(parent);
    try {
      const entry = dir.stat(path.slice(slash + 1));
      if (entry) now = captureAt(dir.sys, dir.fd, path.slice(slash + 1), entry, capture);
    } finally {
      dir.close();
    }
  } catch {
    now = null;
  }
  return sameState(was, now) ? undefined : { p: path, r: parent, was, now };
}

export interface UndoPlan {
  /** The first turn undone (it and every live turn after it). */
  turn: TurnInfo;
  steps: Step[];
  conflicts: Conflict[];
  current: Map<string, Step['want']>;
}

/** What undoing back to before `turn` (default: the last live turn) would do; undefined: no turn. */
export function planUndoTo(history: History, turn?: number): UndoPlan | undefined {
  const live = liveTurns(history);
  const target = turn === undefined ? live.at(-1) : live.find((t) => t.n === turn);
  if (!target) return undefined;
  const steps = planUndo(history, target.n);
  const current = currentStates(steps);
  return { turn: target, steps, conflicts: conflictsOf(steps, current), current };
}

/** Applies a plan with the person's answers to its conflicts, and records the undo. */
export function applyUndo(
  store: CheckpointStore,
  plan: UndoPlan,
  choices: ReadonlyMap<string, Resolution>,
): RestoreReport {
  const report = applySteps(store, plan.steps, plan.current, choices);
  store.append({ t: 'undo', n: plan.turn.n, at: new Date().toISOString(), c: report.applied });
  store.flushSync();
  return report;
}

export { readHistory };
