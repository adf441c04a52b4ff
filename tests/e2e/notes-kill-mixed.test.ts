// Every kind of acknowledgement survives a SIGKILL, through the built binary: while scripts rename,
// delete and restore files, restore revisions, create files and notes, upload, mint and revoke
// tokens, change a person's role and a note's visibility, the server is killed at a random moment,
// restarted, and each object is in the state of its last acknowledged change (or, for the one
// request in flight at the kill, the state that request would have made). Three kill points.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { logIn, mintToken, type NotesProcess, startNotesProcess } from '../helpers/notes.ts';
import { cleanEnv, tempDir } from '../helpers/rune.ts';

// biome-ignore lint/suspicious/noExplicitAny: wire JSON read without ceremony
type Json = any;

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const running: NotesProcess[] = [];
afterEach(() => {
  for (const s of running.splice(0)) if (s.child.exitCode === null) s.child.kill('SIGKILL');
});

class Site {
  server!: NotesProcess;
  token = '';
  private readonly env = cleanEnv();
  constructor(readonly home: string) {
    // The per-person quotas (ADR 0038) are lifted: this test is about kills, and its actors create
    // files and revisions faster than a person would.
    writeFileSync(
      join(home, 'rune.toml'),
      `[notes.local]\nadmins = ["ada:adapass1"]\nusers = ["uma:umapass1"]\n[notes.limits]\ncollab_kb_per_second = 100000\nfiles_per_minute = 100000\nrevisions_per_minute = 100000\nupload_mb_per_minute = 100000\n`,
    );
  }
  async start(): Promise<void> {
    this.server = await startNotesProcess({
      home: this.home,
      env: this.env,
      args: ['--config', join(this.home, 'rune.toml')],
    });
    running.push(this.server);
  }
  async kill(): Promise<void> {
    this.server.child.kill('SIGKILL');
    await this.server.exit;
  }
  /** A request; null when the server went away before answering (never acknowledged). */
  async call(
    method: string,
    path: string,
    body?: unknown,
    opts: { token?: string; type?: string } = {},
  ): Promise<{ status: number; json: Json; bytes: Buffer } | null> {
    try {
      const res = await fetch(`${this.server.url}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${opts.token ?? this.token}`,
          ...(body === undefined ? {} : { 'content-type': opts.type ?? 'application/json' }),
        },
        ...(body === undefined ? {} : { body: typeof body === 'string' ? body : JSON.stringify(body) }),
        signal: AbortSignal.timeout(20_000),
      });
      const bytes = Buffer.from(await res.arrayBuffer());
      let json: Json = null;
      try {
        json = JSON.parse(bytes.toString('utf8'));
      } catch {}
      return { status: res.status, json, bytes };
    } catch {
      return null;
    }
  }
  /** Signs in as the admin and mints the token the scripts use, through a session as a person would. */
  async signInAsAdmin(tokenName: string): Promise<void> {
    const session = await logIn(this.server.url, 'ada', 'adapass1');
    this.token = await mintToken(this.server.url, session, tokenName, 'admin');
  }

  async ok(method: string, path: string, body?: unknown): Promise<Json> {
    const res = await this.call(method, path, body);
    if (!res || res.status >= 300)
      throw new Error(`${method} ${path}: ${res?.status} ${JSON.stringify(res?.json)}`);
    return res.json;
  }
}

/**
 * One script changing one object again and again. `acked` is the state after the last acknowledged
 * change; `maybe` the state the request in flight at the kill would make. After the restart the
 * object must be in one of the two.
 */
interface Actor<S> {
  name: string;
  acked: S;
  maybe: S;
  step(site: Site, i: number): Promise<'ok' | 'gone'>;
  read(site: Site): Promise<S>;
}

/** Runs a change: `apply` answers the new state when acknowledged; a refusal fails the test. */
async function change<S>(
  actor: Actor<S>,
  next: S,
  request: () => Promise<{ status: number; json: Json } | null>,
): Promise<'ok' | 'gone'> {
  actor.maybe = next;
  const res = await request();
  if (!res) return 'gone';
  if (res.status >= 300) throw new Error(`${actor.name}: answered ${res.status} ${JSON.stringify(res.json)}`);
  actor.acked = next;
  return 'ok';
}

function actors(): Actor<unknown>[] {
  const renamer: Actor<string> = {
    name: 'rename',
    acked: 'r.md',
    maybe: 'r.md',
    step: (site, i) =>
      change(renamer, `r-${i}.md`, () =>
        site.call('PATCH', `/api/notes/n/files/${encodeURIComponent(renamer.acked)}`, { name: `r-${i}.md` }),
      ),
    read: async (site) => {
      const files = (await site.ok('GET', '/api/notes/n/files')).files as Array<{ name: string }>;
      return files.find((f) => f.name.startsWith('r'))?.name ?? '(none)';
    },
  };
  const deleter: Actor<boolean> = {
    name: 'delete/restore',
    acked: false,
    maybe: false,
    step: (site) =>
      deleter.acked
        ? change(deleter, false, () => site.call('POST', '/api/notes/n/files/d.md/restore'))
        : change(deleter, true, () => site.call('DELETE', '/api/notes/n/files/d.md')),
    read: async (site) =>
      ((await site.ok('GET', '/api/notes/n/files?deleted=1')).files as Array<{ name: string }>).some(
        (f) => f.name === 'd.md',
      ),
  };
  const restorer: Actor<string> = {
    name: 'revision restore',
    acked: 'v3\n',
    maybe: 'v3\n',
    step: (site, i) => {
      const rev = (i % 3) + 1;
      return change(restorer, `v${rev}\n`, () =>
        site.call('POST', `/api/notes/n/files/v.md/revisions/${rev}/restore`),
      );
    },
    read: async (site) => (await site.ok('GET', '/api/notes/n/files/v.md')).content,
  };
  const creator: Actor<number> = {
    name: 'file create',
    acked: 0,
    maybe: 0,
    step: (site, i) =>
      change(creator, creator.acked + 1, () =>
        site.call('POST', '/api/notes/n/files', { name: `c${creator.acked + 1}.md`, content: `c ${i}\n` }),
      ),
    read: async (site) =>
      ((await site.ok('GET', '/api/notes/n/files')).files as Array<{ name: string }>).filter((f) =>
        /^c\d+\.md$/.test(f.name),
      ).length,
  };
  const notes: Actor<number> = {
    name: 'note create',
    acked: 0,
    maybe: 0,
    step: (site) =>
      change(notes, notes.acked + 1, () => site.call('POST', '/api/notes', { name: `k${notes.acked + 1}` })),
    read: async (site) =>
      ((await site.ok('GET', '/api/notes')).notes as Array<{ name: string }>).filter((n) =>
        /^k\d+$/.test(n.name),
      ).length,
  };
  const visibility: Actor<boolean> = {
    name: 'note visibility',
    acked: false,
    maybe: false,
    step: (site) =>
      change(visibility, !visibility.acked, () =>
        site.call('PATCH', '/api/notes/p', { public: !visibility.acked }),
      ),
    read: async (site) => (await site.ok('GET', '/api/notes/p')).note.public,
  };
  const roles: Actor<string> = {
    name: 'role change',
    acked: 'user',
    maybe: 'user',
    step: (site) => {
      const role = roles.acked === 'user' ? 'guest' : 'user';
      return change(roles, role, () => site.call('PATCH', '/api/users/local%3Auma', { role }));
    },
    read: async (site) =>
      ((await site.ok('GET', '/api/users')).users as Array<{ subject: string; role: string }>).find(
        (u) => u.subject === 'local:uma',
      )!.role,
  };
  return [renamer, deleter, restorer, creator, notes, visibility, roles] as Actor<unknown>[];
}

/** Uploads: every acknowledged one is there, byte for byte. */
class Uploader {
  acked: Array<{ url: string; bytes: string }> = [];
  async run(site: Site, going: () => boolean, round: number): Promise<void> {
    for (let i = 0; going(); i++) {
      const bytes = `upload ${round}.${i} ${'z'.repeat(2000 + i)}`;
      const res = await site.call('POST', `/api/notes/n/uploads?name=u${round}-${i}.txt`, bytes, {
        type: 'text/plain',
      });
      if (!res) return;
      expect(res.status, JSON.stringify(res.json)).toBe(201);
      this.acked.push({ url: res.json.url, bytes });
    }
  }
}

/** Tokens: each acknowledged one authenticates after the restart; each acknowledged revocation holds. */
class Minter {
  live: string[] = [];
  revoked: string[] = [];
  async run(site: Site, going: () => boolean, round: number): Promise<void> {
    for (let i = 0; going(); i++) {
      const res = await site.call('POST', '/api/tokens', { name: `t${round}-${i}`, role: 'user' });
      if (!res) return;
      expect(res.status).toBe(201);
      const { token, id } = res.json as { token: string; id: number };
      if (i % 2 === 1) {
        const gone = await site.call('DELETE', `/api/tokens/${id}`);
        // Killed while revoking: either way is right, so the token is checked no further.
        if (!gone) return;
        expect(gone.status).toBe(200);
        this.revoked.push(token);
      } else {
        this.live.push(token);
      }
    }
  }
}

describe('rune notes: every kind of acknowledged change survives SIGKILL (binary)', () => {
  it('renames, deletes, restores, creates, uploads, tokens, roles and visibility, killed at three moments', async () => {
    const site = new Site(tempDir('rune-notes-kill-mixed-'));
    await site.start();
    await site.signInAsAdmin('scripts');
    await site.ok('POST', '/api/notes', { name: 'n' });
    await site.ok('POST', '/api/notes', { name: 'p' });
    for (const name of ['r.md', 'd.md'])
      await site.ok('POST', '/api/notes/n/files', { name, content: `${name}\n` });
    await site.ok('POST', '/api/notes/n/files', { name: 'v.md', content: 'v1\n' });
    await site.ok('PUT', '/api/notes/n/files/v.md', { content: 'v2\n', base_revision: 1 });
    await site.ok('PUT', '/api/notes/n/files/v.md', { content: 'v3\n', base_revision: 2 });

    const cast = actors();
    const uploader = new Uploader();
    const minter = new Minter();
    const report: string[] = [];
    for (let round = 0; round < 3; round++) {
      let going = true;
      const alive = () => going;
      const loops = cast.map(async (actor) => {
        for (let i = round * 1000; going; i++) {
          if ((await actor.step(site, i)) === 'gone') return;
          await sleep(Math.random() * 30);
        }
      });
      loops.push(uploader.run(site, alive, round), minter.run(site, alive, round));
      await sleep(800 + Math.random() * 2000);
      await site.kill();
      going = false;
      await Promise.all(loops);
      await site.start();
      for (const actor of cast) {
        const now = await actor.read(site);
        expect([actor.acked, actor.maybe], `${actor.name} after kill ${round + 1}`).toContainEqual(now);
        actor.acked = now;
        actor.maybe = now;
      }
      for (const { url, bytes } of uploader.acked) {
        const res = await site.call('GET', url);
        expect(res!.status, url).toBe(200);
        expect(res!.bytes.toString('utf8')).toBe(bytes);
      }
      const me = async (token: string) => (await site.call('GET', '/api/me', undefined, { token }))!.status;
      for (const token of minter.live) expect(await me(token), 'an acknowledged token').toBe(200);
      for (const token of minter.revoked) expect(await me(token), 'an acknowledged revocation').toBe(401);
      report.push(
        `kill ${round + 1}: ${cast.map((a) => `${a.name}=${JSON.stringify(a.acked)}`).join(' ')} uploads=${uploader.acked.length} tokens=${minter.live.length}/${minter.revoked.length} revoked`,
      );
    }
    console.log(report.join('\n'));
    // Every kind really ran before the kills.
    expect(uploader.acked.length).toBeGreaterThan(0);
    expect(minter.revoked.length).toBeGreaterThan(0);
    await site.server.stop();
  }, 180_000);
});

describe('rune notes: a kill while revisions compact the update log (binary)', () => {
  it('loses no acknowledged key and applies none twice, killed at five moments of saving every second', async () => {
    const site = new Site(tempDir('rune-notes-kill-compact-'));
    writeFileSync(
      join(site.home, 'rune.toml'),
      `[notes]\nrevision_every_secs = 1\n[notes.local]\nadmins = ["ada:adapass1"]\n[notes.limits]\ncollab_kb_per_second = 100000\nfiles_per_minute = 100000\nrevisions_per_minute = 100000\nupload_mb_per_minute = 100000\n`,
    );
    await site.start();
    await site.signInAsAdmin('typists');
    await site.ok('POST', '/api/notes', { name: 'n' });
    // Four typists, each at the end of a line of its own, one key per update.
    const names = ['a', 'b', 'c', 'd'];
    await site.ok('POST', '/api/notes/n/files', {
      name: 'live.md',
      content: names.map((m) => `${m}:\n`).join(''),
    });
    const typists = names.map((marker) => ({ marker, doc: new Y.Doc(), typed: '', acked: '' }));
    const b64 = (u: Uint8Array) => Buffer.from(u).toString('base64');
    const sync = async (t: (typeof typists)[number]) => {
      const { state } = await site.ok('GET', '/api/notes/n/files/live.md/collab');
      const server = Buffer.from(state as string, 'base64');
      Y.applyUpdate(t.doc, server, 'server');
      const missing = Y.encodeStateAsUpdate(t.doc, Y.encodeStateVectorFromUpdate(server));
      await site.ok('POST', '/api/notes/n/files/live.md/collab', {
        update: b64(missing),
        client_id: t.marker,
      });
      t.acked = t.typed;
    };
    const lineOf = (text: string, marker: string) => {
      const start = text.indexOf(`${marker}:`);
      return text.slice(start + marker.length + 1, text.indexOf('\n', start));
    };
    for (let round = 0; round < 5; round++) {
      for (const t of typists) await sync(t);
      let going = true;
      const loops = typists.map(async (t) => {
        while (going) {
          const text = t.doc.getText('content');
          const current = text.toString();
          const end = current.indexOf('\n', current.indexOf(`${t.marker}:`));
          let update: Uint8Array | undefined;
          const grab = (u: Uint8Array) => {
            update = u;
          };
          t.doc.on('update', grab);
          const key = String.fromCharCode(97 + (t.typed.length % 26));
          text.insert(end, key);
          t.doc.off('update', grab);
          t.typed += key;
          const res = await site.call('POST', '/api/notes/n/files/live.md/collab', {
            update: b64(update!),
            client_id: t.marker,
          });
          if (!res) return;
          if (res.status !== 200) throw new Error(`${t.marker}: ${res.status} ${JSON.stringify(res.json)}`);
          t.acked = t.typed;
          await sleep(10 + Math.random() * 30);
        }
      });
      // Past at least one save every second (the log compacted into the state), then a kill.
      await sleep(1200 + Math.random() * 1800);
      await site.kill();
      going = false;
      await Promise.all(loops);
      await site.start();
      const text = (await site.ok('GET', '/api/notes/n/files/live.md')).content as string;
      for (const t of typists) {
        const line = lineOf(text, t.marker);
        // Every acknowledged key is there, each once: the line is what was typed, up to a key that
        // was in flight at the kill.
        expect(line.startsWith(t.acked), `${t.marker} after kill ${round + 1}`).toBe(true);
        expect(t.typed.startsWith(line), `${t.marker} after kill ${round + 1}: nothing twice`).toBe(true);
      }
      const revisions = (await site.ok('GET', '/api/notes/n/files/live.md/revisions')).revisions as unknown[];
      expect(revisions.length).toBeGreaterThan(round + 1);
    }
    console.log(`typed and acknowledged: ${typists.map((t) => `${t.marker}=${t.acked.length}`).join(' ')}`);
    await site.server.stop();
  }, 180_000);
});
