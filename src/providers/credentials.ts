// Which provider to talk to, with which key, at which endpoint: a pure function of the merged
// config, the layer its api_key came from and the environment. Keys: flag > RUNE_API_KEY >
// the provider's own variable > config file. The wire is --provider, else the key's prefix, else
// OpenAI's: a --base-url moves the endpoint of that wire and never changes it, so an `sk-ant-` key
// at a gateway still speaks Anthropic's Messages API (`--provider openai` says otherwise).
import type { ProviderName } from '../config/schema.ts';
import { RuneError } from '../core/errors.ts';

export type KeyOrigin = 'file' | 'env' | 'flag';

/** Each provider's own variables, most specific first. */
export const PROVIDER_ENV: Record<ProviderName, readonly string[]> = {
  openai: ['OPENAI_API_KEY'],
  openrouter: ['OPENROUTER_API_KEY'],
  copilot: ['COPILOT_GITHUB_TOKEN', 'GH_COPILOT_TOKEN', 'GITHUB_TOKEN', 'GH_TOKEN'],
  gemini: ['GEMINI_API_KEY', 'GOOGLE_API_KEY'],
  anthropic: ['ANTHROPIC_API_KEY'],
};

// Scanned in this order when nothing names the provider (no key, no --base-url, no --provider).
// The generic GitHub variables come last: CI sets GITHUB_TOKEN for other work, so any model key
// wins over it; alone, it is what the README promises for Copilot, and it goes only to GitHub's own
// token exchange (a token GitHub refuses ends with exit 7 naming GITHUB_TOKEN as its source).
export const AUTO_ENV: readonly [string, ProviderName][] = [
  ['OPENAI_API_KEY', 'openai'],
  ['ANTHROPIC_API_KEY', 'anthropic'],
  ['GEMINI_API_KEY', 'gemini'],
  ['GOOGLE_API_KEY', 'gemini'],
  ['OPENROUTER_API_KEY', 'openrouter'],
  ['COPILOT_GITHUB_TOKEN', 'copilot'],
  ['GH_COPILOT_TOKEN', 'copilot'],
  ['GITHUB_TOKEN', 'copilot'],
  ['GH_TOKEN', 'copilot'],
];

/** Every variable a provider key can come from: registered as secrets before anything prints. */
export const KEY_VARIABLES: readonly string[] = [
  'RUNE_API_KEY',
  ...new Set(Object.values(PROVIDER_ENV).flat()),
];

export const PROVIDER_LABELS: Record<ProviderName, string> = {
  openai: 'OpenAI-compatible provider',
  openrouter: 'OpenRouter',
  copilot: 'GitHub Copilot',
  gemini: 'Gemini',
  anthropic: 'Anthropic',
};

/** The provider a key's prefix names, or undefined for keys without a known prefix. */
export function providerFromKey(key: string): ProviderName | undefined {
  if (/^gh[up]_/.test(key) || key.startsWith('github_pat_')) return 'copilot';
  if (key.startsWith('AIza')) return 'gemini';
  if (key.startsWith('sk-or-')) return 'openrouter';
  if (key.startsWith('sk-ant-')) return 'anthropic';
  if (key.startsWith('sk-')) return 'openai';
  return undefined;
}

export interface Credentials {
  provider: ProviderName;
  /** Undefined only for an OpenAI-compatible server at a custom base URL (llama.cpp, Ollama). */
  apiKey: string | undefined;
  /** Where the key came from, for messages: `--api-key`, `RUNE_API_KEY`, `OPENAI_API_KEY`, `config file`. */
  keySource: string | undefined;
  baseUrl: string | undefined;
}

export interface CredentialInput {
  provider?: ProviderName | undefined;
  apiKey?: string | undefined;
  baseUrl?: string | undefined;
  /** The config layer api_key came from; undefined when unknown (then treated as explicit). */
  apiKeyOrigin?: KeyOrigin | undefined;
  /** How the user passed a key given as a flag: `--api-key`, or `source.api_key` in a Concourse resource. */
  apiKeyFlag?: string | undefined;
  env: NodeJS.ProcessEnv;
}

export function resolveCredentials(input: CredentialInput): Credentials {
  const credentials = pickCredentials(input);
  const problem = credentials.apiKey === undefined ? undefined : keyProblem(credentials.apiKey);
  if (problem) {
    // Refused here, once: sent, it would fail in the HTTP layer ("Invalid character in header
    // content") and be retried as if the network had failed.
    throw new RuneError(
      'PROVIDER_AUTH',
      `the API key from ${credentials.keySource ?? 'the configuration'} cannot be sent: ${problem}; set the real key there`,
    );
  }
  return credentials;
}

/**
 * Why a key cannot be a key, or undefined. HTTP header values are visible ASCII; a key with `…` or
 * another non-ASCII character is a placeholder copied from an example, and one with a space or a
 * line break was pasted with more than the key. The key itself is never quoted.
 */
export function keyProblem(key: string): string | undefined {
  if (key.trim() === '') return 'it is empty';
  const bad = [...key].findIndex((ch) => ch < '!' || ch > '~');
  if (bad === -1) return undefined;
  const ch = [...key][bad] ?? '';
  const code = ch.codePointAt(0) ?? 0;
  const shown =
    code > 0x7e && code !== 0xa0
      ? `"${ch}" (U+${code.toString(16).toUpperCase().padStart(4, '0')})`
      : `U+${code.toString(16).toUpperCase().padStart(4, '0')}`;
  const hint =
    ch === '…'
      ? ', as in the placeholder sk-… of an example'
      : code <= 0x20
        ? ', a space or line break pasted with it'
        : '';
  return `character ${bad + 1} is ${shown}, which an HTTP header cannot carry${hint}`;
}

function pickCredentials(input: CredentialInput): Credentials {
  const { env, baseUrl } = input;
  const origin = input.apiKey === undefined ? undefined : (input.apiKeyOrigin ?? inferOrigin(input));
  const explicitKey = origin === 'flag' || origin === 'env' ? input.apiKey : undefined;
  const fileKey = origin === 'file' ? input.apiKey : undefined;
  const explicitSource = origin === 'flag' ? (input.apiKeyFlag ?? '--api-key') : 'RUNE_API_KEY';

  if (explicitKey !== undefined) {
    const provider = input.provider ?? providerFromKey(explicitKey) ?? 'openai';
    return { provider, apiKey: explicitKey, keySource: explicitSource, baseUrl };
  }

  if (input.provider) {
    const fromEnv = firstEnv(env, PROVIDER_ENV[input.provider]);
    if (fromEnv) return { provider: input.provider, apiKey: fromEnv.value, keySource: fromEnv.name, baseUrl };
    if (fileKey) return { provider: input.provider, apiKey: fileKey, keySource: 'config file', baseUrl };
    if (input.provider === 'openai' && baseUrl) {
      return { provider: 'openai', apiKey: undefined, keySource: undefined, baseUrl };
    }
    return noKey(input.provider);
  }

  if (fileKey) {
    // The file's key names the provider; that provider's own variable, when set, is newer.
    const provider = providerFromKey(fileKey) ?? 'openai';
    const fromEnv = firstEnv(
      env,
      PROVIDER_ENV[provider].filter((name) => name !== 'GITHUB_TOKEN' && name !== 'GH_TOKEN'),
    );
    if (fromEnv) return { provider, apiKey: fromEnv.value, keySource: fromEnv.name, baseUrl };
    return { provider, apiKey: fileKey, keySource: 'config file', baseUrl };
  }

  if (baseUrl) {
    // A custom endpoint speaks the OpenAI wire unless told otherwise; its key, if any, is OPENAI_API_KEY.
    const fromEnv = firstEnv(env, PROVIDER_ENV.openai);
    return { provider: 'openai', apiKey: fromEnv?.value, keySource: fromEnv?.name, baseUrl };
  }

  for (const [name, provider] of AUTO_ENV) {
    const value = env[name];
    if (value) return { provider, apiKey: value, keySource: name, baseUrl };
  }
  return noKey(undefined);
}

function inferOrigin(input: CredentialInput): KeyOrigin {
  return input.env.RUNE_API_KEY !== undefined && input.env.RUNE_API_KEY === input.apiKey ? 'env' : 'flag';
}

function firstEnv(
  env: NodeJS.ProcessEnv,
  names: readonly string[],
): { name: string; value: string } | undefined {
  for (const name of names) {
    const value = env[name];
    if (value) return { name, value };
  }
  return undefined;
}

// The whole hint is in the message: callers that keep only the message (the run result) still show it.
function noKey(provider: ProviderName | undefined): never {
  const own = provider
    ? PROVIDER_ENV[provider].join(', ')
    : 'OPENAI_API_KEY, ANTHROPIC_API_KEY, GEMINI_API_KEY, …';
  const set = `set --api-key, RUNE_API_KEY, ${own} or api_key in rune.toml`;
  throw new RuneError(
    'PROVIDER_AUTH',
    provider
      ? `no API key for ${PROVIDER_LABELS[provider]}: ${set}`
      : `no API key and no base URL configured: ${set}, or point --base-url (RUNE_BASE_URL) at an OpenAI-compatible server`,
  );
}
