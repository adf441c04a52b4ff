// Who is in a note, told to its watchers incrementally: a stream that opens gets the whole list
// once, after that only changes travel, gathered per note and sent at most every `intervalMs`.
// Sending the whole list to every watcher on every connect made the cost of n streams n³ (700
// streams: 10 GB in 26 s). Entries are changed only through their own stream's client id, which
// the server stamps (see stampClientId), so nobody edits or impersonates another's entry.
import { createHmac, randomBytes } from 'node:crypto';
import type { Role } from './roles.ts';

export interface PresenceEntry {
  /** Server-stamped: the same for one person's tab on every request, never another's. */
  client_id: string;
  name: string;
  role: Role | 'anonymous';
  file_id: number | null;
  typing: boolean;
  /** Whatever the client attaches (cursor, selection…): a JSON object of bounded size, or null. */
  state: Record<string, unknown> | null;
}

export interface PresenceChange {
  note_id: number;
  /** Entries that joined or changed since the last change event, in full. */
  set: PresenceEntry[];
  /** Client ids that left. */
  gone: string[];
}

const STAMP_KEY = randomBytes(32);
/** Stamps made so far, by subject and chosen id. */
const stamps = new Map<string, string>();
const MAX_STAMPS = 4096;

/**
 * The client id a stream or an update is known by: a keyed hash of who asks and the id the tab
 * chose. Another person choosing the same id gets another stamp, and the stamp does not reveal the
 * chosen id, so seeing someone in the presence list does not let you act as their tab.
 */
export function stampClientId(subject: string | null, chosen: string): string {
  // Every collaborative update and presence call stamps its id: the same few pairs again and again
  // (an HMAC each, some 40 µs). Bounded: cleared when full.
  // The subject's length first: a NUL inside a subject or a chosen id cannot make two pairs one.
  const who = subject ?? 'anonymous';
  const key = `${who.length}:${who}\0${chosen}`;
  let stamp = stamps.get(key);
  if (stamp === undefined) {
    // Hashed as UTF-16: as UTF-8 every lone surrogate becomes U+FFFD, which made two keys one stamp.
    stamp = `c_${createHmac('sha256', STAMP_KEY).update(key, 'utf16le').digest('base64url').slice(0, 16)}`;
    if (stamps.size >= MAX_STAMPS) stamps.clear();
    stamps.set(key, stamp);
  }
  return stamp;
}

const TYPING_MS = 5000;

interface NoteState {
  entries: Map<string, PresenceEntry & { typingUntil: number; typingTimer: NodeJS.Timeout | null }>;
  set: Set<string>;
  gone: Set<string>;
  timer: NodeJS.Timeout | null;
  /** The list as JSON at the last flush: what a new stream starts from (changes since follow). */
  snapshot: string;
  /** The same for guests and anonymous readers (see PresenceReaderView). */
  readerSnapshot: string;
}

/**
 * What guests and anonymous readers see of an entry. They cannot edit, so others' cursors are of
 * no use to them, and a cursor or a file id may point into a file they may not see: the entry
 * without its state, and with its file only when they may see that file.
 */
export type PresenceReaderView = (noteId: number, entry: PresenceEntry) => PresenceEntry;

export class Presence {
  private readonly notes = new Map<number, NoteState>();

  constructor(
    private readonly send: (noteId: number, change: PresenceChange) => void,
    private readonly intervalMs: number,
    private readonly now: () => number = Date.now,
    private readonly forReaders: PresenceReaderView = (_noteId, entry) => ({ ...entry, state: null }),
  ) {}

  private note(noteId: number): NoteState {
    let state = this.notes.get(noteId);
    if (!state) {
      state = {
        entries: new Map(),
        set: new Set(),
        gone: new Set(),
        timer: null,
        snapshot: '[]',
        readerSnapshot: '[]',
      };
      this.notes.set(noteId, state);
    }
    return state;
  }

  /** The whole list as it is now. */
  list(noteId: number): PresenceEntry[] {
    return [...(this.notes.get(noteId)?.entries.values() ?? [])].map(plain);
  }

  /**
   * The list as JSON as of the last change event, which a new stream receives; what changed since
   * reaches it with the next change event like everyone else. Built once per change event, not
   * once per stream: n streams opening cost n, not n².
   */
  snapshot(noteId: number, reader = false): string {
    const state = this.notes.get(noteId);
    return (reader ? state?.readerSnapshot : state?.snapshot) ?? '[]';
  }

  /** A change as guests and anonymous readers see it. */
  forReader(change: PresenceChange): PresenceChange {
    return { ...change, set: change.set.map((entry) => this.forReaders(change.note_id, entry)) };
  }

  has(noteId: number, clientId: string): boolean {
    return this.notes.get(noteId)?.entries.has(clientId) ?? false;
  }

  join(noteId: number, entry: Omit<PresenceEntry, 'typing' | 'state' | 'file_id'>): void {
    const state = this.note(noteId);
    state.entries.set(entry.client_id, {
      ...entry,
      file_id: null,
      typing: false,
      state: null,
      typingUntil: 0,
      typingTimer: null,
    });
    state.gone.delete(entry.client_id);
    state.set.add(entry.client_id);
    this.schedule(noteId, state);
  }

  leave(noteId: number, clientId: string): void {
    const state = this.notes.get(noteId);
    const entry = state?.entries.get(clientId);
    if (!state || !entry) return;
    if (entry.typingTimer) clearTimeout(entry.typingTimer);
    state.entries.delete(clientId);
    state.set.delete(clientId);
    state.gone.add(clientId);
    this.schedule(noteId, state);
  }

  /** Changes an entry; false when the note has no entry of that client id. */
  update(
    noteId: number,
    clientId: string,
    fields: { file_id: number | null; typing: boolean; state?: Record<string, unknown> | null },
  ): boolean {
    const state = this.notes.get(noteId);
    const entry = state?.entries.get(clientId);
    if (!state || !entry) return false;
    entry.file_id = fields.file_id;
    if (fields.state !== undefined) entry.state = fields.state;
    if (entry.typingTimer) clearTimeout(entry.typingTimer);
    entry.typingTimer = null;
    entry.typing = fields.typing;
    entry.typingUntil = fields.typing ? this.now() + TYPING_MS : 0;
    if (fields.typing) {
      entry.typingTimer = setTimeout(() => {
        entry.typingTimer = null;
        if (!entry.typing || state.entries.get(clientId) !== entry) return;
        entry.typing = false;
        state.set.add(clientId);
        this.schedule(noteId, state);
      }, TYPING_MS);
      entry.typingTimer.unref();
    }
    state.set.add(clientId);
    this.schedule(noteId, state);
    return true;
  }

  private schedule(noteId: number, state: NoteState): void {
    if (state.timer) return;
    state.timer = setTimeout(() => this.flush(noteId), this.intervalMs);
    state.timer.unref();
  }

  /** Sends the gathered changes of a note now. */
  flush(noteId: number): void {
    const state = this.notes.get(noteId);
    if (!state) return;
    if (state.timer) clearTimeout(state.timer);
    state.timer = null;
    const set = [...state.set].flatMap((id) => {
      const entry = state.entries.get(id);
      return entry ? [plain(entry)] : [];
    });
    const gone = [...state.gone];
    state.set.clear();
    state.gone.clear();
    const entries = [...state.entries.values()].map(plain);
    state.snapshot = JSON.stringify(entries);
    state.readerSnapshot = JSON.stringify(entries.map((entry) => this.forReaders(noteId, entry)));
    if (state.entries.size === 0) this.notes.delete(noteId);
    if (set.length > 0 || gone.length > 0) this.send(noteId, { note_id: noteId, set, gone });
  }

  /** Stops every timer (shutdown). */
  close(): void {
    for (const state of this.notes.values()) {
      if (state.timer) clearTimeout(state.timer);
      for (const entry of state.entries.values()) if (entry.typingTimer) clearTimeout(entry.typingTimer);
    }
    this.notes.clear();
  }
}

function plain(entry: PresenceEntry & { typingUntil?: number; typingTimer?: unknown }): PresenceEntry {
  return {
    client_id: entry.client_id,
    name: entry.name,
    role: entry.role,
    file_id: entry.file_id,
    typing: entry.typing,
    state: entry.state,
  };
}
