// `rune notes` as a public service under strangers' load (issue 28), through the built binary:
// anonymous readers never take editors' event streams, editors converge whatever order they fetch
// and subscribe in, an anonymous export never holds the event loop and is bounded by a CPU budget,
// and visitors' searches that match only private files never make a user's save wait or fail.
import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { afterEach, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { logIn, type NotesProcess, type NotesSession, startNotesProcess } from '../helpers/notes.ts';
import { type EventStream, openEvents } from '../helpers/notes-wire.ts';
import { tempDir } from '../helpers/rune.ts';

const ACCOUNTS = '[notes.local]\nadmins = ["ada:adapass1"]\nusers = ["uma:umapass1"]\n';

const running: NotesProcess[] = [];
const streams: EventStream[] = [];
afterEach(async () => {
  for (const s of streams.splice(0)) s.close();
  for (const server of running.splice(0)) await server.stop();
});

async function start(home: string, toml = ACCOUNTS): Promise<NotesProcess> {
  writeFileSync(join(home, 'rune.toml'), toml);
  const server = await startNotesProcess({ home });
  running.push(server);
  return server;
}

function api(url: string, session: NotesSession) {
  return async (method: string, path: string, body?: unknown) => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: { cookie: session.cookie, 'x-csrf-token': session.csrf, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return res;
  };
}

async function seeded(home = tempDir('rune-notes-load-'), toml = ACCOUNTS) {
  const server = await start(home, toml);
  const adaSession = await logIn(server.url, 'ada', 'adapass1');
  const ada = api(server.url, adaSession);
  const umaSession = await logIn(server.url, 'uma', 'umapass1');
  const uma = api(server.url, umaSession);
  expect((await ada('POST', '/api/notes', { name: 'pub', public: true })).status).toBe(201);
  expect((await ada('POST', '/api/notes', { name: 'priv' })).status).toBe(201);
  const file = await uma('POST', '/api/notes/pub/files', { name: 'a.md', content: 'start\n' });
  expect(file.status).toBe(201);
  const fileId = ((await file.json()) as { id: number }).id;
  return { home, server, ada, uma, umaSession, fileId };
}

const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

describe('event streams', () => {
  it('anonymous readers from 17 addresses cannot lock a signed-in editor out of a note', async () => {
    const { server, umaSession } = await seeded();
    const opened = await Promise.all(
      Array.from({ length: 17 }, (_, a) =>
        Promise.all(
          Array.from({ length: 16 }, () =>
            openEvents(server.url, 'note_id=pub', { localAddress: `127.0.0.${a + 2}` }),
          ),
        ),
      ),
    );
    streams.push(...opened.flat());
    const statuses = opened.flat().map((s) => s.status);
    // Strangers have places of their own (128 per note), and no more.
    expect(statuses.filter((s) => s === 200).length).toBe(128);
    expect(statuses.filter((s) => s === 429).length).toBe(17 * 16 - 128);
    const editor = await openEvents(server.url, 'note_id=pub&client_id=tab', { cookie: umaSession.cookie });
    streams.push(editor);
    expect(editor.status).toBe(200);
    await editor.next('hello');
  }, 60_000);
});

describe('convergence by protocol', () => {
  /** A Yjs document of a file as GET …/collab gives it. */
  async function fetchDoc(url: string, fileId: number, session: NotesSession): Promise<Y.Doc> {
    const res = await fetch(`${url}/api/notes/pub/files/${fileId}/collab`, {
      headers: { cookie: session.cookie },
    });
    const doc = new Y.Doc();
    Y.applyUpdate(doc, Buffer.from(((await res.json()) as { state: string }).state, 'base64'));
    return doc;
  }

  /** Applies every collaborative update the stream carries (the catch-up first) to `doc`. */
  function follow(stream: EventStream, doc: Y.Doc, fileId: number): void {
    let applied = 0;
    const step = () => {
      for (; applied < stream.events.length; applied++) {
        const { name, data } = stream.events[applied]!;
        if ((name === 'collab.update' || name === 'collab.sync') && data.file_id === fileId) {
          Y.applyUpdate(doc, Buffer.from(data.update as string, 'base64'));
        }
      }
    };
    const timer = setInterval(step, 20);
    timer.unref();
    streams.push({ ...stream, close: () => clearInterval(timer) } as EventStream);
  }

  async function until(check: () => boolean | Promise<boolean>, what: string, ms = 20_000): Promise<void> {
    const end = Date.now() + ms;
    while (!(await check())) {
      if (Date.now() > end) throw new Error(`not within ${ms / 1000} s: ${what}`);
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  it('the documented order (GET …/collab, then the stream with its state vector) and the reverse both converge', async () => {
    const { server, umaSession, fileId } = await seeded();
    const post = async (doc: Y.Doc, edit: (text: Y.Text) => void) => {
      let update: Uint8Array | undefined;
      const grab = (u: Uint8Array) => {
        update = u;
      };
      doc.on('update', grab);
      edit(doc.getText('content'));
      doc.off('update', grab);
      // Three typists of one account as fast as they can: past the account's request rate the
      // server answers 429 with Retry-After, and the client sends the same update again then, as
      // the web client does.
      for (;;) {
        const res = await fetch(`${server.url}/api/notes/pub/files/${fileId}/collab`, {
          method: 'POST',
          headers: {
            cookie: umaSession.cookie,
            'x-csrf-token': umaSession.csrf,
            'content-type': 'application/json',
          },
          body: JSON.stringify({ update: b64(update!), client_id: 'typist' }),
        });
        if (res.status === 429) {
          expect((await res.json()) as { code: string }).toMatchObject({ code: 'RATE_LIMITED' });
          await new Promise((r) => setTimeout(r, Number(res.headers.get('retry-after') ?? 1) * 1000));
          continue;
        }
        expect(res.status, await res.text()).toBe(200);
        return;
      }
    };
    const serverText = async () =>
      (
        (await (
          await fetch(`${server.url}/api/notes/pub/files/${fileId}`, {
            headers: { cookie: umaSession.cookie },
          })
        ).json()) as {
          content: string;
        }
      ).content;
    const typist = await fetchDoc(server.url, fileId, umaSession);

    // The documented order, with an update in between: the stream's first word is what was missed.
    const reader = await fetchDoc(server.url, fileId, umaSession);
    await post(typist, (t) => t.insert(0, 'between '));
    const stream = await openEvents(
      server.url,
      `note_id=pub&sync_file=${fileId}&sync_state=${encodeURIComponent(b64(Y.encodeStateVector(reader)))}`,
      { cookie: umaSession.cookie },
    );
    expect(stream.status).toBe(200);
    follow(stream, reader, fileId);
    await stream.next('collab.sync');
    await post(typist, (t) => t.insert(0, 'after '));
    await until(
      async () => reader.getText('content').toString() === (await serverText()),
      'the reader converges',
    );
    expect(reader.getText('content').toString()).toBe('after between start\n');

    // The reverse: the stream first (no state vector), then GET …/collab.
    const late = await openEvents(server.url, 'note_id=pub', { cookie: umaSession.cookie });
    expect(late.status).toBe(200);
    await late.next('hello');
    await post(typist, (t) => t.insert(0, 'x '));
    const lateDoc = await fetchDoc(server.url, fileId, umaSession);
    follow(late, lateDoc, fileId);
    await post(typist, (t) => t.insert(0, 'y '));
    await until(
      async () => lateDoc.getText('content').toString() === (await serverText()),
      'the late reader converges',
    );

    // Twelve editors join in the documented order while three type: every one of them converges.
    const typists = await Promise.all([0, 1, 2].map(() => fetchDoc(server.url, fileId, umaSession)));
    let typing = true;
    const typed = Promise.all(
      typists.map(async (doc, n) => {
        for (let i = 0; typing && i < 200; i++) await post(doc, (t) => t.insert(t.length, `${n}:${i} `));
      }),
    );
    const joined: Y.Doc[] = [];
    for (let i = 0; i < 12; i++) {
      const doc = await fetchDoc(server.url, fileId, umaSession);
      await new Promise((r) => setTimeout(r, 30));
      const s = await openEvents(
        server.url,
        `note_id=pub&sync_file=${fileId}&sync_state=${encodeURIComponent(b64(Y.encodeStateVector(doc)))}`,
        { cookie: umaSession.cookie },
      );
      follow(s, doc, fileId);
      joined.push(doc);
    }
    typing = false;
    await typed;
    const final = await serverText();
    await until(() => joined.every((d) => d.getText('content').toString() === final), 'all twelve converge');
  }, 90_000);
});

describe('exports', () => {
  /** A public file of `words` words (6 bytes each), written while the server is stopped (the API takes 1 MiB a file). */
  async function bigNote(words: number) {
    const { home, server, fileId } = await seeded();
    await server.stop();
    const db = new Database(join(home, 'notes', 'notes.db'));
    // Words in no order (deflate works for them).
    let x = 1;
    const vocabulary = Array.from({ length: 5000 }, (_, i) => `w${i.toString(36)}`);
    const text = Array.from({ length: words }, () => {
      x = (x * 1103515245 + 12345) & 0x7fffffff;
      return vocabulary[x % vocabulary.length];
    }).join(' ');
    db.prepare('update files set content = ? where id = ?').run(text, fileId);
    db.close();
    return { home, restart: (toml = ACCOUNTS) => start(home, toml) };
  }

  /** GET `path` on a fresh connection; resolves with the status when the whole answer has arrived. */
  function get(url: string, path: string, localAddress?: string): Promise<number> {
    return new Promise((resolve, reject) => {
      http
        .get(`${url}${path}`, { agent: false, ...(localAddress ? { localAddress } : {}) }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        })
        .on('error', reject);
    });
  }

  /** CPU time (in clock ticks, 10 ms) the main thread of process `pid` has used: its event loop. */
  function loopTicks(pid: number): number {
    const stat = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return Number(fields[11]) + Number(fields[12]); // utime + stime (fields 14 and 15)
  }

  it("an anonymous export's compression leaves the event loop free: /healthz is answered in every stretch of its CPU time", async () => {
    // Measured in the server's own CPU time, not in wall time, so a loaded machine cannot defeat it:
    // while a 3.6 MB file is compressed, /healthz is asked continually over 2 connections and each
    // answer notes the server's event-loop CPU clock. An export compressed in one block leaves a
    // stretch of its CPU time as long as the compression with no answer in it.
    const { restart } = await bigNote(600_000);
    const server = await restart();
    const pid = server.child.pid!;
    // The file was written behind the server's back: it indexes it for search when it starts.
    // Measured from when its event loop is idle (half a second with at most a tick of CPU).
    for (let last = loopTicks(pid), i = 0; i < 120; i++) {
      await new Promise((r) => setTimeout(r, 500));
      const now = loopTicks(pid);
      if (now - last <= 1) break;
      last = now;
    }
    const agent = new http.Agent({ keepAlive: true, maxSockets: 2 });
    const answeredAt: number[] = [];
    let exporting = true;
    const healthz = (): Promise<void> =>
      new Promise<void>((resolve, reject) => {
        http
          .get(`${server.url}/healthz`, { agent }, (res) => {
            res.resume();
            res.on('end', () => {
              answeredAt.push(loopTicks(pid));
              resolve();
            });
          })
          .on('error', reject);
      }).then(() => (exporting ? healthz() : undefined));
    const from = loopTicks(pid);
    const exported = get(server.url, '/api/notes/pub/export?format=zip');
    const askers = Array.from({ length: 2 }, healthz);
    expect(await exported).toBe(200);
    const to = loopTicks(pid);
    exporting = false;
    await Promise.all(askers);
    agent.destroy();
    // Ticks of the export's CPU time in which at least one /healthz was answered.
    const spent = Math.max(1, to - from);
    const covered = new Set(answeredAt.filter((t) => t > from && t <= to)).size;
    console.log(`export: ${spent} ticks of event-loop CPU, /healthz answered in ${covered} of them`);
    expect(spent).toBeGreaterThanOrEqual(10); // a compression long enough to tell (≥ 100 ms of CPU)
    expect(covered / spent).toBeGreaterThan(0.5);
  }, 180_000);

  it('exports past a client’s CPU budget answer 429 to that client only', async () => {
    const { restart } = await bigNote(1_500_000);
    const server = await restart(`${ACCOUNTS}[notes.limits]\nexport_cpu_ms_per_minute = 100\n`);
    // The first export spends more than the minute's budget (it goes on, slowed to the budget).
    const first = http.get(
      `${server.url}/api/notes/pub/export`,
      { agent: false, localAddress: '127.0.0.2' },
      (res) => res.resume(),
    );
    first.on('error', () => {});
    // Once it has, the same address is refused (asked again until then, at most 20 s).
    let refused = false;
    for (let i = 0; i < 100 && !refused; i++) {
      await new Promise((r) => setTimeout(r, 200));
      refused = await new Promise<boolean>((resolve, reject) => {
        const req = http.get(
          `${server.url}/api/notes/pub/export`,
          { agent: false, localAddress: '127.0.0.2' },
          (res) => {
            resolve(res.statusCode === 429);
            req.destroy();
          },
        );
        req.on('error', reject);
      });
    }
    expect(refused).toBe(true);
    // Another address has its own budget.
    const other = await new Promise<http.IncomingMessage>((resolve, reject) =>
      http
        .get(`${server.url}/api/notes/pub/export`, { agent: false, localAddress: '127.0.0.3' }, resolve)
        .on('error', reject),
    );
    expect(other.statusCode).toBe(200);
    first.destroy();
    other.destroy();
  }, 60_000);
});

describe('searches by strangers', () => {
  it('a flood of visitors’ searches matching only private files never makes a merged save fail', async () => {
    const { home, server } = await seeded();
    await server.stop();
    const db = new Database(join(home, 'notes', 'notes.db'));
    const insert = db.prepare(
      "insert into files(note_id, name, public, revision, content, created_at, updated_at) values ((select id from notes where name = 'priv'), ?, 1, 1, ?, '2026-01-01', '2026-01-01')",
    );
    db.transaction(() => {
      for (let i = 0; i < 6000; i++) insert.run(`s${i}.md`, `secret ${i} ${'filler words here '.repeat(20)}`);
    })();
    db.close();
    const again = await start(home);
    const uma = api(again.url, await logIn(again.url, 'uma', 'umapass1'));
    // Members find the private files (once the index has caught up with them).
    for (let i = 0; ; i++) {
      const found = (await (await uma('GET', '/api/search?q=secret')).json()) as { results: unknown[] };
      if (found.results.length === 20) break;
      if (i > 600) throw new Error('the private files never became searchable');
      await new Promise((r) => setTimeout(r, 100));
    }
    const lines = Array.from({ length: 30 }, (_, i) => `line ${i}`);
    const made = await uma('POST', '/api/notes/pub/files', {
      name: 'm.md',
      content: `${lines.join('\n')}\n`,
    });
    expect(made.status).toBe(201);

    let flooding = true;
    const answers = new Map<number, number>();
    const flood = Promise.all(
      Array.from({ length: 16 }, (_, a) =>
        Promise.all(
          Array.from({ length: 4 }, async () => {
            while (flooding) {
              const status = await get(again.url, '/api/search?q=secret', `127.0.0.${a + 2}`);
              answers.set(status, (answers.get(status) ?? 0) + 1);
            }
          }),
        ),
      ),
    );
    function get(url: string, path: string, localAddress: string): Promise<number> {
      return new Promise((resolve) => {
        http
          .get(`${url}${path}`, { agent: false, localAddress }, (res) => {
            res.resume();
            res.on('end', () => resolve(res.statusCode ?? 0));
          })
          .on('error', () => resolve(0));
      });
    }
    await new Promise((r) => setTimeout(r, 500));
    // Saves on an old revision, each merged in the worker while the flood goes on.
    const saves: number[] = [];
    for (let i = 1; i <= 5; i++) {
      const current = (await (await uma('GET', '/api/notes/pub/files/m.md')).json()) as { revision: number };
      const theirs = [...lines];
      theirs[0] = `first edit ${i}`;
      expect(
        (
          await uma('PUT', '/api/notes/pub/files/m.md', {
            content: `${theirs.join('\n')}\n`,
            base_revision: current.revision,
          })
        ).status,
      ).toBe(200);
      const ours = [...lines];
      ours[29] = `last edit ${i}`;
      const merged = await uma('PUT', '/api/notes/pub/files/m.md', {
        content: `${ours.join('\n')}\n`,
        base_revision: current.revision,
      });
      saves.push(merged.status);
      lines[0] = `first edit ${i}`;
      lines[29] = `last edit ${i}`;
    }
    flooding = false;
    await flood;
    console.log(`visitors' searches during the saves: ${JSON.stringify(Object.fromEntries(answers))}`);
    expect(saves).toEqual([200, 200, 200, 200, 200]);
    // Visitors find nothing of the private files.
    const visitor = (await (await fetch(`${again.url}/api/search?q=secret`)).json()) as {
      results: unknown[];
    };
    expect(visitor.results).toEqual([]);
  }, 120_000);
});
