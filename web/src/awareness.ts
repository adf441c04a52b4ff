// Remote cursors over the note's presence, with no second channel: the editor's binding
// (y-codemirror.next) talks to an "awareness" object; this one takes the other editors' cursors
// from presence entries (their `state.cursor`) and hands the local cursor to a callback that posts
// it as this tab's presence state. Names come from the server (who is logged in), colours from the
// names, so nobody picks either; entries of people who cannot edit draw no cursor.
import * as Y from 'yjs';
import { fromBase64, type Presence, toBase64 } from './api.ts';

/** Distinct hues that read as text on white and on the dark theme, white text on each. */
const COLOURS = [
  '#d9480f',
  '#2b8a3e',
  '#1971c2',
  '#9c36b5',
  '#c92a2a',
  '#0c8599',
  '#c2255c',
  '#6741d9',
  '#e67700',
  '#5c940d',
  '#3b5bdb',
  '#862e9c',
];

/** A person's colour: the same in every browser, for cursors and presence chips alike. */
export function colourFor(name: string): string {
  let hash = 0x811c9dc5;
  for (let i = 0; i < name.length; i++) hash = Math.imul(hash ^ name.charCodeAt(i), 0x01000193);
  return COLOURS[(hash >>> 0) % COLOURS.length]!;
}

export interface Cursor {
  anchor: string;
  head: string;
}

type State = Record<string, unknown>;
type Change = { added: number[]; updated: number[]; removed: number[] };
type Listener = (change: Change, origin: unknown) => void;

/**
 * The part of y-protocols' Awareness that y-codemirror.next uses. Remote states are keyed by small
 * negative numbers (Yjs client ids are never negative), one per other editor tab.
 */
export class PresenceAwareness {
  readonly doc: Y.Doc;
  private readonly states = new Map<number, State>();
  private readonly keys = new Map<string, { id: number; signature: string }>();
  private readonly listeners = new Set<Listener>();
  private nextId = -1;

  constructor(
    doc: Y.Doc,
    name: string,
    private readonly onLocalCursor: (cursor: Cursor | null) => void,
  ) {
    this.doc = doc;
    const colour = colourFor(name);
    this.states.set(doc.clientID, { user: { name, color: colour, colorLight: `${colour}33` } });
  }

  get clientID(): number {
    return this.doc.clientID;
  }

  getLocalState(): State | null {
    return this.states.get(this.doc.clientID) ?? null;
  }

  setLocalStateField(field: string, value: unknown): void {
    const state = { ...this.getLocalState(), [field]: value };
    this.states.set(this.doc.clientID, state);
    if (field === 'cursor') this.onLocalCursor(encodeCursor(value));
  }

  getStates(): Map<number, State> {
    return this.states;
  }

  on(_event: 'change', listener: Listener): void {
    this.listeners.add(listener);
  }

  off(_event: 'change', listener: Listener): void {
    this.listeners.delete(listener);
  }

  /**
   * The cursors in `fileId` of everyone else (`ownClientId`: this tab's id as the server stamped
   * it), from the presence list; unchanged ones stay put.
   */
  setRemote(present: Presence[], fileId: number, ownClientId: string | null): void {
    const change: Change = { added: [], updated: [], removed: [] };
    const seen = new Set<string>();
    for (const person of present) {
      if (person.client_id === ownClientId || person.file_id !== fileId) continue;
      if (person.role !== 'user' && person.role !== 'admin') continue;
      const cursor = asCursor(person.state?.['cursor']);
      const decoded = cursor && decodeCursor(cursor);
      if (!cursor || !decoded) continue;
      seen.add(person.client_id);
      const signature = `${person.name}\n${cursor.anchor}\n${cursor.head}`;
      let entry = this.keys.get(person.client_id);
      if (entry?.signature === signature) continue;
      if (!entry) {
        entry = { id: this.nextId--, signature };
        this.keys.set(person.client_id, entry);
        change.added.push(entry.id);
      } else {
        entry.signature = signature;
        change.updated.push(entry.id);
      }
      const colour = colourFor(person.name);
      this.states.set(entry.id, {
        user: { name: person.name, color: colour, colorLight: `${colour}33` },
        cursor: decoded,
      });
    }
    for (const [clientId, entry] of this.keys) {
      if (seen.has(clientId)) continue;
      this.keys.delete(clientId);
      this.states.delete(entry.id);
      change.removed.push(entry.id);
    }
    if (change.added.length + change.updated.length + change.removed.length === 0) return;
    for (const listener of this.listeners) listener(change, 'remote');
  }

  destroy(): void {
    this.listeners.clear();
    this.states.clear();
    this.keys.clear();
  }
}

function encodeCursor(value: unknown): Cursor | null {
  const cursor = value as { anchor?: Y.RelativePosition; head?: Y.RelativePosition } | null;
  if (!cursor?.anchor || !cursor.head) return null;
  return {
    anchor: toBase64(Y.encodeRelativePosition(cursor.anchor)),
    head: toBase64(Y.encodeRelativePosition(cursor.head)),
  };
}

/** A cursor as another browser sent it, if it has the shape this one sends. */
function asCursor(value: unknown): Cursor | null {
  if (typeof value !== 'object' || value === null) return null;
  const { anchor, head } = value as Record<string, unknown>;
  const position = (each: unknown) => typeof each === 'string' && each.length > 0 && each.length <= 128;
  return position(anchor) && position(head) ? { anchor: anchor as string, head: head as string } : null;
}

/** Positions from another browser, decoded defensively: whatever does not decode is dropped. */
function decodeCursor(cursor: Cursor): { anchor: Y.RelativePosition; head: Y.RelativePosition } | null {
  try {
    return {
      anchor: Y.decodeRelativePosition(fromBase64(cursor.anchor)),
      head: Y.decodeRelativePosition(fromBase64(cursor.head)),
    };
  } catch {
    return null;
  }
}
