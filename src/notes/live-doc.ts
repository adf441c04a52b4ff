// A file's document while it is in use (Live) and how it is loaded: the stored state (started
// again from the saved text when it holds more than plain text), then every update logged after
// it. Each change to a loaded document is published to the note's editors as it happens.
import * as Y from 'yjs';
import type { Logger } from '../core/logger.ts';
import { isPlainTextDoc, TEXT_NAME } from './collab-check.ts';
import type { FileRow, Store } from './db.ts';
import type { EventHub } from './events.ts';
import { setText } from './set-text.ts';

/** Origin of the server's own changes (restores, saves, the agent's writes). */
export const SERVER_ORIGIN = 'server';
const SERVER_SUBJECT = 'server:';
/** Origin of updates replayed from the log when a document loads. */
const LOG_ORIGIN = 'log';

export interface Live {
  doc: Y.Doc;
  fileId: number;
  noteId: number;
  /** The text changed since the last revision. */
  dirty: boolean;
  /** When the oldest change not yet in a revision or the stored state arrived (performance.now()). */
  pendingSince: number;
  /** Id of the newest logged update not yet compacted into the stored state; 0 when none. */
  uncompacted: number;
  /** Set by the document's update listener: the last apply changed the document. */
  updated: boolean;
  authors: Set<string>;
  timer: NodeJS.Timeout | null;
  /** Who wrote first with each Yjs client id of this file (subjects; the server's own id too). */
  owners: Map<number, string>;
  /** Size of the encoded state: exact after an encode, an upper bound after updates since. */
  stateBytes: number;
  stateExact: boolean;
  /** Encodings handed out since the last change, so readers do not re-encode an unchanged document. */
  cachedState: string | null;
  cachedText: string | null;
}

export interface LiveContext {
  store: Store;
  hub: EventHub;
  logger: Logger;
}

/** The file's document: its stored state, then every update logged after it. */
export function loadLive(file: FileRow, { store, hub, logger }: LiveContext): Live {
  let doc = new Y.Doc();
  const stored = store.fileYdoc(file.id);
  if (stored) Y.applyUpdate(doc, stored);
  if (!isPlainTextDoc(doc)) {
    // Stored before updates were checked: embeds or other types shift every offset of the text.
    // The document starts again from the saved text; clients holding the old one are told.
    logger.warn('notes.collab_rebuilt', {
      message: `file ${file.id}: its collaborative state held more than plain text; rebuilt from the saved text`,
    });
    doc.destroy();
    doc = new Y.Doc();
    hub.publish({
      name: 'collab.reset',
      noteId: file.note_id,
      fileId: file.id,
      data: { note_id: file.note_id, file_id: file.id, revision: file.revision },
    });
  }
  const text = doc.getText(TEXT_NAME);
  let state: Uint8Array | null = stored && doc.store.clients.size > 0 ? stored : null;
  if (text.toString() !== file.content || !state) {
    // First collaborative use of this file (or its text changed outside): start from the saved text
    // and keep that state, so every later load hands out the same document history.
    doc.transact(() => setText(text, file.content), SERVER_ORIGIN);
    state = Y.encodeStateAsUpdate(doc);
    store.db.prepare('update files set ydoc = ? where id = ?').run(state, file.id);
  }
  const entry: Live = {
    doc,
    fileId: file.id,
    noteId: file.note_id,
    dirty: false,
    pendingSince: 0,
    uncompacted: 0,
    updated: false,
    authors: new Set(),
    timer: null,
    owners: new Map([...store.collabClients(file.id), [doc.clientID, SERVER_SUBJECT] as [number, string]]),
    stateBytes: state.length,
    stateExact: true,
    cachedState: null,
    cachedText: null,
  };
  const logged = store.loggedUpdates(file.id);
  if (logged.length > 0) {
    for (const row of logged) {
      Y.applyUpdate(doc, row.data, LOG_ORIGIN);
      entry.authors.add(row.author);
      entry.stateBytes += row.data.length;
    }
    entry.stateExact = false;
    entry.uncompacted = logged.at(-1)!.id;
    entry.dirty = text.toString() !== file.content;
    entry.pendingSince = performance.now();
  }
  doc.on('update', (update: Uint8Array, origin: unknown) => {
    entry.updated = true;
    store.versions.touch(entry.noteId);
    entry.cachedState = null;
    entry.cachedText = null;
    entry.stateBytes += update.length;
    entry.stateExact = false;
    hub.publish({
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
  return entry;
}
