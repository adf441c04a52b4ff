// `rune notes` as users run it: the built binary, a real port, SQLite under RUNE_HOME, SIGTERM.
import { type ChildProcess, spawn } from 'node:child_process';
import { existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type MockLlm, startMockLlm } from '../helpers/mock-llm.ts';
import { logIn } from '../helpers/notes.ts';
import { cleanEnv, requireBinary, runRune, tempDir } from '../helpers/rune.ts';

interface Running {
  child: ChildProcess;
  url: string;
  stderr: () => string;
  exit: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

const started: Running[] = [];

async function startNotes(home: string, args: string[] = [], env = cleanEnv()): Promise<Running> {
  const child = spawn(requireBinary(), ['notes', '--port', '0', ...args], {
    env: { ...env, RUNE_HOME: home },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stderr = '';
  child.stderr!.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  const exit = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('close', (code, signal) => resolve({ code, signal })),
  );
  const url = await new Promise<string>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`no listening line; stderr: ${stderr}`)), 20_000);
    child.stderr!.on('data', () => {
      const match = /listening on (http:\/\/[\d.]+:\d+)/.exec(stderr);
      if (match) {
        clearTimeout(timer);
        resolve(match[1]!);
      }
    });
    child.on('close', () => reject(new Error(`exited early: ${stderr}`)));
  });
  const running = { child, url, stderr: () => stderr, exit };
  started.push(running);
  return running;
}

afterEach(() => {
  for (const r of started.splice(0)) if (r.child.exitCode === null) r.child.kill('SIGKILL');
});

async function login(url: string, username: string, password: string) {
  const { cookie, csrf } = await logIn(url, username, password);
  return (path: string, init: { method?: string; body?: unknown } = {}) =>
    fetch(`${url}${path}`, {
      method: init.method ?? 'GET',
      headers: {
        cookie,
        'x-csrf-token': csrf,
        'content-type': 'application/json',
        origin: url,
        'sec-fetch-site': 'same-origin',
      },
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    });
}

describe('rune notes (binary)', () => {
  it('creates an admin once, serves the API, SSE and public pages, and stops cleanly on SIGTERM', async () => {
    const home = tempDir('rune-notes-e2e-');
    const server = await startNotes(home);
    const password = /password: (\S+)/.exec(server.stderr())?.[1];
    expect(password).toBeTruthy();

    expect(await (await fetch(`${server.url}/healthz`)).json()).toMatchObject({ ok: true });
    const api = await login(server.url, 'admin', password!);
    expect((await api('/api/notes', { method: 'POST', body: { name: 'demo', public: true } })).status).toBe(
      201,
    );

    // A live event stream of the note sees a file being created.
    const events = await fetch(`${server.url}/api/events?note_id=demo`);
    expect(events.headers.get('content-type')).toMatch(/^text\/event-stream/);
    const reader = events.body!.getReader();
    let seen = '';
    const waitFor = async (text: string) => {
      while (!seen.includes(text)) {
        const { value, done } = await reader.read();
        if (done) throw new Error(`stream ended before ${text}: ${seen}`);
        seen += Buffer.from(value).toString('utf8');
      }
    };
    await waitFor('event: hello');
    expect(
      (await api('/api/notes/demo/files', { method: 'POST', body: { name: 'index.md', content: '# Hi\n' } }))
        .status,
    ).toBe(201);
    await waitFor('event: file.created');
    expect(seen).toContain('"name":"index.md"');

    const page = await fetch(`${server.url}/notes/demo/index.md`);
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toMatch(/script-src 'self'/);
    const html = await page.text();
    expect(html).toContain('id="rune-data"');
    expect(html).toContain('# Hi');
    expect(await (await fetch(`${server.url}/raw/demo/index.md`)).text()).toBe('# Hi\n');
    expect((await fetch(`${server.url}/assets/js/app.js`)).status).toBe(200);

    server.child.kill('SIGTERM');
    // The open event stream must not keep the server alive.
    const { code } = await server.exit;
    expect(code).toBe(0);
    const wal = join(home, 'notes', 'notes.db-wal');
    expect(!existsSync(wal) || statSync(wal).size === 0).toBe(true);

    // Data survives; the password is not printed again.
    const again = await startNotes(home);
    expect(again.stderr()).not.toMatch(/password:/);
    const api2 = await login(again.url, 'admin', password!);
    expect(
      ((await (await api2('/api/notes/demo/files/index.md')).json()) as { content: string }).content,
    ).toBe('# Hi\n');
    again.child.kill('SIGTERM');
    expect((await again.exit).code).toBe(0);
  });

  it('uses [notes.local] accounts, warns about plain passwords, and hashes passwords', async () => {
    const hashed = await runRune(['notes', 'hash-password'], { input: 'correct horse\n' });
    expect(hashed.code).toBe(0);
    const hash = hashed.stdout.trim();
    expect(hash).toMatch(/^scrypt\$/);
    const home = tempDir('rune-notes-e2e-');
    writeFileSync(
      join(home, 'rune.toml'),
      `[notes.local]\nadmins = ["boss:${hash}"]\nusers = ["pat:plainpw"]\n`,
    );
    const server = await startNotes(home);
    expect(server.stderr()).toMatch(/plain-text passwords for pat/);
    expect(server.stderr()).not.toMatch(/plainpw/);
    expect(server.stderr()).not.toMatch(/password: /);
    const api = await login(server.url, 'boss', 'correct horse');
    expect(((await (await api('/api/me')).json()) as { role: string }).role).toBe('admin');
    server.child.kill('SIGTERM');
    expect((await server.exit).code).toBe(0);
  });

  it('hash-password --help explains it instead of hashing an empty password; an argument is refused', async () => {
    const help = await runRune(['notes', 'hash-password', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/^Usage: rune notes hash-password/);
    expect(help.stderr).not.toMatch(/empty/);
    const extra = await runRune(['notes', 'hash-password', 'hunter2']);
    expect(extra.code).toBe(2);
    expect(extra.stderr).toMatch(/takes no arguments/);
    expect(extra.stdout).toBe('');
    const empty = await runRune(['notes', 'hash-password'], { input: '' });
    expect(empty.code).toBe(2);
    expect(empty.stderr).toMatch(/the password is empty; type one at the prompt, or pipe it in/);
  });

  it('rejects bad flags with a usage error', async () => {
    const res = await runRune(['notes', '--port', 'abc']);
    expect(res.code).toBe(2);
    expect(res.stderr).toMatch(/--port/);
  });

  it('refuses a chat workspace inside RUNE_HOME, where the secrets floor would block the agent', async () => {
    const home = tempDir('rune-notes-e2e-');
    writeFileSync(join(home, 'rune.toml'), `[notes]\nworkspace = "${join(home, 'ws')}"\n`);
    const res = await runRune(['notes', '--port', '0'], { env: { RUNE_HOME: home } });
    expect(res.code).toBe(3);
    expect(res.stderr).toMatch(/notes\.workspace: .*secrets floor/);
  });

  describe('agent chat', () => {
    let mock: MockLlm;
    beforeAll(async () => {
      mock = await startMockLlm();
    });
    afterAll(async () => {
      await mock.close();
    });

    it('answers in a note with the notes tools, through the binary', async () => {
      const home = tempDir('rune-notes-e2e-');
      writeFileSync(
        join(home, 'rune.toml'),
        `base_url = "${mock.baseUrl}"\napi_key = "sk-test-e2e-notes-0123456789"\nmodel = "mock"\n[notes.local]\nadmins = ["ada:adapass1"]\n`,
      );
      const server = await startNotes(home);
      const api = await login(server.url, 'ada', 'adapass1');
      expect((await api('/api/notes', { method: 'POST', body: { name: 'lab' } })).status).toBe(201);
      mock.script([
        { toolCalls: [{ name: 'write_markdown', arguments: { name: 'todo.md', content: '- [ ] ship\n' } }] },
        { text: 'Created todo.md.' },
      ]);
      expect(
        (await api('/api/notes/lab/chat', { method: 'POST', body: { message: 'make a todo list' } })).status,
      ).toBe(202);
      let chat: { messages: Array<{ role: string; content: string }>; running: string | null } = {
        messages: [],
        running: 'x',
      };
      for (let i = 0; i < 200 && chat.running !== null; i++) {
        await new Promise((r) => setTimeout(r, 50));
        chat = (await (await api('/api/notes/lab/chat')).json()) as typeof chat;
      }
      expect(chat.messages.at(-1)).toMatchObject({ role: 'assistant', content: 'Created todo.md.' });
      const file = (await (await api('/api/notes/lab/files/todo.md')).json()) as { content: string };
      expect(file.content).toBe('- [ ] ship\n');
      expect(server.stderr()).not.toContain('sk-test-e2e-notes');
      server.child.kill('SIGTERM');
      expect((await server.exit).code).toBe(0);
    });

    it('works in a per-note workspace outside RUNE_HOME with the standard tools, sandboxed', async () => {
      const home = tempDir('rune-notes-e2e-');
      const env = cleanEnv();
      writeFileSync(
        join(home, 'rune.toml'),
        `base_url = "${mock.baseUrl}"\napi_key = "sk-test-e2e-notes-0123456789"\nmodel = "mock"\n` +
          // "." is each note's own folder: paths in the policy are relative to the agent's cwd.
          `[policy]\nallowed_commands = ["wc", "pwd"]\nallowed_paths_rw = ["."]\n` +
          `[notes.local]\nadmins = ["ada:adapass1"]\n`,
      );
      const server = await startNotes(home, [], env);
      const api = await login(server.url, 'ada', 'adapass1');
      for (const name of ['lab', 'other'])
        expect((await api('/api/notes', { method: 'POST', body: { name } })).status).toBe(201);
      const ask = async (note: string, steps: Parameters<MockLlm['script']>[0]) => {
        mock.script(steps);
        const before = mock.requests.length;
        expect(
          (await api(`/api/notes/${note}/chat`, { method: 'POST', body: { message: 'go' } })).status,
        ).toBe(202);
        let running: string | null = 'x';
        for (let i = 0; i < 300 && running !== null; i++) {
          await new Promise((r) => setTimeout(r, 50));
          running = ((await (await api(`/api/notes/${note}/chat`)).json()) as { running: string | null })
            .running;
        }
        // What the model was told the tools returned, in order.
        const last = mock.requests.at(-1)!.body as { messages: Array<{ role: string; content: string }> };
        expect(mock.requests.length).toBeGreaterThan(before);
        return last.messages
          .filter((m) => m.role === 'tool')
          .map((m) => m.content)
          .join('\n');
      };
      const seen = await ask('lab', [
        { toolCalls: [{ name: 'write_file', arguments: { path: 'data.txt', content: 'alpha\nbeta\n' } }] },
        { toolCalls: [{ name: 'execute_cmd', arguments: { cmd: 'wc -l < data.txt; pwd' } }] },
        { text: 'Counted.' },
      ]);
      expect(seen).toContain('wrote 11 bytes');
      expect(seen).toMatch(/exit code: 0\nstdout:\n2\n/);
      const workspace = join(env.HOME!, '.local', 'share', 'rune', 'notes-workspace');
      expect(readFileSync(join(workspace, 'note-1', 'data.txt'), 'utf8')).toBe('alpha\nbeta\n');
      expect(seen).toContain(join(workspace, 'note-1'));
      // Another note's chat works in its own folder and cannot read the first one's files.
      const other = await ask('other', [
        { toolCalls: [{ name: 'read_file', arguments: { path: '../note-1/data.txt' } }] },
        { text: 'done' },
      ]);
      expect(other).toContain('blocked by policy');
      expect(other).not.toContain('beta');
      // The secrets floor still holds: the notes database under RUNE_HOME stays out of reach.
      const floor = await ask('lab', [
        { toolCalls: [{ name: 'read_file', arguments: { path: join(home, 'notes', 'notes.db') } }] },
        { text: 'done' },
      ]);
      expect(floor).toContain('blocked by policy (floor)');
      expect(floor).not.toContain('SQLite format');
      server.child.kill('SIGTERM');
      expect((await server.exit).code).toBe(0);
    });
  });
});
