// Acknowledged means durable, through the built binary: `rune notes` is killed with SIGKILL at
// random moments while scripts save files and people type (real Yjs updates), restarted, and
// everything it acknowledged is there; fifty editors of one file (Yjs and stale PUTs) converge
// without losing an acknowledged insertion; chat runs cut short by a kill show as interrupted, and
// approval answers acknowledged just before a kill stay answered.
import { readFileSync, writeFileSync } from 'node:fs';
import http from 'node:http';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { parse as parseToml } from 'smol-toml';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import * as Y from 'yjs';
import { type MockLlm, startMockLlm } from '../helpers/mock-llm.ts';
import { logIn, mintToken, type NotesProcess, startNotesProcess } from '../helpers/notes.ts';
import { cleanEnv, tempDir } from '../helpers/rune.ts';

// biome-ignore lint/suspicious/noExplicitAny: tests read arbitrary wire JSON without ceremony
type Json = any;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const b64 = (bytes: Uint8Array) => Buffer.from(bytes).toString('base64');

const started: NotesProcess[] = [];
afterEach(() => {
  for (const server of started.splice(0)) if (server.child.exitCode === null) server.child.kill('SIGKILL');
});

/** A server on `home` whose address changes at every restart, and clients that follow it. */
class Site {
  server!: NotesProcess;
  private readonly env = cleanEnv();
  args: string[] = [];
  constructor(readonly home: string) {}

  /** rune.toml for the next start: `extra` before the admin account. */
  configure(extra: string): void {
    writeFileSync(join(this.home, 'rune.toml'), `${extra}\n[notes.local]\nadmins = ["ada:adapass1"]\n`);
  }

  async start(): Promise<void> {
    this.server = await startNotesProcess({ home: this.home, env: this.env, args: this.args });
    started.push(this.server);
  }

  async kill(): Promise<void> {
    this.server.child.kill('SIGKILL');
    await this.server.exit;
  }

  /** A request as a bearer-token client; network failures (the server is gone) come back as null. */
  async call(
    token: string,
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ status: number; json: Json } | null> {
    try {
      const res = await fetch(`${this.server.url}${path}`, {
        method,
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        signal: AbortSignal.timeout(30_000),
      });
      const text = await res.text();
      return { status: res.status, json: text ? JSON.parse(text) : null };
    } catch {
      return null;
    }
  }

  async ok(token: string, method: string, path: string, body?: unknown): Promise<Json> {
    const res = await this.call(token, method, path, body);
    if (!res || res.status >= 300)
      throw new Error(`${method} ${path}: ${res?.status} ${JSON.stringify(res?.json)}`);
    return res.json;
  }

  /** Logs in as the configured admin and issues a token per client name. */
  async tokens(names: string[]): Promise<Map<string, string>> {
    const session = await logIn(this.server.url, 'ada', 'adapass1');
    const out = new Map<string, string>();
    for (const name of names) {
      out.set(name, await mintToken(this.server.url, session, name, name === 'admin' ? 'admin' : 'user'));
    }
    return out;
  }
}

function newSite(extraToml = ''): Site {
  const site = new Site(tempDir('rune-notes-durable-'));
  site.configure(extraToml);
  return site;
}

/** The line of `text` that starts with `marker`. */
function lineOf(text: string, marker: string): string {
  const start = text.indexOf(marker);
  if (start < 0) throw new Error(`no line ${marker} in ${JSON.stringify(text)}`);
  const end = text.indexOf('\n', start);
  return text.slice(start, end < 0 ? undefined : end);
}

const KEYS = 'abcdefghijklmnopqrstuvwxyz0123456789';

/**
 * A person typing at keyboard speed at the end of their own line, one Yjs update per key, as the
 * web editor sends them; after a restart it syncs like a Yjs provider (what the server lacks).
 */
class Typist {
  readonly doc = new Y.Doc();
  typed = '';
  acked = '';
  constructor(
    readonly marker: string,
    private readonly token: string,
    private readonly path: string,
  ) {}

  async sync(site: Site): Promise<void> {
    const { state } = await site.ok(this.token, 'GET', `${this.path}/collab`);
    const server = Buffer.from(state as string, 'base64');
    Y.applyUpdate(this.doc, server, 'server');
    const missing = Y.encodeStateAsUpdate(this.doc, Y.encodeStateVectorFromUpdate(server));
    await site.ok(this.token, 'POST', `${this.path}/collab`, {
      update: b64(missing),
      client_id: this.marker,
    });
    this.acked = this.typed;
  }

  async type(site: Site, going: () => boolean): Promise<void> {
    while (going()) {
      const text = this.doc.getText('content');
      const current = text.toString();
      const end = current.indexOf('\n', current.indexOf(this.marker));
      let update: Uint8Array | undefined;
      const grab = (u: Uint8Array) => {
        update = u;
      };
      this.doc.on('update', grab);
      const key = KEYS[this.typed.length % KEYS.length]!;
      text.insert(end, key);
      this.doc.off('update', grab);
      this.typed += key;
      const res = await site.call(this.token, 'POST', `${this.path}/collab`, {
        update: b64(update!),
        client_id: this.marker,
      });
      if (!res) return; // the server is gone: this key was never acknowledged
      if (res.status !== 200)
        throw new Error(`${this.marker}: key answered ${res.status} ${JSON.stringify(res.json)}`);
      this.acked = this.typed;
      await sleep(60 + Math.random() * 90);
    }
  }
}

/** A script saving its own file again and again with PUT, one more line each time. */
class Writer {
  saved = 0;
  sent = 0;
  revision = 1;
  constructor(
    readonly path: string,
    private readonly token: string,
  ) {}

  static content(lines: number): string {
    return Array.from({ length: lines }, (_, i) => `save ${i + 1}\n`).join('');
  }

  async run(site: Site, going: () => boolean): Promise<void> {
    while (going()) {
      this.sent = this.saved + 1;
      const res = await site.call(this.token, 'PUT', this.path, {
        content: Writer.content(this.sent),
        base_revision: this.revision,
      });
      if (!res) return; // the server is gone: this save was never acknowledged
      if (res.status !== 200)
        throw new Error(`${this.path}: save answered ${res.status} ${JSON.stringify(res.json)}`);
      this.saved = this.sent;
      this.revision = res.json.revision as number;
      await sleep(20 + Math.random() * 60);
    }
  }

  /** After a restart: what the file holds must include the last acknowledged save. */
  async check(site: Site): Promise<void> {
    const file = await site.ok(this.token, 'GET', this.path);
    const lines = (file.content as string).split('\n').length - 1;
    expect(file.content, `${this.path}: acknowledged ${this.saved}, sent ${this.sent}`).toBe(
      Writer.content(lines),
    );
    expect(lines).toBeGreaterThanOrEqual(this.saved);
    expect(lines).toBeLessThanOrEqual(this.sent);
    this.saved = lines;
    this.revision = file.revision as number;
  }
}

describe('rune notes durability (binary, SIGKILL)', () => {
  it('keeps every acknowledged save and typed character when killed at random moments', async () => {
    const site = newSite();
    await site.start();
    const names = [
      ...Array.from({ length: 4 }, (_, i) => `typist${i}`),
      ...Array.from({ length: 8 }, (_, i) => `writer${i}`),
    ];
    const tokens = await site.tokens(['admin', ...names]);
    const admin = tokens.get('admin')!;
    await site.ok(admin, 'POST', '/api/notes', { name: 'team' });
    const markers = Array.from({ length: 4 }, (_, i) => `[t${i}]`);
    await site.ok(admin, 'POST', '/api/notes/team/files', {
      name: 'typed.md',
      content: `# Typed\n${markers.map((m) => `${m}\n`).join('')}`,
    });
    const typists = markers.map(
      (m, i) => new Typist(m, tokens.get(`typist${i}`)!, '/api/notes/team/files/typed.md'),
    );
    const writers: Writer[] = [];
    for (let i = 0; i < 8; i++) {
      await site.ok(admin, 'POST', '/api/notes/team/files', { name: `w${i}.md`, content: '' });
      writers.push(new Writer(`/api/notes/team/files/w${i}.md`, tokens.get(`writer${i}`)!));
    }
    for (const typist of typists) await typist.sync(site);

    const killPoints: string[] = [];
    // Every other run compacts the log into a revision each second while people type, so kills also
    // land during compaction, not only between revisions.
    const compactEverySecond = (cycle: number) => cycle % 2 === 1;
    for (let cycle = 0; cycle < 4; cycle++) {
      const ackedBefore = typists.map((t) => t.acked.length);
      const savedBefore = writers.map((w) => w.saved);
      let going = true;
      const load = Promise.all([
        ...typists.map((t) => t.type(site, () => going)),
        ...writers.map((w) => w.run(site, () => going)),
      ]);
      const at = 700 + Math.floor(Math.random() * 2000);
      killPoints.push(`${at} ms${compactEverySecond(cycle) ? ' (compacting each second)' : ''}`);
      await sleep(at);
      await site.kill();
      going = false;
      await load;
      // Something was acknowledged in this cycle, or the test would prove nothing.
      expect(
        typists.some((t, i) => t.acked.length > ackedBefore[i]!),
        `kill at ${at} ms`,
      ).toBe(true);
      expect(
        writers.some((w, i) => w.saved > savedBefore[i]!),
        `kill at ${at} ms`,
      ).toBe(true);

      site.configure(compactEverySecond(cycle + 1) ? '[notes]\nrevision_every_secs = 1' : '');
      await site.start();
      const text = (await site.ok(admin, 'GET', '/api/notes/team/files/typed.md')).content as string;
      for (const typist of typists) {
        const line = lineOf(text, typist.marker);
        const context = `kill points ${killPoints.join(', ')}; line ${JSON.stringify(line)}`;
        // Every acknowledged key is there, and nothing that was not typed (no doubled update).
        expect(line.startsWith(typist.marker + typist.acked), context).toBe(true);
        expect((typist.marker + typist.typed).startsWith(line), context).toBe(true);
      }
      for (const writer of writers) await writer.check(site);
      // Live edits were in the log (with a revision each second the log may just have been compacted).
      if (!compactEverySecond(cycle)) {
        expect(site.server.stderr(), `cycle ${cycle}`).toMatch(/recovered after an unclean stop/);
      }
      // Clients carry on: unacknowledged keys are sent again, as a Yjs provider does on reconnect.
      for (const typist of typists) await typist.sync(site);
    }

    // Everything typed is there once, in a saved revision, and survives a clean stop too.
    await site.server.stop();
    await site.start();
    const final = (await site.ok(admin, 'GET', '/api/notes/team/files/typed.md')).content as string;
    for (const typist of typists) expect(lineOf(final, typist.marker)).toBe(typist.marker + typist.typed);
    for (const writer of writers) await writer.check(site);
    const revisions = (await site.ok(admin, 'GET', '/api/notes/team/files/typed.md/revisions')).revisions;
    expect(revisions.length).toBeGreaterThan(1);
    await site.server.stop();
  }, 120_000);
});

describe('rune notes revisions while people type (binary)', () => {
  it('saves a revision at least every revision_every_secs while the typing never pauses', async () => {
    const site = newSite('[notes]\nrevision_every_secs = 1');
    await site.start();
    const tokens = await site.tokens(['admin', 'typist0', 'typist1']);
    const admin = tokens.get('admin')!;
    const path = '/api/notes/team/files/long.md';
    await site.ok(admin, 'POST', '/api/notes', { name: 'team' });
    await site.ok(admin, 'POST', '/api/notes/team/files', { name: 'long.md', content: '[t0]\n[t1]\n' });
    const typists = ['[t0]', '[t1]'].map((m, i) => new Typist(m, tokens.get(`typist${i}`)!, path));
    for (const typist of typists) await typist.sync(site);
    // Two people type without a pause (a key every 60–150 ms each; the idle save needs 1.5 s of
    // quiet) until three revisions have appeared — or 400 keys, which take far longer than 3 s.
    const revisionsNow = async () =>
      ((await site.ok(admin, 'GET', `${path}/revisions`)).revisions as Array<{ author: string }>).length;
    let keys = 0;
    let revisions = 1;
    const watcher = (async () => {
      while (revisions < 4 && keys < 800) {
        await sleep(100);
        revisions = await revisionsNow();
      }
    })();
    await Promise.all(typists.map((t) => t.type(site, () => revisions < 4 && ++keys <= 800)));
    await watcher;
    expect(revisions, `${keys} keys typed`).toBeGreaterThanOrEqual(4);
    // Each saved revision holds what was typed up to then, by the people who typed it.
    const list = (await site.ok(admin, 'GET', `${path}/revisions`)).revisions as Array<{
      revision: number;
      author: string;
    }>;
    for (const rev of list.filter((r) => r.revision > 1)) {
      expect(rev.author).toMatch(/^(typist\d)(, typist\d)?$/);
    }
    await site.server.stop();
  }, 90_000);
});

describe('rune notes checkpoints (binary)', () => {
  it('checkpoints the WAL from a thread of its own while requests write', async () => {
    const site = newSite();
    site.args = ['--verbose'];
    await site.start();
    const admin = (await site.tokens(['admin'])).get('admin')!;
    await site.ok(admin, 'POST', '/api/notes', { name: 'n' });
    await site.ok(admin, 'POST', '/api/notes/n/files', { name: 'f.md', content: '' });
    let revision = 1;
    for (let i = 0; !/"event":"notes\.checkpoint","pages":[1-9]/.test(site.server.stderr()); i++) {
      expect(i, site.server.stderr()).toBeLessThan(500);
      revision = (
        await site.ok(admin, 'PUT', '/api/notes/n/files/f.md', { content: `${i}\n`, base_revision: revision })
      ).revision;
      await sleep(20);
    }
    await site.server.stop();
    expect(site.server.stderr()).not.toMatch(/checkpoint(er)?_(failed|lost)/);
  }, 60_000);
});

describe('rune notes convergence (binary)', () => {
  it('converges 50 concurrent editors of one file (Yjs and stale PUTs) without losing an acknowledged insertion', async () => {
    const site = newSite();
    await site.start();
    const tokens = await site.tokens(['admin', ...Array.from({ length: 10 }, (_, i) => `editor${i}`)]);
    const admin = tokens.get('admin')!;
    const path = '/api/notes/crowd/files/shared.md';
    await site.ok(admin, 'POST', '/api/notes', { name: 'crowd' });
    await site.ok(admin, 'POST', '/api/notes/crowd/files', {
      name: 'shared.md',
      content: Array.from({ length: 20 }, (_, i) => `line ${i}\n`).join(''),
    });
    const acknowledged: string[] = [];
    const tokenOf = (i: number) => tokens.get(`editor${i % 10}`)!;
    /** Inserts whole lines at line starts only, so concurrent insertions never split each other. */
    const lineStart = (text: string): number => {
      const starts = [0];
      for (let i = text.indexOf('\n'); i >= 0 && i < text.length - 1; i = text.indexOf('\n', i + 1))
        starts.push(i + 1);
      return starts[Math.floor(Math.random() * starts.length)]!;
    };

    const yjsEditor = async (n: number): Promise<Y.Doc> => {
      const doc = new Y.Doc();
      const token = tokenOf(n);
      const pull = async () => {
        const { state } = await site.ok(token, 'GET', `${path}/collab`);
        Y.applyUpdate(doc, Buffer.from(state as string, 'base64'), 'server');
      };
      await pull();
      for (let k = 0; k < 8; k++) {
        const tag = `<y${n}-${k}>`;
        let update: Uint8Array | undefined;
        const grab = (u: Uint8Array, origin: unknown) => {
          if (origin !== 'server') update = u;
        };
        doc.on('update', grab);
        const text = doc.getText('content');
        text.insert(lineStart(text.toString()), `${tag}\n`);
        doc.off('update', grab);
        await site.ok(token, 'POST', `${path}/collab`, { update: b64(update!), client_id: `y${n}` });
        acknowledged.push(tag);
        if (k % 3 === 2) await pull();
        await sleep(Math.random() * 60);
      }
      return doc;
    };

    const putEditor = async (n: number): Promise<void> => {
      const token = tokenOf(n);
      for (let k = 0; k < 4; k++) {
        const tag = `<p${n}-${k}>`;
        for (let attempt = 0; ; attempt++) {
          const file = await site.ok(token, 'GET', path);
          // Edit a copy that goes stale while others write, then save it on that old base.
          await sleep(Math.random() * 150);
          const content = file.content as string;
          const at = lineStart(content);
          const res = await site.call(token, 'PUT', path, {
            content: `${content.slice(0, at)}${tag}\n${content.slice(at)}`,
            base_revision: file.revision,
          });
          if (res?.status === 200) {
            acknowledged.push(tag);
            break;
          }
          expect(res?.status, JSON.stringify(res?.json)).toBe(409);
          expect(attempt).toBeLessThan(50);
        }
      }
    };

    const editors = await Promise.all([
      ...Array.from({ length: 35 }, (_, n) => yjsEditor(n)),
      ...Array.from({ length: 15 }, (_, n) => putEditor(n).then(() => null)),
    ]);
    const docs = editors.filter((d): d is Y.Doc => d !== null);
    expect(docs).toHaveLength(35);
    expect(acknowledged).toHaveLength(35 * 8 + 15 * 4);

    const server = (await site.ok(admin, 'GET', `${path}/collab`)) as { state: string; text: string };
    const live = (await site.ok(admin, 'GET', path)).content as string;
    expect(server.text).toBe(live);
    for (const doc of docs) {
      Y.applyUpdate(doc, Buffer.from(server.state, 'base64'), 'server');
      expect(doc.getText('content').toString()).toBe(live);
    }
    for (const tag of acknowledged) expect(live.split(tag).length - 1, tag).toBe(1);
    for (let i = 0; i < 20; i++) expect(live).toContain(`line ${i}\n`);

    // The same text after a clean restart.
    await site.server.stop();
    await site.start();
    expect((await site.ok(admin, 'GET', path)).content).toBe(live);
    await site.server.stop();
  }, 120_000);
});

/** An approval as the API shows it. */
interface Approval {
  id: string;
  run_id: string;
  status: string;
  answered_by: string | null;
  suggestion: { list: string; value: string } | null;
}

/** Polls `probe` until it gives a value: what a client watching the note would see. */
async function waitFor<T>(what: string, probe: () => Promise<T | undefined>): Promise<T> {
  for (let i = 0; i < 400; i++) {
    const value = await probe();
    if (value !== undefined) return value;
    await sleep(25);
  }
  throw new Error(`waited 10 s for ${what}`);
}

/** The note's stored events replayed from the start (as a reconnecting tab gets them), up to `until`. */
async function replayEvents(site: Site, token: string, note: string, until: RegExp): Promise<string> {
  const events = await fetch(`${site.server.url}/api/events?note_id=${note}&last_event_id=0`, {
    headers: { authorization: `Bearer ${token}` },
    signal: AbortSignal.timeout(10_000),
  });
  const reader = events.body!.getReader();
  let seen = '';
  while (!until.test(seen)) {
    const { value, done } = await reader.read();
    if (done) break;
    seen += Buffer.from(value).toString('utf8');
  }
  await reader.cancel();
  return seen;
}

describe('rune notes chat runs (binary, SIGKILL)', () => {
  let mock: MockLlm;
  beforeAll(async () => {
    mock = await startMockLlm();
  });
  afterAll(async () => {
    await mock.close();
  });

  it('shows runs the kill cut short as interrupted: partial answer kept, pending approvals expired', async () => {
    const site = newSite(
      `model = "mock"\nbase_url = "${mock.baseUrl}"\napi_key = "sk-test-durable-0123456789"\n[policy]\nmode = "confirm"\n`,
    );
    await site.start();
    const admin = (await site.tokens(['admin'])).get('admin')!;
    for (const name of ['lab', 'ops']) await site.ok(admin, 'POST', '/api/notes', { name });
    const outside = join(tempDir('rune-outside-'), 'never.txt');
    mock.script([
      // lab: the model streams part of its answer, then stalls.
      { text: 'Here is the first half of the answer, and then', chunkSize: 5, hangAfter: 6 },
      // ops: a tool call outside the policy waits for an admin's approval.
      { toolCalls: [{ name: 'write_file', arguments: { path: outside, content: 'x' } }] },
    ]);
    await site.ok(admin, 'POST', '/api/notes/lab/chat', { message: 'explain' });
    const db = new Database(join(site.home, 'notes', 'notes.db'), { readonly: true, fileMustExist: true });
    try {
      // The answer streamed so far is in the run's record before the kill.
      for (let i = 0; i < 400; i++) {
        const row = db.prepare("select partial from chat_runs where status = 'running'").get() as
          | { partial: string }
          | undefined;
        if (row?.partial) break;
        await sleep(25);
      }
    } finally {
      db.close();
    }
    await site.ok(admin, 'POST', '/api/notes/ops/chat', { message: 'write it' });
    let pending: Array<{ id: string; status: string }> = [];
    for (let i = 0; i < 400 && pending.length === 0; i++) {
      pending = (await site.ok(admin, 'GET', '/api/approvals?note=ops')).approvals;
      if (pending.length === 0) await sleep(25);
    }
    expect(pending).toHaveLength(1);
    await site.kill();

    await site.start();
    expect(site.server.stderr()).toMatch(/2 chat run\(s\) marked interrupted/);
    const lab = await site.ok(admin, 'GET', '/api/notes/lab/chat');
    expect(lab.running).toBeNull();
    const labRun = lab.messages[0].run_id as string;
    expect(lab.messages.map((m: { role: string; run_id: string }) => [m.role, m.run_id])).toEqual([
      ['user', labRun],
      ['assistant', labRun],
      ['system', labRun],
    ]);
    expect(lab.messages[1].content).toMatch(/^Here is the first/);
    expect('Here is the first half of the answer, and then'.startsWith(lab.messages[1].content)).toBe(true);
    expect(lab.messages[2].content).toMatch(/^The run was interrupted: /);
    const ops = await site.ok(admin, 'GET', '/api/notes/ops/chat');
    expect(ops.running).toBeNull();
    expect(ops.messages.at(-1)).toMatchObject({
      role: 'system',
      content: expect.stringMatching(/interrupted/),
    });
    expect((await site.ok(admin, 'GET', '/api/approvals')).approvals).toEqual([]);
    // Replayed events tell clients the same: the approval expired and the run ended interrupted.
    const seen = await replayEvents(
      site,
      admin,
      'ops',
      /event: chat\.done\ndata: [^\n]*"status":"Interrupted"/,
    );
    expect(seen).toMatch(/event: approval\.resolved\ndata: [^\n]*"status":"expired"/);
    expect(seen).toMatch(/event: chat\.done\ndata: [^\n]*"status":"Interrupted"/);
    // The note is free for a new run.
    mock.script([{ text: 'Back again.' }]);
    const again = await site.call(admin, 'POST', '/api/notes/lab/chat', { message: 'again' });
    expect(again?.status).toBe(202);
    await site.server.stop();
  }, 90_000);

  it('keeps approval answers acknowledged just before the kill: yes stays answered, always stays in rune.toml', async () => {
    const site = newSite(
      `model = "mock"\nbase_url = "${mock.baseUrl}"\napi_key = "sk-test-durable-0123456789"\n[policy]\nmode = "confirm"\n`,
    );
    await site.start();
    const admin = (await site.tokens(['admin'])).get('admin')!;
    const echo = (word: string) => ({ name: 'execute_cmd', arguments: { cmd: `echo ${word}` } });
    // Each run asks to run `echo` (allowed_commands is empty); once answered, its model stalls
    // mid-answer, so both runs are still going when the server is killed.
    const stall = { text: 'Said it, and now', chunkSize: 4, hangAfter: 2 };
    mock.script([{ toolCalls: [echo('once')] }, { toolCalls: [echo('kept')] }, stall, stall]);
    const asked = new Map<string, Approval>();
    for (const note of ['once', 'kept']) {
      await site.ok(admin, 'POST', '/api/notes', { name: note });
      await site.ok(admin, 'POST', `/api/notes/${note}/chat`, { message: 'say it' });
      const approval = await waitFor(`the approval in ${note}`, async () => {
        const { approvals } = (await site.ok(admin, 'GET', `/api/approvals?note=${note}`)) as {
          approvals: Approval[];
        };
        return approvals[0];
      });
      asked.set(note, approval);
    }
    const kept = asked.get('kept')!;
    expect(kept.suggestion).toEqual({ list: 'allowed_commands', value: 'echo' });
    const answers = { once: 'yes', kept: 'always' } as const;
    // Both answers acknowledged, then the kill at once.
    for (const [note, answer] of Object.entries(answers)) {
      const answered = (await site.ok(admin, 'POST', `/api/approvals/${asked.get(note)!.id}`, {
        answer,
      })) as Approval;
      expect(answered.status).toBe(answer);
    }
    await site.kill();

    // "Always" promised a rule in rune.toml: it is there as the kill left the file.
    const toml = parseToml(readFileSync(join(site.home, 'rune.toml'), 'utf8')) as {
      policy?: { allowed_commands?: string[] };
    };
    expect(toml.policy?.allowed_commands, 'rune.toml as the kill left it').toEqual(['echo']);

    await site.start();
    expect(site.server.stderr()).toMatch(/2 chat run\(s\) marked interrupted/);
    for (const [note, answer] of Object.entries(answers)) {
      const approval = asked.get(note)!;
      // Nothing waits for an answer any more: no pending approval, no running run.
      expect((await site.ok(admin, 'GET', `/api/approvals?note=${note}`)).approvals).toEqual([]);
      const chat = await site.ok(admin, 'GET', `/api/notes/${note}/chat`);
      expect(chat.running).toBeNull();
      expect(chat.messages.at(-1)).toMatchObject({
        role: 'system',
        run_id: approval.run_id,
        content: expect.stringMatching(/^The run was interrupted: /),
      });
      // The approval shows the person's answer, not expired by the restart: in the replayed events
      // and to an admin who answers it late.
      const seen = await replayEvents(
        site,
        admin,
        note,
        /event: chat\.done\ndata: [^\n]*"status":"Interrupted"/,
      );
      const resolved = [...seen.matchAll(/event: approval\.resolved\ndata: ([^\n]*)/g)].map(
        (m) => (JSON.parse(m[1]!) as { approval: Approval }).approval,
      );
      expect(resolved, note).toEqual([
        expect.objectContaining({ id: approval.id, status: answer, answered_by: expect.any(String) }),
      ]);
      const late = await site.call(admin, 'POST', `/api/approvals/${approval.id}`, { answer: 'no' });
      expect(late).toMatchObject({ status: 409, json: { message: `approval already ${answer}` } });
    }

    // The rule holds after the restart: echo runs without asking.
    mock.script([{ toolCalls: [echo('again')] }, { text: 'Said.' }]);
    await site.ok(admin, 'POST', '/api/notes/kept/chat', { message: 'say it again' });
    const chat = await waitFor('the second run in kept to end', async () => {
      const { approvals } = await site.ok(admin, 'GET', '/api/approvals?note=kept');
      expect(approvals, 'asked again despite "always"').toEqual([]);
      const now = await site.ok(admin, 'GET', '/api/notes/kept/chat');
      return now.running === null ? now : undefined;
    });
    expect(chat.messages.slice(-2)).toMatchObject([
      {
        role: 'tool',
        author: 'execute_cmd',
        content: expect.stringMatching(/^exit code: 0\nstdout:\nagain\n/),
      },
      { role: 'assistant', content: 'Said.' },
    ]);
    await site.server.stop();
  }, 90_000);
});

/**
 * A raw HTTP request whose body is sent in two parts, so that it is in flight (headers read, body
 * not yet) for as long as the test wants. `finish()` sends the rest; the promise gives the answer.
 */
function slowRequest(
  url: string,
  token: string,
  method: string,
  path: string,
  body: unknown,
  agent: http.Agent | false = false,
): {
  finish(): void;
  answer: Promise<{ status: number; body: string; connection?: string } | { error: string }>;
} {
  const bytes = Buffer.from(JSON.stringify(body));
  const half = Math.floor(bytes.length / 2);
  const req = http.request(`${url}${path}`, {
    method,
    agent,
    headers: {
      authorization: `Bearer ${token}`,
      'content-type': 'application/json',
      'content-length': bytes.length,
    },
  });
  const answer = new Promise<{ status: number; body: string; connection?: string } | { error: string }>(
    (resolve) => {
      req.on('response', (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (c: string) => {
          text += c;
        });
        res.on('end', () =>
          resolve({ status: res.statusCode!, body: text, connection: res.headers.connection }),
        );
        res.on('error', (error) => resolve({ error: error.message }));
      });
      req.on('error', (error) => resolve({ error: error.message }));
    },
  );
  req.flushHeaders();
  req.write(bytes.subarray(0, half));
  return { finish: () => req.end(bytes.subarray(half)), answer };
}

describe('rune notes shutdown (binary, SIGTERM)', () => {
  it('drains on SIGTERM: a request in flight is answered and kept, live edits become a revision, a stuck client is cut, exit 0', async () => {
    const site = newSite();
    await site.start();
    const tokens = await site.tokens(['admin', 'typist0']);
    const admin = tokens.get('admin')!;
    await site.ok(admin, 'POST', '/api/notes', { name: 'team' });
    await site.ok(admin, 'POST', '/api/notes/team/files', { name: 'typed.md', content: '# T\n[t0]\n' });
    await site.ok(admin, 'POST', '/api/notes/team/files', { name: 'saved.md', content: 'old\n' });
    const typist = new Typist('[t0]', tokens.get('typist0')!, '/api/notes/team/files/typed.md');
    await typist.sync(site);
    let keys = 0;
    await typist.type(site, () => ++keys <= 12);
    expect(typist.acked).toHaveLength(12);

    // A save whose body is still on its way (on a keep-alive connection, as browsers and fetch
    // send them), and a client that never finishes its body.
    const keepAlive = new http.Agent({ keepAlive: true });
    const inFlight = slowRequest(
      site.server.url,
      admin,
      'PUT',
      '/api/notes/team/files/saved.md',
      { content: 'saved while stopping\n', base_revision: 1 },
      keepAlive,
    );
    const stuck = slowRequest(site.server.url, admin, 'PUT', '/api/notes/team/files/saved.md', {
      content: 'never finished\n',
      base_revision: 1,
    });
    // Both requests have reached the server before the signal.
    await sleep(300);
    site.server.child.kill('SIGTERM');
    await sleep(300);
    inFlight.finish();
    const answer = await inFlight.answer;
    // Answered, and told that its connection closes: it must not linger until the drain limit.
    expect(answer, JSON.stringify(answer)).toMatchObject({ status: 200, connection: 'close' });
    expect(JSON.parse((answer as { body: string }).body)).toMatchObject({ revision: 2 });
    // The stuck one cannot hold the shutdown up: it is cut after the drain limit, and the server exits 0.
    expect(await site.server.exit).toEqual({ code: 0, signal: null });
    expect(await stuck.answer).toHaveProperty('error');
    expect(site.server.stderr()).toMatch(/cut 1 connection/);
    keepAlive.destroy();

    await site.start();
    // A clean stop: nothing was left to recover, the typing is a revision, the save is there.
    expect(site.server.stderr()).not.toMatch(/unclean stop/);
    expect((await site.ok(admin, 'GET', '/api/notes/team/files/saved.md')).content).toBe(
      'saved while stopping\n',
    );
    const typed = await site.ok(admin, 'GET', '/api/notes/team/files/typed.md');
    expect(lineOf(typed.content, '[t0]')).toBe(`[t0]${typist.acked}`);
    expect(typed.revision).toBe(2);
    await site.server.stop();
  }, 60_000);
});
