import { afterEach, describe, expect, it, vi } from 'vitest';
import * as Y from 'yjs';
import { silentLogger } from '../core/logger.ts';
import { Collab, setText } from './collab.ts';
import { mergeText } from './merge.ts';
import { ACCOUNTS, type Kit, loginAs, makeServer } from './test-kit.ts';

let kit: Kit;
const UMA = { subject: 'local:uma', name: 'uma' };
afterEach(async () => {
  await kit?.server.close();
});

describe('mergeText', () => {
  it('merges changes to different lines and refuses overlapping ones', () => {
    expect(mergeText('a\nb\nc\n', 'A\nb\nc\n', 'a\nb\nC\n')).toBe('A\nb\nC\n');
    expect(mergeText('a\n', 'x\n', 'y\n')).toBeNull();
    expect(mergeText('a\n', 'same\n', 'same\n')).toBe('same\n');
  });
});

describe('setText', () => {
  it('turns the text into the target with small edits', () => {
    const doc = new Y.Doc();
    const text = doc.getText('content');
    text.insert(0, 'hello world');
    setText(text, 'hello brave new world!');
    expect(text.toString()).toBe('hello brave new world!');
    const big = `start ${'x'.repeat(30_000)} end`;
    setText(text, big);
    expect(text.toString()).toBe(big);
    setText(text, '');
    expect(text.toString()).toBe('');
  });
});

describe('Collab documents', () => {
  it('keeps one history across unloads, so a client holding the old state does not double the text', async () => {
    kit = await makeServer();
    const { store, hub } = kit.server;
    const note = store.createNote('n', false);
    const file = store.createFile(note.id, 'f.md', 'base\n', true, 'uma');
    const collab = new Collab(store, hub, { logger: silentLogger, idleMs: 5, unloadMs: 10 });
    const client = new Y.Doc();
    Y.applyUpdate(client, Buffer.from(collab.state(file).state, 'base64'));
    const send = (fn: () => void) => {
      const updates: Uint8Array[] = [];
      const listener = (u: Uint8Array) => updates.push(u);
      client.on('update', listener);
      fn();
      client.off('update', listener);
      for (const u of updates) collab.apply(store.fileById(file.id)!, u, UMA, 'c1');
    };
    send(() => client.getText('content').insert(5, 'one\n'));
    await new Promise((r) => setTimeout(r, 60));
    // Saved and unloaded by now; the next update loads the stored document again.
    expect(store.fileById(file.id)!.content).toBe('base\none\n');
    expect(collab.loaded).toBe(0);
    send(() => client.getText('content').insert(0, 'zero\n'));
    expect(collab.text(store.fileById(file.id)!)).toBe('zero\nbase\none\n');
    collab.flushAll();
  });
});

describe('the update log', () => {
  const FILE = '/api/notes/n/files/f.md';

  /** A server whose timers never save: what is durable is exactly what was committed. */
  async function quietServer(dataDir?: string): Promise<Kit> {
    return makeServer(ACCOUNTS, {
      idleMs: 1e9,
      revisionEveryMs: 1e9,
      ...(dataDir ? { dataDir } : {}),
    });
  }

  /** What a crash leaves: the database as committed, nothing of the process's memory. */
  function crash(server: Kit['server']): void {
    server.store.db.close();
  }

  function typist(state: string) {
    const doc = new Y.Doc();
    Y.applyUpdate(doc, Buffer.from(state, 'base64'));
    return {
      doc,
      /** Inserts `text` at `index` and returns the update, base64. */
      insert(index: number, text: string): string {
        let update: Uint8Array | undefined;
        const grab = (u: Uint8Array) => {
          update = u;
        };
        doc.on('update', grab);
        doc.getText('content').insert(index, text);
        doc.off('update', grab);
        return Buffer.from(update!).toString('base64');
      },
    };
  }

  const logged = (k: Kit) =>
    (k.server.store.db.prepare('select count(*) as n from collab_updates').get() as { n: number }).n;

  it('has every acknowledged update in SQLite; after a crash the file holds all of them, once', async () => {
    kit = await quietServer();
    const dir = kit.dir;
    const { store } = kit.server;
    const note = store.createNote('n', false);
    store.createFile(note.id, 'f.md', 'base\n', true, 'uma');
    const uma = await loginAs(kit.server, 'uma', 'umapass1');
    const t = typist((await uma.request('GET', `${FILE}/collab`)).json().state);
    for (let i = 0; i < 20; i++) {
      const res = await uma.request('POST', `${FILE}/collab`, { update: t.insert(5 + i, String(i % 10)) });
      expect(res.statusCode).toBe(200);
      // Acknowledged means logged: the row is committed by the time the answer arrives.
      expect(logged(kit)).toBe(i + 1);
    }
    const typed = t.doc.getText('content').toString();
    expect(store.fileById(1)!.content).toBe('base\n');
    crash(kit.server);

    kit = await quietServer(dir);
    const after = await loginAs(kit.server, 'uma', 'umapass1');
    expect((await after.request('GET', FILE)).json()).toMatchObject({ content: typed, revision: 2 });
    expect((await after.request('GET', `${FILE}/revisions`)).json().revisions[0]).toMatchObject({
      revision: 2,
      author: 'uma',
    });
    // Compacted into the revision's state: the log is empty, and a client holding the old
    // document merges with the recovered one without doubling anything.
    expect(logged(kit)).toBe(0);
    const state = (await after.request('GET', `${FILE}/collab`)).json().state;
    Y.applyUpdate(t.doc, Buffer.from(state, 'base64'));
    expect(t.doc.getText('content').toString()).toBe(typed);
    // A second restart finds nothing more to recover and makes no further revision.
    await kit.server.close();
    kit = await quietServer(dir);
    expect(kit.server.store.fileById(1)).toMatchObject({ content: typed, revision: 2 });
  });

  it('compacts log and state in one transaction: a failure between them loses and doubles nothing', async () => {
    kit = await quietServer();
    const dir = kit.dir;
    const { store, collab } = kit.server;
    const note = store.createNote('n', false);
    const file = store.createFile(note.id, 'f.md', 'base\n', true, 'uma');
    const t = typist(collab.state(file).state);
    for (const [i, word] of ['one ', 'two ', 'three '].entries())
      collab.apply(
        store.fileById(file.id)!,
        Buffer.from(t.insert(i === 0 ? 0 : t.doc.getText('content').length - 5, word), 'base64'),
        UMA,
        'c',
      );
    const typed = t.doc.getText('content').toString();
    expect(logged(kit)).toBe(3);
    const before = store.db.prepare('select content, revision, ydoc from files where id = ?').get(file.id);
    // The revision insert fails (a full disk, a crash at that point): nothing of the save is kept.
    store.db.exec(
      "create temp trigger fail_revision before insert on revisions begin select raise(abort, 'simulated failure'); end",
    );
    expect(() => collab.save(file.id)).toThrow(/simulated failure/);
    expect(store.db.prepare('select content, revision, ydoc from files where id = ?').get(file.id)).toEqual(
      before,
    );
    expect(logged(kit)).toBe(3);
    crash(kit.server);

    kit = await quietServer(dir);
    expect(kit.server.store.fileById(file.id)).toMatchObject({ content: typed, revision: 2 });
    expect(logged(kit)).toBe(0);
    // The stored state alone is the whole document now.
    const stored = new Y.Doc();
    Y.applyUpdate(stored, kit.server.store.fileYdoc(file.id)!);
    expect(stored.getText('content').toString()).toBe(typed);
  });

  it('answers no when the update cannot be stored, and tells nobody about it', async () => {
    kit = await quietServer();
    const { store, hub } = kit.server;
    const note = store.createNote('n', false);
    store.createFile(note.id, 'f.md', 'base\n', true, 'uma');
    const uma = await loginAs(kit.server, 'uma', 'umapass1');
    const t = typist((await uma.request('GET', `${FILE}/collab`)).json().state);
    const seen: string[] = [];
    hub.subscribe({
      principal: null,
      noteId: null,
      clientId: null,
      lastEventId: null,
      sink: { write: (chunk) => seen.push(chunk), end() {} },
    });
    store.db.exec(
      "create temp trigger fail_log before insert on collab_updates begin select raise(abort, 'disk full'); end",
    );
    const res = await uma.request('POST', `${FILE}/collab`, { update: t.insert(0, 'lost ') });
    expect(res.statusCode).toBe(500);
    expect(seen.join('')).not.toContain('collab.update');
    // The server's document is what was committed, not the refused update.
    expect((await uma.request('GET', FILE)).json().content).toBe('base\n');
    store.db.exec('drop trigger fail_log');
    // The client sends it again (as the editor does after an error) and this time it holds.
    const again = Y.encodeStateAsUpdate(t.doc);
    expect(
      (await uma.request('POST', `${FILE}/collab`, { update: Buffer.from(again).toString('base64') }))
        .statusCode,
    ).toBe(200);
    expect((await uma.request('GET', FILE)).json().content).toBe('lost base\n');
  });
});

describe('revision timing', () => {
  afterEach(() => {
    vi.useRealTimers();
  });

  it('saves after a pause, and at the latest every maxIntervalMs while the typing goes on', async () => {
    kit = await makeServer();
    const { store, hub } = kit.server;
    const note = store.createNote('n', false);
    const file = store.createFile(note.id, 'f.md', '', true, 'uma');
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'performance'] });
    const collab = new Collab(store, hub, { logger: silentLogger, idleMs: 1500, maxIntervalMs: 30_000 });
    const client = new Y.Doc();
    Y.applyUpdate(client, Buffer.from(collab.state(file).state, 'base64'));
    client.on('update', (u: Uint8Array) => collab.apply(store.fileById(file.id)!, u, UMA, 'c'));
    const revision = () => store.fileById(file.id)!.revision;
    // 70 s of typing, a key every 400 ms: never a pause of 1.5 s.
    for (let i = 0; i < 175; i++) {
      client.getText('content').insert(i, 'x');
      vi.advanceTimersByTime(400);
    }
    expect(revision()).toBe(3); // at 30 s and at 60 s
    expect(store.fileById(file.id)!.content.length).toBeGreaterThan(140);
    vi.advanceTimersByTime(1500);
    expect(revision()).toBe(4); // the pause
    expect(store.fileById(file.id)!.content).toBe('x'.repeat(175));
    expect((store.db.prepare('select count(*) as n from collab_updates').get() as { n: number }).n).toBe(0);
    collab.flushAll();
  });
});
