import fc from 'fast-check';
import { afterEach, describe, expect, it, vi } from 'vitest';
import * as Y from 'yjs';
import { silentLogger } from '../core/logger.ts';
import { Collab } from './collab.ts';
import { ACCOUNTS, type Kit, loginAs, makeServer } from './test-kit.ts';

let kit: Kit;
const UMA = { subject: 'local:uma', name: 'uma' };
afterEach(async () => {
  await kit?.server.close();
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
    // Saved after 5 ms idle, unloaded 10 ms later (waited for, not timed: a loaded machine runs
    // timers late); the next update loads the stored document again.
    await vi.waitFor(
      () => {
        expect(store.fileById(file.id)!.content).toBe('base\none\n');
        expect(collab.loaded).toBe(0);
      },
      { timeout: 5000, interval: 10 },
    );
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

describe('collaborative input through the API', () => {
  /** Who watches the (private) note's events in these tests. */
  const WATCHER = { subject: 'local:ada', name: 'ada', provider: 'local', role: 'admin' as const };

  interface Client {
    doc: Y.Doc;
    outbox: Uint8Array[];
    inbox: string[];
    api: import('./test-kit.ts').Client;
  }

  type Op =
    | { who: 0 | 1; kind: 'insert'; at: number; text: string }
    | { who: 0 | 1; kind: 'delete'; at: number; length: number }
    | { who: 0 | 1; kind: 'embed' | 'format' | 'map' | 'other' | 'send' | 'receive' }
    | { who: 0 | 1; kind: 'save'; text: string };

  const op: fc.Arbitrary<Op> = fc.oneof(
    fc.record({
      who: fc.constantFrom(0 as const, 1 as const),
      kind: fc.constant('insert' as const),
      at: fc.nat(200),
      text: fc.string({ unit: 'grapheme', minLength: 1, maxLength: 6 }),
    }),
    fc.record({
      who: fc.constantFrom(0 as const, 1 as const),
      kind: fc.constant('delete' as const),
      at: fc.nat(200),
      length: fc.integer({ min: 1, max: 5 }),
    }),
    fc.record({
      who: fc.constantFrom(0 as const, 1 as const),
      kind: fc.constantFrom('embed' as const, 'format' as const, 'map' as const, 'other' as const),
    }),
    fc.record({
      who: fc.constantFrom(0 as const, 1 as const),
      kind: fc.constantFrom('send' as const, 'receive' as const),
    }),
    fc.record({
      who: fc.constantFrom(0 as const, 1 as const),
      kind: fc.constant('save' as const),
      text: fc.string({ unit: 'grapheme', maxLength: 30 }),
    }),
  );

  it('keeps the text exact for later saves whatever two editors send, embeds and formats refused', async () => {
    kit = await makeServer();
    const { loginAs } = await import('./test-kit.ts');
    const apis = [await loginAs(kit.server, 'uma', 'umapass1'), await loginAs(kit.server, 'ada', 'adapass1')];
    expect((await apis[1]!.request('POST', '/api/notes', { name: 'n' })).statusCode).toBe(201);
    let run = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(op, { minLength: 1, maxLength: 30 }), async (ops) => {
        const name = `f${run++}.md`;
        const created = await apis[0]!.request('POST', '/api/notes/n/files', { name, content: 'alpha\n' });
        expect(created.statusCode).toBe(201);
        const fileId = created.json().id as number;
        const path = `/api/notes/n/files/${fileId}`;
        const clients: Client[] = [];
        const broadcasts: string[] = [];
        const close = kit.server.hub.subscribe({
          principal: WATCHER,
          noteId: created.json().note_id,
          clientId: null,
          lastEventId: null,
          sink: {
            write(chunk) {
              if (!chunk.includes('event: collab.update')) return;
              const data = JSON.parse(/^data: (.+)$/m.exec(chunk)![1]!) as {
                file_id: number;
                update: string;
              };
              if (data.file_id !== fileId) return;
              broadcasts.push(data.update);
              for (const c of clients) c.inbox.push(data.update);
            },
            end() {},
          },
        });
        const fresh = async (api: Client['api']): Promise<Y.Doc> => {
          const doc = new Y.Doc();
          const state = (await api.request('GET', `${path}/collab`)).json().state as string;
          Y.applyUpdate(doc, Buffer.from(state, 'base64'), 'remote');
          return doc;
        };
        for (const api of apis) {
          const client: Client = { doc: await fresh(api), outbox: [], inbox: [], api };
          client.doc.on('update', (u: Uint8Array, origin: unknown) => {
            if (origin !== 'remote') client.outbox.push(u);
          });
          clients.push(client);
        }
        const resync = async (client: Client) => {
          client.doc.destroy();
          client.doc = await fresh(client.api);
          client.outbox = [];
          client.inbox = [];
          client.doc.on('update', (u: Uint8Array, origin: unknown) => {
            if (origin !== 'remote') client.outbox.push(u);
          });
        };
        const send = async (client: Client) => {
          if (client.outbox.length === 0) return;
          const update = Buffer.from(Y.mergeUpdates(client.outbox.splice(0))).toString('base64');
          const res = await client.api.request('POST', `${path}/collab`, { update, client_id: 'tab' });
          if (res.statusCode === 400) {
            // Refused content: the client starts again from the server's document, as the app does.
            expect(res.json().message).toMatch(/^update: /);
            await resync(client);
          } else expect(res.statusCode, res.body).toBe(200);
        };
        const receive = (client: Client) => {
          for (const u of client.inbox.splice(0))
            Y.applyUpdate(client.doc, Buffer.from(u, 'base64'), 'remote');
        };
        for (const step of ops) {
          const client = clients[step.who]!;
          const text = client.doc.getText('content');
          switch (step.kind) {
            case 'insert':
              text.insert(Math.min(step.at, text.length), step.text);
              break;
            case 'delete': {
              const at = Math.min(step.at, text.length);
              text.delete(at, Math.min(step.length, text.length - at));
              break;
            }
            case 'embed':
              text.insertEmbed(Math.min(1, text.length), { image: 'x.png' });
              break;
            case 'format':
              text.format(0, Math.min(3, text.length), { bold: true });
              break;
            case 'map':
              client.doc.getMap('meta').set('k', 1);
              break;
            case 'other':
              client.doc.getText('other').insert(0, 'x');
              break;
            case 'send':
              await send(client);
              break;
            case 'receive':
              receive(client);
              break;
            case 'save': {
              // A script's save on the current revision lands exactly as sent.
              kit.server.collab.save(fileId);
              const revision = (await client.api.request('GET', path)).json().revision as number;
              const res = await client.api.request('PUT', path, {
                content: step.text,
                base_revision: revision,
              });
              expect(res.statusCode, res.body).toBe(200);
              expect(res.json().content).toBe(step.text);
              expect((await client.api.request('GET', path)).json().content).toBe(step.text);
              break;
            }
          }
        }
        // Everyone sends and receives what is left: all agree with the server.
        for (const client of clients) await send(client);
        for (const client of clients) receive(client);
        const server = (await apis[0]!.request('GET', path)).json().content as string;
        for (const client of clients) expect(client.doc.getText('content').toString()).toBe(server);
        // And a save now is exact too.
        kit.server.collab.save(fileId);
        const revision = (await apis[0]!.request('GET', path)).json().revision as number;
        const final = await apis[0]!.request('PUT', path, {
          content: 'alpha\nBETA\n',
          base_revision: revision,
        });
        expect(final.json().content).toBe('alpha\nBETA\n');
        expect(kit.server.store.fileById(fileId)!.content).toBe('alpha\nBETA\n');
        close();
        for (const client of clients) client.doc.destroy();
      }),
      { numRuns: 40 },
    );
  }, 120_000);

  it('stamps who sent an update: a client_id naming someone else is not theirs', async () => {
    kit = await makeServer();
    const { loginAs } = await import('./test-kit.ts');
    const uma = await loginAs(kit.server, 'uma', 'umapass1');
    const ada = await loginAs(kit.server, 'ada', 'adapass1');
    await ada.request('POST', '/api/notes', { name: 'n' });
    const fileId = (await uma.request('POST', '/api/notes/n/files', { name: 'f.md', content: 'x\n' })).json()
      .id;
    const seen: Array<{ client_id: string }> = [];
    kit.server.hub.subscribe({
      principal: WATCHER,
      noteId: 1,
      clientId: null,
      lastEventId: null,
      sink: {
        write(chunk) {
          if (chunk.includes('event: collab.update')) seen.push(JSON.parse(/^data: (.+)$/m.exec(chunk)![1]!));
        },
        end() {},
      },
    });
    const path = `/api/notes/n/files/${fileId}/collab`;
    const umaDoc = new Y.Doc();
    Y.applyUpdate(umaDoc, Buffer.from((await uma.request('GET', path)).json().state, 'base64'));
    const umaUpdate = (() => {
      const out: Uint8Array[] = [];
      umaDoc.on('update', (u: Uint8Array) => out.push(u));
      umaDoc.getText('content').insert(0, 'u');
      return Buffer.from(out[0]!).toString('base64');
    })();
    expect((await uma.request('POST', path, { update: umaUpdate, client_id: 'uma-tab' })).statusCode).toBe(
      200,
    );
    const umaStamp = seen.at(-1)!.client_id;
    expect(umaStamp).not.toBe('uma-tab');
    // Ada names uma's chosen id and uma's stamped id: her updates never carry uma's stamp.
    const adaDoc = new Y.Doc();
    Y.applyUpdate(adaDoc, Buffer.from((await ada.request('GET', path)).json().state, 'base64'));
    for (const client_id of ['uma-tab', umaStamp]) {
      const out: Uint8Array[] = [];
      adaDoc.on('update', (u: Uint8Array) => out.push(u));
      adaDoc.getText('content').insert(0, 'a');
      adaDoc.off('update', () => {});
      const res = await ada.request('POST', path, {
        update: Buffer.from(out.at(-1)!).toString('base64'),
        client_id,
      });
      expect(res.statusCode).toBe(200);
      expect(seen.at(-1)!.client_id).not.toBe(umaStamp);
    }
    // Nor can she write under uma's Yjs client id (her editor would drop uma's next change as known).
    const forged = new Y.Doc();
    Y.applyUpdate(forged, Buffer.from((await ada.request('GET', path)).json().state, 'base64'));
    // (Set after loading: Yjs itself picks a new id when it sees its own in a loaded update.)
    forged.clientID = umaDoc.clientID;
    const out: Uint8Array[] = [];
    forged.on('update', (u: Uint8Array) => out.push(u));
    forged.getText('content').insert(0, 'forged');
    const res = await ada.request('POST', path, { update: Buffer.from(out[0]!).toString('base64') });
    expect(res.statusCode).toBe(403);
    expect(res.json().message).toMatch(/belongs to another editor/);
    expect((await uma.request('GET', `/api/notes/n/files/${fileId}`)).json().content).not.toContain('forged');
  });
});
