// The note chat with the [[mcp]] servers of rune.toml, remote ones included: server-everything over
// Streamable HTTP, and the OAuth test server, which the notes server never logs in to.
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { type MockLlm, startMockLlm } from '../../tests/helpers/mock-llm.ts';
import {
  type OAuthServer,
  type RunningServer,
  startEverything,
  startOAuthServer,
} from '../../tests/helpers/remote-mcp.ts';
import { runAgent } from '../agent/run.ts';
import { type Client, type Kit, loginAs, makeServer } from './test-kit.ts';

let mock: MockLlm;
let http: RunningServer;
let oauth: OAuthServer;
let kit: Kit;

beforeAll(async () => {
  [mock, http, oauth] = await Promise.all([
    startMockLlm(),
    startEverything('streamableHttp'),
    startOAuthServer(),
  ]);
});
afterAll(async () => {
  await Promise.all([mock?.close(), http?.kill(), oauth?.kill()]);
});
afterEach(async () => {
  await kit?.server.close();
});

async function setup(mcp: string): Promise<Client> {
  const toml = `
base_url = "${mock.baseUrl}"
api_key = "sk-test-notes-mcp-0123456789abcdef"
model = "mock-model"
[sandbox]
mode = "off"
[notes.local]
admins = ["ada:adapass1"]
${mcp}`;
  const home = mkdtempSync(join(tmpdir(), 'rune-home-'));
  kit = await makeServer(toml, { runAgent, env: { HOME: home, RUNE_HOME: join(home, '.rune') } });
  const user = await loginAs(kit.server, 'ada', 'adapass1');
  expect((await user.request('POST', '/api/notes', { name: 'lab' })).statusCode).toBe(201);
  return user;
}

async function chat(user: Client, message: string): Promise<Array<{ role: string; content: string }>> {
  const res = await user.request('POST', '/api/notes/lab/chat', { message });
  expect(res.statusCode).toBe(202);
  for (let i = 0; i < 800 && kit.server.chat.running(1) !== null; i++)
    await new Promise((r) => setTimeout(r, 25));
  return (await user.request('GET', '/api/notes/lab/chat')).json().messages;
}

const table = (name: string, url: string, extra = '') =>
  `[[mcp]]\nname = "${name}"\nurl = "${url}"\nallowed_domains = ["${new URL(url).host}"]\n${extra}`;

describe('notes chat with remote MCP servers', () => {
  it('offers the tools of a remote server next to the notes tools', async () => {
    const user = await setup(table('ev', http.url));
    mock.script([
      { toolCalls: [{ name: 'echo', arguments: { message: 'from a note' } }] },
      { text: 'Echoed it.' },
    ]);
    const messages = await chat(user, 'echo something');
    expect(messages.at(-1)).toMatchObject({ role: 'assistant', content: 'Echoed it.' });
    const names = JSON.stringify(mock.requests.at(-2)!.body.tools);
    expect(names).toContain('write_markdown');
    expect(names).toContain('"echo"');
    const tool = mock.requests.at(-1)!.body.messages.find((m: { role: string }) => m.role === 'tool');
    expect(tool.content).toBe('Echo: from a note');
  });

  it('says in the chat and to the model why a server’s tools are missing: a login is needed', async () => {
    const user = await setup(table('secure', oauth.url));
    mock.script([{ text: 'I will do without it.' }]);
    const first = mock.requests.length;
    const messages = await chat(user, 'use the secure tools');
    const why = `MCP server "secure" could not start: MCP server "secure" at ${oauth.url} asks for an OAuth login and none is stored: the notes server cannot log in: run \`rune mcp login secure\` as the user running \`rune notes\` (same RUNE_HOME)`;
    expect(messages).toContainEqual(
      expect.objectContaining({
        role: 'system',
        content: `${why}. Its tools are not available in this run.`,
      }),
    );
    expect(messages.at(-1)).toMatchObject({ role: 'assistant', content: 'I will do without it.' });
    const asked = JSON.stringify(mock.requests[first]!.body.messages);
    expect(asked).toContain(
      JSON.stringify(`[rune] ${why}. Its tools are not available in this run; do not look for them.`).slice(
        1,
        -1,
      ),
    );
    expect((await oauth.stats()).authorizations).toBe(0);
  });

  it('never logs in: a required OAuth server without a stored login stops the run, naming rune mcp login', async () => {
    const user = await setup(table('secure', oauth.url, 'required = true\n'));
    const asked = mock.requests.length;
    const messages = await chat(user, 'hello');
    expect(messages.at(-1)?.role).toBe('system');
    expect(messages.at(-1)?.content).toContain(
      'The run stopped: required MCP server "secure" could not start',
    );
    expect(messages.at(-1)?.content).toContain(
      'the notes server cannot log in: run `rune mcp login secure` as the user running `rune notes` (same RUNE_HOME)',
    );
    expect(mock.requests).toHaveLength(asked);
    expect((await oauth.stats()).authorizations).toBe(0);
  });
});
