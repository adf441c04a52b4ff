// Real-time editing: one Yjs document per file while it is in use. Every update a client sends is
// appended to an update log in SQLite before it is acknowledged; a file's document is its stored
// state plus the updates logged after it (loaded by live-doc.ts). Revisions (which compact the log into the stored state,
// in the same transaction) come after a short idle time and at the latest every `maxIntervalMs` of
// continuous editing. Plain saves from scripts go through replace() (plain-save.ts merges them);
// the edits a new text makes are set-text.ts. See docs/adr/0006-notes-collaboration.md and
// 0013-notes-durability.md.
import * as Y from 'yjs';
import type { Logger } from '../core/logger.ts';
import { checkUpdate, TEXT_NAME } from './collab-check.ts';
import type { FileRow, Store } from './db.ts';
import type { EventHub } from './events.ts';
import { ApiError } from './http.ts';
import type { Limits } from './limits.ts';
import { type Live, loadLive, SERVER_ORIGIN } from './live-doc.ts';
import { setText } from './set-text.ts';

/** Who sends a collaborative update: the principal's subject and display name. */
export interface Editor {
  subject: string;
  name: string;
}

export interface CollabOptions {
  /** A revision is saved this long after the last change. */
  idleMs?: number;
  /** …and at the latest this long after the first unsaved change, however long the typing goes on. */
  maxIntervalMs?: number;
  /** How long an unchanged document stays in memory after its last save. */
  unloadMs?: number;
  logger: Logger;
  limits?: Pick<Limits, 'maxFileBytes' | 'maxDocumentBytes' | 'maxUpdateBytes'>;
}

export function tooLarge(message: string): ApiError {
  return new ApiError('TOO_LARGE', message);
}

export class Collab {
  private readonly live = new Map<number, Live>();
  private readonly store: Store;
  private readonly hub: EventHub;
  private readonly idleMs: number;
  private readonly maxIntervalMs: number;
  private readonly unloadMs: number;
  private readonly logger: Logger;
  private readonly limits: NonNullable<CollabOptions['limits']>;

  constructor(store: Store, hub: EventHub, options: CollabOptions) {
    this.store = store;
    this.hub = hub;
    this.idleMs = options.idleMs ?? 1500;
    this.maxIntervalMs = options.maxIntervalMs ?? 30_000;
    this.unloadMs = options.unloadMs ?? 10 * 60_000;
    this.logger = options.logger;
    this.limits = options.limits ?? {
      maxFileBytes: 1024 * 1024,
      maxDocumentBytes: 4 * 1024 * 1024,
      maxUpdateBytes: 256 * 1024,
    };
    // Runs the document code once at start, so the first real edit does not pay for compiling it.
    const warm = new Y.Doc();
    setText(warm.getText('content'), 'warm up\n');
    setText(warm.getText('content'), 'warmed up\n');
    Y.encodeStateAsUpdate(warm);
    warm.destroy();
  }

  /** The file's document, loaded on first use (live-doc.ts); one left to compact is saved soon. */
  private open(file: FileRow): Live {
    const existing = this.live.get(file.id);
    if (existing) return existing;
    const entry = loadLive(file, { store: this.store, hub: this.hub, logger: this.logger });
    if (entry.uncompacted > 0) this.schedule(entry);
    this.live.set(file.id, entry);
    return entry;
  }

  /**
   * Changes a live document inside one transaction. When that fails, the document in memory may
   * hold what the database does not: it is dropped, and the next use loads what was committed.
   */
  private mutate<T>(entry: Live, fn: () => T): T {
    try {
      return this.store.tx(fn);
    } catch (error) {
      this.evict(entry);
      throw error;
    }
  }

  private evict(entry: Live): void {
    if (entry.timer) clearTimeout(entry.timer);
    entry.timer = null;
    if (this.live.get(entry.fileId) === entry) this.live.delete(entry.fileId);
    entry.doc.destroy();
  }

  /** How many documents are in memory. */
  get loaded(): number {
    return this.live.size;
  }

  /** The text as everyone sees it now, unsaved live edits included. */
  text(file: FileRow): string {
    const entry = this.live.get(file.id);
    if (!entry) return file.content;
    entry.cachedText ??= entry.doc.getText(TEXT_NAME).toString();
    return entry.cachedText;
  }

  state(file: FileRow): { state: string; revision: number; text: string } {
    const entry = this.open(file);
    if (entry.cachedState === null) {
      const state = Y.encodeStateAsUpdate(entry.doc);
      entry.stateBytes = state.length;
      entry.stateExact = true;
      entry.cachedState = Buffer.from(state).toString('base64');
    }
    return {
      state: entry.cachedState,
      revision: this.store.fileById(file.id)?.revision ?? file.revision,
      text: this.text(file),
    };
  }

  /**
   * What a client holding `stateVector` (Y.encodeStateVector of its document; null: nothing) lacks
   * of the file's document now, as one update. Answered at the moment a client's event stream
   * opens, so with the live updates after it nothing falls between (docs/notes-api.md, subscribe).
   */
  missing(file: FileRow, stateVector: Uint8Array | null): Uint8Array {
    const entry = this.open(file);
    return stateVector ? Y.encodeStateAsUpdate(entry.doc, stateVector) : Y.encodeStateAsUpdate(entry.doc);
  }

  /**
   * Applies an editor's update after checking it (see collab-check.ts) and the size limits, and
   * logs it: when this returns, the update is committed (and only then sent to the other editors).
   * `clientId` is the server-stamped id the update is broadcast with. Throws ApiError: 400 for
   * bytes that are not a plain-text update, 403 for a Yjs client id of someone else, 409 for an
   * update that depends on changes the server lacks, 413 past a limit; nothing is logged then.
   */
  apply(file: FileRow, update: Uint8Array, editor: Editor, clientId: string): void {
    const { maxUpdateBytes, maxFileBytes, maxDocumentBytes } = this.limits;
    if (update.length > maxUpdateBytes) {
      throw tooLarge(
        `update: ${update.length} bytes, more than the ${maxUpdateBytes} one update may have; send smaller batches`,
      );
    }
    const entry = this.open(file);
    const { doc } = entry;
    const text = doc.getText(TEXT_NAME);
    const check = (measureDeletes: boolean) => {
      try {
        return checkUpdate(doc, update, { measureDeletes });
      } catch (error) {
        throw new ApiError('BAD_REQUEST', `update: not a Yjs update (${(error as Error).message})`);
      }
    };
    let verdict = check(false);
    if (!verdict.ok) throw new ApiError(verdict.code, verdict.message);
    for (const client of verdict.writers) {
      const owner = entry.owners.get(client);
      if (owner !== undefined && owner !== editor.subject) {
        throw new ApiError(
          'FORBIDDEN',
          `update: Yjs client ${client} belongs to another editor; use a document of your own`,
        );
      }
    }
    // Every UTF-16 unit is at most 3 bytes of UTF-8: only near the limit is the text measured.
    if (text.length * 3 + verdict.insertedBytes > maxFileBytes) {
      verdict = check(true);
      if (!verdict.ok) throw new ApiError(verdict.code, verdict.message);
      const after = Buffer.byteLength(this.text(file)) - verdict.deletedBytes + verdict.insertedBytes;
      if (after > maxFileBytes) {
        throw tooLarge(`the file would hold ${after} bytes, more than the ${maxFileBytes} a file may have`);
      }
    }
    if (entry.stateBytes + update.length > maxDocumentBytes) {
      if (!entry.stateExact) this.state(file);
      if (entry.stateBytes + update.length > maxDocumentBytes) {
        throw tooLarge(
          `the file's editing history is at its limit (${maxDocumentBytes} bytes); copy the text into a new file to go on`,
        );
      }
    }
    let changed = false;
    const watch = (transaction: Y.Transaction) => {
      changed = transaction.changed.has(text as unknown as Y.AbstractType<Y.YEvent<Y.Text>>);
    };
    entry.updated = false;
    this.mutate(entry, () => {
      for (const client of verdict.writers) {
        if (!entry.owners.has(client)) {
          this.store.claimCollabClient(file.id, client, editor.subject);
          this.store.afterCommit(() => entry.owners.set(client, editor.subject));
        }
      }
      doc.once('afterTransaction', watch);
      try {
        Y.applyUpdate(doc, update, clientId);
      } finally {
        doc.off('afterTransaction', watch);
      }
      // A duplicate changes nothing and is not logged.
      if (entry.updated) entry.uncompacted = this.store.logUpdate(file.id, update, editor.name);
    });
    if (changed) {
      entry.dirty = true;
      entry.authors.add(editor.name);
    }
    if (changed || entry.uncompacted > 0) {
      if (entry.pendingSince === 0) entry.pendingSince = performance.now();
      this.schedule(entry);
    }
  }

  /** The next save: after `idleMs` of quiet, but no later than `maxIntervalMs` after the first change. */
  private schedule(entry: Live): void {
    if (entry.timer) clearTimeout(entry.timer);
    const deadline = entry.pendingSince + this.maxIntervalMs - performance.now();
    entry.timer = setTimeout(() => this.saveLater(entry), Math.max(0, Math.min(this.idleMs, deadline)));
    entry.timer.unref();
  }

  private saveLater(entry: Live): void {
    entry.timer = null;
    if (this.live.get(entry.fileId) !== entry) return;
    try {
      this.save(entry.fileId);
    } catch (error) {
      // Nothing is lost (the log holds every acknowledged update): try again later.
      this.logger.error('notes.save_failed', { file_id: entry.fileId, message: (error as Error).message });
      entry.timer = setTimeout(() => this.saveLater(entry), this.idleMs);
      entry.timer.unref();
    }
  }

  /**
   * Stores the live text as a revision when it changed, and compacts the update log into the stored
   * state in the same transaction: a crash before the commit leaves state + log as they were, one
   * after it leaves the new state and no log, so nothing is lost and nothing is applied twice.
   * Returns the file row afterwards.
   */
  save(fileId: number): FileRow | undefined {
    const entry = this.live.get(fileId);
    if (!entry) return this.store.fileById(fileId);
    if (entry.timer) clearTimeout(entry.timer);
    entry.timer = null;
    if (!entry.dirty && entry.uncompacted === 0) {
      this.scheduleUnload(entry);
      return this.store.fileById(fileId);
    }
    const row = this.store.fileById(fileId);
    if (!row) {
      this.evict(entry);
      return undefined;
    }
    const content = this.text(row);
    const author = [...entry.authors].join(', ') || 'unknown';
    const state = Y.encodeStateAsUpdate(entry.doc);
    const saved = this.store.tx(() => {
      let result = row;
      if (entry.dirty) {
        result = this.store.saveRevision(fileId, content, author, state);
        this.hub.publish({
          name: 'file.saved',
          noteId: result.note_id,
          fileId,
          data: { note_id: result.note_id, file_id: fileId, revision: result.revision, author },
        });
      } else {
        this.store.setFileYdoc(fileId, state);
      }
      if (entry.uncompacted > 0) this.store.compactLog(fileId, entry.uncompacted);
      return result;
    });
    entry.stateBytes = state.length;
    entry.stateExact = true;
    entry.dirty = false;
    entry.authors.clear();
    entry.uncompacted = 0;
    entry.pendingSince = 0;
    this.logger.debug('notes.saved', { file_id: fileId, revision: saved.revision });
    this.scheduleUnload(entry);
    return saved;
  }

  /**
   * Frees a document nobody has changed for a while. Its state is stored, so clients still holding
   * it and the next load agree on the history.
   */
  private scheduleUnload(entry: Live): void {
    if (entry.timer) clearTimeout(entry.timer);
    entry.timer = setTimeout(() => {
      if (entry.dirty || entry.uncompacted > 0 || this.live.get(entry.fileId) !== entry) return;
      this.evict(entry);
    }, this.unloadMs);
    entry.timer.unref();
  }

  /** Replaces the text (restore, merged PUT, agent write) through the document and saves at once. */
  replace(file: FileRow, content: string, author: string): FileRow {
    this.checkSize(content);
    const entry = this.open(file);
    const text = entry.doc.getText(TEXT_NAME);
    return this.mutate(entry, () => {
      entry.doc.transact(() => setText(text, content), SERVER_ORIGIN);
      // Even an unchanged text is a new revision: people asked for one.
      entry.dirty = true;
      entry.authors.add(author);
      return this.save(file.id)!;
    });
  }

  /** 413 for a text larger than a file may be. */
  checkSize(content: string): void {
    const bytes = Buffer.byteLength(content);
    if (bytes > this.limits.maxFileBytes) {
      throw tooLarge(`content: ${bytes} bytes, more than the ${this.limits.maxFileBytes} a file may have`);
    }
  }

  /**
   * Forgets a file's live document (deleted, renamed away, purged); unsaved edits are saved first.
   * Call it inside the transaction of the change that closes the file.
   */
  close(fileId: number): void {
    this.save(fileId);
    const entry = this.live.get(fileId);
    if (entry) this.evict(entry);
  }

  /** Saves every live document (shutdown). */
  flushAll(): void {
    for (const fileId of [...this.live.keys()]) {
      try {
        this.save(fileId);
      } catch (error) {
        this.logger.error('notes.save_failed', { file_id: fileId, message: (error as Error).message });
      }
    }
  }

  /**
   * At start: files whose acknowledged live edits never made it into a revision (the process died)
   * get that revision now, so reads, search and exports see them. Returns how many.
   */
  recover(): number {
    let count = 0;
    for (const fileId of this.store.filesWithLoggedUpdates()) {
      const file = this.store.fileById(fileId);
      if (!file) continue;
      this.open(file);
      this.save(fileId);
      count++;
    }
    return count;
  }
}
