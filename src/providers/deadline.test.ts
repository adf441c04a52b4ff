// Every wire format's request, and Copilot's token exchange, ends at request_timeout_secs against a
// server that accepts the connection and never answers, with the garbage collector running and a
// caller's signal present (the `AbortSignal.any` shape Node 20 loses under GC).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { whileCollecting } from '../../tests/helpers/gc.ts';
import { type SilentServer, startSilentServer } from '../../tests/helpers/silent-server.ts';
import type { ProviderName } from '../config/schema.ts';
import { isRuneError } from '../core/errors.ts';
import { createProvider } from './index.ts';
import { memoryLogger, testConfig } from './test-support.ts';

let silent: SilentServer;
beforeAll(async () => {
  silent = await startSilentServer();
});
afterAll(() => silent.close());

const ONE_TRY = { maxAttempts: 1, baseDelayMs: 1, maxDelayMs: 1, maxRetryAfterMs: 1 };

const wires: [string, ProviderName, string, (url: string) => NodeJS.ProcessEnv][] = [
  ['OpenAI (the openai SDK)', 'openai', 'sk-test-deadline-openai-0123', () => ({})],
  ['Anthropic (node:http)', 'anthropic', 'sk-ant-test-deadline-0123', () => ({})],
  ['Gemini (node:http)', 'gemini', 'AIzaTestDeadline0123456789', () => ({})],
  [
    'Copilot token exchange',
    'copilot',
    'ghu_testDeadline0123456789abcdef',
    (url) => ({ RUNE_COPILOT_TOKEN_URL: `${url}/token` }),
  ],
];

describe('a model request on a silent server, under forced GC', () => {
  it.each(wires)('%s ends at request_timeout_secs', async (_name, provider, apiKey, env) => {
    const before = silent.accepted;
    const created = createProvider({
      config: testConfig({ provider, base_url: silent.url, api_key: apiKey, request_timeout_secs: 1 }),
      apiKeyOrigin: 'flag',
      env: env(silent.url),
      logger: memoryLogger(),
      retryPolicy: ONE_TRY,
    });
    const caller = new AbortController();
    const error = await whileCollecting(
      created
        .complete({
          model: 'm',
          messages: [{ role: 'user', content: 'hi' }],
          tools: [],
          maxOutputTokens: 10,
          signal: caller.signal,
        })
        .catch((thrown: unknown) => thrown),
    );
    expect(isRuneError(error) && error.code, String(error)).toBe('PROVIDER_ERROR');
    expect((error as Error).message).toMatch(/no answer within 1 s/);
    expect(silent.accepted).toBeGreaterThan(before);
  });
});
