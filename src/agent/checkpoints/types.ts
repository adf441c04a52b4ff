// What a checkpoint records (docs/adr/0035-checkpoints.md): for each path a call changed, what it
// held before and after — a file by the sha256 of its content (kept in the session's pack), a
// folder, a link by its text, a FIFO/socket/device by its kind — and the journal records that tie
// those changes to the calls and turns of a session.
import type { Kind } from '../../core/fd/index.ts';

/** Short kind letters, as the journal stores them. */
export type HeldKind = 'f' | 'd' | 'l' | 'p' | 's' | 'c' | 'b';

/** Why a file's content is not in the store. */
export type NotKept = 'large' | 'full' | 'unreadable';

/** What one path held at one moment; `null` where a state is expected means nothing was there. */
export interface Held {
  k: HeldKind;
  /** Permission bits (mode & 0o7777). */
  m: number;
  /** A file's size. */
  z?: number;
  /** A file's content: the sha256 of its bytes (hex), when the store keeps them. */
  h?: string;
  /** A file whose content is not kept, and why. */
  x?: NotKept;
  /** A link's text. */
  t?: string;
}

export type State = Held | null;

const KIND_LETTERS: Partial<Record<Kind, HeldKind>> = {
  file: 'f',
  dir: 'd',
  symlink: 'l',
  fifo: 'p',
  socket: 's',
  'char-device': 'c',
  'block-device': 'b',
};

export function heldKind(kind: Kind): HeldKind {
  return KIND_LETTERS[kind] ?? 's';
}

/** The same content, kind and permissions (a file's times and inode do not count). */
export function sameState(a: State, b: State): boolean {
  if (a === null || b === null) return a === b;
  if (a.k !== b.k || a.m !== b.m) return false;
  if (a.k === 'f') return a.h !== undefined && a.h === b.h && a.z === b.z;
  if (a.k === 'l') return a.t === b.t;
  return true;
}

/** How a change reads in a list: "new", "deleted", "modified", "mode", "link", … */
export function changeWord(was: State, now: State): string {
  if (was === null) return now?.k === 'd' ? 'new folder' : 'new';
  if (now === null) return was.k === 'd' ? 'deleted folder' : 'deleted';
  if (was.k !== now.k) return 'replaced';
  if (was.k === 'f' && (was.h !== now.h || was.z !== now.z)) return 'modified';
  if (was.k === 'l') return 'relinked';
  return 'mode';
}

/** One path a call changed. `p` is absolute; `r` the folder it is acted on through (a pinned root). */
export interface Change {
  p: string;
  r: string;
  was: State;
  now: State;
}

export type JournalRecord =
  | { t: 'session'; v: 1; id: string; cwd: string; at: string }
  /** A turn begins; `messages` is the conversation's length before it, `digest` that prefix's sha256. */
  | { t: 'turn'; n: number; at: string; prompt: string; messages: number; digest: string }
  /** A blob of the pack: `z` bytes at offset `o`. */
  | { t: 'blob'; h: string; o: number; z: number }
  /**
   * What a tracked folder held when it was first seen (one or more records, then `based`); `fresh`
   * on the first: a new look (a later process's) replaces what the journal knew below `r`.
   */
  | { t: 'base'; r: string; e: [string, Held][]; fresh?: true }
  | { t: 'based'; r: string }
  /** A change rune did not make, noticed before a call (someone else edited a file meanwhile). */
  | { t: 'seen'; c: Change[] }
  /** A call that can write begins: what it could change. */
  | { t: 'call'; n: number; id: string; tool: string; roots: string[]; files: string[] }
  | { t: 'change'; id: string; c: Change[] }
  /** The call ended; `partial`: what could not be kept. */
  | { t: 'done'; id: string; partial?: string[] }
  /** Turns `n` and later were undone; `c` what the restore wrote. */
  | { t: 'undo'; n: number; at: string; c: Change[] };
