// rune notes under abuse, through the built binary on loopback: while an abusive client (a process
// of its own) sends the worst search, the worst diff, 500 event streams or collaborative updates
// at the size limit, a well-behaved client's /healthz keeps answering (median under 250 ms, no
// answer held a second — what a stalled event loop costs; the figures printed); a storm of concurrent logins is limited before any password is hashed.
import { type ChildProcess, spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import http from 'node:http';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { hashPassword } from '../../src/notes/passwords.ts';
import { logIn, type NotesProcess, startNotesProcess, tryLogIn } from '../helpers/notes.ts';
import { tempDir } from '../helpers/rune.ts';

const ATTACKER = join(__dirname, '..', 'helpers', 'notes-attacker.mjs');
const YJS = createRequire(__filename)
  .resolve('yjs')
  .replace(/\.cjs$/, '.mjs');

const running: NotesProcess[] = [];
const attackers: ChildProcess[] = [];
afterEach(async () => {
  for (const a of attackers.splice(0)) if (a.exitCode === null) a.kill('SIGKILL');
  for (const s of running.splice(0)) await s.stop();
});

async function start(toml: string): Promise<NotesProcess> {
  const home = tempDir('rune-notes-abuse-');
  writeFileSync(join(home, 'rune.toml'), toml);
  const server = await startNotesProcess({ home, args: ['--config', join(home, 'rune.toml')] });
  running.push(server);
  return server;
}

interface Session {
  cookie: string;
  csrf: string;
  call(
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; json: Record<string, unknown> }>;
}

async function login(url: string, username: string, password: string): Promise<Session> {
  const { cookie, csrf } = await logIn(url, username, password);
  return {
    cookie,
    csrf,
    async call(method, path, body) {
      const r = await fetch(`${url}${path}`, {
        method,
        headers: { 'content-type': 'application/json', cookie, 'x-csrf-token': csrf },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
      return { status: r.status, json: (await r.json().catch(() => ({}))) as Record<string, unknown> };
    },
  };
}

function attack(spec: Record<string, unknown>): {
  child: ChildProcess;
  done: Promise<Record<string, unknown>>;
} {
  const child = spawn(process.execPath, [ATTACKER, JSON.stringify(spec)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  attackers.push(child);
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
  });
  const done = new Promise<Record<string, unknown>>((resolve) =>
    child.on('close', () =>
      resolve(
        Object.assign(
          {},
          ...out
            .trim()
            .split('\n')
            .filter(Boolean)
            .map((l) => JSON.parse(l)),
        ),
      ),
    ),
  );
  return { child, done };
}

/**
 * GET /healthz every 20 ms for `ms`, one request at a time on one kept-alive socket, from a client
 * address of its own (127.0.0.2: another client than the abusive one); latencies in ms.
 */
async function probe(url: string, ms: number): Promise<number[]> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: 1, localAddress: '127.0.0.2' });
  const latencies: number[] = [];
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const started = performance.now();
    const status = await new Promise<number>((resolve, reject) => {
      const req = http.get(`${url}/healthz`, { agent }, (res) => {
        res.resume();
        res.on('end', () => resolve(res.statusCode ?? 0));
      });
      req.on('error', reject);
    });
    expect(status).toBe(200);
    latencies.push(performance.now() - started);
    await new Promise((r) => setTimeout(r, 20));
  }
  agent.destroy();
  return latencies;
}

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * q) - 1)]!;
}

// The bounds tell a stalled event loop (each worst request held it for seconds before the limits)
// from a busy machine (CI runs the other test files beside this one: p99 reached ~500 ms there
// with nothing stalled), so the test does not depend on the load.
function report(what: string, latencies: number[], attacker: Record<string, unknown>) {
  const median = quantile(latencies, 0.5);
  const p99 = quantile(latencies, 0.99);
  console.log(
    `/healthz while ${what}: median ${median.toFixed(1)} ms, p99 ${p99.toFixed(1)} ms (${latencies.length} probes, max ${Math.max(...latencies).toFixed(1)} ms); attacker: ${JSON.stringify(attacker)}`,
  );
  expect(median).toBeLessThan(250);
  expect(p99).toBeLessThan(1000);
}

const ADMIN = `[notes.local]\nadmins = ["ada:adapass1"]\nusers = ["uma:umapass1"]\n`;
/** The abusive client's requests really run (not refused by the per-address limit first). */
const UNLIMITED = `[notes.limits]\nexpensive_per_minute = 1000000\nfiles_per_minute = 1000000\nrevisions_per_minute = 1000000\nmax_streams_per_client = 1000\nmax_streams_per_note = 1000\n`;
const WORDS = Array.from({ length: 40 }, (_, i) => `word${i}`);

function wordy(bytes: number, seed: number): string {
  const parts: string[] = [];
  let size = 0;
  for (let i = 0; size < bytes; i++) {
    const word = WORDS[(i * 7 + seed * 13 + Math.floor(i / 11)) % WORDS.length]!;
    parts.push(i % 12 === 11 ? `${word}\n` : `${word} `);
    size += word.length + 1;
  }
  return parts.join('');
}

describe('a well-behaved client stays served while an anonymous one abuses the server', () => {
  it('during the worst search', async () => {
    const server = await start(`${UNLIMITED}${ADMIN}`);
    const ada = await login(server.url, 'ada', 'adapass1');
    expect((await ada.call('POST', '/api/notes', { name: 'pub', public: true })).status).toBe(201);
    // One file at the size limit and many smaller ones, every query word in all of them.
    expect(
      (await ada.call('POST', '/api/notes/pub/files', { name: 'big.md', content: wordy(1000 * 1024, 0) }))
        .status,
    ).toBe(201);
    for (let i = 0; i < 60; i++) {
      expect(
        (await ada.call('POST', '/api/notes/pub/files', { name: `f${i}.md`, content: wordy(20 * 1024, i) }))
          .status,
      ).toBe(201);
    }
    const terms = WORDS.slice(0, 10);
    const worst = [
      `/api/search?q=${encodeURIComponent(terms.join(' '))}&limit=100`,
      `/api/search?q=${encodeURIComponent(`"${terms.slice(0, 8).join(' ')}" ${terms.slice(8).join(' ')}`)}&limit=100`,
      `/api/search?q=${encodeURIComponent(WORDS.slice(10, 20).join(' '))}&limit=100`,
    ];
    const attacker = attack({ url: server.url, kind: 'get', paths: worst, concurrency: 8 });
    const latencies = await probe(server.url, 9000);
    attacker.child.kill('SIGTERM');
    const result = await attacker.done;
    expect((result.counts as Record<string, number>)['200']).toBeGreaterThan(0);
    report('an anonymous client runs the worst search 8 at a time', latencies, result);
  }, 120_000);

  it('during the worst diff', async () => {
    const server = await start(`${UNLIMITED}${ADMIN}`);
    const ada = await login(server.url, 'ada', 'adapass1');
    expect((await ada.call('POST', '/api/notes', { name: 'pub', public: true })).status).toBe(201);
    const lines = (p: string) =>
      Array.from({ length: 8000 }, (_, i) => `${p} line ${i} ${'x'.repeat(i % 40)}\n`).join('');
    expect(
      (await ada.call('POST', '/api/notes/pub/files', { name: 'd.md', content: lines('old') })).status,
    ).toBe(201);
    expect(
      (await ada.call('PUT', '/api/notes/pub/files/d.md', { content: lines('new'), base_revision: 1 }))
        .status,
    ).toBe(200);
    const attacker = attack({
      url: server.url,
      kind: 'get',
      paths: ['/api/notes/pub/files/d.md/revisions/2/diff'],
      concurrency: 8,
    });
    const latencies = await probe(server.url, 9000);
    attacker.child.kill('SIGTERM');
    const result = await attacker.done;
    expect((result.counts as Record<string, number>)['200']).toBeGreaterThan(0);
    const answer = await fetch(`${server.url}/api/notes/pub/files/d.md/revisions/2/diff`);
    expect(await answer.json()).toMatchObject({ diff: null, too_large: true });
    report('an anonymous client asks for the worst diff 8 at a time', latencies, result);
  }, 120_000);

  it('during 500 event streams', async () => {
    // The default limits: one client holds at most 16 streams, the rest are refused.
    const server = await start(ADMIN);
    const ada = await login(server.url, 'ada', 'adapass1');
    expect((await ada.call('POST', '/api/notes', { name: 'pub', public: true })).status).toBe(201);
    const attacker = attack({
      url: server.url,
      kind: 'streams',
      path: '/api/events?note_id=pub',
      count: 500,
      holdMs: 3000,
    });
    const latencies = await probe(server.url, 9000);
    const result = await attacker.done;
    expect((result.counts as Record<string, number>)['200']).toBe(16);
    report(
      'an anonymous client opens 500 event streams of one note, holds and closes them',
      latencies,
      result,
    );
  }, 120_000);

  it('during collaborative updates at the size limit', async () => {
    const server = await start(`${UNLIMITED}${ADMIN}`);
    const ada = await login(server.url, 'ada', 'adapass1');
    expect((await ada.call('POST', '/api/notes', { name: 'pub', public: true })).status).toBe(201);
    expect(
      (await ada.call('POST', '/api/notes/pub/files', { name: 'c.md', content: 'start\n' })).status,
    ).toBe(201);
    const uma = await login(server.url, 'uma', 'umapass1');
    const watchers = attack({
      url: server.url,
      kind: 'streams',
      path: '/api/events?note_id=pub',
      count: 50,
      holdMs: 8000,
    });
    const writer = attack({
      url: server.url,
      kind: 'collab',
      path: '/api/notes/pub/files/c.md/collab',
      cookie: uma.cookie,
      csrf: uma.csrf,
      bytes: 255 * 1024,
      yjs: YJS,
    });
    const latencies = await probe(server.url, 9000);
    writer.child.kill('SIGTERM');
    const result = await writer.done;
    await watchers.done;
    expect((result.counts as Record<string, number>)['200']).toBeGreaterThan(0);
    report('a user sends 255 KiB collaborative updates to a note 50 streams watch', latencies, result);
  }, 120_000);
});

describe('logins under a storm', () => {
  it('tries at most the configured number of 100 concurrent wrong logins; a right one inside counts too', async () => {
    const hash = await hashPassword('right-password');
    const server = await start(`[notes.local]\nadmins = ["ada:adapass1"]\nusers = ["uma:${hash}"]\n`);
    const attempt = (password: string) => tryLogIn(server.url, 'uma', password).then((r) => r.status);
    const passwords = Array.from({ length: 100 }, (_, i) => `wrong-${i}`);
    passwords.splice(37, 0, 'right-password');
    const statuses = await Promise.all(passwords.map(attempt));
    const tried = statuses.filter((s) => s === 401 || s === 200).length;
    const limited = statuses.filter((s) => s === 429).length;
    console.log(
      `login storm: ${tried} tried (${statuses.filter((s) => s === 200).length} right), ${limited} answered 429`,
    );
    expect(tried).toBeLessThanOrEqual(10);
    expect(tried + limited).toBe(101);
    // The right password, whether it was tried or limited, used an attempt: now it is refused too.
    expect(await attempt('right-password')).toBe(429);
    // Each try hashed once: the failures the server logged are the 401s.
    expect(server.stderr().match(/failed login for "uma"/g)?.length ?? 0).toBe(
      statuses.filter((s) => s === 401).length,
    );
  }, 60_000);
  it("a stranger spending an account's attempts does not lock out the browser its owner logged in from", async () => {
    const server = await start(ADMIN);
    const attempt = (password: string, cookie?: string) => tryLogIn(server.url, 'uma', password, cookie);
    // Uma logs in once from her browser, which keeps the device cookie it is given.
    const first = await attempt('umapass1');
    expect(first.status).toBe(200);
    const device = first.headers.getSetCookie().find((c) => c.startsWith('rune_device='));
    expect(device).toMatch(/HttpOnly/i);
    const cookie = (device as string).split(';')[0] as string;
    // A stranger (no cookie, or a made-up one) spends her attempts: it is stopped as before…
    const stranger = [];
    for (let i = 0; i < 12; i++)
      stranger.push((await attempt(`guess-${i}`, i % 2 ? 'rune_device=forged' : '')).status);
    expect(stranger.filter((s) => s === 401).length).toBeLessThanOrEqual(10);
    expect(stranger.slice(-2)).toEqual([429, 429]);
    expect((await attempt('umapass1')).status).toBe(429);
    // …while Uma, from her browser, still gets in with her password.
    expect((await attempt('umapass1', cookie)).status).toBe(200);
  }, 60_000);
  it("a flood of other user names does not reset an account's count (the kept counts are bounded)", async () => {
    // Thousands of addresses, as far as the per-address limit knows: only the per-account one stands.
    const server = await start(`[notes.limits]\nlogin_attempts_per_address = 1000000\n${ADMIN}`);
    const attempt = (username: string, password?: string) =>
      tryLogIn(server.url, username, password).then((r) => r.status);
    for (let i = 0; i < 10; i++) expect(await attempt('uma', `guess-${i}`)).toBe(401);
    expect(await attempt('uma', 'umapass1')).toBe(429);
    // Each made-up name takes a count of its own (no password: refused before any hash, still counted).
    let next = 0;
    const flood = async () => {
      while (next < 6000) expect(await attempt(`nobody-${next++}`)).toBe(400);
    };
    await Promise.all(Array.from({ length: 8 }, flood));
    expect(await attempt('uma', 'umapass1')).toBe(429);
  }, 120_000);
  it('the counts tell no more than the answers which names are accounts', async () => {
    const server = await start(`[notes.limits]\nlogin_attempts_per_address = 1000000\n${ADMIN}`);
    const attempt = (username: string) => tryLogIn(server.url, username, 'wrong-guess').then((r) => r.status);
    // Spending the attempts of a spelling that is no account, then trying the account's own name
    // (accounts are case-sensitive), answers alike whether that name is an account or not.
    const probe = async (name: string) => {
      for (let i = 0; i < 10; i++) expect(await attempt(name.toUpperCase())).toBe(401);
      return attempt(name);
    };
    expect(await probe('uma')).toBe(await probe('nobody'));
  }, 60_000);
  it('a device cookie from before a password change counts as a stranger, and cannot lock out the browser the owner logs in from afterwards', async () => {
    const home = tempDir('rune-notes-device-');
    const config = join(home, 'rune.toml');
    writeFileSync(config, ADMIN);
    const server = await startNotesProcess({ home, args: ['--config', config] });
    running.push(server);
    const attempt = (password: string, cookie?: string) => tryLogIn(server.url, 'uma', password, cookie);
    const deviceOf = (res: Response) =>
      (res.headers.getSetCookie().find((c) => c.startsWith('rune_device=')) as string).split(
        ';',
      )[0] as string;
    // Someone who learnt the old password logged in with it and kept the device cookie.
    const stale = deviceOf(await attempt('umapass1'));
    writeFileSync(config, ADMIN.replace('uma:umapass1', 'uma:umapass2'));
    server.child.kill('SIGHUP');
    for (let i = 0; i < 100 && !server.stderr().includes('configuration reloaded'); i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    // Uma logs in with the new password from her browser.
    const first = await attempt('umapass2');
    expect(first.status).toBe(200);
    const fresh = deviceOf(first);
    expect(fresh).not.toBe(stale);
    // The old cookie's holder guesses: its attempts are a stranger's, and run out as a stranger's…
    const guesses = [];
    for (let i = 0; i < 11; i++) guesses.push((await attempt(`guess-${i}`, stale)).status);
    expect(guesses.at(-1)).toBe(429);
    expect((await attempt('umapass2')).status).toBe(429);
    // …while Uma's browser still gets in.
    expect((await attempt('umapass2', fresh)).status).toBe(200);
  }, 60_000);
});

describe("an account's password changed in the config", () => {
  it('ends the sessions logged in with the old password, on SIGHUP and at a restart', async () => {
    const home = tempDir('rune-notes-password-');
    const config = join(home, 'rune.toml');
    writeFileSync(config, ADMIN);
    let server = await startNotesProcess({ home, args: ['--config', config] });
    running.push(server);
    const me = async (session: Session) => {
      const res = await fetch(`${server.url}/api/me`, { headers: { cookie: session.cookie } });
      return ((await res.json()) as { user: { name: string } | null }).user?.name ?? null;
    };
    // Someone who learnt uma's password logs in with it; so does ada, whose password stays.
    const stolen = await login(server.url, 'uma', 'umapass1');
    const ada = await login(server.url, 'ada', 'adapass1');
    expect(await me(stolen)).toBe('uma');
    writeFileSync(config, ADMIN.replace('uma:umapass1', 'uma:umapass2'));
    server.child.kill('SIGHUP');
    for (let i = 0; i < 100 && !server.stderr().includes('configuration reloaded'); i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(await me(stolen)).toBeNull();
    expect(await me(ada)).toBe('ada');
    // Changed again while the server is down: the session of the password before is gone at start.
    const second = await login(server.url, 'uma', 'umapass2');
    await server.stop();
    writeFileSync(config, ADMIN.replace('uma:umapass1', 'uma:umapass3'));
    server = await startNotesProcess({ home, args: ['--config', config] });
    running.push(server);
    expect(await me(second)).toBeNull();
    expect(await me(ada)).toBe('ada');
    expect(await me(await login(server.url, 'uma', 'umapass3'))).toBe('uma');
  }, 60_000);
});

describe('an account removed from the config', () => {
  it('loses its sessions, its tokens and the tokens it minted, on SIGHUP and at a restart', async () => {
    const home = tempDir('rune-notes-removed-');
    const config = join(home, 'rune.toml');
    const before = `[notes.local]\nadmins = ["ada:adapass1"]\nusers = ["uma:umapass1"]\n`;
    writeFileSync(config, before);
    let server = await startNotesProcess({ home, args: ['--config', config] });
    running.push(server);
    const ada = await login(server.url, 'ada', 'adapass1');
    expect((await ada.call('PATCH', '/api/users/local%3Auma', { role: 'admin' })).status).toBe(200);
    const uma = await login(server.url, 'uma', 'umapass1');
    const minted = await uma.call('POST', '/api/tokens', { name: 'ci', role: 'admin' });
    expect(minted.status).toBe(201);
    const token = minted.json.token as string;
    const asToken = (path: string) =>
      fetch(`${server.url}${path}`, { headers: { authorization: `Bearer ${token}` } }).then((r) => r.status);
    expect(await asToken('/api/tokens')).toBe(200);
    const gone = async () => {
      const headers = { 'content-type': 'application/json', cookie: uma.cookie, 'x-csrf-token': uma.csrf };
      const me = await fetch(`${server.url}/api/me`, { headers });
      expect(((await me.json()) as { user: unknown }).user).toBeNull();
      const more = await fetch(`${server.url}/api/tokens`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ name: 'more', role: 'admin' }),
      });
      expect(more.status).toBe(401);
      expect(await asToken('/api/tokens')).toBe(401);
    };
    writeFileSync(config, `[notes.local]\nadmins = ["ada:adapass1"]\n`);
    server.child.kill('SIGHUP');
    for (let i = 0; i < 100 && !server.stderr().includes('configuration reloaded'); i++) {
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(server.stderr()).toMatch(/configuration reloaded .*1 session\(s\) ended/);
    await gone();
    // A restart with the same config keeps it so.
    await server.stop();
    server = await startNotesProcess({ home, args: ['--config', config] });
    running.push(server);
    await gone();
  }, 60_000);
});
