// `rune notes` as a public service, at its boundary (issue 28), through the built binary: one
// server per data folder, nothing read of a body before the request's rights are known, bodies in
// flight bounded, private answers never cached, uploads verified and kept only once fsynced,
// quotas per person, and clear 4xx for input that used to be a 500.
import { spawn, spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { logIn, type NotesProcess, type NotesSession, startNotesProcess } from '../helpers/notes.ts';
import { partialRequest } from '../helpers/notes-wire.ts';
import { cleanEnv, requireBinary, run, tempDir } from '../helpers/rune.ts';

const ACCOUNTS = '[notes.local]\nadmins = ["ada:adapass1"]\nusers = ["uma:umapass1"]\n';

const running: NotesProcess[] = [];
afterEach(async () => {
  for (const server of running.splice(0)) await server.stop();
});

async function start(
  toml = ACCOUNTS,
  home = tempDir('rune-notes-public-'),
): Promise<NotesProcess & { home: string }> {
  writeFileSync(join(home, 'rune.toml'), toml);
  const server = await startNotesProcess({ home });
  running.push(server);
  return Object.assign(server, { home });
}

/** JSON calls as a signed-in person (cookie and CSRF token). */
function api(url: string, session: NotesSession) {
  return async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}) => {
    const res = await fetch(`${url}${path}`, {
      method,
      headers: {
        cookie: session.cookie,
        'x-csrf-token': session.csrf,
        'content-type': 'application/json',
        ...headers,
      },
      ...(body === undefined
        ? {}
        : { body: typeof body === 'string' || body instanceof Uint8Array ? body : JSON.stringify(body) }),
    });
    return res;
  };
}

async function seeded(toml = ACCOUNTS) {
  const server = await start(toml);
  const ada = api(server.url, await logIn(server.url, 'ada', 'adapass1'));
  const umaSession = await logIn(server.url, 'uma', 'umapass1');
  const uma = api(server.url, umaSession);
  expect((await ada('POST', '/api/notes', { name: 'pub', public: true })).status).toBe(201);
  expect((await ada('POST', '/api/notes', { name: 'priv' })).status).toBe(201);
  expect((await uma('POST', '/api/notes/pub/files', { name: 'a.md', content: '# A\n' })).status).toBe(201);
  expect((await uma('POST', '/api/notes/priv/files', { name: 's.md', content: 'secret\n' })).status).toBe(
    201,
  );
  return { server, ada, uma, umaSession };
}

describe('one server per data folder', () => {
  it('a second start on the same folder exits 18 naming the holder; the lock dies with the process', async () => {
    const first = await start();
    const second = await run(requireBinary(), ['notes', '--port', '0'], {
      env: { ...cleanEnv(), RUNE_HOME: first.home },
      timeoutMs: 20_000,
    });
    expect(second.code).toBe(18);
    expect(second.stderr).toContain(`pid ${first.child.pid}`);
    // SIGKILL: no clean stop, nothing removed by the first server; the kernel drops the lock.
    first.child.kill('SIGKILL');
    await first.exit;
    const third = await startNotesProcess({ home: first.home });
    running.push(third);
    expect((await fetch(`${third.url}/healthz`)).status).toBe(200);
  });

  it('a fresh data folder it cannot write exits 12 (IO) and says which', async () => {
    // As nobody (root writes anywhere), in a folder of root's that nobody may read but not write;
    // outside the test's own temporary folder, which only root may enter.
    const home = mkdtempSync('/tmp/rune-notes-public-ro-');
    try {
      writeFileSync(join(home, 'rune.toml'), ACCOUNTS);
      chmodSync(home, 0o755);
      const personal = join(home, 'home');
      mkdirSync(personal);
      const result = spawnSync(
        'setpriv',
        ['--reuid=65534', '--regid=65534', '--clear-groups', requireBinary(), 'notes', '--port', '0'],
        { env: { ...cleanEnv(personal), RUNE_HOME: home }, encoding: 'utf8', timeout: 20_000 },
      );
      expect(result.status, result.stderr).toBe(12);
      expect(result.stderr).toContain(join(home, 'notes'));
    } finally {
      rmSync(home, { recursive: true, force: true });
    }
  });
});

describe('nothing of a body is read before its request may be served', () => {
  it('refuses uploads and JSON to a note that does not exist, a role the route needs, a missing CSRF token', async () => {
    const { server, umaSession } = await seeded();
    const cases: Array<[string, Record<string, string>, number, number]> = [
      // A stranger's upload to a note that does not exist: 404 with 10 MiB still unsent.
      ['/api/notes/nope/uploads?name=x.bin', { 'content-type': 'application/octet-stream' }, 10 << 20, 404],
      // To a private note: it does not exist for them either.
      ['/api/notes/priv/files', { 'content-type': 'application/json' }, 1 << 20, 404],
      // To a public note, a route that needs a signed-in user.
      ['/api/notes/pub/files', { 'content-type': 'application/json' }, 1 << 20, 401],
      ['/api/notes/pub/uploads?name=x.bin', { 'content-type': 'application/octet-stream' }, 10 << 20, 401],
      // Signed in, but without the CSRF token.
      [
        '/api/notes/pub/files',
        { 'content-type': 'application/json', cookie: umaSession.cookie },
        1 << 20,
        403,
      ],
    ];
    for (const [path, headers, declared, status] of cases) {
      const answer = await partialRequest(server.url, { path, headers, declared, sent: 1024 });
      answer.socket.destroy();
      expect(answer.status, `${path}: ${answer.text.slice(0, 200)}`).toBe(status);
      // What was refused is not read either: the connection closes.
      expect(answer.closed, path).toBe(true);
    }
    expect((await fetch(`${server.url}/healthz`)).status).toBe(200);
  });

  it('bounds the bodies one person may have on their way, in memory (JSON) and on disk (uploads)', async () => {
    const { server, umaSession } = await seeded();
    const headers = { cookie: umaSession.cookie, 'x-csrf-token': umaSession.csrf };
    const held: Array<Awaited<ReturnType<typeof partialRequest>>> = [];
    try {
      // JSON bodies are read into memory: one person may have 8 MiB of them on their way.
      const json = { ...headers, 'content-type': 'application/json' };
      for (let i = 0; i < 4; i++) {
        held.push(
          await partialRequest(server.url, {
            path: '/api/notes/pub/files',
            headers: json,
            declared: 2 << 20,
            sent: 10,
            waitMs: 300,
          }),
        );
      }
      expect(held.map((h) => h.status)).toEqual([null, null, null, null]);
      const over = await partialRequest(server.url, {
        path: '/api/notes/pub/files',
        headers: json,
        declared: 2 << 20,
        sent: 10,
      });
      held.push(over);
      expect(over.status, over.text).toBe(429);
      // Uploads go to disk as they come: 32 MiB of them per person.
      const bin = { ...headers, 'content-type': 'application/octet-stream' };
      for (let i = 0; i < 3; i++) {
        held.push(
          await partialRequest(server.url, {
            path: `/api/notes/pub/uploads?name=u${i}`,
            headers: bin,
            declared: 10 << 20,
            sent: 10,
            waitMs: 300,
          }),
        );
      }
      expect(held.slice(-3).map((h) => h.status)).toEqual([null, null, null]);
      const overUpload = await partialRequest(server.url, {
        path: '/api/notes/pub/uploads?name=u9',
        headers: bin,
        declared: 10 << 20,
        sent: 10,
      });
      held.push(overUpload);
      expect(overUpload.status, overUpload.text).toBe(429);
      // An upload larger than allowed is refused by its Content-Length, before a byte.
      const huge = await partialRequest(server.url, {
        path: '/api/notes/pub/uploads?name=big',
        headers: bin,
        declared: 11 << 20,
        sent: 10,
      });
      held.push(huge);
      expect(huge.status).toBe(413);
    } finally {
      for (const h of held) h.socket.destroy();
    }
  });

  it('cuts a body that stops arriving after body_timeout_secs', async () => {
    const server = await start(`${ACCOUNTS}[notes.limits]\nbody_timeout_secs = 2\n`);
    const session = await logIn(server.url, 'ada', 'adapass1');
    const stalled = await partialRequest(server.url, {
      path: '/api/notes',
      headers: { cookie: session.cookie, 'x-csrf-token': session.csrf, 'content-type': 'application/json' },
      declared: 100,
      sent: 10,
      waitMs: 20_000,
    });
    stalled.socket.destroy();
    expect(stalled.status).toBe(408);
    expect(stalled.closed).toBe(true);
  }, 40_000);
});

describe('what a response may be kept as', () => {
  it('keeps private answers out of caches; public pages are revalidated by ETag (304)', async () => {
    const { server, ada, uma } = await seeded();
    for (const [path, call] of [
      ['/api/me', uma],
      ['/api/notes/priv/files/s.md', uma],
      ['/api/tokens', ada],
      ['/api/notes', uma],
    ] as const) {
      const res = await call('GET', path);
      expect(res.status, path).toBe(200);
      expect(res.headers.get('cache-control'), path).toBe('no-store');
    }
    const png = Buffer.from('89504e470d0a1a0a0000000d49484452', 'hex');
    const upload = await uma('POST', '/api/notes/priv/uploads?name=p.png', png, {
      'content-type': 'image/png',
    });
    expect(upload.status).toBe(201);
    const { url: privateUpload } = (await upload.json()) as { url: string };
    expect((await uma('GET', privateUpload)).headers.get('cache-control')).toBe('no-store');
    for (const path of ['/notes/pub/a.md', '/raw/pub/a.md', '/api/notes/pub/files/a.md']) {
      const first = await fetch(`${server.url}${path}`);
      expect(first.status, path).toBe(200);
      expect(first.headers.get('cache-control'), path).toBe('no-cache');
      const etag = first.headers.get('etag');
      expect(etag, path).toMatch(/^".+"$/);
      const again = await fetch(`${server.url}${path}`, { headers: { 'if-none-match': etag! } });
      expect(again.status, path).toBe(304);
    }
    // A change makes a new page and a new tag.
    const etag = (await fetch(`${server.url}/raw/pub/a.md`)).headers.get('etag')!;
    expect(
      (await uma('PUT', '/api/notes/pub/files/a.md', { content: '# B\n', base_revision: 1 })).status,
    ).toBe(200);
    const changed = await fetch(`${server.url}/raw/pub/a.md`, { headers: { 'if-none-match': etag } });
    expect(changed.status).toBe(200);
    expect(await changed.text()).toBe('# B\n');
  });
});

describe('uploads on disk', () => {
  it('removes what killed uploads left at start, and replaces a stored copy that does not match its hash', async () => {
    const { server, uma } = await seeded();
    const bytes = Buffer.from(`upload ${'x'.repeat(5000)}`);
    const hash = createHash('sha256').update(bytes).digest('hex');
    expect(
      (
        await uma('POST', '/api/notes/pub/uploads?name=x.bin', bytes, {
          'content-type': 'application/octet-stream',
        })
      ).status,
    ).toBe(201);
    await server.stop();
    const uploads = join(server.home, 'notes', 'uploads');
    // A crash mid-upload leaves a temporary file; a torn write leaves a short copy under the hash.
    writeFileSync(join(uploads, '0123456789abcdef.tmp'), 'half');
    writeFileSync(join(uploads, hash), bytes.subarray(0, 100));
    const again = await startNotesProcess({ home: server.home });
    running.push(again);
    expect(readdirSync(uploads).filter((f) => f.endsWith('.tmp'))).toEqual([]);
    const uma2 = api(again.url, await logIn(again.url, 'uma', 'umapass1'));
    expect(
      (
        await uma2('POST', '/api/notes/pub/uploads?name=y.bin', bytes, {
          'content-type': 'application/octet-stream',
        })
      ).status,
    ).toBe(201);
    const served = Buffer.from(
      await (await fetch(`${again.url}/api/notes/pub/uploads/${hash}`)).arrayBuffer(),
    );
    expect(served.equals(bytes)).toBe(true);
  });

  it.skipIf(!existsSync('/usr/bin/strace'))(
    'fsyncs the bytes of an upload before answering, with synchronous = "normal" too',
    async () => {
      const { server, uma } = await seeded();
      const trace = spawn(
        'strace',
        ['-f', '-y', '-e', 'trace=fsync,fdatasync', '-p', String(server.child.pid)],
        {
          stdio: ['ignore', 'ignore', 'pipe'],
        },
      );
      let log = '';
      trace.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        log += chunk;
      });
      await new Promise((resolve) => setTimeout(resolve, 1000));
      const res = await uma('POST', '/api/notes/pub/uploads?name=f.bin', Buffer.from('fsync me'), {
        'content-type': 'application/octet-stream',
      });
      expect(res.status).toBe(201);
      trace.kill('SIGINT');
      await new Promise((resolve) => trace.once('close', resolve));
      expect(log).toMatch(/f(?:data)?sync\(\d+<[^>]*\/uploads\/[0-9a-f]+\.tmp>\)/);
      expect(log).toMatch(/f(?:data)?sync\(\d+<[^>]*\/uploads>\)/);
    },
  );
});

describe('clear 4xx instead of a 500, and quotas', () => {
  it('answers JSON nested 200,000 deep with a 4xx that says so, presence state included', async () => {
    const { server, uma } = await seeded();
    const nested = (depth: number) => `${'{"a":'.repeat(depth)}1${'}'.repeat(depth)}`;
    // A stranger's presence: the body is larger than presence takes, refused before it is read.
    const stranger = await fetch(`${server.url}/api/notes/pub/presence`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: `{"client_id":"t","state":${nested(200_000)}}`,
    });
    expect(stranger.status).toBe(413);
    expect(await stranger.json()).toMatchObject({ code: 'TOO_LARGE' });
    // Within the size, nesting is bounded for every JSON body (32 levels).
    for (const path of ['/api/notes/pub/presence', '/api/notes/pub/files']) {
      const res = await uma('POST', path, `{"client_id":"t","name":"n.md","state":${nested(2000)}}`);
      expect(res.status, path).toBe(400);
      expect(((await res.json()) as { message: string }).message, path).toMatch(/nested deeper than 32/);
    }
  });

  it("answers a person's 61st new file within a minute with 429 QUOTA_EXCEEDED, and only theirs", async () => {
    const { uma, ada } = await seeded();
    // A minute's worth (60, two made in seeded()) passes, then the quota answers; the bucket
    // refills a file a second, so a few more may pass while these are made.
    let made = 2;
    let last: Response | undefined;
    while (made < 150) {
      const res = await uma('POST', '/api/notes/pub/files', { name: `q${made}.md`, content: 'q\n' });
      if (res.status !== 201) {
        last = res;
        break;
      }
      made++;
    }
    expect(made).toBeGreaterThanOrEqual(60);
    expect(last).toBeDefined();
    last = last!;
    expect(last.status).toBe(429);
    expect(await last.json()).toMatchObject({ code: 'QUOTA_EXCEEDED' });
    expect(Number(last.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await ada('POST', '/api/notes/pub/files', { name: 'by-ada.md', content: 'a\n' })).status).toBe(
      201,
    );
  });
});
