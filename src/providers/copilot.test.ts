import { describe, expect, it } from 'vitest';
import { useMockLlm } from '../../tests/helpers/mock-llm.ts';
import { isRuneError } from '../core/errors.ts';
import { redact } from '../core/redact.ts';
import { createProvider } from './index.ts';
import { memoryLogger, testConfig } from './test-support.ts';
import type { ChatRequest } from './types.ts';

const mock = useMockLlm();

const GH = 'ghu_testGithubToken0123456789abcdef';
const request: ChatRequest = {
  model: 'gpt-4o',
  messages: [{ role: 'user', content: 'hi' }],
  tools: [],
  maxOutputTokens: 100,
};

function copilot(now: () => number = Date.now) {
  return createProvider({
    config: testConfig({ api_key: GH }),
    apiKeyOrigin: 'flag',
    env: { RUNE_COPILOT_TOKEN_URL: mock.copilotTokenUrl },
    logger: memoryLogger(),
    now,
    sleep: async () => {},
  });
}

describe('GitHub Copilot provider', () => {
  it('exchanges the GitHub token, then chats at the endpoint the token names, with the Copilot headers', async () => {
    mock.script([{ text: 'hi from copilot' }]);
    const provider = copilot();
    expect(provider.name).toBe('copilot');
    const result = await provider.complete(request);
    expect(result.content).toBe('hi from copilot');

    expect(mock.tokenRequests).toHaveLength(1);
    expect(mock.tokenRequests[0]!.headers.authorization).toBe(`token ${GH}`);
    const chat = mock.requests[0]!;
    expect(chat.path).toBe('/chat/completions');
    expect(chat.headers.authorization).toMatch(/^Bearer tid=mock-copilot-\d+;/);
    expect(chat.headers.authorization).not.toContain(GH);
    expect(chat.headers['editor-version']).toMatch(/\S/);
    expect(chat.headers['copilot-integration-id']).toBe('vscode-chat');
    expect(chat.body.max_tokens).toBe(100);
  });

  it('reuses a valid token and exchanges again when it expires mid-run', async () => {
    let clock = Date.now();
    mock.setCopilotToken({ expiresIn: 600 });
    mock.script([{ text: 'one' }, { text: 'two' }, { text: 'three' }]);
    const provider = copilot(() => clock);

    await provider.complete(request);
    clock += 60_000; // well inside the token's life
    await provider.complete(request);
    expect(mock.tokenRequests).toHaveLength(1);

    clock += 600_000; // past expires_at
    await provider.complete(request);
    expect(mock.tokenRequests).toHaveLength(2);
    const [first, second, third] = mock.requests.map((r) => r.headers.authorization);
    expect(second).toBe(first);
    expect(third).not.toBe(first);
  });

  it('exchanges again at once when Copilot refuses a token before its time', async () => {
    mock.script([{ status: 401, text: 'token expired' }, { text: 'after refresh' }]);
    const result = await copilot().complete(request);
    expect(result.content).toBe('after refresh');
    expect(mock.tokenRequests).toHaveLength(2);
  });

  it('registers the Copilot token as a secret', async () => {
    mock.setCopilotToken({ token: 'tid=copilot-secret-token-xyz;exp=1' });
    mock.script([{ text: 'ok' }]);
    await copilot().complete(request);
    expect(redact('token is tid=copilot-secret-token-xyz;exp=1')).not.toContain('copilot-secret-token-xyz');
  });

  it('a refused GitHub token is PROVIDER_AUTH naming Copilot, not the token', async () => {
    mock.setCopilotToken({ status: 401, body: { message: `Bad credentials for ${GH}` } });
    const error = await copilot()
      .complete(request)
      .catch((e: unknown) => e);
    expect(isRuneError(error) && error.code).toBe('PROVIDER_AUTH');
    const text = [(error as Error).message, ...(isRuneError(error) ? error.details : [])].join('\n');
    expect(text).toContain('GitHub Copilot');
    expect(text).toContain('token exchange');
    expect(text).not.toContain(GH);
    expect(mock.requests).toHaveLength(0);
    expect(mock.tokenRequests).toHaveLength(1);
  });
});
