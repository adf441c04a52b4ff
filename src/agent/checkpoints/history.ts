// A session's checkpoints read back from its journal (pure): the turns and the calls in them with
// what each changed, which turns were undone, what every tracked path held before a call that
// never finished, and the plan of going back to before a turn — per path, what to put back and
// what rune left there (anything else there now was written by someone else: a conflict).
import { type Change, type Held, type JournalRecord, type State, sameState } from './types.ts';

export interface CallInfo {
  id: string;
  turn: number;
  tool: string;
  roots: string[];
  files: string[];
  changes: Change[];
  /** False when rune stopped during the call (its changes are then found by looking again). */
  done: boolean;
  partial: string[];
}

export interface TurnInfo {
  n: number;
  at: string;
  prompt: string;
  /** The conversation's length before the turn, and that prefix's digest. */
  messages: number;
  digest: string;
  calls: CallInfo[];
  undone: boolean;
}

export interface History {
  turns: TurnInfo[];
  /** Folders whose first look was complete. */
  based: Set<string>;
}

export function readHistory(records: readonly JournalRecord[]): History {
  const turns: TurnInfo[] = [];
  const calls = new Map<string, CallInfo>();
  const based = new Set<string>();
  for (const record of records) {
    switch (record.t) {
      case 'turn':
        turns.push({ ...record, calls: [], undone: false });
        break;
      case 'call': {
        const call: CallInfo = { ...record, turn: record.n, changes: [], done: false, partial: [] };
        calls.set(record.id, call);
        (turns.find((turn) => turn.n === record.n) ?? turns.at(-1))?.calls.push(call);
        break;
      }
      case 'change':
        calls.get(record.id)?.changes.push(...record.c);
        break;
      case 'done': {
        const call = calls.get(record.id);
        if (call) {
          call.done = true;
          call.partial.push(...(record.partial ?? []));
        }
        break;
      }
      case 'undo':
        for (const turn of turns) if (turn.n >= record.n) turn.undone = true;
        break;
      case 'based':
        based.add(record.r);
        break;
      default:
        break;
    }
  }
  return { turns, based };
}

/** The turns not undone, oldest first. */
export function liveTurns(history: History): TurnInfo[] {
  return history.turns.filter((turn) => !turn.undone);
}

/** The last call, when rune stopped during it. */
export function unfinishedCall(history: History): CallInfo | undefined {
  const last = history.turns.flatMap((turn) => turn.calls).at(-1);
  return last && !last.done ? last : undefined;
}

/**
 * What every path held as far as the journal knows, after all its records: the first looks, the
 * changes rune and others made, and the undos. Absent paths are not in the map.
 */
export function knownState(records: readonly JournalRecord[]): Map<string, { r: string; held: Held }> {
  const known = new Map<string, { r: string; held: Held }>();
  const apply = (changes: readonly Change[]) => {
    for (const change of changes) {
      if (change.now === null) known.delete(change.p);
      else known.set(change.p, { r: change.r, held: change.now });
    }
  };
  for (const record of records) {
    if (record.t === 'base') {
      if (record.fresh) {
        const under = record.r === '/' ? '/' : `${record.r}/`;
        for (const path of [...known.keys()]) if (path.startsWith(under)) known.delete(path);
      }
      for (const [rel, held] of record.e)
        known.set(record.r === '/' ? `/${rel}` : `${record.r}/${rel}`, { r: record.r, held });
    } else if (record.t === 'seen' || record.t === 'change' || record.t === 'undo') apply(record.c);
  }
  return known;
}

/** One path to put back: `want` what it held before the turn, `expect` what rune's calls left. */
export interface Step {
  p: string;
  r: string;
  want: State;
  expect: State;
}

/** Going back to before `turn` (and undoing every live turn after it): one step per path. */
export function planUndo(history: History, turn: number): Step[] {
  const steps = new Map<string, Step>();
  for (const info of liveTurns(history)) {
    if (info.n < turn) continue;
    for (const call of info.calls) {
      for (const change of call.changes) {
        const step = steps.get(change.p);
        if (step) step.expect = change.now;
        else steps.set(change.p, { p: change.p, r: change.r, want: change.was, expect: change.now });
      }
    }
  }
  return [...steps.values()].filter((step) => !sameState(step.want, step.expect));
}

/** Every change of the live turns from `from` to `to`, one per path (first before, last after). */
export function netChanges(history: History, from = 1, to = Number.POSITIVE_INFINITY): Change[] {
  const byPath = new Map<string, Change>();
  for (const info of liveTurns(history)) {
    if (info.n < from || info.n > to) continue;
    for (const call of info.calls) {
      for (const change of call.changes) {
        const known = byPath.get(change.p);
        byPath.set(change.p, known ? { ...known, now: change.now } : { ...change });
      }
    }
  }
  return [...byPath.values()].filter((change) => !sameState(change.was, change.now));
}
