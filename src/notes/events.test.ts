import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { Sink } from './events.ts';
import type { Principal } from './roles.ts';
import { anonymous, type Client, type Kit, loginAs, makeServer } from './test-kit.ts';

let kit: Kit;
let admin: Client;
let user: Client;
let noteId: number;

interface Stream {
  events: Array<{ id: number | null; name: string; data: Record<string, unknown> }>;
  ended: boolean;
  names(): string[];
  close: () => void;
}

/** Opens a hub stream the way GET /api/events does, recording the parsed SSE frames. */
function open(
  principal: Principal | null,
  note: number | null,
  lastEventId: number | null = null,
  clientId?: string,
): Stream {
  const stream: Stream = {
    events: [],
    ended: false,
    names: () => stream.events.map((e) => e.name),
    close: () => {},
  };
  const sink: Sink = {
    write(chunk) {
      const id = /^id: (\d+)$/m.exec(chunk);
      const name = /^event: (.+)$/m.exec(chunk)![1]!;
      const data = JSON.parse(/^data: (.+)$/m.exec(chunk)![1]!) as Record<string, unknown>;
      stream.events.push({ id: id ? Number(id[1]) : null, name, data });
    },
    end() {
      stream.ended = true;
    },
  };
  stream.close = kit.server.hub.subscribe({
    principal,
    noteId: note,
    clientId: clientId ?? null,
    lastEventId,
    sink,
  });
  return stream;
}

function principal(name: string, role: Principal['role']): Principal {
  return { subject: `local:${name}`, name, provider: 'local', role };
}

/** The principal of a logged-in client, looked up from its session like the route does. */
function sessionPrincipal(c: Client): Principal {
  return kit.server.auth.fromSession(decodeURIComponent(c.cookie!.split('=')[1]!))!;
}

beforeEach(async () => {
  kit = await makeServer();
  admin = await loginAs(kit.server, 'ada', 'adapass1');
  user = await loginAs(kit.server, 'uma', 'umapass1');
  noteId = (await admin.request('POST', '/api/notes', { name: 'pub', public: true })).json().id;
  await user.request('POST', '/api/notes/pub/files', { name: 'open.md', content: 'o\n' });
  await user.request('POST', '/api/notes/pub/files', { name: 'hidden.md', content: 'h\n', public: false });
});

afterEach(async () => {
  await kit.server.close();
});

describe('event permissions at send time', () => {
  it('sends guests only events of public files; users get all', async () => {
    const guest = open(null, noteId);
    const member = open(sessionPrincipal(user), noteId);
    await user.request('PUT', '/api/notes/pub/files/open.md', { content: 'o2\n', base_revision: 1 });
    await user.request('PUT', '/api/notes/pub/files/hidden.md', { content: 'h2\n', base_revision: 1 });
    const saved = (s: Stream) => s.events.filter((e) => e.name === 'file.saved').map((e) => e.data.file_id);
    const [openId, hiddenId] = [
      kit.server.store.findFile(noteId, 'open.md')!.id,
      kit.server.store.findFile(noteId, 'hidden.md')!.id,
    ];
    expect(saved(guest)).toEqual([openId]);
    expect(saved(member)).toEqual([openId, hiddenId]);
    expect(JSON.stringify(guest.events)).not.toContain('h2');
    await user.request('DELETE', '/api/notes/pub/files/hidden.md');
    await user.request('DELETE', '/api/notes/pub/files/open.md');
    const deleted = (s: Stream) =>
      s.events.filter((e) => e.name === 'file.deleted').map((e) => e.data.file_id);
    expect(deleted(guest)).toEqual([openId]);
    expect(deleted(member)).toEqual([hiddenId, openId]);
  });

  it('closes a guest stream at once when the note is made private', async () => {
    const guest = open(null, noteId);
    const lister = open(null, null);
    expect((await admin.request('PATCH', '/api/notes/pub', { public: false })).statusCode).toBe(200);
    expect(guest.names()).toContain('access.revoked');
    expect(guest.ended).toBe(true);
    const before = guest.events.length;
    await user.request('PUT', '/api/notes/pub/files/open.md', { content: 'after\n', base_revision: 1 });
    expect(guest.events.length).toBe(before);
    // A guest on the note list is not told about the now private note's change.
    expect(lister.events.filter((e) => e.name === 'note.updated')).toEqual([]);
    // Nor can it open the stream again.
    expect((await anonymous(kit.server).request('GET', `/api/events?note_id=${noteId}`)).statusCode).toBe(
      404,
    );
  });

  it('stops a demoted user at once', async () => {
    await admin.request('PATCH', '/api/notes/pub', { public: false });
    const stream = open(sessionPrincipal(user), noteId);
    await user.request('PUT', '/api/notes/pub/files/open.md', { content: 'x\n', base_revision: 1 });
    expect(stream.names()).toContain('file.saved');
    expect((await admin.request('PATCH', '/api/users/local:uma', { role: 'guest' })).statusCode).toBe(200);
    expect(stream.names()).toContain('access.revoked');
    expect(stream.ended).toBe(true);
  });

  it('stops a stream whose session logged out from seeing private events', async () => {
    await admin.request('PATCH', '/api/notes/pub', { public: false });
    const stream = open(sessionPrincipal(user), noteId);
    await user.request('POST', '/auth/logout');
    expect(stream.ended).toBe(true);
  });

  it('sends approvals only to admins', () => {
    const asAdmin = open(principal('ada', 'admin'), noteId);
    const asUser = open(principal('uma', 'user'), noteId);
    kit.server.hub.publish({
      name: 'approval.requested',
      noteId,
      adminsOnly: true,
      data: { note_id: noteId },
    });
    kit.server.hub.flush();
    expect(asAdmin.names()).toContain('approval.requested');
    expect(asUser.names()).not.toContain('approval.requested');
  });
});

describe('Last-Event-ID replay', () => {
  it('replays only what the recipient may still see, and never live-only events', async () => {
    const last = kit.server.hub.lastEventId();
    await user.request('PUT', '/api/notes/pub/files/open.md', { content: 'o2\n', base_revision: 1 });
    await user.request('PUT', '/api/notes/pub/files/hidden.md', { content: 'h2\n', base_revision: 1 });
    kit.server.hub.publish({
      name: 'chat.token',
      noteId,
      live: true,
      data: { note_id: noteId, delta: 'tok' },
    });
    const guest = open(null, noteId, last);
    const replayed = guest.events.filter((e) => e.id !== null);
    expect(replayed.map((e) => e.name)).toEqual(['file.saved']);
    expect(replayed[0]!.id).toBeGreaterThan(last);
    const member = open(principal('uma', 'user'), noteId, last);
    expect(member.events.filter((e) => e.name === 'file.saved').length).toBe(2);
    expect(member.names()).not.toContain('chat.token');

    // The note becomes private: a guest replaying from the same point on the note list gets nothing of it.
    await admin.request('PATCH', '/api/notes/pub', { public: false });
    const lister = open(null, null, last);
    expect(lister.events.filter((e) => e.id !== null)).toEqual([]);
  });

  it('replays over HTTP with the Last-Event-ID header', async () => {
    await kit.server.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = kit.server.app.server.address() as { port: number };
    const last = kit.server.hub.lastEventId();
    await user.request('PUT', '/api/notes/pub/files/open.md', { content: 'o2\n', base_revision: 1 });
    const controller = new AbortController();
    const res = await fetch(`http://127.0.0.1:${port}/api/events?note_id=pub`, {
      headers: { 'last-event-id': String(last) },
      signal: controller.signal,
    });
    expect(res.status).toBe(200);
    const reader = res.body!.getReader();
    let text = '';
    while (!text.includes('event: file.saved')) text += Buffer.from((await reader.read()).value!).toString();
    expect(text).toMatch(new RegExp(`id: ${last + 1}\\nevent: file.saved`));
    controller.abort();
  });
});

describe('presence', () => {
  /** Waits (bounded) until a stream has received a presence change that `match` accepts. */
  async function change(stream: Stream, match: (data: Record<string, unknown>) => boolean) {
    for (let i = 0; i < 100; i++) {
      const found = stream.events.find((e) => e.name === 'presence.changed' && match(e.data));
      if (found) return found.data as { set: Array<Record<string, unknown>>; gone: string[] };
      await new Promise((r) => setTimeout(r, 20));
    }
    throw new Error(`no matching presence change in ${JSON.stringify(stream.events)}`);
  }
  const helloId = (stream: Stream) => stream.events.find((e) => e.name === 'hello')!.data.client_id as string;

  it('tells a new stream the whole list, then only changes, under server-stamped client ids', async () => {
    const a = open(sessionPrincipal(user), noteId, null, 'tab-1');
    const stamp = helloId(a);
    expect(stamp).toMatch(/^c_/);
    expect(stamp).not.toContain('tab-1');
    expect(a.events.find((e) => e.name === 'presence')!.data.present).toEqual([]);
    const fileId = kit.server.store.findFile(noteId, 'open.md')!.id;
    const res = await user.request('POST', '/api/notes/pub/presence', {
      client_id: 'tab-1',
      file_id: fileId,
      typing: true,
      state: { cursor: { anchor: 3, head: 5 } },
    });
    expect(res.json()).toEqual({ ok: true });
    const changed = await change(a, (d) => (d.set as Array<{ typing: boolean }>).some((p) => p.typing));
    expect(changed.set).toEqual([
      {
        client_id: stamp,
        name: 'uma',
        role: 'user',
        file_id: fileId,
        typing: true,
        state: { cursor: { anchor: 3, head: 5 } },
      },
    ]);
    // A second stream gets the list as it is now, once; the first one is told the newcomer joined.
    const b = open(sessionPrincipal(admin), noteId, null, 'tab-9');
    expect((b.events.find((e) => e.name === 'presence')!.data.present as unknown[]).length).toBe(1);
    await change(a, (d) => (d.set as Array<{ client_id: string }>).some((p) => p.client_id === helloId(b)));
    b.close();
    await change(a, (d) => (d.gone as string[]).includes(helloId(b)));
  });

  it("lets only the stream's own person and id change its entry; anonymous streams are not claimed", async () => {
    const a = open(sessionPrincipal(user), noteId, null, 'tab-1');
    // The admin names uma's chosen id, and uma's stamped id: neither is theirs.
    for (const client_id of ['tab-1', helloId(a)]) {
      expect(
        (await admin.request('POST', '/api/notes/pub/presence', { client_id, typing: true })).json(),
      ).toEqual({
        ok: false,
      });
    }
    const anon = anonymous(kit.server);
    open(null, noteId);
    expect((await anon.request('POST', '/api/notes/pub/presence', { client_id: 'tab-2' })).json()).toEqual({
      ok: false,
    });
    // An anonymous reader's chosen id is its secret: the same id works, another does not.
    const reader = open(null, noteId, null, 'secret-reader-id');
    expect(
      (
        await anon.request('POST', '/api/notes/pub/presence', { client_id: 'secret-reader-id', typing: true })
      ).json(),
    ).toEqual({ ok: true });
    await change(a, (d) =>
      (d.set as Array<{ client_id: string; typing: boolean }>).some(
        (p) => p.client_id === helloId(reader) && p.typing,
      ),
    );
    expect(kit.server.hub.present(noteId).find((p) => p.client_id === helloId(a))!.typing).toBe(false);
    const big = await user.request('POST', '/api/notes/pub/presence', {
      client_id: 'tab-1',
      state: { blob: 'x'.repeat(5000) },
    });
    expect(big.statusCode).toBe(400);
    expect(big.json().message).toMatch(/state: .* more than the 2048 allowed/);
  });

  it("shows guests and anonymous readers nobody's cursor state, and no file they may not see", async () => {
    const openId = kit.server.store.findFile(noteId, 'open.md')!.id;
    const hiddenId = kit.server.store.findFile(noteId, 'hidden.md')!.id;
    const member = open(sessionPrincipal(user), noteId, null, 'tab-1');
    const other = open(sessionPrincipal(admin), noteId, null, 'tab-2');
    const cursor = { cursor: { anchor: 'AAA', head: 'BBB' } };
    for (const [client_id, file_id] of [
      ['tab-1', hiddenId],
      ['tab-2', openId],
    ] as const) {
      const res = await (client_id === 'tab-1' ? user : admin).request('POST', '/api/notes/pub/presence', {
        client_id,
        file_id,
        state: cursor,
      });
      expect(res.json()).toEqual({ ok: true });
    }
    const seen = (d: Record<string, unknown>) => (d.set as Array<{ state: unknown }>).some((p) => p.state);
    // A reader opening its stream now gets the list without states, and without the private file.
    const reader = open(null, noteId, null, 'reader');
    const present = reader.events.find((e) => e.name === 'presence')!.data.present as Array<
      Record<string, unknown>
    >;
    await change(member, (d) =>
      (d.set as Array<{ client_id: string }>).some((p) => p.client_id === helloId(reader)),
    );
    const late = open(null, noteId, null, 'late-reader');
    const listed = [
      ...present,
      ...(late.events.find((e) => e.name === 'presence')!.data.present as Array<Record<string, unknown>>),
    ];
    expect(listed.length).toBeGreaterThan(0);
    for (const entry of listed) expect(entry.state).toBeNull();
    const byId = new Map(listed.map((e) => [e.client_id, e]));
    expect(byId.get(helloId(member))?.file_id).toBeNull();
    expect(byId.get(helloId(other))?.file_id).toBe(openId);
    // Changes too: the member moves, the reader hears where only when it may see the file.
    await user.request('POST', '/api/notes/pub/presence', {
      client_id: 'tab-1',
      file_id: openId,
      state: cursor,
    });
    const moved = await change(reader, (d) =>
      (d.set as Array<{ client_id: string; file_id: number | null }>).some(
        (p) => p.client_id === helloId(member) && p.file_id === openId,
      ),
    );
    for (const entry of moved.set) expect(entry.state).toBeNull();
    // Members still get each other's cursors.
    await change(other, (d) => seen(d));
    for (const e of reader.events) {
      if (e.name === 'presence.changed')
        for (const p of e.data.set as Array<{ state: unknown }>) expect(p.state).toBeNull();
    }
  });

  it("keeps what readers attach to presence from others, and takes no file of another note or one they can't see", async () => {
    const hiddenId = kit.server.store.findFile(noteId, 'hidden.md')!.id;
    const openId = kit.server.store.findFile(noteId, 'open.md')!.id;
    const member = open(sessionPrincipal(user), noteId, null, 'tab-1');
    const anon = anonymous(kit.server);
    const reader = open(null, noteId, null, 'reader');
    const post = (body: Record<string, unknown>) => anon.request('POST', '/api/notes/pub/presence', body);
    expect((await post({ client_id: 'reader', file_id: hiddenId })).statusCode).toBe(404);
    expect((await post({ client_id: 'reader', file_id: 987654 })).statusCode).toBe(404);
    await admin.request('POST', '/api/notes', { name: 'other', public: true });
    await admin.request('POST', '/api/notes/other/files', { name: 'x.md', content: 'x\n' });
    const elsewhere = kit.server.store.findFile(kit.server.store.findNote('other')!.id, 'x.md')!.id;
    expect(
      (await user.request('POST', '/api/notes/pub/presence', { client_id: 'tab-1', file_id: elsewhere }))
        .statusCode,
    ).toBe(404);
    const res = await post({ client_id: 'reader', file_id: openId, state: { junk: 'x'.repeat(1900) } });
    expect(res.json()).toEqual({ ok: true });
    const changed = await change(member, (d) =>
      (d.set as Array<{ client_id: string; file_id: number | null }>).some(
        (p) => p.client_id === helloId(reader) && p.file_id === openId,
      ),
    );
    expect(changed.set.find((p) => p.client_id === helloId(reader))!.state).toBeNull();
  });

  it('sends the joins of many streams as one change', async () => {
    const watcher = open(sessionPrincipal(user), noteId, null, 'watcher');
    for (let i = 0; i < 50; i++) open(null, noteId, null, `reader-${i}`);
    const joined = await change(watcher, (d) => (d.set as unknown[]).length >= 50);
    expect(joined.set.length).toBe(51);
    expect(watcher.events.filter((e) => e.name === 'presence.changed').length).toBe(1);
  });
});

describe('a stream that follows one file', () => {
  /** The files whose collaborative updates a stream received, in order, without repeats. */
  const updatedFiles = (s: Stream) => [
    ...new Set(s.events.filter((e) => e.name === 'collab.update').map((e) => e.data.file_id)),
  ];
  /** Fetches a file's collaborative state, as the tab `tab` when given. */
  const fetchState = async (c: Client, name: string, tab?: string) => {
    const res = await c.request(
      'GET',
      `/api/notes/pub/files/${name}/collab${tab ? `?client_id=${tab}` : ''}`,
    );
    expect(res.statusCode).toBe(200);
  };
  const save = async (name: string, content: string) => {
    const file = kit.server.store.findFile(noteId, name)!;
    const res = await user.request('PUT', `/api/notes/pub/files/${name}`, {
      content,
      base_revision: file.revision,
    });
    expect(res.statusCode).toBe(200);
  };

  it("receives only that file's live updates once its tab fetched the file's state by its id", async () => {
    const open_ = kit.server.store.findFile(noteId, 'open.md')!.id;
    const hidden = kit.server.store.findFile(noteId, 'hidden.md')!.id;
    const follower = open(sessionPrincipal(user), noteId, null, 'tab-a');
    const other = open(sessionPrincipal(user), noteId, null, 'tab-b');
    const unnamed = open(sessionPrincipal(user), noteId);
    // Both files live (their documents loaded), so plain saves reach streams as collab updates.
    await fetchState(user, 'hidden.md');
    await fetchState(user, 'open.md', 'tab-a');
    // Another person naming the same tab id gets another stamp: it cannot re-point uma's stream.
    await fetchState(admin, 'hidden.md', 'tab-a');
    await save('open.md', 'o3\n');
    await save('hidden.md', 'h3\n');
    expect(updatedFiles(follower)).toEqual([open_]);
    expect(updatedFiles(other)).toEqual([open_, hidden]);
    expect(updatedFiles(unnamed)).toEqual([open_, hidden]);
    // Every other event still reaches the follower: both files' saves.
    const saved = follower.events.filter((e) => e.name === 'file.saved').map((e) => e.data.file_id);
    expect(saved).toEqual(expect.arrayContaining([open_, hidden]));

    // The tab switches files: from its next fetch on, it follows the other one.
    follower.events.length = 0;
    await fetchState(user, 'hidden.md', 'tab-a');
    await save('open.md', 'o4\n');
    await save('hidden.md', 'h4\n');
    expect(updatedFiles(follower)).toEqual([hidden]);
  });

  it('changes nothing for a tab whose stream is not open (it keeps every file)', async () => {
    const hidden = kit.server.store.findFile(noteId, 'hidden.md')!.id;
    const open_ = kit.server.store.findFile(noteId, 'open.md')!.id;
    await fetchState(user, 'open.md', 'tab-c');
    await fetchState(user, 'hidden.md');
    const late = open(sessionPrincipal(user), noteId, null, 'tab-c');
    await save('open.md', 'o5\n');
    await save('hidden.md', 'h5\n');
    expect(updatedFiles(late)).toEqual([open_, hidden]);
  });

  it('refuses a tab id longer than 64 characters', async () => {
    const res = await user.request('GET', `/api/notes/pub/files/open.md/collab?client_id=${'x'.repeat(65)}`);
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: 'BAD_REQUEST', message: expect.stringContaining('client_id') });
  });
});

describe('one write per stream per turn', () => {
  /** A stream whose sink takes bytes, as the HTTP route's does, recording each write. */
  function byteStream(p: Principal | null, note: number) {
    const writes: Buffer[] = [];
    const sink: Sink = {
      write() {},
      writeBytes: (chunk) => writes.push(chunk),
      end() {},
    };
    kit.server.hub.subscribe({ principal: p, noteId: note, clientId: null, lastEventId: null, sink });
    return writes;
  }
  const names = (b: Buffer) => [...b.toString().matchAll(/^event: (.+)$/gm)].map((m) => m[1]);

  it("sends a save's events to each stream in one write, the same buffer for the same view", async () => {
    const one = byteStream(sessionPrincipal(user), noteId);
    const two = byteStream(sessionPrincipal(admin), noteId);
    const reader = byteStream(null, noteId);
    // Live, so the save is a collaborative update as well as a new revision.
    expect((await user.request('GET', '/api/notes/pub/files/open.md/collab')).statusCode).toBe(200);
    const res = await user.request('PUT', '/api/notes/pub/files/open.md', {
      content: 'o9\n',
      base_revision: 1,
    });
    expect(res.statusCode).toBe(200);
    for (const writes of [one, two, reader]) {
      expect(writes).toHaveLength(1);
      expect(names(writes[0]!)).toEqual(['collab.update', 'file.saved']);
    }
    expect(two[0]).toBe(one[0]);
    expect(reader[0]).not.toBe(one[0]);
  });

  it('writes what a stream had queued before it is told its access ended', async () => {
    const writes: string[] = [];
    let ended = false;
    kit.server.hub.subscribe({
      principal: null,
      noteId,
      clientId: null,
      lastEventId: null,
      sink: {
        write: (chunk) => writes.push(`text ${names(Buffer.from(chunk)).join()}`),
        writeBytes: (chunk) => writes.push(`bytes ${names(chunk).join()}`),
        end: () => {
          ended = true;
        },
      },
    });
    writes.length = 0;
    const { hub, store } = kit.server;
    const fileId = store.findFile(noteId, 'open.md')!.id;
    hub.publish({ name: 'chat.token', noteId, live: true, data: { note_id: noteId, delta: 'x' } });
    store.db.prepare('update notes set public = 0 where id = ?').run(noteId);
    hub.publish({ name: 'file.saved', noteId, fileId, data: { note_id: noteId, file_id: fileId } });
    hub.flush();
    expect(writes).toEqual(['bytes chat.token', 'text access.revoked']);
    expect(ended).toBe(true);
  });
});
