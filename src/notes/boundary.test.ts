// The notes server's boundary under abuse: bad input gives the documented 4xx (never a 500) with
// the security headers, limits answer 413/429, rights follow the configuration as it is now, and
// the event replay tells readers nothing they could not see.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LightMyRequestResponse } from 'fastify';
import { afterEach, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { loadConfig } from '../config/load.ts';
import { silentLogger } from '../core/logger.ts';
import { build, type NotesServer } from './server.ts';
import { ACCOUNTS, anonymous, bearer, type Client, loginAs } from './test-kit.ts';

const servers: NotesServer[] = [];
afterEach(async () => {
  for (const server of servers.splice(0)) await server.close();
});

function configOf(toml: string) {
  return loadConfig({ env: {}, file: '/virtual/rune.toml', readFile: () => toml }).config;
}

async function start(toml = ACCOUNTS, dir = mkdtempSync(join(tmpdir(), 'rune-notes-boundary-'))) {
  const server = await build({ config: configOf(toml), dataDir: dir, logger: silentLogger, idleMs: 20 });
  servers.push(server);
  return { server, dir };
}

/** Headers helmet puts on every response. */
function expectSecurityHeaders(res: LightMyRequestResponse) {
  expect(res.headers['x-content-type-options']).toBe('nosniff');
  expect(res.headers['x-frame-options']).toBe('DENY');
  expect(res.headers['referrer-policy']).toBe('same-origin');
  expect(String(res.headers['content-security-policy'])).toContain("default-src 'none'");
}

function expectShape(res: LightMyRequestResponse, status: number, code: string) {
  expect(res.statusCode, res.body).toBe(status);
  expect(Object.keys(res.json()).sort()).toEqual(expect.arrayContaining(['code', 'message']));
  expect(res.json().code).toBe(code);
  expectSecurityHeaders(res);
}

async function seeded(toml = ACCOUNTS) {
  const { server, dir } = await start(toml);
  const admin = await loginAs(server, 'ada', 'adapass1');
  const user = await loginAs(server, 'uma', 'umapass1');
  expect((await admin.request('POST', '/api/notes', { name: 'pub', public: true })).statusCode).toBe(201);
  expect(
    (await user.request('POST', '/api/notes/pub/files', { name: 'a.md', content: 'zebra\n' })).statusCode,
  ).toBe(201);
  return { server, dir, admin, user, anon: anonymous(server) };
}

describe('a request labelled JSON with no body', () => {
  it('is a request without a body, not a malformed one; malformed JSON is still a 400', async () => {
    const { admin, user } = await seeded();
    const json = { 'content-type': 'application/json' };
    const bad = await user.request('POST', '/api/notes/pub/files', '{"name": ', json);
    expectShape(bad, 400, 'BAD_REQUEST');
    const proto = await user.request('POST', '/api/notes/pub/files', '{"__proto__": {"x": 1}}', json);
    expect(proto.statusCode).toBe(400);
    expect((await user.request('DELETE', '/api/notes/pub/files/a.md', undefined, json)).statusCode).toBe(200);
    expect((await admin.request('DELETE', '/api/notes/pub', undefined, json)).statusCode).toBe(200);
  });
});

describe('a request labelled JSON with no body is no way around a check', () => {
  it('still needs the CSRF token, and still answers 400 where a field is required', async () => {
    const { server, admin, user } = await seeded();
    const json = { 'content-type': 'application/json' };
    // A cookie session without its token: refused before the empty body matters.
    const noToken = await server.app.inject({
      method: 'DELETE',
      url: '/api/notes/pub',
      headers: { ...json, cookie: admin.cookie! },
      payload: '',
    });
    expectShape(noToken, 403, 'CSRF');
    expect(server.store.findNote('pub', false)).toBeTruthy();
    // Routes whose body says what to do refuse an empty one as they refuse `{}`.
    for (const [client, method, url] of [
      [user, 'PUT', '/api/notes/pub/files/a.md'],
      [user, 'POST', '/api/notes/pub/files/a.md/collab'],
      [user, 'POST', '/api/notes/pub/presence'],
      [admin, 'POST', '/api/approvals/1'],
      [user, 'POST', '/api/notes/pub/files'],
    ] as const) {
      const res = await client.request(method, url, undefined, json);
      expect(res.statusCode, `${method} ${url}: ${res.body}`).toBe(400);
    }
    const login = await server.app.inject({ method: 'POST', url: '/auth/local', headers: json, payload: '' });
    expectShape(login, 400, 'BAD_REQUEST');
  });
});

describe('bad input is a 4xx in the documented shape, with the security headers', () => {
  it('answers q=%00, repeated parameters, huge numbers and over-long parameters so', async () => {
    const { server, admin, anon } = await seeded();
    expectShape(await anon.request('GET', '/api/search?q=%00'), 400, 'BAD_REQUEST');
    expectShape(await anon.request('GET', '/api/search?q=a&q=b'), 400, 'BAD_REQUEST');
    expectShape(await anon.request('GET', `/api/search?q=${'w '.repeat(200)}`), 400, 'BAD_REQUEST');
    const token = await admin.request('POST', '/api/tokens', {
      name: 't',
      role: 'user',
      expires_in_days: 1e308,
    });
    expectShape(token, 400, 'BAD_REQUEST');
    expect(token.json().message).toMatch(/expires_in_days/);
    expectShape(
      await anon.request('GET', '/api/notes/pub/files/a.md/revisions/99999999999999999999'),
      400,
      'BAD_REQUEST',
    );
    expectShape(await anon.request('GET', `/api/notes/${'x'.repeat(3000)}`), 414, 'URI_TOO_LONG');
    expectShape(await anon.request('GET', '/api/notes/%E0%A4%A'), 400, 'BAD_REQUEST');
    expectShape(await anon.request('GET', '/no/such/route'), 404, 'NOT_FOUND');
    expectShape(await bearer(server, 'rune_nope').request('GET', '/api/me'), 401, 'UNAUTHENTICATED');
  });

  it('refuses a repeated query parameter on every route that reads one (an array reached a lookup: 500)', async () => {
    const { admin } = await seeded();
    for (const [method, path] of [
      ['GET', '/api/approvals?note=&note='],
      ['GET', '/api/approvals?note=pub&note=pub'],
      ['GET', '/api/notes?deleted=1&deleted=1'],
      ['GET', '/api/notes/pub/files?deleted=1&deleted=0'],
      ['GET', '/api/notes/pub/chat?limit=1&limit=2&before=1&before=2'],
      ['GET', '/api/events?note_id=pub&note_id=pub'],
      ['GET', '/api/notes/pub/export?format=zip&format=tar'],
      ['DELETE', '/api/notes/pub/files/a.md?purge=1&purge=1'],
      ['POST', '/api/notes/pub/uploads?name=a.png&name=b.png'],
    ] as const) {
      const res = await admin.request(method, path);
      expectShape(res, 400, 'BAD_REQUEST');
      expect(res.json().message, `${method} ${path}`).toMatch(/give this query parameter once|give it once/);
    }
    // Nothing was changed by the refused requests.
    expect((await admin.request('GET', '/api/notes/pub/files/a.md')).statusCode).toBe(200);
  });

  it('reaches a 120-character name of 4-byte characters on every route', async () => {
    const { admin, user, anon } = await seeded();
    const noteName = '𝒜'.repeat(120);
    const fileName = '😀'.repeat(120);
    expect((await admin.request('POST', '/api/notes', { name: noteName, public: true })).statusCode).toBe(
      201,
    );
    const note = encodeURIComponent(noteName);
    const file = encodeURIComponent(fileName);
    expect(
      (await user.request('POST', `/api/notes/${note}/files`, { name: fileName, content: 'x\n' })).statusCode,
    ).toBe(201);
    for (const path of [
      `/api/notes/${note}`,
      `/api/notes/${note}/files/${file}`,
      `/api/notes/${note}/files/${file}/revisions`,
      `/api/notes/${note}/files/${file}/revisions/1`,
      `/api/notes/${note}/files/${file}/collab`,
      `/raw/${note}/${file}`,
    ]) {
      expect((await anon.request('GET', path)).statusCode, path).toBe(200);
    }
    expect(
      (await user.request('PUT', `/api/notes/${note}/files/${file}`, { content: 'y\n', base_revision: 1 }))
        .statusCode,
    ).toBe(200);
    // A name in another normal form finds the same file.
    expect((await anon.request('GET', `/api/notes/${note}/files/${file}`)).json().content).toBe('y\n');
  });

  it("logs in again while signed in, without the old session's CSRF token, and ends the old session", async () => {
    const { server, user } = await seeded();
    const again = await server.app.inject({
      method: 'POST',
      url: '/auth/local',
      payload: { username: 'ada', password: 'adapass1' },
      headers: { cookie: user.cookie!, accept: 'application/json' },
    });
    expect(again.statusCode, again.body).toBe(200);
    expect(again.json().user.name).toBe('ada');
    expect((await user.request('GET', '/api/me')).json().user).toBeNull();
    // Another site still cannot log the browser in.
    const cross = await server.app.inject({
      method: 'POST',
      url: '/auth/local',
      payload: { username: 'ada', password: 'adapass1' },
      headers: { cookie: user.cookie!, 'sec-fetch-site': 'cross-site' },
    });
    expect(cross.statusCode).toBe(403);
  });
});

describe('limits', () => {
  const LIMITED = `[notes.limits]\nmax_file_kb = 4\nmax_update_kb = 2\nmax_document_kb = 16\n${ACCOUNTS}`;

  it('answers 413 for a file, an update or a document state past its limit, and keeps the text', async () => {
    const { user } = await seeded(LIMITED);
    const big = 'x'.repeat(5000);
    expectShape(
      await user.request('POST', '/api/notes/pub/files', { name: 'big.md', content: big }),
      413,
      'TOO_LARGE',
    );
    expectShape(
      await user.request('PUT', '/api/notes/pub/files/a.md', { content: big, base_revision: 1 }),
      413,
      'TOO_LARGE',
    );
    const path = '/api/notes/pub/files/a.md/collab';
    /** A client synced with the server; after a refusal a client starts again from the server's state. */
    const session = async () => {
      const doc = new Y.Doc();
      Y.applyUpdate(doc, Buffer.from((await user.request('GET', path)).json().state, 'base64'));
      const send = async (change: (text: Y.Text) => void) => {
        const out: Uint8Array[] = [];
        const listener = (u: Uint8Array) => out.push(u);
        doc.on('update', listener);
        change(doc.getText('content'));
        doc.off('update', listener);
        return user.request('POST', path, { update: Buffer.from(Y.mergeUpdates(out)).toString('base64') });
      };
      return { doc, send };
    };
    let client = await session();
    // One update larger than max_update_kb.
    expectShape(await client.send((t) => t.insert(0, 'y'.repeat(3000))), 413, 'TOO_LARGE');
    // Updates that each fit, but would make the file larger than max_file_kb.
    client = await session();
    let last: LightMyRequestResponse | undefined;
    for (let i = 0; i < 4; i++) {
      last = await client.send((t) => t.insert(0, 'z'.repeat(1500)));
      if (last.statusCode !== 200) break;
    }
    expectShape(last!, 413, 'TOO_LARGE');
    expect(last!.json().message).toMatch(/more than the 4096 a file may have/);
    // Replacing text near the limit is measured exactly: deleting as much as is inserted fits.
    client = await session();
    const length = client.doc.getText('content').length;
    const swap = await client.send((t) => {
      t.delete(0, 1500);
      t.insert(0, 'w'.repeat(1500));
    });
    expect(swap.statusCode, swap.body).toBe(200);
    expect((await user.request('GET', '/api/notes/pub/files/a.md')).json().content.length).toBe(length);
    // The history grows with every replacement until max_document_kb.
    let state: LightMyRequestResponse | undefined;
    for (let i = 0; i < 300; i++) {
      state = await client.send((t) => {
        for (let k = 0; k < 40; k++) {
          t.delete(k * 7, 1);
          t.insert(k * 7, String.fromCharCode(97 + ((i + k) % 26)));
        }
      });
      if (state.statusCode !== 200) break;
    }
    expectShape(state!, 413, 'TOO_LARGE');
    expect(state!.json().message).toMatch(/editing history is at its limit/);
  });

  it('answers 429 past the event streams one client may hold', async () => {
    const { server } = await seeded(`[notes.limits]\nmax_streams_per_client = 3\n${ACCOUNTS}`);
    await server.app.listen({ host: '127.0.0.1', port: 0 });
    const { port } = server.app.server.address() as { port: number };
    const controller = new AbortController();
    const open = () =>
      fetch(`http://127.0.0.1:${port}/api/events?note_id=pub`, { signal: controller.signal });
    const opened = [await open(), await open(), await open()];
    expect(opened.map((r) => r.status)).toEqual([200, 200, 200]);
    // The stream writes its own head (a hijacked reply): the security headers are in it too.
    expect(opened[0]!.headers.get('x-content-type-options')).toBe('nosniff');
    expect(opened[0]!.headers.get('x-frame-options')).toBe('DENY');
    expect(opened[0]!.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const refused = await open();
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(((await refused.json()) as { message: string }).message).toMatch(/already holds 3 event streams/);
    controller.abort();
  });
});

describe('rights follow the configuration as it is now', () => {
  const BEFORE = `[notes.local]\nadmins = ["ada:adapass1"]\nusers = ["uma:umapass1"]`;
  const AFTER = `[notes.local]\nadmins = ["ada:adapass1"]`;

  /** uma is promoted to admin by ada, mints a token, and that token mints another. */
  async function promoted(dir?: string) {
    const { server, dir: folder } = await start(BEFORE, dir);
    const ada = await loginAs(server, 'ada', 'adapass1');
    expect((await ada.request('PATCH', '/api/users/local%3Auma', { role: 'admin' })).statusCode).toBe(200);
    const uma = await loginAs(server, 'uma', 'umapass1');
    const minted = await uma.request('POST', '/api/tokens', { name: 'script', role: 'admin' });
    expect(minted.statusCode).toBe(201);
    const token = minted.json().token as string;
    const child = await bearer(server, token).request('POST', '/api/tokens', { name: 'child', role: 'user' });
    expect(child.statusCode).toBe(201);
    return { server, dir: folder, uma, token, child: child.json().token as string };
  }

  async function expectGone(server: NotesServer, uma: Client, tokens: string[]) {
    const me = await server.app.inject({ method: 'GET', url: '/api/me', headers: { cookie: uma.cookie! } });
    expect(me.json().user).toBeNull();
    const mint = await server.app.inject({
      method: 'POST',
      url: '/api/tokens',
      payload: { name: 'again', role: 'admin' },
      headers: { cookie: uma.cookie!, 'x-csrf-token': uma.csrf! },
    });
    expect(mint.statusCode).toBe(401);
    for (const token of tokens)
      expect((await bearer(server, token).request('GET', '/api/me')).statusCode).toBe(401);
    const login = await anonymous(server).request('POST', '/auth/local', {
      username: 'uma',
      password: 'umapass1',
    });
    expect(login.statusCode).toBe(401);
  }

  it('a removed account loses its sessions, its tokens and the tokens they minted at a restart', async () => {
    const { server, dir, uma, token, child } = await promoted();
    await server.close();
    servers.splice(servers.indexOf(server), 1);
    const { server: restarted } = await start(AFTER, dir);
    await expectGone(restarted, uma, [token, child]);
    // The session row itself is gone, not merely unusable.
    expect(
      restarted.store.db.prepare("select count(*) as n from sessions where subject = 'local:uma'").get(),
    ).toEqual({
      n: 0,
    });
  });

  it('and at once on a reload, its open event streams closed', async () => {
    const { server, uma, token, child } = await promoted();
    const ended: string[] = [];
    const principal = server.auth.fromSession(decodeURIComponent(uma.cookie!.split('=')[1]!))!;
    server.hub.subscribe({
      principal,
      noteId: null,
      clientId: null,
      lastEventId: null,
      sink: { write: () => {}, end: () => ended.push('list') },
    });
    expect(server.reload(configOf(AFTER))).toBe(1);
    expect(ended).toEqual(['list']);
    await expectGone(server, uma, [token, child]);
    // Put back, uma logs in again; the overrides and tokens that were not revoked come back with her.
    server.reload(configOf(BEFORE));
    expect((await bearer(server, token).request('GET', '/api/me')).json().role).toBe('admin');
  });

  it('the generated admin stops once the config names its own accounts', async () => {
    const { server, dir } = await start('');
    const generated = server.generatedAdmin!;
    expect(
      (
        await anonymous(server).request('POST', '/auth/local', {
          username: 'admin',
          password: generated.password,
        })
      ).statusCode,
    ).toBe(200);
    await server.close();
    servers.splice(servers.indexOf(server), 1);
    const { server: configured } = await start(AFTER, dir);
    expect(
      (
        await anonymous(configured).request('POST', '/auth/local', {
          username: 'admin',
          password: generated.password,
        })
      ).statusCode,
    ).toBe(401);
  });
});

describe('event replay', () => {
  function replay(server: NotesServer, noteId: number | null, principal = null) {
    const frames: string[] = [];
    const close = server.hub.subscribe({
      principal,
      noteId,
      clientId: null,
      lastEventId: 0,
      sink: { write: (chunk) => frames.push(chunk), end: () => {} },
    });
    close();
    return frames.join('');
  }

  it('never tells readers the name of a file that was private, even after it is purged', async () => {
    const { server, admin, user } = await seeded();
    const note = server.store.findNote('pub')!;
    expect(
      (
        await user.request('POST', '/api/notes/pub/files', {
          name: 'secret-plan.md',
          content: 's\n',
          public: false,
        })
      ).statusCode,
    ).toBe(201);
    expect((await user.request('DELETE', '/api/notes/pub/files/secret-plan.md')).statusCode).toBe(200);
    expect((await admin.request('DELETE', '/api/notes/pub/files/secret-plan.md?purge=1')).statusCode).toBe(
      200,
    );
    const told = replay(server, note.id);
    expect(told).toContain('a.md');
    expect(told).not.toContain('secret-plan');
  });

  it('never tells readers the old name of a note that was private then', async () => {
    const { server, admin } = await seeded();
    expect((await admin.request('POST', '/api/notes', { name: 'acquisition-x' })).statusCode).toBe(201);
    expect(
      (await admin.request('PATCH', '/api/notes/acquisition-x', { name: 'blog', public: true })).statusCode,
    ).toBe(200);
    const told = replay(server, null);
    expect(told).toContain('blog');
    expect(told).not.toContain('acquisition-x');
  });
});
