// createProvider: picks the provider from the config, the key and the environment, registers every
// secret at once, and wraps the provider's wire in the one retry policy (retry.ts).
import { configOrigin, settingName } from '../config/load.ts';
import type { ProviderName, RuneConfig } from '../config/schema.ts';
import type { Logger } from '../core/logger.ts';
import { registerSecret } from '../core/redact.ts';
import { anthropicAttempt } from './anthropic.ts';
import { COPILOT_API, COPILOT_HEADERS, COPILOT_TOKEN_URL, CopilotTokenSource } from './copilot.ts';
import { type KeyOrigin, resolveCredentials } from './credentials.ts';
import { ProviderFailure } from './failure.ts';
import { geminiAttempt } from './gemini.ts';
import { type FetchLike, httpFetch } from './http-fetch.ts';
import { openAiAttempt } from './openai.ts';
import { type Attempt, type RetryPolicy, withRetries } from './retry.ts';
import type { Provider } from './types.ts';

export { PROVIDER_ENV, PROVIDER_LABELS, providerFromKey, resolveCredentials } from './credentials.ts';
export type * from './types.ts';

export const DEFAULT_BASE_URLS: Record<ProviderName, string> = {
  openai: 'https://api.openai.com/v1',
  openrouter: 'https://openrouter.ai/api/v1',
  copilot: COPILOT_API,
  gemini: 'https://generativelanguage.googleapis.com/v1beta',
  anthropic: 'https://api.anthropic.com/v1',
};

export interface CreateProviderOptions {
  config: RuneConfig;
  env: NodeJS.ProcessEnv;
  logger: Logger;
  /** Default: httpFetch (node:http), not the global fetch, whose undici start-up pipe mode pays for. */
  fetch?: FetchLike;
  now?: () => number;
  /** The layer config.api_key came from; read from loadConfig's result when not given. */
  apiKeyOrigin?: KeyOrigin;
  /** Tests shorten the waits. */
  retryPolicy?: RetryPolicy;
  sleep?: (ms: number, signal: AbortSignal | undefined) => Promise<void>;
}

export interface ProviderInfo {
  provider: ProviderName;
  baseUrl: string;
  /** Where the key came from (`--api-key`, `RUNE_API_KEY`, `OPENAI_API_KEY`, `config file`), never the key. */
  keySource: string | undefined;
}

/**
 * Which provider, key and endpoint a config means, as createProvider resolves them; throws the
 * PROVIDER_AUTH error a run would end with when there is no key. Callers that want that answer
 * before anything else (a Concourse step, before its sandbox summary) ask here.
 */
export function credentialsFor(
  config: RuneConfig,
  env: NodeJS.ProcessEnv,
  apiKeyOrigin?: KeyOrigin,
): ReturnType<typeof resolveCredentials> {
  return resolveCredentials({
    provider: config.provider,
    apiKey: config.api_key,
    baseUrl: config.base_url,
    apiKeyOrigin: apiKeyOrigin ?? configOrigin(config, 'api_key'),
    apiKeyFlag: settingName(config, 'api_key', '--api-key'),
    env,
  });
}

export function createProvider(options: CreateProviderOptions): Provider & { readonly info: ProviderInfo } {
  const { config, env, logger } = options;
  const fetchImpl = options.fetch ?? httpFetch;
  const now = options.now ?? Date.now;
  // Registered before anything can fail, so even the earliest error message is scrubbed.
  registerSecret(config.api_key);
  const credentials = credentialsFor(config, env, options.apiKeyOrigin);
  registerSecret(credentials.apiKey);
  const { provider, apiKey } = credentials;
  const baseUrl = trimSlash(credentials.baseUrl ?? DEFAULT_BASE_URLS[provider]);
  const timeoutMs = config.request_timeout_secs * 1000;
  logger.debug('provider.chosen', { provider, baseUrl, keySource: credentials.keySource });

  let attempt: Attempt;
  switch (provider) {
    case 'openai':
      attempt = openAiAttempt({
        endpoint: async () => ({ baseUrl, apiKey }),
        timeoutMs,
        fetch: fetchImpl,
        now,
      });
      break;
    case 'openrouter':
      attempt = openAiAttempt({
        // OpenRouter's attribution headers: optional, but they name the app on its dashboards.
        endpoint: async () => ({
          baseUrl,
          apiKey: apiKey ?? '',
          headers: { 'HTTP-Referer': 'https://github.com/rune-agent/rune', 'X-Title': 'rune' },
        }),
        timeoutMs,
        fetch: fetchImpl,
        now,
      });
      break;
    case 'copilot': {
      const tokens = new CopilotTokenSource({
        githubToken: apiKey ?? '',
        tokenUrl: env.RUNE_COPILOT_TOKEN_URL || COPILOT_TOKEN_URL,
        fetch: fetchImpl,
        now,
        logger,
      });
      let haveToken = false;
      const chat = openAiAttempt({
        endpoint: async (signal) => {
          haveToken = false;
          const token = await tokens.get(signal);
          haveToken = true;
          return {
            baseUrl: trimSlash(credentials.baseUrl ?? token.apiBase ?? COPILOT_API),
            apiKey: token.token,
            headers: COPILOT_HEADERS,
          };
        },
        timeoutMs,
        fetch: fetchImpl,
        now,
      });
      // A token revoked before its time: exchange once more at once rather than fail the run.
      attempt = async (request, signal) => {
        try {
          return await chat(request, signal);
        } catch (error) {
          // A refusal of the exchange itself is final; only the chat endpoint's refusal is retried.
          if (!(error instanceof ProviderFailure) || error.status !== 401 || !haveToken) throw error;
          tokens.invalidate();
          return chat(request, signal);
        }
      };
      break;
    }
    case 'gemini':
      attempt = geminiAttempt({ baseUrl, apiKey: apiKey ?? '', fetch: fetchImpl, now });
      break;
    case 'anthropic':
      attempt = anthropicAttempt({ baseUrl, apiKey: apiKey ?? '', fetch: fetchImpl, now });
      break;
  }

  const info: ProviderInfo = { provider, baseUrl, keySource: credentials.keySource };
  return {
    name: provider,
    // Copilot takes images only from vision models behind a header of its own: not sent there.
    images: provider !== 'copilot',
    info,
    complete: (request) =>
      withRetries(attempt, request, {
        provider,
        keySource: credentials.keySource,
        providerSetting: settingName(config, 'provider', '--provider'),
        modelSetting: settingName(config, 'model', '--model'),
        baseUrlSetting: settingName(config, 'base_url', '--base-url'),
        timeoutMs,
        logger,
        now,
        ...(options.retryPolicy ? { policy: options.retryPolicy } : {}),
        ...(options.sleep ? { sleep: options.sleep } : {}),
      }),
  };
}

function trimSlash(url: string): string {
  return url.replace(/\/+$/, '');
}
