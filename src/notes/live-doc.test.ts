// Loading a file's live document from what SQLite holds, on a real store.
import { afterEach, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import type { Logger } from '../core/logger.ts';
import { TEXT_NAME } from './collab-check.ts';
import type { Sink } from './events.ts';
import { loadLive } from './live-doc.ts';
import { type Kit, makeServer } from './test-kit.ts';

let kit: Kit;
afterEach(async () => {
  await kit?.server.close();
});

/** A Yjs update that turns `doc` (or a new document) into one whose text is `text`. */
function edit(doc: Y.Doc, text: string): Uint8Array {
  const before = Y.encodeStateVector(doc);
  const t = doc.getText(TEXT_NAME);
  doc.transact(() => {
    t.delete(0, t.length);
    t.insert(0, text);
  });
  return Y.encodeStateAsUpdate(doc, before);
}

async function aFile(content: string) {
  kit = await makeServer();
  const { store, hub } = kit.server;
  // Public, so the anonymous watcher below is told everything.
  const note = store.createNote('lab', true);
  const file = store.createFile(note.id, 'a.md', content, true, 'ada');
  const events: string[] = [];
  const sink: Sink = { write: (chunk) => events.push(/^event: (.+)$/m.exec(chunk)?.[1] ?? ''), end() {} };
  hub.subscribe({ principal: null, noteId: note.id, clientId: null, lastEventId: null, sink });
  const warnings: string[] = [];
  const logger = {
    debug() {},
    info() {},
    warn: (_event: string, fields?: { message?: string }) => warnings.push(fields?.message ?? ''),
    error() {},
  } as unknown as Logger;
  const context = { store, hub, logger };
  return { file, store, context, events, warnings };
}

describe('loadLive', () => {
  it('starts a file new to editing from its saved text, and stores that state for every later load', async () => {
    const { file, store, context } = await aFile('hello\n');
    expect(store.fileYdoc(file.id)).toBeNull();
    const live = loadLive(file, context);
    expect(live.doc.getText(TEXT_NAME).toString()).toBe('hello\n');
    expect(live).toMatchObject({ dirty: false, uncompacted: 0, stateExact: true });
    const stored = store.fileYdoc(file.id);
    expect(stored).not.toBeNull();
    // The next load hands out the same history: the stored state, untouched.
    loadLive(file, context);
    expect(store.fileYdoc(file.id)).toEqual(stored);
  });

  it('replays the updates logged after the stored state, to be compacted by the next save', async () => {
    const { file, store, context } = await aFile('hello\n');
    const first = loadLive(file, context);
    const id = store.logUpdate(file.id, edit(first.doc, 'hello world\n'), 'uma');
    const live = loadLive(file, context);
    expect(live.doc.getText(TEXT_NAME).toString()).toBe('hello world\n');
    expect(live).toMatchObject({ dirty: true, uncompacted: id, stateExact: false });
    expect([...live.authors]).toEqual(['uma']);
  });

  it('starts again from the saved text when the stored state holds more than plain text, and says so', async () => {
    const { file, store, context, events, warnings } = await aFile('plain\n');
    const odd = new Y.Doc();
    odd.getMap('other').set('x', 1);
    store.setFileYdoc(file.id, Y.encodeStateAsUpdate(odd));
    const live = loadLive(file, context);
    expect(live.doc.getText(TEXT_NAME).toString()).toBe('plain\n');
    expect(live.doc.share.has('other')).toBe(false);
    context.hub.flush();
    expect(events).toContain('collab.reset');
    expect(warnings.join()).toMatch(/held more than plain text; rebuilt from the saved text/);
  });

  it('publishes each change of the loaded document to the note', async () => {
    const { file, context, events } = await aFile('a\n');
    const live = loadLive(file, context);
    live.doc.getText(TEXT_NAME).insert(0, 'b');
    // Streams hear of it when the turn ends.
    expect(events).not.toContain('collab.update');
    context.hub.flush();
    expect(events).toContain('collab.update');
    expect(live).toMatchObject({ updated: true, stateExact: false, cachedText: null });
  });
});
