// Live events over Server-Sent Events: every event is checked against each recipient's rights at
// the moment it is sent (the principal is looked up again when roles, sessions or tokens change),
// durable events are kept for Last-Event-ID replay, and presence lives here with the connections.
import { type Auth, atLeast, type Principal, type Role } from './auth.ts';
import type { FileRow, NoteRow, Store } from './db.ts';

export interface HubEvent {
  name: string;
  noteId: number | null;
  fileId?: number | null;
  data: Record<string, unknown>;
  /** Only admins receive it (approvals). */
  adminsOnly?: boolean;
  /** Not stored, not replayed (tokens, presence, collaborative updates). */
  live?: boolean;
}

export interface Sink {
  write(chunk: string): void;
  end(): void;
}

export interface PresenceEntry {
  client_id: string;
  name: string;
  role: Role | 'anonymous';
  file_id: number | null;
  typing: boolean;
}

interface Connection {
  id: number;
  principal: Principal | null;
  epoch: number;
  noteId: number | null;
  clientId: string | null;
  sink: Sink;
  fileId: number | null;
  typingUntil: number;
  closed: boolean;
}

const REPLAY_KEEP = 1000;

export const TOOL_OUTPUT_HIDDEN = '(tool output is shown to signed-in users only)';

/**
 * What a guest or anonymous reader of a public note gets of an event. The agent runs with a user's
 * rights, so its tool calls and results can hold private files of the note, workspace files or
 * command output: those details stay with users and admins; the conversation itself stays public.
 */
export function forReader(role: Role | 'anonymous', name: string, data: Record<string, unknown>) {
  if (atLeast(role, 'user')) return data;
  if (name === 'chat.progress' && 'detail' in data) {
    const { detail: _hidden, ...rest } = data;
    return rest;
  }
  if (name === 'chat.message') {
    const message = data.message as { role?: string } | undefined;
    if (message?.role === 'tool') return { ...data, message: { ...message, content: TOOL_OUTPUT_HIDDEN } };
  }
  return data;
}

function frame(id: number | null, name: string, data: unknown): string {
  return `${id === null ? '' : `id: ${id}\n`}event: ${name}\ndata: ${JSON.stringify(data)}\n\n`;
}
const TYPING_MS = 5000;

function roleOf(p: Principal | null): Role | 'anonymous' {
  return p ? p.role : 'anonymous';
}

/** May this role see this note (and file)? The one rule every route and event applies. */
export function canSee(
  role: Role | 'anonymous',
  note: NoteRow | undefined,
  file?: FileRow | undefined,
): boolean {
  if (!note) return false;
  if (note.deleted_at) return atLeast(role, 'admin');
  if (file === undefined) return note.public === 1 || atLeast(role, 'user');
  if (file.deleted_at) return atLeast(role, 'user');
  if (atLeast(role, 'user')) return true;
  return note.public === 1 && file.public === 1;
}

export class EventHub {
  private readonly store: Store;
  private readonly auth: Auth;
  private readonly connections = new Map<number, Connection>();
  private nextId = 1;
  private inserted = 0;
  private readonly now: () => number;

  constructor(store: Store, auth: Auth, now: () => number = Date.now) {
    this.store = store;
    this.auth = auth;
    this.now = now;
  }

  get size(): number {
    return this.connections.size;
  }

  lastEventId(): number {
    const row = this.store.db.prepare('select max(id) as id from events').get() as { id: number | null };
    return row.id ?? 0;
  }

  private principalOf(conn: Connection): Principal | null {
    if (conn.epoch !== this.auth.epoch) {
      conn.epoch = this.auth.epoch;
      if (conn.principal) conn.principal = this.auth.refresh(conn.principal);
    }
    return conn.principal;
  }

  /** Opens a stream. Replays stored events after `lastEventId` that the caller may still see. */
  subscribe(opts: {
    principal: Principal | null;
    noteId: number | null;
    clientId: string | null;
    lastEventId: number | null;
    sink: Sink;
  }): () => void {
    const conn: Connection = {
      id: this.nextId++,
      principal: opts.principal,
      epoch: this.auth.epoch,
      noteId: opts.noteId,
      clientId: opts.clientId,
      sink: opts.sink,
      fileId: null,
      typingUntil: 0,
      closed: false,
    };
    this.write(conn, null, 'hello', {
      user: opts.principal
        ? { name: opts.principal.name, role: opts.principal.role, provider: opts.principal.provider }
        : null,
      role: roleOf(opts.principal),
      note_id: opts.noteId,
      last_event_id: this.lastEventId(),
    });
    if (opts.lastEventId !== null) {
      const rows = this.store.db
        .prepare(
          `select id, name, note_id, file_id, data from events where id > ? and
             (note_id is null or name like 'note.%' or note_id = ?) order by id`,
        )
        .all(opts.lastEventId, opts.noteId ?? -1) as Array<{
        id: number;
        name: string;
        note_id: number | null;
        file_id: number | null;
        data: string;
      }>;
      for (const row of rows) {
        const event: HubEvent = {
          name: row.name,
          noteId: row.note_id,
          fileId: row.file_id,
          data: JSON.parse(row.data) as Record<string, unknown>,
          adminsOnly: row.name.startsWith('approval.'),
        };
        if (this.allowed(conn, event, this.context(event)))
          this.write(conn, row.id, row.name, forReader(roleOf(this.principalOf(conn)), row.name, event.data));
      }
    }
    this.connections.set(conn.id, conn);
    if (conn.noteId !== null) this.sendPresence(conn.noteId);
    return () => this.drop(conn);
  }

  private drop(conn: Connection): void {
    if (conn.closed) return;
    conn.closed = true;
    this.connections.delete(conn.id);
    if (conn.noteId !== null) this.sendPresence(conn.noteId);
  }

  private write(conn: Connection, id: number | null, name: string, data: unknown): void {
    this.send(conn, frame(id, name, data));
  }

  private send(conn: Connection, text: string): void {
    if (conn.closed) return;
    try {
      conn.sink.write(text);
    } catch {
      this.drop(conn);
    }
  }

  private revoke(conn: Connection, noteId: number): void {
    this.write(conn, null, 'access.revoked', { note_id: noteId });
    this.drop(conn);
    try {
      conn.sink.end();
    } catch {
      // The stream may already be gone.
    }
  }

  private context(event: HubEvent): { note?: NoteRow; file?: FileRow } {
    const note = event.noteId === null ? undefined : this.store.noteById(event.noteId);
    const file = event.fileId ? this.store.fileById(event.fileId) : undefined;
    return { note, file };
  }

  private allowed(conn: Connection, event: HubEvent, ctx: { note?: NoteRow; file?: FileRow }): boolean {
    const role = roleOf(this.principalOf(conn));
    if (event.adminsOnly && role !== 'admin') return false;
    if (event.noteId === null) return true;
    const listEvent = event.name.startsWith('note.');
    if (!listEvent && conn.noteId !== event.noteId) return false;
    if (event.name === 'note.deleted') {
      return atLeast(role, 'user') || conn.noteId === event.noteId || ctx.note?.public === 1;
    }
    if (event.name === 'file.deleted' && ctx.file) {
      // Told to everyone who could see the file until now, so their view drops it.
      return canSee(role, ctx.note, { ...ctx.file, deleted_at: null });
    }
    if (event.fileId) return canSee(role, ctx.note, ctx.file);
    return canSee(role, ctx.note);
  }

  /** Checks every stream watching a note (or all) and closes those that lost access. */
  recheck(noteId?: number): void {
    for (const conn of [...this.connections.values()]) {
      if (conn.noteId === null || (noteId !== undefined && conn.noteId !== noteId)) continue;
      const note = this.store.noteById(conn.noteId);
      if (!canSee(roleOf(this.principalOf(conn)), note)) this.revoke(conn, conn.noteId);
    }
  }

  publish(event: HubEvent): number | null {
    let id: number | null = null;
    if (!event.live) {
      const info = this.store.db
        .prepare('insert into events(name, note_id, file_id, data, created_at) values (?, ?, ?, ?, ?)')
        .run(event.name, event.noteId, event.fileId ?? null, JSON.stringify(event.data), this.store.stamp());
      id = Number(info.lastInsertRowid);
      if (++this.inserted % 100 === 0) {
        this.store.db.prepare('delete from events where id <= ?').run(id - REPLAY_KEEP);
      }
    }
    // Inside a transaction, streams hear of the change only once it is committed.
    this.store.afterCommit(() => this.fanOut(event, id));
    return id;
  }

  private fanOut(event: HubEvent, id: number | null): void {
    const ctx = this.context(event);
    let text: string | undefined;
    let readerText: string | undefined;
    for (const conn of [...this.connections.values()]) {
      // A stream of a note its recipient can no longer see is closed, whatever the event.
      if (conn.noteId !== null && conn.noteId === event.noteId) {
        if (!canSee(roleOf(this.principalOf(conn)), ctx.note)) {
          this.revoke(conn, conn.noteId);
          continue;
        }
      }
      if (this.allowed(conn, event, ctx)) {
        // Serialised once per view for all recipients: with hundreds of streams this is most of the work.
        if (!atLeast(roleOf(conn.principal), 'user')) {
          readerText ??= frame(id, event.name, forReader('guest', event.name, event.data));
          this.send(conn, readerText);
          continue;
        }
        text ??= frame(id, event.name, event.data);
        this.send(conn, text);
      }
    }
  }

  // --- presence

  presence(noteId: number): PresenceEntry[] {
    const now = this.now();
    const out: PresenceEntry[] = [];
    for (const conn of this.connections.values()) {
      if (conn.noteId !== noteId || conn.closed) continue;
      const principal = conn.principal;
      out.push({
        client_id: conn.clientId ?? `c${conn.id}`,
        name: principal?.name ?? 'anonymous',
        role: roleOf(principal),
        file_id: conn.fileId,
        typing: conn.typingUntil > now,
      });
    }
    return out;
  }

  sendPresence(noteId: number): void {
    this.publish({
      name: 'presence',
      noteId,
      live: true,
      data: { note_id: noteId, present: this.presence(noteId) },
    });
  }

  /** Updates where a connection is and whether it types; false when no such stream is open. */
  setPresence(
    subject: string | null,
    noteId: number,
    clientId: string,
    fileId: number | null,
    typing: boolean,
  ): boolean {
    let found = false;
    const mine = (conn: Connection) =>
      conn.noteId === noteId && (conn.principal?.subject ?? null) === subject;
    if (![...this.connections.values()].some((conn) => mine(conn) && conn.clientId === clientId)) {
      // A stream opened without ?client_id= belongs to the newest unclaimed stream of the same person.
      const unclaimed = [...this.connections.values()]
        .filter((conn) => mine(conn) && conn.clientId === null)
        .at(-1);
      if (unclaimed) unclaimed.clientId = clientId;
    }
    for (const conn of this.connections.values()) {
      if (conn.noteId !== noteId || conn.clientId !== clientId) continue;
      if ((conn.principal?.subject ?? null) !== subject) continue;
      conn.fileId = fileId;
      conn.typingUntil = typing ? this.now() + TYPING_MS : 0;
      found = true;
    }
    if (found) {
      this.sendPresence(noteId);
      if (typing) {
        const timer = setTimeout(() => this.sendPresence(noteId), TYPING_MS + 50);
        timer.unref();
      }
    }
    return found;
  }

  /** Sends a comment line to every stream so proxies keep them open and dead ones are found. */
  ping(): void {
    for (const conn of [...this.connections.values()]) {
      try {
        conn.sink.write(': ping\n\n');
      } catch {
        this.drop(conn);
      }
    }
  }

  /** Ends every stream (shutdown). */
  closeAll(): void {
    for (const conn of [...this.connections.values()]) {
      conn.closed = true;
      this.connections.delete(conn.id);
      try {
        conn.sink.end();
      } catch {
        // Already gone.
      }
    }
  }
}
