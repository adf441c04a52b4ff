// A project's .rune/rune.toml narrows the run's policy the same way in every mode: the CLI in the
// project folder, a notes chat in its note's workspace and a Concourse `out` in its src. The user's
// policy may read all of data/; the project narrows that to data/public. Reading data/private must
// then fail in each mode both ways: read_file, which the gate refuses, and `cat` in execute_cmd,
// which the gate leaves to the sandbox, whose view (built from the narrowed policy) lacks the file.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type MockStep, useMockLlm } from '../helpers/mock-llm.ts';
import { logIn, type NotesProcess, startNotesProcess } from '../helpers/notes.ts';
import { cleanEnv, runRune, tempDir } from '../helpers/rune.ts';
import { protocolValue, resourceDir } from './concourse-harness.ts';

const KEY = 'sk-test-project-policy-0123456789';
const SECRET = 'TOP-SECRET-CONTENT';
const mock = useMockLlm();
const servers: NotesProcess[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});

/** data/public/ok.txt and data/private/secret.txt; the user's lists allow all of data/. */
function dataFolder() {
  const data = tempDir('rune-project-data-');
  mkdirSync(join(data, 'public'));
  mkdirSync(join(data, 'private'));
  writeFileSync(join(data, 'public', 'ok.txt'), 'public words\n');
  writeFileSync(join(data, 'private', 'secret.txt'), `${SECRET}\n`);
  return data;
}

const userPolicy = (data: string) => ({
  allowed_commands: ['cat'],
  allowed_paths_ro: [data],
});

/** The project folder's narrowing config. */
function projectFiles(folder: string, data: string): void {
  mkdirSync(join(folder, '.rune'), { recursive: true });
  writeFileSync(
    join(folder, '.rune', 'rune.toml'),
    `[policy]\nallowed_paths_ro = ["${join(data, 'public')}"]\n`,
  );
}

const steps = (data: string): MockStep[] => [
  { toolCalls: [{ name: 'execute_cmd', arguments: { cmd: `cat ${join(data, 'public', 'ok.txt')}` } }] },
  { toolCalls: [{ name: 'execute_cmd', arguments: { cmd: `cat ${join(data, 'private', 'secret.txt')}` } }] },
  { toolCalls: [{ name: 'read_file', arguments: { path: join(data, 'private', 'secret.txt') } }] },
  { text: 'done' },
];

/** What the model was told each of the three calls returned. */
function toolResults(): string[] {
  const last = mock.requests.at(-1)!.body as { messages: Array<{ role: string; content: string }> };
  return last.messages.filter((m) => m.role === 'tool').map((m) => m.content);
}

function expectNarrowed(results: string[]): void {
  expect(results).toHaveLength(3);
  const [allowed, sandboxed, refused] = results as [string, string, string];
  expect(allowed).toContain('public words');
  expect(sandboxed).not.toContain(SECRET);
  expect(sandboxed).toMatch(/private\/secret\.txt: No such file or directory/);
  expect(refused).toMatch(/^blocked by policy/);
  expect(refused).not.toContain(SECRET);
}

describe('a project .rune/rune.toml narrows the policy in every mode', () => {
  it('the CLI in the project folder', async () => {
    const data = dataFolder();
    const home = tempDir('rune-home-');
    mkdirSync(join(home, '.rune'));
    const policy = userPolicy(data);
    writeFileSync(
      join(home, '.rune', 'rune.toml'),
      `[policy]\nallowed_commands = ${JSON.stringify(policy.allowed_commands)}\nallowed_paths_ro = ${JSON.stringify(policy.allowed_paths_ro)}\n`,
    );
    const project = tempDir('rune-project-');
    projectFiles(project, data);
    mock.script(steps(data));
    const result = await runRune(['--base-url', mock.baseUrl, '--api-key', KEY, '--model', 'm', 'go'], {
      cwd: project,
      env: { ...cleanEnv(home) },
    });
    expect(result.code, result.stderr).toBe(0);
    expectNarrowed(toolResults());
  });

  it("a notes chat in its note's workspace", async () => {
    const data = dataFolder();
    const runeHome = tempDir('rune-notes-home-');
    const env = cleanEnv();
    const policy = userPolicy(data);
    writeFileSync(
      join(runeHome, 'rune.toml'),
      `base_url = "${mock.baseUrl}"\napi_key = "${KEY}"\nmodel = "m"\n[policy]\nallowed_commands = ${JSON.stringify(policy.allowed_commands)}\nallowed_paths_ro = ${JSON.stringify(policy.allowed_paths_ro)}\n[notes.local]\nadmins = ["ada:adapass1"]\n`,
    );
    const server = await startNotesProcess({ home: runeHome, env });
    servers.push(server);
    const { cookie, csrf } = await logIn(server.url, 'ada', 'adapass1');
    const api = (path: string, body?: unknown) =>
      fetch(`${server.url}${path}`, {
        method: body === undefined ? 'GET' : 'POST',
        headers: {
          cookie,
          'x-csrf-token': csrf,
          'content-type': 'application/json',
          origin: server.url,
        },
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    expect((await api('/api/notes', { name: 'lab' })).status).toBe(201);
    projectFiles(join(env.HOME!, '.local', 'share', 'rune', 'notes-workspace', 'note-1'), data);
    mock.script(steps(data));
    expect((await api('/api/notes/lab/chat', { message: 'go' })).status).toBe(202);
    let running: string | null = 'x';
    for (let i = 0; i < 400 && running !== null; i++) {
      await new Promise((r) => setTimeout(r, 50));
      running = ((await (await api('/api/notes/lab/chat')).json()) as { running: string | null }).running;
    }
    expect(running).toBeNull();
    expectNarrowed(toolResults());
  });

  it('a Concourse out in its src folder', async () => {
    const data = dataFolder();
    const resource = resourceDir();
    const src = tempDir('rune-out-');
    projectFiles(src, data);
    mock.script(steps(data));
    const put = await resource.step(
      'out',
      {
        source: { api_key: KEY, base_url: mock.baseUrl, model: 'm', policy: userPolicy(data) },
        params: { prompt: 'go' },
      },
      { folder: src },
    );
    protocolValue(put);
    expectNarrowed(toolResults());
  });
});
