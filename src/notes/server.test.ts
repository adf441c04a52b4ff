import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { unzipSync } from 'fflate';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { hashPassword, verifyPassword } from './passwords.ts';
import { ACCOUNTS, anonymous, bearer, type Client, type Kit, loginAs, makeServer } from './test-kit.ts';

let kit: Kit;
let admin: Client;
let user: Client;
let guest: Client;
let anon: Client;

async function setup(toml?: string, extra = {}) {
  kit = await makeServer(toml, extra);
  admin = await loginAs(kit.server, 'ada', 'adapass1');
  user = await loginAs(kit.server, 'uma', 'umapass1');
  guest = await loginAs(kit.server, 'gus', 'guspass1');
  anon = anonymous(kit.server);
}

afterEach(async () => {
  await kit?.server.close();
});

/** A public note "pub" (public file a.md, private file secret.md) and a private note "priv" (b.md). */
async function seed() {
  expect((await admin.request('POST', '/api/notes', { name: 'pub', public: true })).statusCode).toBe(201);
  expect((await admin.request('POST', '/api/notes', { name: 'priv' })).statusCode).toBe(201);
  expect(
    (await user.request('POST', '/api/notes/pub/files', { name: 'a.md', content: '# A\n' })).statusCode,
  ).toBe(201);
  expect(
    (
      await user.request('POST', '/api/notes/pub/files', {
        name: 'secret.md',
        content: 'hidden\n',
        public: false,
      })
    ).statusCode,
  ).toBe(201);
  expect(
    (await user.request('POST', '/api/notes/priv/files', { name: 'b.md', content: 'bee\n' })).statusCode,
  ).toBe(201);
}

describe('passwords', () => {
  it('hashes with scrypt and verifies only the right password', async () => {
    const hash = await hashPassword('s3cret');
    expect(hash).toMatch(/^scrypt\$16384\$8\$1\$/);
    expect(await verifyPassword('s3cret', hash)).toBe(true);
    expect(await verifyPassword('s3creT', hash)).toBe(false);
  });
});

describe('auth', () => {
  beforeEach(() => setup());

  it('warns at start about plain-text passwords', () => {
    expect(kit.warnings.join('')).toMatch(/plain-text passwords for ada, uma, gus/);
  });

  it('accepts hashed passwords from the config', async () => {
    await kit.server.close();
    const hash = await hashPassword('pw-hashed');
    await setup(
      `[notes.local]\nadmins = ["ada:adapass1"]\nusers = ["uma:umapass1", "hal:${hash}"]\nguests = ["gus:guspass1"]`,
    );
    const hal = await loginAs(kit.server, 'hal', 'pw-hashed');
    const me = await hal.request('GET', '/api/me');
    expect(me.json().user).toEqual({ name: 'hal', role: 'user', provider: 'local' });
  });

  it('rejects a wrong password with 401 {code, message}', async () => {
    const res = await anon.request('POST', '/auth/local', { username: 'ada', password: 'nope' });
    expect(res.statusCode).toBe(401);
    expect(res.json()).toEqual({ code: 'UNAUTHENTICATED', message: 'wrong user name or password' });
  });

  it('logs in with a form post and redirects; the cookie is HttpOnly SameSite', async () => {
    const res = await kit.server.app.inject({
      method: 'POST',
      url: '/auth/local',
      payload: 'username=uma&password=umapass1',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(res.statusCode).toBe(303);
    expect(res.headers.location).toBe('/');
    const setCookie = String(res.headers['set-cookie']);
    expect(setCookie).toMatch(/^rune_session=[^;]+;/);
    for (const attribute of ['Path=/', 'HttpOnly', 'SameSite=Lax', 'Max-Age=1209600'])
      expect(setCookie.split('; ')).toContain(attribute);
    expect(setCookie).not.toMatch(/Secure/);
  });

  it('marks the cookie Secure behind https', async () => {
    const res = await kit.server.app.inject({
      method: 'POST',
      url: '/auth/local',
      payload: { username: 'uma', password: 'umapass1' },
      headers: { 'x-forwarded-proto': 'https' },
    });
    // Without trusted proxies the forwarded protocol is ignored.
    expect(String(res.headers['set-cookie'])).not.toMatch(/Secure/);
    await kit.server.close();
    await setup(
      `public_url_placeholder = 1`.replace(
        /.*/,
        `[notes]\npublic_url = "https://notes.example.org"\n[notes.local]\nadmins = ["ada:adapass1"]\nusers = ["uma:umapass1"]\nguests = ["gus:guspass1"]`,
      ),
    );
    const res2 = await kit.server.app.inject({
      method: 'POST',
      url: '/auth/local',
      payload: { username: 'uma', password: 'umapass1' },
    });
    expect(String(res2.headers['set-cookie'])).toMatch(/; Secure/);
  });

  it('regenerates the session id at login and ends the old one', async () => {
    const again = await kit.server.app.inject({
      method: 'POST',
      url: '/auth/local',
      payload: { username: 'uma', password: 'umapass1' },
      headers: { cookie: user.cookie!, 'x-csrf-token': user.csrf! },
    });
    const fresh = String(again.headers['set-cookie']).split(';')[0];
    expect(fresh).not.toBe(user.cookie);
    expect((await user.request('GET', '/api/me')).json().user).toBeNull();
  });

  it('logout ends the session', async () => {
    expect((await user.request('POST', '/auth/logout')).statusCode).toBe(200);
    expect((await user.request('GET', '/api/me')).json()).toMatchObject({ user: null, role: 'anonymous' });
  });

  it('limits login attempts per account and answers 429 with Retry-After', async () => {
    // Ten attempts per account by default (notes.limits.login_attempts_per_account); the login
    // of the set-up was the first.
    for (let i = 0; i < 9; i++) {
      expect(
        (await anon.request('POST', '/auth/local', { username: 'uma', password: `bad${i}` })).statusCode,
      ).toBe(401);
    }
    const blocked = await anon.request('POST', '/auth/local', { username: 'uma', password: 'umapass1' });
    expect(blocked.statusCode).toBe(429);
    expect(blocked.json().code).toBe('RATE_LIMITED');
    expect(Number(blocked.headers['retry-after'])).toBeGreaterThan(0);
    // Another account from the same address is not blocked by that.
    expect(
      (await anon.request('POST', '/auth/local', { username: 'ada', password: 'adapass1' })).statusCode,
    ).toBe(200);
  });

  it('limits attempts per client address, trusting X-Forwarded-For only from configured proxies', async () => {
    await kit.server.close();
    await setup(
      `[notes]\ntrusted_proxies = ["127.0.0.1"]\n[notes.limits]\nlogin_attempts_per_account = 100\nlogin_attempts_per_address = 3\n[notes.local]\nadmins = ["ada:adapass1"]\nusers = ["uma:umapass1"]\nguests = ["gus:guspass1"]`,
    );
    const attempt = (xff: string, username: string) =>
      kit.server.app.inject({
        method: 'POST',
        url: '/auth/local',
        payload: { username, password: 'wrong' },
        headers: { 'x-forwarded-for': xff },
        remoteAddress: '127.0.0.1',
      });
    for (const name of ['a1', 'a2', 'a3']) expect((await attempt('203.0.113.5', name)).statusCode).toBe(401);
    expect((await attempt('203.0.113.5', 'a4')).statusCode).toBe(429);
    // A different client behind the same proxy is its own address.
    expect((await attempt('203.0.113.9', 'a5')).statusCode).toBe(401);
    // From an untrusted peer the header is ignored: the peer address counts.
    const untrusted = (name: string, xff: string) =>
      kit.server.app.inject({
        method: 'POST',
        url: '/auth/local',
        payload: { username: name, password: 'wrong' },
        headers: { 'x-forwarded-for': xff },
        remoteAddress: '198.51.100.7',
      });
    for (const [i, name] of ['b1', 'b2', 'b3'].entries()) {
      expect((await untrusted(name, `10.0.0.${i}`)).statusCode).toBe(401);
    }
    expect((await untrusted('b4', '10.0.0.99')).statusCode).toBe(429);
  });

  it('creates an admin with a random password when no login is configured, once', async () => {
    await kit.server.close();
    kit = await makeServer('');
    const generated = kit.server.generatedAdmin;
    expect(generated?.name).toBe('admin');
    expect(generated?.password.length).toBeGreaterThanOrEqual(20);
    const a = await loginAs(kit.server, 'admin', generated!.password);
    expect((await a.request('GET', '/api/me')).json().role).toBe('admin');
  });
});

describe('CSRF', () => {
  beforeEach(() => setup());

  it('refuses a cookie-authenticated change without the token', async () => {
    const res = await kit.server.app.inject({
      method: 'POST',
      url: '/api/notes',
      payload: { name: 'x' },
      headers: { cookie: admin.cookie! },
    });
    expect(res.statusCode).toBe(403);
    expect(res.json().code).toBe('CSRF');
  });

  it('refuses a wrong token, a foreign Origin and cross-site fetch metadata', async () => {
    const base = { cookie: admin.cookie!, 'x-csrf-token': admin.csrf!, host: 'notes.local:9527' };
    const wrong = await kit.server.app.inject({
      method: 'POST',
      url: '/api/notes',
      payload: { name: 'x' },
      headers: { ...base, 'x-csrf-token': 'nope' },
    });
    expect(wrong.json().code).toBe('CSRF');
    const foreign = await kit.server.app.inject({
      method: 'POST',
      url: '/api/notes',
      payload: { name: 'x' },
      headers: { ...base, origin: 'https://evil.example' },
    });
    expect(foreign.json().code).toBe('CSRF');
    const crossSite = await kit.server.app.inject({
      method: 'POST',
      url: '/api/notes',
      payload: { name: 'x' },
      headers: { ...base, 'sec-fetch-site': 'cross-site' },
    });
    expect(crossSite.json().code).toBe('CSRF');
    const login = await kit.server.app.inject({
      method: 'POST',
      url: '/auth/local',
      payload: { username: 'ada', password: 'adapass1' },
      headers: { origin: 'https://evil.example' },
    });
    expect(login.statusCode).toBe(403);
    const ok = await kit.server.app.inject({
      method: 'POST',
      url: '/api/notes',
      payload: { name: 'x' },
      headers: { ...base, origin: 'http://notes.local:9527', 'sec-fetch-site': 'same-origin' },
    });
    expect(ok.statusCode).toBe(201);
  });

  it('needs no CSRF token with a bearer token', async () => {
    const created = await admin.request('POST', '/api/tokens', { name: 'ci', role: 'admin' });
    expect(created.statusCode).toBe(201);
    const token = created.json().token as string;
    expect(token).toMatch(/^rune_/);
    const res = await bearer(kit.server, token).request('POST', '/api/notes', { name: 'via-token' });
    expect(res.statusCode).toBe(201);
  });
});

describe('roles', () => {
  beforeEach(async () => {
    await setup();
    await seed();
  });

  it('applies the capability table to every kind of request', async () => {
    type Row = [string, 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE', string, unknown, Record<string, number>];
    const rows: Row[] = [
      ['list notes', 'GET', '/api/notes', undefined, { admin: 200, user: 200, guest: 200, anon: 200 }],
      [
        'read public note',
        'GET',
        '/api/notes/pub',
        undefined,
        { admin: 200, user: 200, guest: 200, anon: 200 },
      ],
      [
        'read private note',
        'GET',
        '/api/notes/priv',
        undefined,
        { admin: 200, user: 200, guest: 404, anon: 404 },
      ],
      [
        'read public file',
        'GET',
        '/api/notes/pub/files/a.md',
        undefined,
        { admin: 200, user: 200, guest: 200, anon: 200 },
      ],
      [
        'read private file',
        'GET',
        '/api/notes/pub/files/secret.md',
        undefined,
        { admin: 200, user: 200, guest: 404, anon: 404 },
      ],
      [
        'read file of private note',
        'GET',
        '/api/notes/priv/files/b.md',
        undefined,
        { admin: 200, user: 200, guest: 404, anon: 404 },
      ],
      [
        'public chat history',
        'GET',
        '/api/notes/pub/chat',
        undefined,
        { admin: 200, user: 200, guest: 200, anon: 200 },
      ],
      [
        'private chat history',
        'GET',
        '/api/notes/priv/chat',
        undefined,
        { admin: 200, user: 200, guest: 404, anon: 404 },
      ],
      ['create file', 'POST', '/api/notes/pub/files', { name: 'n.md' }, { guest: 403, anon: 401 }],
      [
        'edit file',
        'PUT',
        '/api/notes/pub/files/a.md',
        { content: 'x', base_revision: 1 },
        { guest: 403, anon: 401 },
      ],
      ['delete file', 'DELETE', '/api/notes/pub/files/a.md', undefined, { guest: 403, anon: 401 }],
      ['chat', 'POST', '/api/notes/pub/chat', { message: 'hi' }, { guest: 403, anon: 401 }],
      ['create note', 'POST', '/api/notes', { name: 'new' }, { user: 403, guest: 403, anon: 401 }],
      ['toggle public', 'PATCH', '/api/notes/pub', { public: false }, { user: 403, guest: 403, anon: 401 }],
      [
        'rename private note as guest',
        'PATCH',
        '/api/notes/priv',
        { name: 'z' },
        { user: 403, guest: 404, anon: 404 },
      ],
      ['delete note', 'DELETE', '/api/notes/pub', undefined, { user: 403, guest: 403, anon: 401 }],
      ['model switch', 'PATCH', '/api/notes/pub', { model: 'm' }, { user: 403, guest: 403 }],
      ['approvals', 'GET', '/api/approvals', undefined, { admin: 200, user: 403, guest: 403, anon: 401 }],
      ['tokens', 'GET', '/api/tokens', undefined, { admin: 200, user: 403, guest: 403, anon: 401 }],
      ['trash', 'GET', '/api/notes?deleted=1', undefined, { admin: 200, user: 403, guest: 403 }],
      ['users', 'GET', '/api/users', undefined, { admin: 200, user: 403, guest: 403 }],
    ];
    const clients: Record<string, Client> = { admin, user, guest, anon };
    const failures: string[] = [];
    for (const [label, method, url, body, expected] of rows) {
      for (const [who, status] of Object.entries(expected)) {
        const res = await clients[who]!.request(method, url, body);
        if (res.statusCode !== status)
          failures.push(`${label} as ${who}: ${res.statusCode} (wanted ${status}) ${res.body}`);
        if (res.statusCode >= 400) {
          const json = res.json();
          if (typeof json.code !== 'string' || typeof json.message !== 'string')
            failures.push(`${label}: error shape ${res.body}`);
        }
      }
    }
    expect(failures).toEqual([]);
  });

  it('lists only public notes and public files to guests', async () => {
    expect(
      (await guest.request('GET', '/api/notes')).json().notes.map((n: { name: string }) => n.name),
    ).toEqual(['pub']);
    expect(
      (await user.request('GET', '/api/notes')).json().notes.map((n: { name: string }) => n.name),
    ).toEqual(['priv', 'pub']);
    const files = (await anon.request('GET', '/api/notes/pub'))
      .json()
      .files.map((f: { name: string }) => f.name);
    expect(files).toEqual(['a.md']);
  });

  it('scopes bearer tokens to their role and forgets revoked ones', async () => {
    const created = (await admin.request('POST', '/api/tokens', { name: 'reader', role: 'guest' })).json();
    const reader = bearer(kit.server, created.token);
    expect((await reader.request('GET', '/api/notes/priv')).statusCode).toBe(404);
    expect((await reader.request('POST', '/api/notes/pub/files', { name: 'x.md' })).statusCode).toBe(403);
    expect((await admin.request('DELETE', `/api/tokens/${created.id}`)).statusCode).toBe(200);
    expect((await reader.request('GET', '/api/notes/pub')).statusCode).toBe(401);
    const list = (await admin.request('GET', '/api/tokens')).json().tokens;
    expect(JSON.stringify(list)).not.toContain(created.token);
  });

  it('stops the tokens an admin issued (and tokens those issued) once the admin is demoted', async () => {
    await kit.server.close();
    await setup(
      '[notes.local]\nadmins = ["ada:adapass1", "bea:beapass1"]\nusers = ["uma:umapass1"]\nguests = ["gus:guspass1"]',
    );
    await seed();
    const bea = await loginAs(kit.server, 'bea', 'beapass1');
    const robot = (await admin.request('POST', '/api/tokens', { name: 'robot', role: 'admin' })).json();
    const writer = (await admin.request('POST', '/api/tokens', { name: 'writer', role: 'user' })).json();
    const child = (
      await bearer(kit.server, robot.token).request('POST', '/api/tokens', { name: 'child', role: 'guest' })
    ).json();
    const beaToken = (await bea.request('POST', '/api/tokens', { name: 'bea-bot', role: 'user' })).json();
    const tokens = [robot, writer, child].map((t) => bearer(kit.server, t.token));
    for (const t of tokens) expect((await t.request('GET', '/api/notes/pub')).statusCode).toBe(200);
    expect((await bea.request('PATCH', '/api/users/local:ada', { role: 'user' })).statusCode).toBe(200);
    for (const t of tokens) expect((await t.request('GET', '/api/notes/pub')).statusCode).toBe(401);
    expect((await bearer(kit.server, beaToken.token).request('GET', '/api/notes/priv')).statusCode).toBe(200);
    // Restored rights bring back the tokens that were never revoked.
    expect((await bea.request('PATCH', '/api/users/local:ada', { role: 'admin' })).statusCode).toBe(200);
    expect((await tokens[2]!.request('GET', '/api/notes/pub')).statusCode).toBe(200);
  });

  it('applies a demotion at once', async () => {
    const res = await admin.request('PATCH', '/api/users/local:uma', { role: 'guest' });
    expect(res.statusCode).toBe(200);
    expect((await user.request('GET', '/api/notes/priv')).statusCode).toBe(404);
    expect((await user.request('GET', '/api/me')).json().role).toBe('guest');
  });
});

describe('notes and files', () => {
  beforeEach(async () => {
    await setup();
    await seed();
  });

  it('renames, toggles visibility, soft-deletes, restores and purges notes', async () => {
    const renamed = await admin.request('PATCH', '/api/notes/priv', { name: 'private stuff' });
    expect(renamed.json().name).toBe('private stuff');
    expect((await admin.request('POST', '/api/notes', { name: 'pub' })).statusCode).toBe(409);
    expect((await admin.request('DELETE', '/api/notes/private%20stuff')).statusCode).toBe(200);
    expect((await user.request('GET', '/api/notes/private%20stuff')).statusCode).toBe(404);
    const trash = (await admin.request('GET', '/api/notes?deleted=1')).json().notes;
    expect(trash.map((n: { name: string }) => n.name)).toEqual(['private stuff']);
    expect((await admin.request('POST', `/api/notes/${trash[0].id}/restore`)).statusCode).toBe(200);
    expect((await user.request('GET', '/api/notes/private%20stuff/files/b.md')).json().content).toBe('bee\n');
    // Purge only from the trash.
    expect((await admin.request('DELETE', '/api/notes/private%20stuff?purge=1')).statusCode).toBe(409);
    await admin.request('DELETE', '/api/notes/private%20stuff');
    expect((await admin.request('DELETE', `/api/notes/${trash[0].id}?purge=1`)).statusCode).toBe(200);
    expect((await admin.request('GET', '/api/notes?deleted=1')).json().notes).toEqual([]);
  });

  it('validates names with a clear error', async () => {
    const res = await admin.request('POST', '/api/notes', { name: '../etc' });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toMatch(/^name:/);
    expect((await user.request('POST', '/api/notes/pub/files', { name: 'a/b.md' })).statusCode).toBe(400);
    expect((await user.request('POST', '/api/notes/pub/files', { name: '123' })).statusCode).toBe(400);
  });

  it('soft-deletes and restores files; purge is for admins', async () => {
    expect((await user.request('DELETE', '/api/notes/pub/files/a.md')).statusCode).toBe(200);
    expect((await user.request('GET', '/api/notes/pub/files/a.md')).statusCode).toBe(404);
    const deleted = (await user.request('GET', '/api/notes/pub/files?deleted=1')).json().files;
    expect(deleted.map((f: { name: string }) => f.name)).toEqual(['a.md']);
    expect((await user.request('POST', `/api/notes/pub/files/${deleted[0].id}/restore`)).statusCode).toBe(
      200,
    );
    expect((await user.request('GET', '/api/notes/pub/files/a.md')).json().content).toBe('# A\n');
    await user.request('DELETE', '/api/notes/pub/files/a.md');
    expect((await user.request('DELETE', `/api/notes/pub/files/${deleted[0].id}?purge=1`)).statusCode).toBe(
      403,
    );
    expect((await admin.request('DELETE', `/api/notes/pub/files/${deleted[0].id}?purge=1`)).statusCode).toBe(
      200,
    );
    expect((await user.request('GET', '/api/notes/pub/files?deleted=1')).json().files).toEqual([]);
  });

  it('keeps every save as a revision: list, view, diff, restore', async () => {
    const put = await user.request('PUT', '/api/notes/pub/files/a.md', {
      content: '# A\nmore\n',
      base_revision: 1,
    });
    expect(put.statusCode).toBe(200);
    expect(put.json()).toMatchObject({ revision: 2, merged: false });
    const revs = (await anon.request('GET', '/api/notes/pub/files/a.md/revisions')).json().revisions;
    expect(revs.map((r: { revision: number }) => r.revision)).toEqual([2, 1]);
    expect(revs[0].author).toBe('uma');
    expect((await anon.request('GET', '/api/notes/pub/files/a.md/revisions/1')).json().content).toBe('# A\n');
    const diff = (await anon.request('GET', '/api/notes/pub/files/a.md/revisions/2/diff')).json();
    expect(diff).toMatchObject({ from: 1, to: 2 });
    expect(diff.diff).toContain('+more');
    const restored = await user.request('POST', '/api/notes/pub/files/a.md/revisions/1/restore');
    expect(restored.json()).toMatchObject({ revision: 3, content: '# A\n' });
    // Guests may read revisions of public files, not restore them.
    expect((await guest.request('POST', '/api/notes/pub/files/a.md/revisions/1/restore')).statusCode).toBe(
      403,
    );
  });

  it('merges a save on an older base when the changes do not overlap', async () => {
    await user.request('PUT', '/api/notes/pub/files/a.md', {
      content: 'one\ntwo\nthree\n',
      base_revision: 1,
    });
    await admin.request('PUT', '/api/notes/pub/files/a.md', {
      content: 'ONE\ntwo\nthree\n',
      base_revision: 2,
    });
    const res = await user.request('PUT', '/api/notes/pub/files/a.md', {
      content: 'one\ntwo\nthree\nfour\n',
      base_revision: 2,
    });
    expect(res.statusCode).toBe(200);
    expect(res.json()).toMatchObject({ content: 'ONE\ntwo\nthree\nfour\n', revision: 4, merged: true });
  });

  it('answers 409 with the current text when a stale save overlaps, and saves nothing', async () => {
    await user.request('PUT', '/api/notes/pub/files/a.md', { content: 'line\n', base_revision: 1 });
    const res = await admin.request('PUT', '/api/notes/pub/files/a.md', {
      content: 'other\n',
      base_revision: 1,
    });
    expect(res.statusCode).toBe(409);
    expect(res.json()).toMatchObject({ code: 'CONFLICT', current: { content: 'line\n', revision: 2 } });
    expect((await user.request('GET', '/api/notes/pub/files/a.md')).json().revision).toBe(2);
    expect((await user.request('PUT', '/api/notes/pub/files/a.md', { content: 'x' })).statusCode).toBe(400);
  });

  it('exports a note as zip and tar with only what the caller may see', async () => {
    const zip = await anon.request('GET', '/api/notes/pub/export?format=zip');
    expect(zip.statusCode).toBe(200);
    expect(zip.headers['content-disposition']).toMatch(/^attachment; filename="pub.zip"/);
    const entries = unzipSync(new Uint8Array(zip.rawPayload));
    expect(Object.keys(entries)).toEqual(['pub/a.md']);
    expect(Buffer.from(entries['pub/a.md']!).toString()).toBe('# A\n');
    const full = unzipSync(new Uint8Array((await user.request('GET', '/api/notes/pub/export')).rawPayload));
    expect(Object.keys(full).sort()).toEqual(['pub/a.md', 'pub/secret.md']);
    const tar = await user.request('GET', '/api/notes/pub/export?format=tar');
    expect(tar.headers['content-type']).toBe('application/x-tar');
    const raw = tar.rawPayload;
    expect(raw.subarray(257, 262).toString()).toBe('ustar');
    expect(raw.toString('latin1')).toContain('pub/a.md');
    expect(raw.length % 512).toBe(0);
  });

  it('exports long and non-ASCII file names whole in a tar that tar extracts', async () => {
    const long = `${'ü'.repeat(60)}-${'x'.repeat(55)}.md`;
    const alsoLong = `${'ü'.repeat(60)}-${'x'.repeat(55)}2.md`;
    for (const [name, content] of [
      [long, 'first\n'],
      [alsoLong, 'second\n'],
    ])
      expect((await user.request('POST', '/api/notes/pub/files', { name, content })).statusCode).toBe(201);
    const tar = (await user.request('GET', '/api/notes/pub/export?format=tar')).rawPayload;
    const dir = mkdtempSync(join(tmpdir(), 'rune-export-'));
    writeFileSync(join(dir, 'pub.tar'), tar);
    execFileSync('tar', ['-xf', 'pub.tar'], { cwd: dir });
    expect(readdirSync(join(dir, 'pub')).sort()).toEqual([long, alsoLong, 'a.md', 'secret.md'].sort());
    expect(readFileSync(join(dir, 'pub', long), 'utf8')).toBe('first\n');
    expect(readFileSync(join(dir, 'pub', alsoLong), 'utf8')).toBe('second\n');
  });

  it('searches files and chats, only within what the caller may see', async () => {
    await user.request('PUT', '/api/notes/priv/files/b.md', {
      content: 'zebra crossing\n',
      base_revision: 1,
    });
    await user.request('PUT', '/api/notes/pub/files/secret.md', {
      content: 'zebra secret\n',
      base_revision: 1,
    });
    await user.request('PUT', '/api/notes/pub/files/a.md', {
      content: 'a <b>zebra</b> here\n',
      base_revision: 1,
    });
    kit.server.store.addChat(1, 'user', 'uma', 'talking about zebra stripes', null);
    const asUser = (await user.request('GET', '/api/search?q=zebra')).json().results;
    expect(asUser.length).toBe(4);
    const asGuest = (await guest.request('GET', '/api/search?q=zebra')).json().results;
    expect(asGuest.map((r: { kind: string; file?: string }) => `${r.kind}:${r.file ?? ''}`).sort()).toEqual([
      'chat:',
      'file:a.md',
    ]);
    const hit = asGuest.find((r: { kind: string }) => r.kind === 'file');
    expect(hit.snippet).toContainEqual({ text: 'zebra', match: true });
    // Operators are words, not syntax.
    expect((await user.request('GET', '/api/search?q=zebra%20OR%20NEAR(')).statusCode).toBe(200);
  });
});

describe('uploads', () => {
  beforeEach(async () => {
    await setup(
      '[notes]\nmax_upload_mb = 1\n[notes.local]\nadmins = ["ada:adapass1"]\nusers = ["uma:umapass1"]\nguests = ["gus:guspass1"]',
    );
    await seed();
  });

  it('stores by content hash and serves safely', async () => {
    const svg = '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"></svg>';
    const up = await user.request('POST', '/api/notes/pub/uploads?name=x.svg', svg, {
      'content-type': 'image/svg+xml',
    });
    expect(up.statusCode).toBe(201);
    const { url, hash } = up.json();
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
    const got = await anon.request('GET', url);
    expect(got.statusCode).toBe(200);
    expect(got.headers['x-content-type-options']).toBe('nosniff');
    expect(got.headers['content-security-policy']).toBe("default-src 'none'; sandbox");
    expect(got.headers['content-disposition']).toMatch(/^attachment;/);
    const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
    const img = (
      await user.request('POST', '/api/notes/pub/uploads?name=p.png', png, { 'content-type': 'image/png' })
    ).json();
    const shown = await anon.request('GET', img.url);
    expect(shown.headers['content-disposition']).toMatch(/^inline;/);
    expect(shown.headers['content-type']).toBe('image/png');
  });

  it('removes upload bytes when the last note that holds them is purged', async () => {
    const bytes = Buffer.from('shared attachment bytes');
    const put = async (note: string) =>
      (
        await user.request('POST', `/api/notes/${note}/uploads?name=s.bin`, bytes, {
          'content-type': 'application/octet-stream',
        })
      ).json().hash as string;
    const hash = await put('pub');
    expect(await put('priv')).toBe(hash);
    const only = (
      await user.request('POST', '/api/notes/priv/uploads?name=o.bin', Buffer.from('only in priv'), {
        'content-type': 'application/octet-stream',
      })
    ).json().hash as string;
    const blob = (h: string) => existsSync(join(kit.dir, 'uploads', h));
    expect(blob(hash) && blob(only)).toBe(true);
    expect((await admin.request('DELETE', '/api/notes/priv')).statusCode).toBe(200);
    // Soft-deleted notes stay restorable, bytes included.
    expect(blob(only)).toBe(true);
    const trash = (await admin.request('GET', '/api/notes?deleted=1')).json().notes;
    expect((await admin.request('DELETE', `/api/notes/${trash[0].id}?purge=1`)).statusCode).toBe(200);
    expect(blob(only)).toBe(false);
    expect(blob(hash)).toBe(true);
    expect((await anon.request('GET', `/api/notes/pub/uploads/${hash}`)).statusCode).toBe(200);
  });

  it('refuses an upload over the limit instead of truncating it', async () => {
    const big = Buffer.alloc(1024 * 1024 + 1, 1);
    const res = await user.request('POST', '/api/notes/pub/uploads?name=big.bin', big, {
      'content-type': 'application/octet-stream',
    });
    expect(res.statusCode).toBe(413);
    expect(res.json().code).toBe('TOO_LARGE');
  });
});

describe('collaboration', () => {
  beforeEach(async () => {
    await setup();
    await seed();
  });

  it('converges two editors typing at once and saves a revision after idle', async () => {
    const start = (await user.request('GET', '/api/notes/pub/files/a.md/collab')).json();
    expect(start).toMatchObject({ revision: 1, text: '# A\n' });
    const d1 = new Y.Doc();
    const d2 = new Y.Doc();
    Y.applyUpdate(d1, Buffer.from(start.state, 'base64'));
    Y.applyUpdate(d2, Buffer.from(start.state, 'base64'));
    const updates: Array<[Client, Uint8Array, string]> = [];
    d1.on('update', (u: Uint8Array) => updates.push([user, u, 'c1']));
    d2.on('update', (u: Uint8Array) => updates.push([admin, u, 'c2']));
    // Both type at the very start at the same moment: the order is Yjs's to decide, the same everywhere.
    d1.getText('content').insert(0, 'from one\n');
    d2.getText('content').insert(0, 'from two\n');
    for (const [who, u, id] of updates) {
      const res = await who.request('POST', '/api/notes/pub/files/a.md/collab', {
        update: Buffer.from(u).toString('base64'),
        client_id: id,
      });
      expect(res.statusCode).toBe(200);
    }
    for (const [, u] of updates.splice(0)) {
      Y.applyUpdate(d1, u);
      Y.applyUpdate(d2, u);
    }
    const live = (await anon.request('GET', '/api/notes/pub/files/a.md')).json().content;
    expect(d1.getText('content').toString()).toBe(d2.getText('content').toString());
    expect(live).toBe(d1.getText('content').toString());
    expect(live).toMatch(/^(from one\nfrom two\n|from two\nfrom one\n)# A\n$/);
    // Saved once the editors pause (idleMs 50 in the tests); waited for, not timed. Under load the
    // pause may fall between the two updates: then there are two revisions, one per author.
    let revs: Array<{ revision: number; author: string }> = [];
    let saved = '';
    for (let i = 0; i < 400 && saved !== live; i++) {
      await new Promise((r) => setTimeout(r, 25));
      revs = (await user.request('GET', '/api/notes/pub/files/a.md/revisions')).json().revisions;
      if (revs[0]!.revision >= 2) {
        saved = (await user.request('GET', `/api/notes/pub/files/a.md/revisions/${revs[0]!.revision}`)).json()
          .content;
      }
    }
    expect(saved).toBe(live);
    const edits = revs.filter((r) => r.revision >= 2);
    expect(edits.length).toBeGreaterThanOrEqual(1);
    expect(edits.length).toBeLessThanOrEqual(2);
    expect([...new Set(edits.flatMap((r) => r.author.split(', ')))].sort()).toEqual(['ada', 'uma']);
    // A script's PUT on the old base merges with the live text.
    const put = await user.request('PUT', '/api/notes/pub/files/a.md', {
      content: '# A\nscript\n',
      base_revision: 1,
    });
    expect(put.json()).toMatchObject({ merged: true, content: `${live}script\n` });
    expect(
      (await guest.request('POST', '/api/notes/pub/files/a.md/collab', { update: 'AAA=' })).statusCode,
    ).toBe(403);
    expect(
      (await user.request('POST', '/api/notes/pub/files/a.md/collab', { update: 'not base64!' })).statusCode,
    ).toBe(400);
  });
});

describe('public pages', () => {
  beforeEach(async () => {
    await setup();
    await seed();
  });

  it('serves only public notes and public files, 404 otherwise, with a strict CSP', async () => {
    const html = (await anon.request('GET', '/notes/')).body;
    // No web/ assets in unit tests: the template is missing, so 404 — but never data of private notes.
    expect(html).not.toContain('priv');
    expect((await anon.request('GET', '/raw/pub/a.md')).body).toBe('# A\n');
    const raw = await anon.request('GET', '/raw/pub/a.md');
    expect(raw.headers['content-type']).toBe('text/plain; charset=utf-8');
    expect(raw.headers['x-content-type-options']).toBe('nosniff');
    expect((await admin.request('GET', '/raw/pub/secret.md')).statusCode).toBe(404);
    expect((await admin.request('GET', '/raw/priv/b.md')).statusCode).toBe(404);
    expect((await anon.request('GET', '/notes/priv/')).statusCode).toBe(404);
    expect((await anon.request('GET', '/notes/pub/secret.md')).statusCode).toBe(404);
    expect((await anon.request('GET', '/healthz')).json()).toMatchObject({ ok: true });
  });
});

describe('acknowledgements', () => {
  beforeEach(async () => {
    await setup();
    await seed();
  });

  /** Makes the next insert into `table` fail, as a full disk or an I/O error would. */
  function failInserts(table: string): () => void {
    kit.server.store.db.exec(
      `create temp trigger fail_${table} before insert on ${table} begin select raise(abort, 'disk I/O error'); end`,
    );
    return () => kit.server.store.db.exec(`drop trigger fail_${table}`);
  }

  it('commits everything a request changes in one transaction before answering: all or nothing', async () => {
    const seen: string[] = [];
    kit.server.hub.subscribe({
      principal: null,
      noteId: null,
      clientId: null,
      lastEventId: null,
      sink: { write: (chunk) => seen.push(chunk), end() {} },
    });
    const heal = failInserts('events');
    // Each of these writes its row and an event; the event cannot be stored, so none of it may stay.
    expect((await admin.request('POST', '/api/notes', { name: 'new' })).statusCode).toBe(500);
    expect((await user.request('POST', '/api/notes/pub/files', { name: 'n.md' })).statusCode).toBe(500);
    expect((await user.request('PATCH', '/api/notes/pub/files/a.md', { name: 'z.md' })).statusCode).toBe(500);
    expect((await user.request('DELETE', '/api/notes/pub/files/a.md')).statusCode).toBe(500);
    const put = await user.request('PUT', '/api/notes/pub/files/a.md', { content: 'x\n', base_revision: 1 });
    expect(put.statusCode).toBe(500);
    heal();
    expect((await admin.request('GET', '/api/notes/new')).statusCode).toBe(404);
    expect((await user.request('GET', '/api/notes/pub/files/n.md')).statusCode).toBe(404);
    expect((await user.request('GET', '/api/notes/pub/files/a.md')).json()).toMatchObject({
      name: 'a.md',
      revision: 1,
      content: '# A\n',
      deleted_at: null,
    });
    // Nobody was told about what did not happen.
    expect(seen.join('')).not.toMatch(/note\.created|file\.(created|updated|deleted|saved)|collab\.update/);
    expect(
      (await user.request('PUT', '/api/notes/pub/files/a.md', { content: 'x\n', base_revision: 1 })).json(),
    ).toMatchObject({ revision: 2, content: 'x\n' });
  });

  const FULL = `[notes]\nsynchronous = "full"\n${ACCOUNTS}`;

  it('answers a change only once its commit is synced to disk (synchronous = full)', async () => {
    await kit.server.close();
    const held: Array<() => void> = [];
    let hold = false;
    await setup(FULL, {
      fsync: (_fd: number, done: (error: Error | null) => void) => {
        if (hold) held.push(() => done(null));
        else done(null);
      },
    });
    await seed();
    hold = true;
    let answered = false;
    const put = user
      .request('PUT', '/api/notes/pub/files/a.md', { content: 'x\n', base_revision: 1 })
      .then((res) => {
        answered = true;
        return res;
      });
    for (let i = 0; i < 100 && held.length === 0; i++) await new Promise((r) => setTimeout(r, 5));
    expect(held).toHaveLength(1);
    // Committed (the store reads it back) but not answered while its fsync is outstanding.
    expect(kit.server.store.findFile(kit.server.store.findNote('pub')!.id, 'a.md')!.content).toBe('x\n');
    for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
    expect(answered).toBe(false);
    // Reads do not wait for the disk.
    expect((await anon.request('GET', '/api/notes/pub/files/a.md')).json().content).toBe('x\n');
    for (const done of held.splice(0)) done();
    expect((await put).json()).toMatchObject({ revision: 2 });
    hold = false;
  });

  it.each([
    ['synchronous = normal, the default', undefined],
    ['synchronous = normal, set', `[notes]\nsynchronous = "normal"\n${ACCOUNTS}`],
  ])('with %s, answers at commit without waiting for the disk', async (_name, toml) => {
    await kit.server.close();
    const held: Array<() => void> = [];
    let hold = true;
    await setup(toml, {
      fsync: (_fd: number, done: (error: Error | null) => void) => {
        if (hold) held.push(() => done(null));
        else done(null);
      },
    });
    await seed();
    try {
      // Every fsync is held from here on, so an answer proves the PUT did not wait for one (the
      // once-a-second background fdatasync may be among the held ones on a slow machine).
      const put = await user.request('PUT', '/api/notes/pub/files/a.md', {
        content: 'x\n',
        base_revision: 1,
      });
      expect(put.json()).toMatchObject({ revision: 2 });
    } finally {
      hold = false;
      for (const done of held.splice(0)) done();
    }
  });

  it('answers 500, not OK, when the disk cannot sync (synchronous = full)', async () => {
    await kit.server.close();
    let fail = false;
    await setup(FULL, {
      fsync: (_fd: number, done: (error: Error | null) => void) =>
        done(fail ? Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' }) : null),
    });
    await seed();
    fail = true;
    const put = await user.request('PUT', '/api/notes/pub/files/a.md', { content: 'x\n', base_revision: 1 });
    expect(put.statusCode).toBe(500);
    expect(put.json()).toMatchObject({ code: 'INTERNAL' });
    expect(kit.warnings.join('\n')).toMatch(/could not sync the notes database to disk/);
    fail = false;
  });
});
