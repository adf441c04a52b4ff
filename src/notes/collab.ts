// Real-time editing: one Yjs document per file while it is in use. Every update a client sends is
// appended to an update log in SQLite before it is acknowledged; a file's document is its stored
// state plus the updates logged after it. Revisions (which compact the log into the stored state,
// in the same transaction) come after a short idle time and at the latest every
// `maxIntervalMs` of continuous editing. Plain saves from scripts are merged in (3-way against their
// base revision) or refused. See docs/adr/0006-notes-collaboration.md and 0013-notes-durability.md.
import { diffChars } from 'diff';
import { merge } from 'node-diff3';
import * as Y from 'yjs';
import type { Logger } from '../core/logger.ts';
import type { FileRow, Store } from './db.ts';
import type { EventHub } from './events.ts';

interface Live {
  doc: Y.Doc;
  fileId: number;
  noteId: number;
  /** The text changed since the last revision. */
  dirty: boolean;
  /** When the oldest change not yet in a revision or the stored state arrived (performance.now()). */
  pendingSince: number;
  authors: Set<string>;
  /** Id of the newest logged update not yet compacted into the stored state; 0 when none. */
  uncompacted: number;
  /** Set by the document's listeners during one apply. */
  changed: { state: boolean; text: boolean };
  timer: NodeJS.Timeout | null;
}

/** Bytes that are not a Yjs update (as opposed to a failure to store a good one). */
export class InvalidUpdateError extends Error {}

export type PutResult =
  | { ok: true; file: FileRow; merged: boolean }
  | { ok: false; current: { content: string; revision: number } };

export interface CollabOptions {
  /** A revision is saved this long after the last change. */
  idleMs?: number;
  /** …and at the latest this long after the first unsaved change, however long the typing goes on. */
  maxIntervalMs?: number;
  /** How long an unchanged document stays in memory after its last save. */
  unloadMs?: number;
  logger: Logger;
}

const SERVER_ORIGIN = 'server';
/** Origin of updates replayed from the log when a document loads. */
const LOG_ORIGIN = 'log';

/** Splits text into lines that keep their line ends, so joining them gives the text back. */
function lines(text: string): string[] {
  return text === '' ? [] : text.split(/(?<=\n)/);
}

/** 3-way line merge; null when both sides changed the same lines differently. */
export function mergeText(base: string, ours: string, theirs: string): string | null {
  if (ours === theirs) return ours;
  if (base === theirs) return ours;
  if (base === ours) return theirs;
  const result = merge(lines(ours), lines(base), lines(theirs), { excludeFalseConflicts: true });
  if (result.conflict) return null;
  return result.result.join('');
}

/** Applies the smallest character edits that turn the Y.Text into `target`. */
export function setText(text: Y.Text, target: string): void {
  const current = text.toString();
  if (current === target) return;
  // The common start and end stay untouched; only the changed middle is diffed (diffing whole
  // documents is quadratic in the worst case), and a very large middle is replaced in one splice.
  let start = 0;
  const max = Math.min(current.length, target.length);
  while (start < max && current.charCodeAt(start) === target.charCodeAt(start)) start++;
  let end = 0;
  while (
    end < max - start &&
    current.charCodeAt(current.length - 1 - end) === target.charCodeAt(target.length - 1 - end)
  ) {
    end++;
  }
  const oldMiddle = current.slice(start, current.length - end);
  const newMiddle = target.slice(start, target.length - end);
  if (oldMiddle.length === 0 || newMiddle.length === 0 || oldMiddle.length + newMiddle.length > 20_000) {
    if (oldMiddle.length > 0) text.delete(start, oldMiddle.length);
    if (newMiddle.length > 0) text.insert(start, newMiddle);
    return;
  }
  let index = start;
  for (const part of diffChars(oldMiddle, newMiddle)) {
    if (part.removed) text.delete(index, part.value.length);
    else if (part.added) {
      text.insert(index, part.value);
      index += part.value.length;
    } else index += part.value.length;
  }
}

export class Collab {
  private readonly live = new Map<number, Live>();
  private readonly store: Store;
  private readonly hub: EventHub;
  private readonly idleMs: number;
  private readonly maxIntervalMs: number;
  private readonly unloadMs: number;
  private readonly logger: Logger;

  constructor(store: Store, hub: EventHub, options: CollabOptions) {
    this.store = store;
    this.hub = hub;
    this.idleMs = options.idleMs ?? 1500;
    this.maxIntervalMs = options.maxIntervalMs ?? 30_000;
    this.unloadMs = options.unloadMs ?? 10 * 60_000;
    this.logger = options.logger;
    // Runs the document code once at start, so the first real edit does not pay for compiling it.
    const warm = new Y.Doc();
    setText(warm.getText('content'), 'warm up\n');
    setText(warm.getText('content'), 'warmed up\n');
    Y.encodeStateAsUpdate(warm);
    warm.destroy();
  }

  /** The file's document: its stored state, then every update logged after it. */
  private open(file: FileRow): Live {
    const existing = this.live.get(file.id);
    if (existing) return existing;
    const doc = new Y.Doc();
    const stored = this.store.fileYdoc(file.id);
    if (stored) Y.applyUpdate(doc, stored);
    const text = doc.getText('content');
    if (text.toString() !== file.content) {
      // First collaborative use of this file (or its text changed outside): start from the saved text
      // and keep that state, so every later load hands out the same document history.
      setText(text, file.content);
      this.store.setFileYdoc(file.id, Y.encodeStateAsUpdate(doc));
    }
    const entry: Live = {
      doc,
      fileId: file.id,
      noteId: file.note_id,
      dirty: false,
      pendingSince: 0,
      authors: new Set(),
      uncompacted: 0,
      changed: { state: false, text: false },
      timer: null,
    };
    const logged = this.store.loggedUpdates(file.id);
    if (logged.length > 0) {
      for (const row of logged) {
        Y.applyUpdate(doc, row.data, LOG_ORIGIN);
        entry.authors.add(row.author);
      }
      entry.uncompacted = logged.at(-1)!.id;
      entry.dirty = text.toString() !== file.content;
      entry.pendingSince = performance.now();
      this.schedule(entry);
    }
    text.observe(() => {
      entry.changed.text = true;
    });
    doc.on('update', (update: Uint8Array, origin: unknown) => {
      entry.changed.state = true;
      // Published after the transaction that logs the update commits (EventHub.publish).
      this.hub.publish({
        name: 'collab.update',
        noteId: entry.noteId,
        fileId: entry.fileId,
        live: true,
        data: {
          note_id: entry.noteId,
          file_id: entry.fileId,
          update: Buffer.from(update).toString('base64'),
          client_id: typeof origin === 'string' ? origin : SERVER_ORIGIN,
        },
      });
    });
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
    return entry ? entry.doc.getText('content').toString() : file.content;
  }

  state(file: FileRow): { state: string; revision: number; text: string } {
    const entry = this.open(file);
    return {
      state: Buffer.from(Y.encodeStateAsUpdate(entry.doc)).toString('base64'),
      revision: this.store.fileById(file.id)?.revision ?? file.revision,
      text: entry.doc.getText('content').toString(),
    };
  }

  /**
   * Applies a client's update and logs it; when this returns, the update is committed (and only
   * then sent to the other editors). Throws on bytes that are not a Yjs update, logging nothing.
   */
  apply(file: FileRow, update: Uint8Array, author: string, clientId: string): void {
    const entry = this.open(file);
    const { pendingStructs, pendingDs } = entry.doc.store;
    entry.changed.state = false;
    entry.changed.text = false;
    this.mutate(entry, () => {
      try {
        Y.applyUpdate(entry.doc, update, clientId);
      } catch (error) {
        throw new InvalidUpdateError((error as Error).message);
      }
      // An update whose dependencies have not arrived yet is held back by Yjs, but it is still
      // acknowledged, so it is logged too; a duplicate changes nothing and is not.
      const held =
        entry.doc.store.pendingStructs !== pendingStructs || entry.doc.store.pendingDs !== pendingDs;
      if (entry.changed.state || held) entry.uncompacted = this.store.logUpdate(file.id, update, author);
    });
    if (entry.changed.text) {
      entry.dirty = true;
      entry.authors.add(author);
    }
    if (entry.changed.text || entry.uncompacted > 0) {
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
    const content = entry.doc.getText('content').toString();
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
    const entry = this.open(file);
    const text = entry.doc.getText('content');
    return this.mutate(entry, () => {
      entry.doc.transact(() => setText(text, content), SERVER_ORIGIN);
      // Even an unchanged text becomes a revision: people asked for one.
      entry.dirty = true;
      entry.authors.add(author);
      return this.save(file.id)!;
    });
  }

  /** A save from a script: applied when based on the current text, merged or refused otherwise. */
  put(file: FileRow, content: string, baseRevision: number, author: string): PutResult {
    const live = this.text(file);
    const current = { content: live, revision: file.revision };
    const unchanged = baseRevision === file.revision && live === file.content;
    if (unchanged) return { ok: true, file: this.replace(file, content, author), merged: false };
    const base = this.store.revision(file.id, baseRevision);
    if (!base) return { ok: false, current };
    const merged = mergeText(base.content, content, live);
    if (merged === null) return { ok: false, current };
    return { ok: true, file: this.replace(file, merged, author), merged: true };
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
