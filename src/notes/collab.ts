// Real-time editing: one Yjs document per file while it is in use (its state kept in the files
// table so clients and server never disagree across restarts), revisions saved after a short idle
// time, and plain saves from scripts merged in (3-way against their base revision) or refused.
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
  dirty: boolean;
  authors: Set<string>;
  timer: NodeJS.Timeout | null;
}

export type PutResult =
  | { ok: true; file: FileRow; merged: boolean }
  | { ok: false; current: { content: string; revision: number } };

export interface CollabOptions {
  idleMs?: number;
  /** How long an unchanged document stays in memory after its last save. */
  unloadMs?: number;
  logger: Logger;
}

const SERVER_ORIGIN = 'server';

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
  private readonly unloadMs: number;
  private readonly logger: Logger;

  constructor(store: Store, hub: EventHub, options: CollabOptions) {
    this.store = store;
    this.hub = hub;
    this.idleMs = options.idleMs ?? 1500;
    this.unloadMs = options.unloadMs ?? 10 * 60_000;
    this.logger = options.logger;
    // Runs the document code once at start, so the first real edit does not pay for compiling it.
    const warm = new Y.Doc();
    setText(warm.getText('content'), 'warm up\n');
    setText(warm.getText('content'), 'warmed up\n');
    Y.encodeStateAsUpdate(warm);
    warm.destroy();
  }

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
      this.store.db
        .prepare('update files set ydoc = ? where id = ?')
        .run(Y.encodeStateAsUpdate(doc), file.id);
    }
    const entry: Live = {
      doc,
      fileId: file.id,
      noteId: file.note_id,
      dirty: false,
      authors: new Set(),
      timer: null,
    };
    doc.on('update', (update: Uint8Array, origin: unknown) => {
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

  /** Applies a client's update; throws on bytes that are not a Yjs update. */
  apply(file: FileRow, update: Uint8Array, author: string, clientId: string): void {
    const entry = this.open(file);
    const before = entry.doc.getText('content').toString();
    Y.applyUpdate(entry.doc, update, clientId);
    if (entry.doc.getText('content').toString() !== before) this.touch(entry, author);
  }

  private touch(entry: Live, author: string): void {
    entry.dirty = true;
    entry.authors.add(author);
    if (entry.timer) clearTimeout(entry.timer);
    entry.timer = setTimeout(() => this.save(entry.fileId), this.idleMs);
    entry.timer.unref();
  }

  /** Stores the live text as a revision when it changed; returns the file row afterwards. */
  save(fileId: number): FileRow | undefined {
    const entry = this.live.get(fileId);
    if (!entry) return this.store.fileById(fileId);
    if (entry.timer) clearTimeout(entry.timer);
    entry.timer = null;
    if (!entry.dirty) {
      this.scheduleUnload(entry);
      return this.store.fileById(fileId);
    }
    const row = this.store.fileById(fileId);
    if (!row) {
      this.live.delete(fileId);
      return undefined;
    }
    const content = entry.doc.getText('content').toString();
    const author = [...entry.authors].join(', ') || 'unknown';
    entry.dirty = false;
    entry.authors.clear();
    const saved = this.store.saveRevision(fileId, content, author, Y.encodeStateAsUpdate(entry.doc));
    this.hub.publish({
      name: 'file.saved',
      noteId: saved.note_id,
      fileId,
      data: { note_id: saved.note_id, file_id: fileId, revision: saved.revision, author },
    });
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
      if (entry.dirty || this.live.get(entry.fileId) !== entry) return;
      entry.doc.destroy();
      this.live.delete(entry.fileId);
    }, this.unloadMs);
    entry.timer.unref();
  }

  /** Replaces the text (restore, merged PUT, agent write) through the document and saves at once. */
  replace(file: FileRow, content: string, author: string): FileRow {
    const entry = this.open(file);
    const text = entry.doc.getText('content');
    if (text.toString() === content && !entry.dirty) {
      // Nothing changed, but a save is still a revision: people asked for one.
      entry.dirty = true;
    }
    entry.doc.transact(() => setText(text, content), SERVER_ORIGIN);
    entry.dirty = true;
    entry.authors.add(author);
    return this.save(file.id)!;
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

  /** Forgets a file's live document (deleted, renamed away, purged); unsaved edits are saved first. */
  close(fileId: number): void {
    this.save(fileId);
    const entry = this.live.get(fileId);
    if (entry) {
      entry.doc.destroy();
      this.live.delete(fileId);
    }
  }

  flushAll(): void {
    for (const fileId of [...this.live.keys()]) {
      try {
        this.save(fileId);
      } catch (error) {
        this.logger.error('notes.save_failed', { file_id: fileId, message: (error as Error).message });
      }
    }
  }
}
