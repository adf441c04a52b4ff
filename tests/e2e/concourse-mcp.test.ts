// Concourse's source.mcp with remote servers, through the resource's check: server-everything
// over Streamable HTTP, a host outside allowed_domains, and the OAuth test server, which a step can
// only use with a bearer_token from the source (never printed to the build log).
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type MockLlm, startMockLlm } from '../helpers/mock-llm.ts';
import {
  authorizationUrlIn,
  type OAuthServer,
  playBrowser,
  type RunningServer,
  startEverything,
  startOAuthServer,
} from '../helpers/remote-mcp.ts';
import { cleanEnv, RUNE_BIN, tempDir } from '../helpers/rune.ts';
import { protocolValue, resourceDir } from './concourse-harness.ts';

const KEY = 'sk-proj-concourseMcpKey0123456789abcdef';
const resource = resourceDir();
let mock: MockLlm;
let http: RunningServer;
let oauth: OAuthServer;

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
beforeEach(() => {
  mock.script([]);
  mock.setFallback(undefined);
  mock.requests.length = 0;
});

const source = (mcp: unknown[]) => ({
  api_key: KEY,
  base_url: mock.baseUrl,
  model: 'm',
  prompt: 'Use echo.',
  mcp,
});
const toolResult = () =>
  mock.requests
    .at(-1)
    ?.body.messages.filter((m: { role: string }) => m.role === 'tool')
    .map((m: { content: string }) => m.content);

describe('source.mcp', () => {
  it('runs check with the tools of a remote server', async () => {
    mock.script([
      { toolCalls: [{ name: 'echo', arguments: { message: 'from the pipeline' } }] },
      { text: 'Echoed.' },
    ]);
    const host = new URL(http.url).host;
    const result = await resource.step('check', {
      source: source([{ name: 'ev', url: http.url, allowed_domains: [host], required: true }]),
    });
    expect(protocolValue(result)).toHaveLength(1);
    expect(toolResult()).toEqual(['Echo: from the pipeline']);
  });

  it('refuses a host not allowed, naming the source key, and fails a required server with 11', async () => {
    mock.setFallback({ text: 'should not be asked' });
    const result = await resource.step('check', {
      source: source([{ name: 'ev', url: http.url, required: true }]),
    });
    expect(result.code).toBe(11);
    expect(result.stdout).toBe('');
    const host = new URL(http.url).host;
    expect(result.stderr).toContain(
      `add "${host}" to allowed_domains of the source.mcp entry "ev" (or to source.policy.allowed_domains)`,
    );
    expect(mock.requests).toHaveLength(0);
  });

  it('never logs in: an OAuth server needs a bearer_token, which the build log never shows', async () => {
    const host = new URL(oauth.url).host;
    const entry = { name: 'secure', url: oauth.url, allowed_domains: [host], required: true };
    const without = await resource.step('check', { source: source([entry]) });
    expect(without.code).toBe(11);
    expect(without.stderr).toContain(
      'a Concourse step cannot start an OAuth login (`rune mcp login` needs a browser): give source.mcp entry "secure" a bearer_token from your credential manager, e.g. ((secure_mcp_token))',
    );
    expect((await oauth.stats()).authorizations).toBe(0);

    // A token from a login made elsewhere (here: rune mcp login), handed over in the source.
    const runeHome = join(tempDir('rune-concourse-login-'), '.rune');
    const env = { ...cleanEnv(), RUNE_HOME: runeHome };
    mkdirSync(runeHome, { recursive: true });
    writeFileSync(
      join(runeHome, 'rune.toml'),
      `[[mcp]]\nname = "secure"\nurl = "${oauth.url}"\nallowed_domains = ["${host}"]\n`,
    );
    const login = spawn(RUNE_BIN, ['mcp', 'login', 'secure'], { env, stdio: ['ignore', 'ignore', 'pipe'] });
    let stderr = '';
    let browsed: Promise<number> | undefined;
    login.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      const url = authorizationUrlIn(stderr);
      if (url && !browsed) browsed = playBrowser(url);
    });
    expect(await new Promise((resolve) => login.on('close', resolve))).toBe(0);
    await browsed;
    // The login is kept in a file named after the server's URL (the only one there).
    const [file] = readdirSync(join(runeHome, 'mcp-auth'));
    const token = JSON.parse(readFileSync(join(runeHome, 'mcp-auth', file!), 'utf8')).tokens.access_token;

    const apiKey = 'header-key-7f3e9a1c5b2d';
    mock.script([
      { toolCalls: [{ name: 'echo', arguments: { message: `token is ${token}, key is ${apiKey}` } }] },
      { text: 'Done.' },
    ]);
    const withToken = await resource.step('check', {
      source: source([{ ...entry, bearer_token: token, headers: { 'X-Api-Key': apiKey } }]),
    });
    expect(protocolValue(withToken)).toHaveLength(1);
    // The tool ran on the server, which takes no request without the token; even its echo of the
    // token reaches the model redacted…
    expect((await oauth.stats()).toolCalls).toBe(1);
    expect(toolResult()).toEqual(['Echo: token is [REDACTED], key is [REDACTED]']);
    // …and neither the build log nor stdout shows it, though the model's own call carried it.
    expect(withToken.stderr).toContain('→ echo');
    for (const secret of [token, apiKey]) {
      expect(withToken.stderr).not.toContain(secret);
      expect(withToken.stdout).not.toContain(secret);
    }
  });
});
