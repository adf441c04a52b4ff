// Live events over Server-Sent Events: every event is checked against each recipient's rights at
// the moment it is sent (the principal is looked up again when roles, sessions or tokens change),
// durable events are kept for Last-Event-ID replay, and presence lives with the connections. How
// many streams may be open (in all, per client address, per note) is bounded.
import { randomBytes } from 'node:crypto';
import type { Auth } from './auth.ts';
import type { FileRow, NoteRow, Store } from './db.ts';
import type { Limits } from './limits.ts';
import { Presence, type PresenceChange, stampClientId } from './presence.ts';
import { atLeast, type Principal, type Role } from './roles.ts';
import { TurnWrites } from './turn-writes.ts';

export interface HubEvent {
  name: string;
  noteId: number | null;
  fileId?: number | null;
  data: Record<string, unknown>;
  /** Only admins receive it (approvals). */
  adminsOnly?: boolean;
  /** Not stored, not replayed (tokens, presence, collaborative updates). */
  live?: boolean;
  /** What guests and anonymous readers get instead of `data` (else forReader's view of it). */
  readerData?: Record<string, unknown>;
}

export interface Sink {
  write(chunk: string): void;
  /**
   * Frames already encoded, the same buffer for every recipient of the same events: all a turn's
   * events for this stream in one call. Without it, each frame is written as text.
   */
  writeBytes?(chunk: Buffer): void;
  end(): void;
}

export type { PresenceEntry } from './presence.ts';

interface Connection {
  id: number;
  principal: Principal | null;
  epoch: number;
  noteId: number | null;
  /** The stamped client id (see stampClientId); claimed streams get theirs on the first presence. */
  clientId: string;
  claimed: boolean;
  address: string;
  /** Which stream limits it counts against, fixed at opening (a session may end meanwhile). */
  kind: Kind;
  sink: Sink;
  closed: boolean;
  /**
   * The one file whose live collaborative updates this stream wants (null: every file's). A tab
   * edits one file at a time and drops the others' updates; with hundreds of watchers and a few
   * typists, sending them anyway was most of the server's work.
   */
  follows: number | null;
}

export type StreamLimits = Pick<
  Limits,
  | 'maxStreams'
  | 'maxStreamsPerClient'
  | 'maxStreamsPerNote'
  | 'maxAnonymousStreams'
  | 'maxAnonymousStreamsPerNote'
  | 'presenceIntervalMs'
>;

const DEFAULT_STREAM_LIMITS: StreamLimits = {
  maxStreams: 2000,
  maxStreamsPerClient: 16,
  maxStreamsPerNote: 256,
  maxAnonymousStreams: 1000,
  maxAnonymousStreamsPerNote: 128,
  presenceIntervalMs: 250,
};

/** Streams counted apart: anonymous readers never take the places of signed-in people. */
type Kind = 'signed-in' | 'anonymous';
const kindOf = (principal: Principal | null): Kind => (principal ? 'signed-in' : 'anonymous');

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

interface Context {
  note?: NoteRow;
  file?: FileRow;
}

/** An event committed this turn, with the streams it may concern as they were then. */
interface Queued {
  event: HubEvent;
  id: number | null;
  ctx: Context;
  recipients: Connection[];
}

/**
 * May a recipient with this role, watching `watching` (a note id or null for the note list),
 * receive the event now?
 */
function visible(role: Role | 'anonymous', watching: number | null, event: HubEvent, ctx: Context): boolean {
  if (event.adminsOnly && role !== 'admin') return false;
  if (event.noteId === null) return true;
  const listEvent = event.name.startsWith('note.');
  if (!listEvent && watching !== event.noteId) return false;
  if (event.name === 'note.deleted') {
    return atLeast(role, 'user') || watching === event.noteId || ctx.note?.public === 1;
  }
  if (event.fileId) {
    // A file that is gone for good (purged) is nobody's business but the note's members'.
    if (!ctx.file) return atLeast(role, 'user') && canSee(role, ctx.note);
    if (event.name === 'file.deleted') {
      // Told to everyone who could see the file until now, so their view drops it.
      return canSee(role, ctx.note, { ...ctx.file, deleted_at: null });
    }
    return canSee(role, ctx.note, ctx.file);
  }
  return canSee(role, ctx.note);
}

/** Why a new stream is refused (429), or null when it may open. */
export type Admission = string | null;

export class EventHub {
  private readonly store: Store;
  private readonly auth: Auth;
  private readonly connections = new Map<number, Connection>();
  /** Streams by the note they watch (null: the note list). */
  private readonly byNote = new Map<number | null, Set<Connection>>();
  private readonly byAddress = new Map<string, number>();
  /** Open streams by kind, in all and per note (key `${kind} ${noteId}`). */
  private readonly counts = new Map<string, number>();
  private readonly presence: Presence;
  private readonly limits: StreamLimits;
  private nextId = 1;
  private inserted = 0;
  /** Events committed this turn, sent when it ends. */
  private turn: Queued[] = [];
  /** The newest stored event id, kept here so a stream opening costs no query. */
  private lastId: number | null = null;
  /** Unclaimed streams get ids from this process-wide secret and their number, no hash needed. */
  private readonly nonce = randomBytes(6).toString('base64url');

  constructor(store: Store, auth: Auth, now: () => number = Date.now, limits: Partial<StreamLimits> = {}) {
    this.store = store;
    this.auth = auth;
    this.limits = { ...DEFAULT_STREAM_LIMITS, ...limits };
    this.presence = new Presence(
      (noteId, change) => this.sendPresence(noteId, change),
      this.limits.presenceIntervalMs,
      now,
      (noteId, entry) => {
        let fileId = entry.file_id;
        if (fileId !== null) {
          const file = this.store.fileById(fileId);
          const note = this.store.noteById(noteId);
          if (!file || file.note_id !== noteId || !canSee('guest', note, file)) fileId = null;
        }
        return { ...entry, file_id: fileId, state: null };
      },
    );
  }

  get size(): number {
    return this.connections.size;
  }

  lastEventId(): number {
    if (this.lastId === null) {
      const row = this.store.db.prepare('select max(id) as id from events').get() as { id: number | null };
      this.lastId = row.id ?? 0;
    }
    return this.lastId;
  }

  private principalOf(conn: Connection): Principal | null {
    if (conn.epoch !== this.auth.epoch) {
      conn.epoch = this.auth.epoch;
      if (conn.principal) conn.principal = this.auth.refresh(conn.principal);
    }
    return conn.principal;
  }

  /**
   * Whether another stream may open now for this client (a person, or an address) and note; the
   * reason if not. Signed-in people and anonymous readers have limits of their own, in all and per
   * note, so strangers can fill only the places meant for strangers.
   */
  admit(address: string, noteId: number | null, principal: Principal | null = null): Admission {
    const kind = kindOf(principal);
    const anonymous = kind === 'anonymous';
    const total = anonymous ? this.limits.maxAnonymousStreams : this.limits.maxStreams;
    const perNote = anonymous ? this.limits.maxAnonymousStreamsPerNote : this.limits.maxStreamsPerNote;
    const who = anonymous ? 'anonymous readers' : 'signed-in people';
    if ((this.counts.get(kind) ?? 0) >= total) {
      return `the server holds its limit of ${total} event streams of ${who}; try again later`;
    }
    if ((this.byAddress.get(address) ?? 0) >= this.limits.maxStreamsPerClient) {
      return `this client already holds ${this.limits.maxStreamsPerClient} event streams; close some (one per tab is enough)`;
    }
    if (noteId !== null && (this.counts.get(`${kind} ${noteId}`) ?? 0) >= perNote) {
      return `this note already has ${perNote} watchers among ${who}; try again later`;
    }
    return null;
  }

  private count(key: string, by: number): void {
    const n = (this.counts.get(key) ?? 0) + by;
    if (n <= 0) this.counts.delete(key);
    else this.counts.set(key, n);
  }

  /**
   * Opens a stream. Replays stored events after `lastEventId` that the caller may still see and
   * could see when they happened. A note stream joins the note's presence under its stamped
   * client id, which the `hello` event tells the client.
   */
  subscribe(opts: {
    principal: Principal | null;
    noteId: number | null;
    clientId: string | null;
    lastEventId: number | null;
    sink: Sink;
    address?: string;
  }): () => void {
    const id = this.nextId++;
    const subject = opts.principal?.subject ?? null;
    const conn: Connection = {
      id,
      principal: opts.principal,
      epoch: this.auth.epoch,
      noteId: opts.noteId,
      clientId:
        opts.clientId === null ? `c_${this.nonce}${id.toString(36)}` : stampClientId(subject, opts.clientId),
      claimed: opts.clientId !== null,
      address: opts.address ?? 'local',
      kind: kindOf(opts.principal),
      sink: opts.sink,
      closed: false,
      follows: null,
    };
    if (conn.noteId !== null && conn.claimed) {
      // The same tab again (a reconnect racing the old stream's close): one stream per client id.
      for (const other of this.byNote.get(conn.noteId) ?? []) {
        if (other.clientId === conn.clientId) this.end(other);
      }
    }
    this.write(conn, null, 'hello', {
      user: opts.principal
        ? { name: opts.principal.name, role: opts.principal.role, provider: opts.principal.provider }
        : null,
      role: roleOf(opts.principal),
      note_id: opts.noteId,
      client_id: conn.noteId === null ? null : conn.clientId,
      last_event_id: this.lastEventId(),
    });
    if (opts.lastEventId !== null) this.replay(conn, opts.lastEventId);
    this.connections.set(conn.id, conn);
    this.index(conn, true);
    if (conn.noteId !== null) {
      const reader = !atLeast(roleOf(conn.principal), 'user');
      this.send(
        conn,
        `event: presence\ndata: {"note_id":${conn.noteId},"present":${this.presence.snapshot(conn.noteId, reader)}}\n\n`,
      );
      this.join(conn);
    }
    return () => this.drop(conn);
  }

  private replay(conn: Connection, after: number): void {
    const rows = this.store.db
      .prepare(
        `select id, name, note_id, file_id, data, readers from events where id > ? and
           (note_id is null or name like 'note.%' or note_id = ?) order by id`,
      )
      .all(after, conn.noteId ?? -1) as Array<{
      id: number;
      name: string;
      note_id: number | null;
      file_id: number | null;
      data: string;
      readers: number;
    }>;
    for (const row of rows) {
      const role = roleOf(this.principalOf(conn));
      // Readers get only what readers could see at the time: a file private then (or a note since
      // purged) stays untold even if its event would pass today's check.
      if (!atLeast(role, 'user') && row.readers !== 1) continue;
      const event: HubEvent = {
        name: row.name,
        noteId: row.note_id,
        fileId: row.file_id,
        data: JSON.parse(row.data) as Record<string, unknown>,
        adminsOnly: row.name.startsWith('approval.'),
      };
      if (visible(role, conn.noteId, event, this.context(event)))
        this.write(conn, row.id, row.name, forReader(role, row.name, event.data));
    }
  }

  private index(conn: Connection, add: boolean): void {
    let set = this.byNote.get(conn.noteId);
    const count = this.byAddress.get(conn.address) ?? 0;
    this.count(conn.kind, add ? 1 : -1);
    if (conn.noteId !== null) this.count(`${conn.kind} ${conn.noteId}`, add ? 1 : -1);
    if (add) {
      if (!set) {
        set = new Set();
        this.byNote.set(conn.noteId, set);
      }
      set.add(conn);
      this.byAddress.set(conn.address, count + 1);
      return;
    }
    set?.delete(conn);
    if (set?.size === 0) this.byNote.delete(conn.noteId);
    if (count <= 1) this.byAddress.delete(conn.address);
    else this.byAddress.set(conn.address, count - 1);
  }

  private join(conn: Connection): void {
    const principal = conn.principal;
    this.presence.join(conn.noteId!, {
      client_id: conn.clientId,
      name: principal?.name ?? 'anonymous',
      role: roleOf(principal),
    });
  }

  private drop(conn: Connection): void {
    if (conn.closed) return;
    conn.closed = true;
    this.connections.delete(conn.id);
    this.index(conn, false);
    if (conn.noteId !== null) this.presence.leave(conn.noteId, conn.clientId);
  }

  /** Drops a stream and ends its response. */
  private end(conn: Connection): void {
    this.drop(conn);
    try {
      conn.sink.end();
    } catch {
      // The stream may already be gone.
    }
  }

  private write(conn: Connection, id: number | null, name: string, data: unknown): void {
    this.send(conn, frame(id, name, data));
  }

  private send(conn: Connection, text: string, bytes?: Buffer): void {
    if (conn.closed) return;
    try {
      if (bytes && conn.sink.writeBytes) conn.sink.writeBytes(bytes);
      else conn.sink.write(text);
    } catch {
      this.drop(conn);
    }
  }

  private revoke(conn: Connection, noteId: number): void {
    this.write(conn, null, 'access.revoked', { note_id: noteId });
    this.end(conn);
  }

  private context(event: HubEvent): Context {
    const note = event.noteId === null ? undefined : this.store.noteById(event.noteId);
    const file = event.fileId ? this.store.fileById(event.fileId) : undefined;
    return { note, file };
  }

  /**
   * Checks every stream watching a note (or all) and closes those that lost access, and every
   * stream whose session or token ended (logout, revocation, an account removed from the config).
   */
  recheck(noteId?: number): void {
    for (const conn of [...this.connections.values()]) {
      if (noteId !== undefined && conn.noteId !== noteId) continue;
      const signedIn = conn.principal !== null;
      const principal = this.principalOf(conn);
      if (signedIn && !principal) {
        if (conn.noteId === null) this.end(conn);
        else this.revoke(conn, conn.noteId);
        continue;
      }
      if (conn.noteId === null) continue;
      if (!canSee(roleOf(principal), this.store.noteById(conn.noteId))) this.revoke(conn, conn.noteId);
    }
  }

  /** Streams an event may concern: the note's watchers, and everyone for note list events. */
  private recipients(event: HubEvent): Connection[] {
    if (event.noteId === null || event.name.startsWith('note.')) return [...this.connections.values()];
    return [...(this.byNote.get(event.noteId) ?? [])];
  }

  publish(event: HubEvent): number | null {
    const ctx = this.context(event);
    let id: number | null = null;
    if (!event.live) {
      const readers = visible('guest', event.noteId, event, ctx) ? 1 : 0;
      const info = this.store.db
        .prepare(
          'insert into events(name, note_id, file_id, data, created_at, readers) values (?, ?, ?, ?, ?, ?)',
        )
        .run(
          event.name,
          event.noteId,
          event.fileId ?? null,
          JSON.stringify(event.data),
          this.store.stamp(),
          readers,
        );
      id = Number(info.lastInsertRowid);
      this.lastId = id;
      if (++this.inserted % 100 === 0) {
        this.store.db.prepare('delete from events where id <= ?').run(id - REPLAY_KEEP);
      }
    }
    // Inside a transaction, streams hear of the change only once it is committed.
    this.store.afterCommit(() => this.fanOut(event, id, ctx));
    return id;
  }

  /**
   * Queues the event for its recipients as they are now; they receive it at the end of the turn,
   * with the turn's other events (see turn-writes.ts).
   */
  private fanOut(event: HubEvent, id: number | null, ctx: Context): void {
    if (this.turn.length === 0) process.nextTick(() => this.flush());
    this.turn.push({ event, id, ctx, recipients: this.recipients(event) });
  }

  /** Sends the turn's events: each stream that takes bytes gets them in one write. */
  flush(): void {
    const turn = this.turn;
    this.turn = [];
    const writes = new TurnWrites<Connection>();
    for (const queued of turn) this.deliver(queued, writes);
    for (const [conn, bytes] of writes.drain()) this.send(conn, '', bytes);
  }

  private deliver({ event, id, ctx, recipients }: Queued, writes: TurnWrites<Connection>): void {
    // Serialised and encoded once per view for all recipients: a collaborative update of 256 KiB to
    // 256 watchers would be 64 MiB of work per recipient otherwise.
    let member: { text: string; index?: number } | undefined;
    let reader: { text: string; index?: number } | undefined;
    for (const conn of recipients) {
      if (conn.closed) continue;
      const role = roleOf(this.principalOf(conn));
      // A stream of a note its recipient can no longer see is closed, whatever the event.
      if (conn.noteId !== null && conn.noteId === event.noteId && !canSee(role, ctx.note)) {
        const queued = writes.take(conn);
        if (queued) this.send(conn, '', queued);
        this.revoke(conn, conn.noteId);
        continue;
      }
      if (event.name === 'collab.update' && conn.follows !== null && conn.follows !== event.fileId) continue;
      if (!visible(role, conn.noteId, event, ctx)) continue;
      let view: { text: string; index?: number };
      if (atLeast(role, 'user')) view = member ??= { text: frame(id, event.name, event.data) };
      else {
        view = reader ??= {
          text: frame(id, event.name, event.readerData ?? forReader('guest', event.name, event.data)),
        };
      }
      if (!conn.sink.writeBytes) {
        this.send(conn, view.text);
        continue;
      }
      view.index ??= writes.add(Buffer.from(view.text));
      writes.queue(conn, view.index);
    }
  }

  // --- presence

  private sendPresence(noteId: number, change: PresenceChange): void {
    this.publish({
      name: 'presence.changed',
      noteId,
      live: true,
      data: { ...change },
      readerData: { ...this.presence.forReader(change) },
    });
  }

  /** The entries of a note now (tests, the web page's first paint). */
  present(noteId: number) {
    return this.presence.list(noteId);
  }

  /**
   * Updates a stream's place in the note (file, typing, the client's own state); only the stream
   * whose stamped id matches (same person, same chosen id) can be changed. A signed-in person's
   * first update may claim their newest stream opened without a client id. False: no such stream.
   */
  setPresence(
    subject: string | null,
    noteId: number,
    chosenId: string,
    fields: { file_id: number | null; typing: boolean; state?: Record<string, unknown> | null },
  ): boolean {
    const stamp = stampClientId(subject, chosenId);
    if (!this.presence.has(noteId, stamp) && subject !== null) {
      const unclaimed = [...(this.byNote.get(noteId) ?? [])]
        .filter((conn) => !conn.claimed && (conn.principal?.subject ?? null) === subject)
        .at(-1);
      if (unclaimed) {
        this.presence.leave(noteId, unclaimed.clientId);
        unclaimed.clientId = stamp;
        unclaimed.claimed = true;
        this.join(unclaimed);
      }
    }
    return this.presence.update(noteId, stamp, fields);
  }

  /**
   * From now on the stream of this tab (the same person and chosen id) receives the live updates of
   * `fileId` only. Called before the file's state is read (`GET …/collab`), so every update after
   * that state reaches the tab. False: no such stream (it keeps every file's updates).
   */
  follow(subject: string | null, noteId: number, chosenId: string, fileId: number): boolean {
    const stamp = stampClientId(subject, chosenId);
    let found = false;
    for (const conn of this.byNote.get(noteId) ?? []) {
      if (conn.clientId !== stamp || (conn.principal?.subject ?? null) !== subject) continue;
      conn.follows = fileId;
      found = true;
    }
    return found;
  }

  /** Sends a comment line to every stream so proxies keep them open and dead ones are found. */
  ping(): void {
    for (const conn of [...this.connections.values()]) this.send(conn, ': ping\n\n');
  }

  /** Ends every stream (shutdown). */
  closeAll(): void {
    // What this turn committed goes out before the streams end.
    if (this.turn.length > 0) this.flush();
    this.presence.close();
    for (const conn of [...this.connections.values()]) this.end(conn);
  }
}
