// A fuzz test of every notes route: random names, ids, revisions, query strings, JSON shapes and
// content types, sent as every kind of caller. No answer may be a 500 (or hang, or crash the
// process), every error keeps the documented shape, and the data the fuzzed callers may not
// change is exactly as it was.
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { anonymous, type Client, type Kit, loginAs, makeServer } from './test-kit.ts';

let kit: Kit;
let readers: Client[];
let writers: Client[];

beforeAll(async () => {
  kit = await makeServer();
  const admin = await loginAs(kit.server, 'ada', 'adapass1');
  const user = await loginAs(kit.server, 'uma', 'umapass1');
  const guest = await loginAs(kit.server, 'gus', 'guspass1');
  for (const [name, isPublic] of [
    ['pub', true],
    ['priv', false],
    ['scratch', true],
  ] as const) {
    expect((await admin.request('POST', '/api/notes', { name, public: isPublic })).statusCode).toBe(201);
  }
  for (const [note, name, content, isPublic] of [
    ['pub', 'a.md', '# A\nzebra\n', true],
    ['pub', 'secret.md', 'hidden\n', false],
    ['priv', 'b.md', 'bee\n', true],
    ['scratch', 's.md', 'scratch\n', true],
  ] as const) {
    const res = await user.request('POST', `/api/notes/${note}/files`, { name, content, public: isPublic });
    expect(res.statusCode).toBe(201);
  }
  expect(
    (
      await user.request('PUT', '/api/notes/pub/files/a.md', {
        content: '# A\nzebra crossing\n',
        base_revision: 1,
      })
    ).statusCode,
  ).toBe(200);
  readers = [anonymous(kit.server), guest];
  writers = [user, admin];
});

afterAll(async () => {
  await kit.server.close();
});

/** What no fuzzed request may change: the notes other than `scratch`, their files and revisions. */
function snapshot(): string {
  const db = kit.server.store.db;
  return JSON.stringify([
    db
      .prepare("select id, name, public, model, deleted_at from notes where name <> 'scratch' order by id")
      .all(),
    db
      .prepare(
        "select f.id, f.name, f.public, f.revision, f.content, f.deleted_at from files f join notes n on n.id = f.note_id where n.name <> 'scratch' order by f.id",
      )
      .all(),
    db
      .prepare(
        "select r.file_id, r.revision, r.content from revisions r join files f on f.id = r.file_id join notes n on n.id = f.note_id where n.name <> 'scratch' order by 1, 2",
      )
      .all(),
  ]);
}

const nasty = fc.constantFrom(
  '',
  '.',
  '..',
  '%00',
  '%',
  '%E0%A4%A',
  '%2F',
  '..%2F..%2Fetc%2Fpasswd',
  'a%00b',
  '%EF%BB%BF',
  '%E2%80%AE',
  '%ED%A0%80',
  '99999999999999999999',
  '-1',
  '0',
  '1e308',
  'NaN',
  'x'.repeat(130),
  '%F0%9F%98%80'.repeat(130),
  'constructor',
  '__proto__',
  'pub',
  'priv',
  'scratch',
  'a.md',
  'secret.md',
  '1',
  '2',
);
const segment = fc.oneof(nasty, fc.string({ unit: 'binary', maxLength: 20 }).map(encodeURIComponent));

const ROUTES: Array<[string, string]> = [
  ['GET', '/api/me'],
  ['GET', '/api/users'],
  ['PATCH', '/api/users/{x}'],
  ['GET', '/api/notes'],
  ['POST', '/api/notes'],
  ['GET', '/api/notes/{n}'],
  ['PATCH', '/api/notes/{n}'],
  ['DELETE', '/api/notes/{n}'],
  ['POST', '/api/notes/{n}/restore'],
  ['GET', '/api/notes/{n}/export'],
  ['GET', '/api/notes/{n}/files'],
  ['POST', '/api/notes/{n}/files'],
  ['GET', '/api/notes/{n}/files/{f}'],
  ['PUT', '/api/notes/{n}/files/{f}'],
  ['PATCH', '/api/notes/{n}/files/{f}'],
  ['DELETE', '/api/notes/{n}/files/{f}'],
  ['POST', '/api/notes/{n}/files/{f}/restore'],
  ['GET', '/api/notes/{n}/files/{f}/revisions'],
  ['GET', '/api/notes/{n}/files/{f}/revisions/{r}'],
  ['GET', '/api/notes/{n}/files/{f}/revisions/{r}/diff'],
  ['POST', '/api/notes/{n}/files/{f}/revisions/{r}/restore'],
  ['GET', '/api/notes/{n}/files/{f}/collab'],
  ['POST', '/api/notes/{n}/files/{f}/collab'],
  ['POST', '/api/notes/{n}/presence'],
  ['GET', '/api/notes/{n}/chat'],
  ['POST', '/api/notes/{n}/chat'],
  ['POST', '/api/notes/{n}/chat/cancel'],
  ['GET', '/api/approvals'],
  ['POST', '/api/approvals/{x}'],
  ['GET', '/api/search'],
  ['POST', '/api/notes/{n}/uploads'],
  ['GET', '/api/notes/{n}/uploads/{x}'],
  ['GET', '/api/tokens'],
  ['POST', '/api/tokens'],
  ['DELETE', '/api/tokens/{x}'],
  ['POST', '/auth/local'],
  ['POST', '/auth/logout'],
  ['GET', '/auth/providers'],
  ['GET', '/auth/oauth/{x}/start'],
  ['GET', '/auth/oauth/{x}/callback'],
  ['GET', '/notes/{n}/'],
  ['GET', '/notes/{n}/{f}'],
  ['GET', '/raw/{n}/{f}'],
  ['GET', '/assets/{x}'],
];

const KEYS = [
  'name',
  'content',
  'public',
  'base_revision',
  'update',
  'client_id',
  'file_id',
  'typing',
  'state',
  'role',
  'expires_in_days',
  'message',
  'answer',
  'username',
  'password',
  'model',
];
const value = fc.oneof(
  fc.constantFrom(
    null,
    true,
    false,
    0,
    -1,
    1,
    2,
    1e308,
    -1e308,
    3.5,
    Number.MAX_SAFE_INTEGER + 2,
    '',
    'admin',
    'AAAA',
  ),
  fc.string({ unit: 'binary', maxLength: 40 }),
  fc.constantFrom('\u0000', '\ud800', 'a\u202eb', 'x'.repeat(3000), 'AQID'),
  fc.jsonValue({ maxDepth: 3 }),
);
const body = fc.oneof(
  fc.dictionary(fc.constantFrom(...KEYS), value, { maxKeys: 5 }),
  fc.jsonValue({ maxDepth: 4 }),
  fc.constant(undefined),
);
const QUERY_KEYS = [
  'q',
  'limit',
  'note',
  'deleted',
  'purge',
  'format',
  'against',
  'before',
  'name',
  'code',
  'state',
];
const query = fc.array(fc.tuple(fc.constantFrom(...QUERY_KEYS), segment), { maxLength: 4 });
const contentType = fc.constantFrom(
  'application/json',
  'application/json',
  'application/x-www-form-urlencoded',
  'text/plain',
  'application/octet-stream',
  undefined,
);

describe('fuzzing every route', () => {
  it('answers every request below 500 in the documented shape and leaves the data intact', async () => {
    const before = snapshot();
    let requests = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.constantFrom(...ROUTES),
        fc.record({ n: segment, f: segment, r: segment, x: segment }),
        query,
        body,
        contentType,
        fc.nat(3),
        fc.boolean(),
        async ([method, template], params, q, payload, type, who, raw) => {
          // Callers who may write get paths into the scratch note only; readers go anywhere.
          const writer = who >= 2;
          const fill = (key: 'n' | 'f' | 'r' | 'x') =>
            writer && key === 'n' ? 'scratch' : writer && key === 'f' ? 's.md' : params[key];
          const path = template.replace(/\{(n|f|r|x)\}/g, (_, key: 'n' | 'f' | 'r' | 'x') => fill(key));
          if (writer && /\/api\/notes$/.test(path) && method === 'POST') return;
          if (writer && (path.includes('/chat') || path.startsWith('/api/users'))) return;
          if (writer && method === 'POST' && path === '/auth/logout') return;
          if (writer && path === '/auth/local') return;
          const search = q.map(([k, v]) => `${k}=${v}`).join('&');
          const client = writer ? writers[who - 2]! : readers[who]!;
          const headers: Record<string, string> = {};
          if (type) headers['content-type'] = type;
          // Sometimes the JSON is cut short: a body that does not parse.
          const json = payload === undefined ? undefined : JSON.stringify(payload);
          const encoded = json !== undefined && raw ? json.slice(0, -1) : json;
          const res = await client.request(
            method as 'GET',
            `${path}${search ? `?${search}` : ''}`,
            encoded as never,
            headers,
          );
          requests++;
          expect(res.statusCode, `${method} ${path}?${search} → ${res.body.slice(0, 300)}`).toBeLessThan(500);
          if (res.statusCode >= 400 && String(res.headers['content-type']).startsWith('application/json')) {
            const json = res.json() as { code?: unknown; message?: unknown };
            expect(typeof json.code, res.body).toBe('string');
            expect(typeof json.message, res.body).toBe('string');
          }
          expect(res.headers['x-content-type-options']).toBe('nosniff');
        },
      ),
      { numRuns: 1500 },
    );
    expect(requests).toBeGreaterThan(500);
    expect(snapshot()).toBe(before);
    expect(kit.server.store.db.pragma('integrity_check', { simple: true })).toBe('ok');
    expect((await readers[0]!.request('GET', '/healthz')).statusCode).toBe(200);
  }, 240_000);
});
