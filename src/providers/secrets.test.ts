// No key or token may surface in any error a provider raises, whatever the server echoes back.
import { describe, expect, it } from 'vitest';
import { type MockLlm, useMockLlm } from '../../tests/helpers/mock-llm.ts';
import type { ProviderName } from '../config/schema.ts';
import { isRuneError } from '../core/errors.ts';
import { createProvider } from './index.ts';
import { memoryLogger, testConfig } from './test-support.ts';
import type { ChatRequest } from './types.ts';

const mock = useMockLlm();

// Keys shaped unlike any well-known format, so only registration (not the shape regex) can hide them.
const CASES: [ProviderName, string, (m: MockLlm) => string][] = [
  ['openai', 'plainkey-openai-0001', (m) => m.baseUrl],
  ['openrouter', 'plainkey-openrouter-0002', (m) => m.baseUrl],
  ['anthropic', 'plainkey-anthropic-0003', (m) => m.baseUrl],
  ['gemini', 'plainkey-gemini-0004', (m) => m.geminiBaseUrl],
];

const request: ChatRequest = {
  model: 'm',
  messages: [{ role: 'user', content: 'hi' }],
  tools: [],
  maxOutputTokens: 10,
};

function everything(error: unknown): string {
  const parts: string[] = [];
  let current: unknown = error;
  for (let depth = 0; current && depth < 5; depth += 1) {
    const e = current as Error & { details?: readonly string[] };
    parts.push(e.message ?? String(e), ...(e.details ?? []));
    current = e.cause;
  }
  return parts.join('\n');
}

describe.each(CASES)('%s errors never show the key', (provider, key, base) => {
  const make = (logger = memoryLogger()) =>
    createProvider({
      config: testConfig({ provider, api_key: key, base_url: base(mock) }),
      apiKeyOrigin: 'flag',
      env: {},
      logger,
      sleep: async () => {},
    });

  it.each([401, 403, 400, 500])('HTTP %i whose body echoes the key', async (status) => {
    mock.setFallback({ status, text: `you sent ${key} which is wrong`, headers: { 'retry-after': '0' } });
    const logger = memoryLogger();
    const error = await make(logger)
      .complete(request)
      .catch((e: unknown) => e);
    expect(isRuneError(error)).toBe(true);
    expect(mock.requests.length).toBeGreaterThan(0);
    expect(everything(error)).toContain('which is wrong');
    expect(everything(error)).not.toContain(key);
    expect(logger.lines.join('')).not.toContain(key);
  });
});

describe('copilot errors never show the GitHub token or the Copilot token', () => {
  it('a chat failure after the exchange', async () => {
    const github = 'plaingithub-token-0005';
    const copilotToken = 'plaincopilot-token-0006';
    mock.setCopilotToken({ token: copilotToken });
    mock.setFallback({ status: 400, text: `bad: ${github} ${copilotToken}` });
    const error = await createProvider({
      config: testConfig({ provider: 'copilot', api_key: github }),
      apiKeyOrigin: 'flag',
      env: { RUNE_COPILOT_TOKEN_URL: mock.copilotTokenUrl },
      logger: memoryLogger(),
      sleep: async () => {},
    })
      .complete(request)
      .catch((e: unknown) => e);
    expect(isRuneError(error) && error.code).toBe('PROVIDER_ERROR');
    expect(everything(error)).toContain('bad:');
    expect(everything(error)).not.toContain(github);
    expect(everything(error)).not.toContain(copilotToken);
  });
});
