// The note chat with the real agent loop; only the model is a scripted mock server.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type MockLlm, startMockLlm } from '../../tests/helpers/mock-llm.ts';
import { runAgent } from '../agent/run.ts';
import type { Sink } from './events.ts';
import type { BuildOptions } from './server.ts';
import { anonymous, type Client, type Kit, loginAs, makeServer } from './test-kit.ts';

let mock: MockLlm;
let kit: Kit;
let admin: Client;
let user: Client;
/** HOME of the agent runs (the "always" answers go to its .rune/rune.toml). */
let home: string;

beforeAll(async () => {
  mock = await startMockLlm();
});
afterAll(async () => {
  await mock.close();
});
afterEach(async () => {
  await kit?.server.close();
});

async function setup(mode: 'allowlist' | 'confirm', extra: Partial<BuildOptions> = {}) {
  const toml = `
base_url = "${mock.baseUrl}"
api_key = "sk-test-notes-0123456789abcdef"
model = "mock-model"
[policy]
mode = "${mode}"
[sandbox]
mode = "off"
[notes.local]
admins = ["ada:adapass1"]
users = ["uma:umapass1"]
guests = ["gus:guspass1"]
`;
  home = mkdtempSync(join(tmpdir(), 'rune-home-'));
  kit = await makeServer(toml, { runAgent, env: { HOME: home }, ...extra });
  admin = await loginAs(kit.server, 'ada', 'adapass1');
  user = await loginAs(kit.server, 'uma', 'umapass1');
  expect((await admin.request('POST', '/api/notes', { name: 'lab', public: true })).statusCode).toBe(201);
}

function watch(noteId: number) {
  const events: Array<{ name: string; data: Record<string, unknown> }> = [];
  const sink: Sink = {
    write(chunk) {
      const name = /^event: (.+)$/m.exec(chunk)?.[1];
      const data = /^data: (.+)$/m.exec(chunk)?.[1];
      if (name && data) events.push({ name, data: JSON.parse(data) });
    },
    end() {},
  };
  kit.server.hub.subscribe({ principal: null, noteId, clientId: null, lastEventId: null, sink });
  return events;
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 400; i++) {
    if (check()) return;
    await new Promise((r) => setTimeout(r, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('agent chat', () => {
  it('runs the agent with the notes tools, streams tokens and progress to the note, stores the chat', async () => {
    await setup('allowlist');
    const noteId = kit.server.store.findNote('lab')!.id;
    const events = watch(noteId);
    mock.script([
      {
        toolCalls: [
          { name: 'write_markdown', arguments: { name: 'plan.md', content: '# Plan\n- step one\n' } },
        ],
      },
      { text: 'I wrote plan.md for you.' },
    ]);
    const res = await user.request('POST', '/api/notes/lab/chat', { message: 'please write a plan' });
    expect(res.statusCode).toBe(202);
    const runId = res.json().run_id;
    expect(runId).toMatch(/^r_/);
    expect((await user.request('POST', '/api/notes/lab/chat', { message: 'again' })).statusCode).toBe(409);
    await until(() => events.some((e) => e.name === 'chat.done'), 'chat.done');

    const done = events.find((e) => e.name === 'chat.done')!;
    expect(done.data).toMatchObject({ run_id: runId, status: 'FinalAnswer' });
    expect(
      events
        .filter((e) => e.name === 'chat.token')
        .map((e) => e.data.delta)
        .join(''),
    ).toBe('I wrote plan.md for you.');
    const kinds = events.filter((e) => e.name === 'chat.progress').map((e) => e.data.kind);
    expect(kinds).toContain('tool_call');
    expect(kinds).toContain('tool_result');
    expect(events.some((e) => e.name === 'file.created')).toBe(true);

    const file = (await user.request('GET', '/api/notes/lab/files/plan.md')).json();
    expect(file.content).toBe('# Plan\n- step one\n');
    const chat = (await user.request('GET', '/api/notes/lab/chat')).json();
    expect(chat.running).toBeNull();
    expect(chat.messages.map((m: { role: string }) => m.role)).toEqual(['user', 'tool', 'assistant']);
    // The model saw the notes tools.
    const tools = JSON.stringify(mock.requests[0]!.body);
    for (const name of ['list_markdown', 'read_markdown', 'write_markdown', 'search_chat'])
      expect(tools).toContain(name);
    // Chats are searchable.
    const found = (await user.request('GET', '/api/search?q=plan')).json().results;
    expect(found.some((r: { kind: string }) => r.kind === 'chat')).toBe(true);
  });

  it('uses the per-note model an admin chose', async () => {
    await setup('allowlist');
    expect((await admin.request('PATCH', '/api/notes/lab', { model: 'special-model' })).json().model).toBe(
      'special-model',
    );
    mock.script([{ text: 'ok' }]);
    const before = mock.requests.length;
    await user.request('POST', '/api/notes/lab/chat', { message: 'hi' });
    await until(() => kit.server.chat.running(1) === null && mock.requests.length > before, 'the run');
    expect(JSON.stringify(mock.requests.at(-1)!.body)).toContain('special-model');
  });

  it('turns a confirm-mode question into an approval that an admin answers', async () => {
    await setup('confirm');
    const secretDir = mkdtempSync(join(tmpdir(), 'rune-outside-'));
    const outside = join(secretDir, 'data.txt');
    writeFileSync(outside, 'outside text 42\n');
    const noteId = kit.server.store.findNote('lab')!.id;
    const events = watch(noteId);
    const adminEvents: typeof events = [];
    kit.server.hub.subscribe({
      principal: { subject: 'local:ada', name: 'ada', provider: 'local', role: 'admin' },
      noteId,
      clientId: null,
      lastEventId: null,
      sink: {
        write(chunk) {
          const name = /^event: (.+)$/m.exec(chunk)?.[1];
          const data = /^data: (.+)$/m.exec(chunk)?.[1];
          if (name && data) adminEvents.push({ name, data: JSON.parse(data) });
        },
        end() {},
      },
    });
    mock.script([
      { toolCalls: [{ name: 'read_file', arguments: { path: outside } }] },
      { text: 'It says 42.' },
    ]);
    await user.request('POST', '/api/notes/lab/chat', { message: 'read that file' });
    await until(() => adminEvents.some((e) => e.name === 'approval.requested'), 'approval.requested');
    // Guests watching the note never see approvals.
    expect(events.some((e) => e.name === 'approval.requested')).toBe(false);
    const pending = (await admin.request('GET', '/api/approvals?note=lab')).json().approvals;
    expect(pending).toHaveLength(1);
    expect(pending[0]).toMatchObject({ tool: 'read_file', status: 'pending' });
    expect(
      (await user.request('POST', `/api/approvals/${pending[0].id}`, { answer: 'yes' })).statusCode,
    ).toBe(403);
    const answered = await admin.request('POST', `/api/approvals/${pending[0].id}`, { answer: 'yes' });
    expect(answered.json()).toMatchObject({ status: 'yes', answered_by: 'ada' });
    await until(() => events.some((e) => e.name === 'chat.done'), 'chat.done');
    const result = adminEvents.find((e) => e.name === 'chat.progress' && e.data.kind === 'tool_result')!;
    expect(result.data.detail).toContain('outside text 42');
    // The note is public, but what the agent's tools read is not: anonymous readers get the steps
    // without their details, the stored tool message without its content, and no search hit in it.
    const seenByAnon = events.filter((e) => e.name === 'chat.progress' || e.name === 'chat.message');
    expect(seenByAnon.some((e) => e.data.kind === 'tool_result')).toBe(true);
    expect(JSON.stringify(seenByAnon)).not.toContain('outside text 42');
    const anon = anonymous(kit.server);
    const history = (await anon.request('GET', '/api/notes/lab/chat')).json().messages;
    expect(history.map((m: { role: string }) => m.role)).toContain('tool');
    expect(JSON.stringify(history)).not.toContain('outside text 42');
    expect((await anon.request('GET', '/api/search?q=outside')).json().results).toEqual([]);
    expect(JSON.stringify((await user.request('GET', '/api/notes/lab/chat')).json())).toContain(
      'outside text 42',
    );
    expect((await user.request('GET', '/api/search?q=outside')).json().results).toHaveLength(1);
    // A stream reconnecting with Last-Event-ID gets the same reader's view in the replay.
    const replayed: string[] = [];
    kit.server.hub.subscribe({
      principal: null,
      noteId,
      clientId: null,
      lastEventId: 0,
      sink: { write: (chunk) => replayed.push(chunk), end() {} },
    });
    expect(replayed.join('')).toContain('tool_result');
    expect(replayed.join('')).not.toContain('outside text 42');
    expect(adminEvents.some((e) => e.name === 'approval.resolved')).toBe(true);
    expect(
      (await admin.request('POST', `/api/approvals/${pending[0].id}`, { answer: 'no' })).statusCode,
    ).toBe(409);
  });

  it('cancels a run waiting for approval', async () => {
    await setup('confirm');
    const outside = join(mkdtempSync(join(tmpdir(), 'rune-outside-')), 'x.txt');
    writeFileSync(outside, 'x');
    const noteId = kit.server.store.findNote('lab')!.id;
    const events = watch(noteId);
    mock.script([{ toolCalls: [{ name: 'read_file', arguments: { path: outside } }] }, { text: 'never' }]);
    await user.request('POST', '/api/notes/lab/chat', { message: 'read it' });
    await until(() => kit.server.chat.approvals.pending(noteId).length === 1, 'the approval');
    expect((await user.request('POST', '/api/notes/lab/chat/cancel')).json()).toEqual({ cancelled: true });
    await until(() => events.some((e) => e.name === 'chat.done'), 'chat.done');
    expect(kit.server.chat.approvals.pending(noteId)).toEqual([]);
    expect(kit.server.chat.running(noteId)).toBeNull();
  });
});

describe('runs that outlive the process (answers that do: approvals.test.ts)', () => {
  it('on shutdown, shows a running run as interrupted and keeps the answer streamed so far', async () => {
    await setup('allowlist');
    const noteId = kit.server.store.findNote('lab')!.id;
    const dir = kit.dir;
    const events = watch(noteId);
    mock.script([{ text: 'The first part of a long answer', chunkSize: 4, hangAfter: 5 }]);
    await user.request('POST', '/api/notes/lab/chat', { message: 'tell me' });
    await until(() => events.filter((e) => e.name === 'chat.token').length >= 2, 'tokens');
    await kit.server.close();
    kit = await makeServer(undefined, { dataDir: dir });
    const messages = kit.server.store.listChat(noteId, undefined, 10);
    expect(messages.map((m) => m.role)).toEqual(['user', 'assistant', 'system']);
    expect(messages[1]!.content).toBe(
      events
        .filter((e) => e.name === 'chat.token')
        .map((e) => e.data.delta)
        .join(''),
    );
    expect(messages[2]!.content).toMatch(/^The run was interrupted: rune notes was shut down/);
    expect(events.find((e) => e.name === 'chat.done')?.data).toMatchObject({ status: 'Interrupted' });
  });

  it('after a crash, shows the runs that were going as interrupted, their answers so far kept, their questions expired', async () => {
    await setup('confirm');
    const { store } = kit.server;
    const dir = kit.dir;
    const noteId = store.findNote('lab')!.id;
    // What a process that died mid-run leaves behind.
    store.db
      .prepare(
        "insert into chat_runs(id, note_id, started_by, status, partial, started_at) values ('r_dead', ?, 'uma', 'running', 'Half an ans', ?)",
      )
      .run(noteId, store.stamp());
    store.addChat(noteId, 'user', 'uma', 'question', 'r_dead');
    store.db
      .prepare(
        "insert into approvals(id, note_id, run_id, tool, arguments, question, reason, status, created_at) values ('a_dead', ?, 'r_dead', 'read_file', '{}', 'Read?', 'outside', 'pending', ?)",
      )
      .run(noteId, store.stamp());
    store.db.close();

    kit = await makeServer(undefined, { dataDir: dir });
    const messages = kit.server.store.listChat(noteId, undefined, 10);
    expect(messages.map((m) => [m.role, m.run_id])).toEqual([
      ['user', 'r_dead'],
      ['assistant', 'r_dead'],
      ['system', 'r_dead'],
    ]);
    expect(messages[1]!.content).toBe('Half an ans');
    expect(messages[2]!.content).toMatch(/^The run was interrupted: rune notes stopped before it finished/);
    expect(kit.server.chat.approvals.approval('a_dead')).toMatchObject({ status: 'expired' });
    expect(kit.server.chat.running(noteId)).toBeNull();
    const replay: string[] = [];
    kit.server.hub.subscribe({
      principal: { subject: 'local:ada', name: 'ada', provider: 'local', role: 'admin' },
      noteId,
      clientId: null,
      lastEventId: 0,
      sink: { write: (chunk) => replay.push(chunk), end() {} },
    });
    expect(replay.join('')).toMatch(/event: chat\.done\ndata: .*"run_id":"r_dead","status":"Interrupted"/);
    expect(replay.join('')).toMatch(/event: approval\.resolved\ndata: .*"status":"expired"/);
    // Nothing is left to recover the next time.
    await kit.server.close();
    kit = await makeServer(undefined, { dataDir: dir });
    expect(kit.server.store.listChat(noteId, undefined, 10)).toHaveLength(3);
  });
});
