// How checkpoints read to a person: the turns of a session (for /rewind and `rune undo`), and the
// changes of a session or a turn as coloured unified diffs per file (/changes, `rune diff`). Content a
// command wrote is shown with its control characters made visible, never sent to the terminal raw.
import { relative } from 'node:path';
import type { TurnInfo } from '../agent/checkpoints/history.ts';
import type { CheckpointStore } from '../agent/checkpoints/store.ts';
import { type Change, changeWord, type Held } from '../agent/checkpoints/types.ts';
import { looksBinary } from '../tools/read-file.ts';
import { unifiedDiff } from '../tools/unified-diff.ts';
import { paint, type Style } from './format.ts';

/** Diff text shown per file before it is cut. */
const MAX_DIFF_BYTES = 64 * 1024;

/** Control characters (but tab) as visible escapes: file content never drives the terminal. */
export function visible(text: string): string {
  return text.replace(
    /[\x00-\x08\x0b-\x1f\x7f-\x9f]/g,
    (ch) => `\\x${ch.charCodeAt(0).toString(16).padStart(2, '0')}`,
  );
}

/** A path as the person knows it: relative to the working folder when inside it. */
export function shownPath(path: string, cwd: string): string {
  const rel = relative(cwd, path);
  return rel && !rel.startsWith('..') ? rel : path;
}

const LETTER: Record<string, string> = {
  new: 'A',
  'new folder': 'A',
  deleted: 'D',
  'deleted folder': 'D',
  modified: 'M',
  mode: 'M',
  relinked: 'M',
  replaced: 'R',
};

/** One line per change: `M src/a.ts`. */
export function changeLines(changes: readonly Change[], cwd: string, style: Style): string[] {
  return changes.map((change) => {
    const word = changeWord(change.was, change.now);
    const letter = LETTER[word] ?? 'M';
    const color = letter === 'A' ? 'green' : letter === 'D' ? 'red' : 'yellow';
    const suffix = change.now?.k === 'd' || (change.now === null && change.was?.k === 'd') ? '/' : '';
    return `${paint(style, color, letter)} ${visible(shownPath(change.p, cwd))}${suffix}${word === 'mode' ? paint(style, 'dim', ` (mode ${modeText(change.was)} → ${modeText(change.now)})`) : ''}`;
  });
}

function modeText(held: Held | null): string {
  return held ? held.m.toString(8).padStart(3, '0') : '—';
}

function contentOf(store: CheckpointStore, held: Held | null): Buffer | string {
  if (held === null || held.k !== 'f') return Buffer.alloc(0);
  if (!held.h)
    return `(content not kept: ${held.x === 'large' ? 'too large' : held.x === 'full' ? 'the store was full' : 'unreadable'})`;
  try {
    return store.readBlob(held.h);
  } catch (error) {
    return `(${(error as Error).message})`;
  }
}

function describeHeld(held: Held | null): string {
  if (held === null) return 'nothing';
  switch (held.k) {
    case 'f':
      return `a file (${held.z ?? 0} bytes)`;
    case 'd':
      return 'a folder';
    case 'l':
      return `a link to ${held.t ?? ''}`;
    case 'p':
      return 'a FIFO';
    default:
      return 'a special file';
  }
}

/** The unified diff of one change, coloured: its header line and body. */
export function changeDiff(store: CheckpointStore, change: Change, cwd: string, style: Style): string {
  const label = visible(shownPath(change.p, cwd));
  const word = changeWord(change.was, change.now);
  const head = paint(style, 'bold', `${word === 'mode' ? 'mode changed' : word}: ${label}`);
  const fileLike = (held: Held | null) => held === null || held.k === 'f';
  if (!fileLike(change.was) || !fileLike(change.now) || (change.was === null && change.now === null))
    return `${head}\n  ${describeHeld(change.was)} → ${describeHeld(change.now)}\n`;
  const before = contentOf(store, change.was);
  const after = contentOf(store, change.now);
  if (typeof before === 'string' || typeof after === 'string')
    return `${head}\n  ${typeof before === 'string' ? before : typeof after === 'string' ? after : ''}\n`;
  if (looksBinary(before.subarray(0, 8000)) || looksBinary(after.subarray(0, 8000)))
    return `${head}\n  binary file: ${before.length} → ${after.length} bytes\n`;
  const modeNote =
    change.was && change.now && change.was.m !== change.now.m
      ? `\n  mode ${modeText(change.was)} → ${modeText(change.now)}`
      : '';
  if (before.equals(after)) return `${head}${modeNote}\n`;
  const diff = unifiedDiff(label, before.toString('utf8'), after.toString('utf8'), MAX_DIFF_BYTES);
  const body = diff.text
    .split('\n')
    .map((line) => colourLine(visible(line), style))
    .join('\n');
  return `${head}${modeNote}\n${body}\n`;
}

function colourLine(line: string, style: Style): string {
  if (line.startsWith('+++') || line.startsWith('---')) return paint(style, 'dim', line);
  if (line.startsWith('+')) return paint(style, 'green', line);
  if (line.startsWith('-')) return paint(style, 'red', line);
  if (line.startsWith('@@')) return paint(style, 'cyan', line);
  return line;
}

/** A file removed at one path and the same content new at another: a rename, shown as one. */
export function pairRenames(changes: readonly Change[]): { renames: [Change, Change][]; rest: Change[] } {
  const gone = new Map<string, Change>();
  for (const change of changes)
    if (change.now === null && change.was?.k === 'f' && change.was.h) gone.set(change.was.h, change);
  const renames: [Change, Change][] = [];
  const paired = new Set<Change>();
  for (const change of changes) {
    if (change.was !== null || change.now?.k !== 'f' || !change.now.h) continue;
    const from = gone.get(change.now.h);
    if (!from || paired.has(from)) continue;
    paired.add(from).add(change);
    renames.push([from, change]);
  }
  return { renames, rest: changes.filter((change) => !paired.has(change)) };
}

/** Every change as a diff, file after file; a rename as one line. */
export function changesDiff(
  store: CheckpointStore,
  changes: readonly Change[],
  cwd: string,
  style: Style,
): string {
  if (changes.length === 0) return 'no changes\n';
  const { renames, rest } = pairRenames(changes);
  const moved = renames.map(
    ([from, to]) =>
      `${paint(style, 'bold', `renamed: ${visible(shownPath(from.p, cwd))} → ${visible(shownPath(to.p, cwd))}`)}\n`,
  );
  return [...moved, ...rest.map((change) => changeDiff(store, change, cwd, style))].join('\n');
}

/** Files a turn's calls changed, one per path. */
export function turnFiles(turn: TurnInfo): Set<string> {
  return new Set(turn.calls.flatMap((call) => call.changes.map((change) => change.p)));
}

/** One line per turn: number, time, files changed, prompt. */
export function turnLines(turns: readonly TurnInfo[], style: Style): string[] {
  return turns.map((turn) => {
    const files = turnFiles(turn).size;
    const unfinished = turn.calls.some((call) => !call.done)
      ? paint(style, 'yellow', ' (stopped during a call)')
      : '';
    return `  ${String(turn.n).padStart(3)}  ${turn.at.slice(11, 16)}  ${String(files).padStart(3)} file${files === 1 ? ' ' : 's'}  ${visible(turn.prompt || '(no prompt)')}${unfinished}`;
  });
}
