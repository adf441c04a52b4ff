// The notes database: every query the server makes, on one better-sqlite3 connection in WAL mode
// (its schema is migrations.ts); all writes are synchronous and short, so no pool.
import { openDatabase, type SqliteDatabase } from '../core/sqlite.ts';
import { migrate } from './migrations.ts';
import { Versions } from './versions.ts';

export function openNotesDatabase(file: string): SqliteDatabase {
  const db = openDatabase(file);
  db.pragma('journal_mode = WAL');
  db.pragma('foreign_keys = ON');
  // Commits reach the WAL file without an fsync; durable.ts adds the fsync acknowledgements need,
  // off the event loop. Checkpoints still fsync WAL and database before the WAL is reused.
  db.pragma('synchronous = NORMAL');
  db.pragma('busy_timeout = 5000');
  migrate(db);
  cacheStatements(db);
  return db;
}

/**
 * Makes db.prepare() return one compiled statement per SQL text: every request runs the same few
 * queries, and compiling them again each time was the largest cost of a read. The SQL texts are
 * built from fixed fragments only, so the cache stays small.
 */
function cacheStatements(db: SqliteDatabase): void {
  const prepare = db.prepare.bind(db);
  const cache = new Map<string, ReturnType<typeof prepare>>();
  (db as { prepare: typeof prepare }).prepare = ((sql: string) => {
    let statement = cache.get(sql);
    if (!statement) {
      statement = prepare(sql);
      if (cache.size < 500) cache.set(sql, statement);
    }
    return statement;
  }) as typeof prepare;
}

export interface NoteRow {
  id: number;
  name: string;
  public: number;
  model: string | null;
  created_at: string;
  updated_at: string;
  deleted_at: string | null;
}

/** Every column but the collaborative state, which only the collaboration code reads. */
const FILE_COLUMNS =
  'id, note_id, name, public, revision, content, created_at, updated_at, updated_by, deleted_at';

export interface FileRow {
  id: number;
  note_id: number;
  name: string;
  public: number;
  revision: number;
  content: string;
  created_at: string;
  updated_at: string;
  updated_by: string | null;
  deleted_at: string | null;
}

export interface RevisionRow {
  file_id: number;
  revision: number;
  content: string;
  author: string | null;
  created_at: string;
}

export interface ChatRow {
  id: number;
  note_id: number;
  role: string;
  author: string | null;
  content: string;
  run_id: string | null;
  created_at: string;
}

import type { FileInfo, Note } from './api-types.ts';

export type { FileInfo, Note };

export function toNote(row: NoteRow): Note {
  return { ...row, public: row.public === 1 };
}

export function toFile(row: FileRow, withContent = false): FileInfo {
  const info: FileInfo = {
    id: row.id,
    note_id: row.note_id,
    name: row.name,
    public: row.public === 1,
    revision: row.revision,
    size: Buffer.byteLength(row.content),
    updated_at: row.updated_at,
    updated_by: row.updated_by,
    deleted_at: row.deleted_at,
  };
  if (withContent) info.content = row.content;
  return info;
}

/** The queries, prepared once. Callers do their permission checks before calling. */
export class Store {
  readonly db: SqliteDatabase;
  /** What public pages show, by version: bumped by every method below that changes it. */
  readonly versions = new Versions();
  private readonly now: () => Date;
  private depth = 0;
  private committed: Array<() => void> = [];
  /** One transaction wrapper for all (better-sqlite3 makes nested calls savepoints). */
  private readonly inTransaction: <T>(fn: () => T) => T;

  constructor(db: SqliteDatabase, now: () => Date = () => new Date()) {
    this.db = db;
    this.now = now;
    const wrapper = db.transaction((fn: () => unknown) => fn());
    this.inTransaction = <T>(fn: () => T) => wrapper(fn) as T;
  }

  /**
   * Runs `fn` in one transaction (nested calls join it) and returns its result once committed.
   * This is what makes an answer honest: a route that writes more than once wraps its writes here,
   * so either all of them are durable before the reply or none is.
   */
  tx<T>(fn: () => T): T {
    if (this.depth > 0) {
      // A nested call is a savepoint: when it rolls back, so do the notices it queued.
      const queued = this.committed.length;
      this.depth++;
      try {
        return this.inTransaction(fn);
      } catch (error) {
        this.committed.length = queued;
        throw error;
      } finally {
        this.depth--;
      }
    }
    this.depth = 1;
    let result: T;
    try {
      result = this.inTransaction(fn);
    } catch (error) {
      this.committed = [];
      throw error;
    } finally {
      this.depth = 0;
    }
    const after = this.committed;
    this.committed = [];
    for (const run of after) run();
    return result;
  }

  /**
   * Runs `fn` once the current transaction has committed (at once outside one), and never when it
   * rolls back: what is told to others (events) must not get ahead of what is stored.
   */
  afterCommit(fn: () => void): void {
    if (this.depth === 0) fn();
    else this.committed.push(fn);
  }

  stamp(): string {
    return this.now().toISOString();
  }

  // --- notes
  listNotes(opts: { publicOnly: boolean; deleted: boolean }): NoteRow[] {
    const where = [opts.deleted ? 'deleted_at is not null' : 'deleted_at is null'];
    if (opts.publicOnly) where.push('public = 1');
    return this.db
      .prepare(`select * from notes where ${where.join(' and ')} order by name`)
      .all() as NoteRow[];
  }

  /** A note by id or name; names never consist of digits only. Deleted notes only when asked. */
  findNote(ref: string | number, includeDeleted = false): NoteRow | undefined {
    const byId = typeof ref === 'number' || /^\d+$/.test(ref);
    const deleted = includeDeleted ? '' : ' and deleted_at is null';
    if (byId)
      return this.db.prepare(`select * from notes where id = ?${deleted}`).get(Number(ref)) as NoteRow;
    // A live note wins over a deleted one with the same name.
    return this.db
      .prepare(
        `select * from notes where name = ?${deleted}${includeDeleted ? ' order by deleted_at is not null, id desc' : ''} limit 1`,
      )
      .get(ref) as NoteRow | undefined;
  }

  noteById(id: number): NoteRow | undefined {
    return this.db.prepare('select * from notes where id = ?').get(id) as NoteRow | undefined;
  }

  createNote(name: string, isPublic: boolean): NoteRow {
    const at = this.stamp();
    const info = this.db
      .prepare('insert into notes(name, public, created_at, updated_at) values (?, ?, ?, ?)')
      .run(name, isPublic ? 1 : 0, at, at);
    this.versions.touch(null);
    return this.noteById(Number(info.lastInsertRowid))!;
  }

  updateNote(id: number, fields: { name?: string; public?: boolean; model?: string | null }): NoteRow {
    const sets: string[] = ['updated_at = @at'];
    const params: Record<string, unknown> = { id, at: this.stamp() };
    if (fields.name !== undefined) {
      sets.push('name = @name');
      params.name = fields.name;
    }
    if (fields.public !== undefined) {
      sets.push('public = @public');
      params.public = fields.public ? 1 : 0;
    }
    if (fields.model !== undefined) {
      sets.push('model = @model');
      params.model = fields.model;
    }
    this.db.prepare(`update notes set ${sets.join(', ')} where id = @id`).run(params);
    this.versions.touchNote(id);
    return this.noteById(id)!;
  }

  setNoteDeleted(id: number, deleted: boolean): NoteRow {
    this.db
      .prepare('update notes set deleted_at = ?, updated_at = ? where id = ?')
      .run(deleted ? this.stamp() : null, this.stamp(), id);
    this.versions.touchNote(id);
    return this.noteById(id)!;
  }

  purgeNote(id: number): void {
    this.db.prepare('delete from notes where id = ?').run(id);
    this.versions.touchNote(id);
  }

  // --- files
  listFiles(noteId: number, opts: { publicOnly: boolean; deleted: boolean }): FileRow[] {
    const where = ['note_id = ?', opts.deleted ? 'deleted_at is not null' : 'deleted_at is null'];
    if (opts.publicOnly) where.push('public = 1');
    return this.db
      .prepare(`select ${FILE_COLUMNS} from files where ${where.join(' and ')} order by name`)
      .all(noteId) as FileRow[];
  }

  findFile(noteId: number, ref: string | number, includeDeleted = false): FileRow | undefined {
    const byId = typeof ref === 'number' || /^\d+$/.test(ref);
    const deleted = includeDeleted ? '' : ' and deleted_at is null';
    if (byId) {
      return this.db
        .prepare(`select ${FILE_COLUMNS} from files where note_id = ? and id = ?${deleted}`)
        .get(noteId, Number(ref)) as FileRow | undefined;
    }
    return this.db
      .prepare(
        // A live file wins over deleted ones with the same name.
        `select ${FILE_COLUMNS} from files where note_id = ? and name = ?${deleted}${includeDeleted ? ' order by deleted_at is not null, id desc' : ''} limit 1`,
      )
      .get(noteId, ref) as FileRow | undefined;
  }

  fileById(id: number): FileRow | undefined {
    return this.db.prepare(`select ${FILE_COLUMNS} from files where id = ?`).get(id) as FileRow | undefined;
  }

  createFile(noteId: number, name: string, content: string, isPublic: boolean, author: string): FileRow {
    return this.tx(() => {
      const at = this.stamp();
      const info = this.db
        .prepare(
          'insert into files(note_id, name, public, revision, content, created_at, updated_at, updated_by) values (?, ?, ?, 1, ?, ?, ?, ?)',
        )
        .run(noteId, name, isPublic ? 1 : 0, content, at, at, author);
      const id = Number(info.lastInsertRowid);
      this.db
        .prepare(
          'insert into revisions(file_id, revision, content, author, created_at) values (?, 1, ?, ?, ?)',
        )
        .run(id, content, author, at);
      this.versions.touch(noteId);
      return this.fileById(id)!;
    });
  }

  /** Stores new content as the next revision; `ydoc` is the collaborative state that produced it. */
  saveRevision(fileId: number, content: string, author: string, ydoc: Uint8Array | null): FileRow {
    return this.tx(() => {
      const current = this.fileById(fileId)!;
      const at = this.stamp();
      const revision = current.revision + 1;
      this.db
        .prepare(
          'update files set content = ?, revision = ?, ydoc = ?, updated_at = ?, updated_by = ? where id = ?',
        )
        .run(content, revision, ydoc, at, author, fileId);
      this.db
        .prepare(
          'insert into revisions(file_id, revision, content, author, created_at) values (?, ?, ?, ?, ?)',
        )
        .run(fileId, revision, content, author, at);
      this.versions.touch(current.note_id);
      return this.fileById(fileId)!;
    });
  }

  // --- the collaborative update log (see docs/adr/0013-notes-durability.md)

  /** Appends an acknowledged update; returns its id. */
  logUpdate(fileId: number, data: Uint8Array, author: string): number {
    const info = this.db
      .prepare('insert into collab_updates(file_id, data, author, created_at) values (?, ?, ?, ?)')
      .run(fileId, data, author, this.stamp());
    return Number(info.lastInsertRowid);
  }

  loggedUpdates(fileId: number): Array<{ id: number; data: Uint8Array; author: string }> {
    return this.db
      .prepare('select id, data, author from collab_updates where file_id = ? order by id')
      .all(fileId) as Array<{ id: number; data: Uint8Array; author: string }>;
  }

  /** Drops the updates a stored state now holds (call in the transaction that stores it). */
  compactLog(fileId: number, throughId: number): void {
    this.db.prepare('delete from collab_updates where file_id = ? and id <= ?').run(fileId, throughId);
  }

  /** Files whose live edits were acknowledged but not yet compacted into a revision. */
  filesWithLoggedUpdates(): number[] {
    return (
      this.db.prepare('select distinct file_id from collab_updates order by file_id').all() as Array<{
        file_id: number;
      }>
    ).map((r) => r.file_id);
  }

  setFileYdoc(fileId: number, ydoc: Uint8Array): void {
    this.db.prepare('update files set ydoc = ? where id = ?').run(ydoc, fileId);
  }

  /** Yjs client ids of a file and the subject that first wrote with each. */
  collabClients(fileId: number): Array<[number, string]> {
    return (
      this.db.prepare('select client, subject from collab_clients where file_id = ?').all(fileId) as Array<{
        client: number;
        subject: string;
      }>
    ).map((r) => [r.client, r.subject]);
  }

  claimCollabClient(fileId: number, client: number, subject: string): void {
    this.db
      .prepare('insert into collab_clients(file_id, client, subject) values (?, ?, ?) on conflict do nothing')
      .run(fileId, client, subject);
  }

  fileYdoc(fileId: number): Uint8Array | null {
    const row = this.db.prepare('select ydoc from files where id = ?').get(fileId) as
      | { ydoc: Buffer | null }
      | undefined;
    return row?.ydoc ?? null;
  }

  updateFile(id: number, fields: { name?: string; public?: boolean }): FileRow {
    const sets: string[] = ['updated_at = @at'];
    const params: Record<string, unknown> = { id, at: this.stamp() };
    if (fields.name !== undefined) {
      sets.push('name = @name');
      params.name = fields.name;
    }
    if (fields.public !== undefined) {
      sets.push('public = @public');
      params.public = fields.public ? 1 : 0;
    }
    this.db.prepare(`update files set ${sets.join(', ')} where id = @id`).run(params);
    const row = this.fileById(id)!;
    this.versions.touch(row.note_id);
    return row;
  }

  setFileDeleted(id: number, deleted: boolean): FileRow {
    this.db.prepare('update files set deleted_at = ? where id = ?').run(deleted ? this.stamp() : null, id);
    const row = this.fileById(id)!;
    this.versions.touch(row.note_id);
    return row;
  }

  purgeFile(id: number): void {
    const noteId = this.fileById(id)?.note_id;
    this.db.prepare('delete from files where id = ?').run(id);
    if (noteId !== undefined) this.versions.touch(noteId);
  }

  listRevisions(fileId: number): Array<Omit<RevisionRow, 'content'> & { size: number }> {
    return this.db
      .prepare(
        'select file_id, revision, author, created_at, length(cast(content as blob)) as size from revisions where file_id = ? order by revision desc',
      )
      .all(fileId) as Array<Omit<RevisionRow, 'content'> & { size: number }>;
  }

  revision(fileId: number, revision: number): RevisionRow | undefined {
    return this.db
      .prepare('select * from revisions where file_id = ? and revision = ?')
      .get(fileId, revision) as RevisionRow | undefined;
  }

  // --- chat
  addChat(
    noteId: number,
    role: string,
    author: string | null,
    content: string,
    runId: string | null,
  ): ChatRow {
    const info = this.db
      .prepare(
        'insert into chat_messages(note_id, role, author, content, run_id, created_at) values (?, ?, ?, ?, ?, ?)',
      )
      .run(noteId, role, author, content, runId, this.stamp());
    return this.db
      .prepare('select * from chat_messages where id = ?')
      .get(Number(info.lastInsertRowid)) as ChatRow;
  }

  listChat(noteId: number, before: number | undefined, limit: number): ChatRow[] {
    const rows = this.db
      .prepare('select * from chat_messages where note_id = ? and id < ? order by id desc limit ?')
      .all(noteId, before ?? Number.MAX_SAFE_INTEGER, limit) as ChatRow[];
    return rows.reverse();
  }
}
