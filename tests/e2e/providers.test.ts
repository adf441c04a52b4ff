// Every provider through the built binary in pipe mode, against the scripted mock: wire formats,
// retries, the Copilot token refresh, key precedence, and keys kept out of everything printed.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { type MockLlm, startMockLlm } from '../helpers/mock-llm.ts';
import { cleanEnv, requireBinary, runRune, tempDir } from '../helpers/rune.ts';

let mock: MockLlm;
beforeAll(async () => {
  requireBinary();
  mock = await startMockLlm();
});
afterAll(() => mock.close());
beforeEach(() => {
  mock.script([]);
  mock.setFallback(undefined);
  mock.setCopilotToken({});
  mock.requests.length = 0;
  mock.tokenRequests.length = 0;
});

function home(toml = '') {
  const dir = tempDir('rune-e2e-prov-');
  const runeHome = join(dir, '.rune');
  mkdirSync(runeHome, { recursive: true, mode: 0o700 });
  if (toml) writeFileSync(join(runeHome, 'rune.toml'), toml);
  const cwd = tempDir('rune-e2e-prov-cwd-');
  writeFileSync(join(cwd, 'note.txt'), 'the secret number is 42\n');
  return { cwd, env: { ...cleanEnv(dir), RUNE_HOME: runeHome } };
}

function run(args: string[], env: NodeJS.ProcessEnv = {}, toml = '') {
  const h = home(toml);
  return runRune(['--model', 'm', ...args], {
    input: 'what is in note.txt?',
    cwd: h.cwd,
    env: { ...h.env, ...env },
  });
}

describe('providers through the binary', () => {
  it('429 with Retry-After: 1, then success: exactly one retry, exit 0', async () => {
    mock.script([{ status: 429, headers: { 'retry-after': '1' } }, { text: 'after the wait' }]);
    const result = await run(['--base-url', mock.baseUrl, '--api-key', 'sk-test-e2e-000000000000']);
    expect(result.stdout.trim()).toBe('after the wait');
    expect(result.code).toBe(0);
    expect(mock.requests).toHaveLength(2);
  });

  it('every request carries max_tokens from --max-output-tokens', async () => {
    mock.script([{ text: 'ok' }]);
    const result = await run([
      '--base-url',
      mock.baseUrl,
      '--api-key',
      'sk-test-e2e-000000000000',
      '--max-output-tokens',
      '123',
    ]);
    expect(result.code).toBe(0);
    expect(mock.requests[0]!.body.max_tokens).toBe(123);
  });

  it('Gemini: a function call round trip in its wire format', async () => {
    const key = 'AIzaSyE2eTest0123456789abcdefghijklmn';
    mock.script([
      { toolCalls: [{ name: 'read_file', arguments: { path: 'note.txt' } }] },
      { text: 'It says 42.' },
    ]);
    const result = await run(['--base-url', mock.geminiBaseUrl, '--api-key', key]);
    expect(result.stdout.trim()).toBe('It says 42.');
    expect(result.code).toBe(0);
    expect(mock.requests.map((r) => r.kind)).toEqual(['gemini', 'gemini']);
    const first = mock.requests[0]!;
    expect(first.path).toBe('/v1beta/models/m:streamGenerateContent?alt=sse');
    expect(first.body.tools[0].functionDeclarations.map((d: { name: string }) => d.name)).toContain(
      'read_file',
    );
    type Part = { functionResponse?: { name: string; response: unknown } };
    const contents = mock.requests[1]!.body.contents as { role: string; parts: Part[] }[];
    const response = contents.flatMap((c) => c.parts).find((p) => p.functionResponse)?.functionResponse;
    expect(response?.name).toBe('read_file');
    expect(JSON.stringify(response?.response)).toContain('the secret number is 42');
    expect(result.stderr + result.stdout).not.toContain(key);
  });

  it('Anthropic: a tool_use round trip, system prompt apart', async () => {
    const key = 'sk-ant-api03-e2eTest0123456789abcdefgh';
    mock.script([
      { toolCalls: [{ name: 'read_file', arguments: { path: 'note.txt' } }] },
      { text: 'It says 42.' },
    ]);
    const result = await run(['--base-url', mock.baseUrl, '--api-key', key]);
    expect(result.stdout.trim()).toBe('It says 42.');
    expect(result.code).toBe(0);
    expect(mock.requests.map((r) => r.kind)).toEqual(['anthropic', 'anthropic']);
    const body = mock.requests[1]!.body;
    expect(typeof body.system).toBe('string');
    const toolResult = body.messages.at(-1).content.find((b: { type: string }) => b.type === 'tool_result');
    expect(toolResult.content).toContain('the secret number is 42');
  });

  it('Copilot: the token is exchanged, and exchanged again when it expires mid-run', async () => {
    const github = 'ghu_e2eGithubToken0123456789abcdefgh';
    // refresh_in 0: the token is stale by the second model call of the run.
    mock.setCopilotToken({ expiresIn: 61 });
    mock.script([
      { toolCalls: [{ name: 'read_file', arguments: { path: 'note.txt' } }] },
      { text: 'It says 42.' },
    ]);
    const result = await run(['--api-key', github], { RUNE_COPILOT_TOKEN_URL: mock.copilotTokenUrl });
    expect(result.stdout.trim()).toBe('It says 42.');
    expect(result.code).toBe(0);
    expect(mock.tokenRequests).toHaveLength(2);
    const [a, b] = mock.requests.map((r) => r.headers.authorization);
    expect(a).toMatch(/^Bearer tid=mock-copilot-/);
    expect(b).toMatch(/^Bearer tid=mock-copilot-/);
    expect(b).not.toBe(a);
    expect(mock.requests[0]!.headers['copilot-integration-id']).toBe('vscode-chat');
    expect(result.stderr + result.stdout).not.toContain(github);
  });

  it('GITHUB_TOKEN alone is picked up for Copilot, as the README says, and never printed', async () => {
    const github = 'ghu_e2eOnlyGithubToken0123456789abcd';
    mock.script([{ text: 'Copilot here.' }]);
    const result = await run([], { GITHUB_TOKEN: github, RUNE_COPILOT_TOKEN_URL: mock.copilotTokenUrl });
    expect(result.stdout.trim()).toBe('Copilot here.');
    expect(result.code).toBe(0);
    expect(mock.tokenRequests).toHaveLength(1);
    expect(mock.requests[0]!.headers.authorization).toMatch(/^Bearer tid=mock-copilot-/);
    expect(result.stderr + result.stdout).not.toContain(github);
  });

  it('key precedence: RUNE_API_KEY > OPENAI_API_KEY > rune.toml', async () => {
    const toml = 'api_key = "sk-from-file-00000000000"\n';
    mock.setFallback({ text: 'ok' });
    await run(
      ['--base-url', mock.baseUrl],
      { OPENAI_API_KEY: 'sk-from-openai-env-0000', RUNE_API_KEY: 'sk-from-rune-env-00000' },
      toml,
    );
    await run(['--base-url', mock.baseUrl], { OPENAI_API_KEY: 'sk-from-openai-env-0000' }, toml);
    await run(['--base-url', mock.baseUrl], {}, toml);
    expect(mock.requests.map((r) => r.headers.authorization)).toEqual([
      'Bearer sk-from-rune-env-00000',
      'Bearer sk-from-openai-env-0000',
      'Bearer sk-from-file-00000000000',
    ]);
  });

  it('at a --base-url without a key no Authorization header is sent, as the README says', async () => {
    mock.setFallback({ text: 'ok' });
    const result = await run(['--base-url', mock.baseUrl]);
    expect(result.code).toBe(0);
    expect(mock.requests).toHaveLength(1);
    expect(mock.requests[0]!.headers.authorization).toBeUndefined();
  });

  it("the README's placeholder key (sk-…) is refused at once: exit 7, no request, no retries", async () => {
    mock.setFallback({ text: 'never' });
    const result = await run(['--base-url', mock.baseUrl], {}, 'api_key = "sk-…"\n');
    expect(result.code).toBe(7);
    expect(result.stderr).toMatch(/the API key from config file cannot be sent: character 4 is "…"/);
    expect(result.stderr).not.toMatch(/Invalid character in header|retry/i);
    expect(mock.requests).toHaveLength(0);
  });

  it('no key and no base URL: exit 7 with what to set', async () => {
    const result = await run([]);
    expect(result.code).toBe(7);
    expect(result.stderr).toContain('RUNE_API_KEY');
    expect(result.stderr).toContain('--api-key');
    expect(result.stdout).toBe('');
  });

  it('a refused key exits 7 naming the provider, and the key echoed by the server is nowhere', async () => {
    const key = 'sk-ant-api03-refused0123456789abcdefg';
    mock.script([{ status: 401, text: `invalid x-api-key ${key}` }]);
    const result = await run(['--base-url', mock.baseUrl, '--api-key', key, '--verbose']);
    expect(result.code).toBe(7);
    expect(result.stderr).toContain('Anthropic');
    expect(result.stderr + result.stdout).not.toContain(key);
  });
});
