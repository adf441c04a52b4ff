// A write the storage refuses is answered as what it is (507 full, 503 read-only or failing), with
// nothing acknowledged that was not stored; the same server takes the change once space is back.
import { afterEach, describe, expect, it } from 'vitest';
import { openFailure, storageFailure } from './storage.ts';
import { type Kit, loginAs, makeServer } from './test-kit.ts';

describe('storageFailure', () => {
  it.each([
    ['SQLITE_FULL', 507, 'STORAGE_FULL'],
    ['ENOSPC', 507, 'STORAGE_FULL'],
    ['EDQUOT', 507, 'STORAGE_FULL'],
    ['SQLITE_READONLY', 503, 'STORAGE_ERROR'],
    ['SQLITE_READONLY_DBMOVED', 503, 'STORAGE_ERROR'],
    ['EROFS', 503, 'STORAGE_ERROR'],
    ['SQLITE_IOERR_FSYNC', 503, 'STORAGE_ERROR'],
    ['EIO', 503, 'STORAGE_ERROR'],
    ['SQLITE_CONSTRAINT_UNIQUE', null, null],
    ['ENOENT', null, null],
    [undefined, null, null],
  ])('%s → %s %s', (code, status, apiCode) => {
    const error = Object.assign(new Error('x'), code === undefined ? {} : { code });
    const answer = storageFailure(error);
    expect(answer?.status ?? null).toBe(status);
    expect(answer?.code ?? null).toBe(apiCode);
    if (answer) expect(answer.message).toMatch(/not saved; send it again/);
  });

  it('tells the operator what to do when the database cannot be opened', () => {
    const error = Object.assign(new Error('attempt to write a readonly database'), {
      code: 'SQLITE_READONLY',
    });
    const message = (openFailure('/srv/notes.db', error) as Error).message;
    expect(message).toMatch(
      /^cannot open the notes database \/srv\/notes.db: attempt to write a readonly database; make/,
    );
    expect((openFailure('/srv/notes.db', error) as { code: string }).code).toBe('IO');
    const other = new Error('no such table');
    expect(openFailure('/srv/notes.db', other)).toBe(other);
  });
});

let kit: Kit | null = null;
afterEach(async () => {
  await kit?.server.close();
  kit = null;
});

describe('a database that is full', () => {
  it('answers 507 to every kind of write, stores none of them, and takes them once there is room', async () => {
    kit = await makeServer();
    const ada = await loginAs(kit.server, 'ada', 'adapass1');
    expect((await ada.request('POST', '/api/notes', { name: 'n' })).statusCode).toBe(201);
    expect(
      (await ada.request('POST', '/api/notes/n/files', { name: 'a.md', content: 'a\n' })).statusCode,
    ).toBe(201);
    const db = kit.server.store.db;
    const pages = db.pragma('page_count', { simple: true }) as number;
    // SQLite's own limit: the database may not grow past the pages it has (a full disk, exactly).
    db.pragma(`max_page_count = ${pages}`);
    const big = 'x'.repeat(200_000);
    const writes: Array<[string, string, unknown]> = [
      ['POST', '/api/notes/n/files', { name: 'b.md', content: big }],
      ['PUT', '/api/notes/n/files/a.md', { content: `a\n${big}`, base_revision: 1 }],
      ['POST', '/api/tokens', { name: `t-${big.slice(0, 100)}`, role: 'user' }],
    ];
    let refused = 0;
    for (const [method, path, body] of writes) {
      const res = await ada.request(method as 'POST', path, body);
      if (res.statusCode === 507) {
        refused++;
        expect(res.json()).toMatchObject({
          code: 'STORAGE_FULL',
          message: expect.stringMatching(/disk is full/),
        });
      } else {
        expect(res.statusCode).toBeLessThan(300);
      }
    }
    expect(refused).toBeGreaterThanOrEqual(2);
    // Nothing of what was refused is there.
    expect((await ada.request('GET', '/api/notes/n/files/b.md')).statusCode).toBe(404);
    expect((await ada.request('GET', '/api/notes/n/files/a.md')).json().content).toBe('a\n');
    db.pragma('max_page_count = 1073741823');
    expect((await ada.request('POST', '/api/notes/n/files', { name: 'b.md', content: big })).statusCode).toBe(
      201,
    );
    expect(
      (await ada.request('PUT', '/api/notes/n/files/a.md', { content: 'a2\n', base_revision: 1 })).statusCode,
    ).toBe(200);
  });
});
