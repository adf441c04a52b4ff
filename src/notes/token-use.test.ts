// A bearer token's last_used_at: written at most once a minute per token (a read is not a commit),
// exact in the API meanwhile, and written at shutdown.

import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, expect, it } from 'vitest';
import { bearer, type Kit, loginAs, makeServer } from './test-kit.ts';
import { LAST_USED_WRITE_MS } from './token-use.ts';

let kit: Kit | undefined;
afterEach(async () => {
  await kit?.server.close();
  kit = undefined;
});

it('writes last_used_at at most once a minute per token, shows the newest use, and keeps it at shutdown', async () => {
  let clock = Date.parse('2026-03-01T10:00:00.000Z');
  const at = (ms: number) => new Date(ms).toISOString();
  kit = await makeServer(undefined, { now: () => new Date(clock) });
  const { db } = kit.server.store;
  const admin = await loginAs(kit.server, 'ada', 'adapass1');
  const created = (await admin.request('POST', '/api/tokens', { name: 'reader', role: 'guest' })).json();
  const robot = bearer(kit.server, created.token);
  const stored = () => db.prepare('select last_used_at from tokens where id = ?').pluck().get(created.id);
  const shown = async () =>
    (await admin.request('GET', '/api/tokens')).json().tokens.find((t: { id: number }) => t.id === created.id)
      .last_used_at;
  const changes = db.prepare('select total_changes()').pluck();

  const t0 = clock;
  expect((await robot.request('GET', '/api/notes')).statusCode).toBe(200);
  expect(stored()).toBe(at(t0));

  // Within the minute: no commit for the read, but the API shows the newest use.
  clock = t0 + 10_000;
  const before = changes.get();
  expect((await robot.request('GET', '/api/notes')).statusCode).toBe(200);
  expect(changes.get()).toBe(before);
  expect(stored()).toBe(at(t0));
  expect(await shown()).toBe(at(t0 + 10_000));

  // A minute after the last write: written again.
  clock = t0 + LAST_USED_WRITE_MS + 1_000;
  expect((await robot.request('GET', '/api/notes')).statusCode).toBe(200);
  expect(stored()).toBe(at(clock));

  // A use not yet written is written when the server stops.
  clock += 5_000;
  expect((await robot.request('GET', '/api/notes')).statusCode).toBe(200);
  expect(stored()).not.toBe(at(clock));
  const dir = kit.dir;
  await kit.server.close();
  kit = undefined;
  const reopened = new Database(join(dir, 'notes.db'), { readonly: true });
  try {
    expect(reopened.prepare('select last_used_at from tokens where id = ?').pluck().get(created.id)).toBe(
      at(clock),
    );
  } finally {
    reopened.close();
  }
});
