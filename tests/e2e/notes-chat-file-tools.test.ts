// The notes chat gets edit_file, search_files and find_files, scoped to the note's own workspace:
// through the built `rune notes`, a note's agent creates, edits and searches its files, another
// note's agent cannot search them, and in confirm mode an admin's approval shows edit_file's diff.
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { type MockStep, useMockLlm } from '../helpers/mock-llm.ts';
import { logIn, type NotesProcess, startNotesProcess } from '../helpers/notes.ts';
import { cleanEnv, tempDir } from '../helpers/rune.ts';

const mock = useMockLlm();
const servers: NotesProcess[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.stop()));
});

async function login(url: string) {
  const { cookie, csrf } = await logIn(url, 'ada', 'adapass1');
  return (path: string, init: { method?: string; body?: unknown } = {}) =>
    fetch(`${url}${path}`, {
      method: init.method ?? 'GET',
      headers: { cookie, 'x-csrf-token': csrf, 'content-type': 'application/json', origin: url },
      ...(init.body === undefined ? {} : { body: JSON.stringify(init.body) }),
    });
}

async function start(policy: string) {
  const home = tempDir('rune-notes-tools-');
  const env = cleanEnv();
  writeFileSync(
    join(home, 'rune.toml'),
    `base_url = "${mock.baseUrl}"\napi_key = "sk-test-notes-tools-0123456789"\nmodel = "mock"\n${policy}\n[notes.local]\nadmins = ["ada:adapass1"]\n`,
  );
  const server = await startNotesProcess({ home, env });
  servers.push(server);
  const api = await login(server.url);
  for (const name of ['lab', 'other']) {
    expect((await api('/api/notes', { method: 'POST', body: { name } })).status).toBe(201);
  }
  const workspace = join(env.HOME!, '.local', 'share', 'rune', 'notes-workspace');
  return { api, workspace };
}

type Api = Awaited<ReturnType<typeof start>>['api'];

async function waitIdle(api: Api, note: string): Promise<void> {
  let running: string | null = 'x';
  for (let i = 0; i < 300 && running !== null; i++) {
    await new Promise((r) => setTimeout(r, 50));
    running = ((await (await api(`/api/notes/${note}/chat`)).json()) as { running: string | null }).running;
  }
  expect(running).toBeNull();
}

/** Runs one chat turn and returns what the model was told each tool returned. */
async function ask(api: Api, note: string, steps: MockStep[]): Promise<string[]> {
  mock.script(steps);
  expect((await api(`/api/notes/${note}/chat`, { method: 'POST', body: { message: 'go' } })).status).toBe(
    202,
  );
  await waitIdle(api, note);
  const last = mock.requests.at(-1)!.body as { messages: Array<{ role: string; content: string }> };
  return last.messages.filter((m) => m.role === 'tool').map((m) => m.content);
}

describe('notes chat file tools (binary)', () => {
  it("edits and searches the note's own workspace; another note cannot search it", async () => {
    const { api, workspace } = await start('[policy]\nallowed_paths_rw = ["."]');
    const [created, edited, searched, found] = await ask(api, 'lab', [
      {
        toolCalls: [
          {
            name: 'edit_file',
            arguments: { path: 'plan.txt', edits: [{ old_string: '', new_string: 'step one\nstep two\n' }] },
          },
        ],
      },
      {
        toolCalls: [
          {
            name: 'edit_file',
            arguments: { path: 'plan.txt', edits: [{ old_string: 'step two', new_string: 'step 2' }] },
          },
        ],
      },
      { toolCalls: [{ name: 'search_files', arguments: { pattern: 'step \\d' } }] },
      { toolCalls: [{ name: 'find_files', arguments: { pattern: '*.txt' } }] },
      { text: 'done' },
    ]);
    const offered = (mock.requests[0]!.body.tools as Array<{ function: { name: string } }>).map(
      (t) => t.function.name,
    );
    expect(offered).toEqual(
      expect.arrayContaining(['edit_file', 'search_files', 'find_files', 'write_markdown']),
    );
    expect(created).toMatch(/^created plan\.txt \(18 bytes\)/);
    expect(edited).toMatch(/^edited plan\.txt: 1 replacement, \+1 -1 lines/);
    expect(searched).toMatch(/^plan\.txt:2: step 2\n\n\[1 matching line in 1 file\]$/);
    expect(found).toMatch(/^plan\.txt\n/);
    expect(readFileSync(join(workspace, 'note-1', 'plan.txt'), 'utf8')).toBe('step one\nstep 2\n');

    const [fromOther, ownOnly] = await ask(api, 'other', [
      { toolCalls: [{ name: 'search_files', arguments: { pattern: 'step', path: '../note-1' } }] },
      { toolCalls: [{ name: 'search_files', arguments: { pattern: 'step' } }] },
      { text: 'done' },
    ]);
    expect(fromOther).toMatch(/^blocked by policy \(path\.not-allowed\)/);
    expect(ownOnly).toMatch(/^No matches/);
  });

  it('in confirm mode the approval an admin sees holds the diff of the edit', async () => {
    const { api, workspace } = await start('[policy]\nmode = "confirm"');
    // The first turn creates the note's workspace; the file is put there before the edit.
    await ask(api, 'lab', [{ text: 'ready' }]);
    writeFileSync(join(workspace, 'note-1', 'conf.ini'), 'level = low\n');
    mock.script([
      {
        toolCalls: [
          {
            name: 'edit_file',
            arguments: { path: 'conf.ini', edits: [{ old_string: 'low', new_string: 'high' }] },
          },
        ],
      },
      { text: 'raised' },
    ]);
    expect((await api('/api/notes/lab/chat', { method: 'POST', body: { message: 'raise it' } })).status).toBe(
      202,
    );
    let approvals: Array<{ id: string; question: string }> = [];
    for (let i = 0; i < 200 && approvals.length === 0; i++) {
      await new Promise((r) => setTimeout(r, 50));
      approvals = ((await (await api('/api/approvals?note=lab')).json()) as { approvals: typeof approvals })
        .approvals;
    }
    expect(approvals).toHaveLength(1);
    expect(approvals[0]!.question).toMatch(
      /^Edit .*conf\.ini\?\n--- a\/conf\.ini\n\+\+\+ b\/conf\.ini\n@@ -1,1 \+1,1 @@\n-level = low\n\+level = high$/,
    );
    expect(
      (await api(`/api/approvals/${approvals[0]!.id}`, { method: 'POST', body: { answer: 'yes' } })).status,
    ).toBe(200);
    await waitIdle(api, 'lab');
    expect(readFileSync(join(workspace, 'note-1', 'conf.ini'), 'utf8')).toBe('level = high\n');
  });
});
