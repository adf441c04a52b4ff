import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config/load.ts';
import { isRuneError } from '../core/errors.ts';
import { AUTO_ENV, KEY_VARIABLES, providerFromKey, resolveCredentials } from './credentials.ts';
import { createProvider } from './index.ts';
import { memoryLogger } from './test-support.ts';

describe('providerFromKey', () => {
  it.each([
    ['ghu_abcdef', 'copilot'],
    ['ghp_abcdef', 'copilot'],
    ['github_pat_abcdef', 'copilot'],
    ['AIzaSyAbc', 'gemini'],
    ['sk-or-v1-abc', 'openrouter'],
    ['sk-ant-api03-abc', 'anthropic'],
    ['sk-proj-abc', 'openai'],
    ['sk-abc', 'openai'],
    ['local-key', undefined],
  ])('%s → %s', (key, provider) => {
    expect(providerFromKey(key)).toBe(provider);
  });
});

describe('resolveCredentials', () => {
  it('a flag key wins over RUNE_API_KEY-less provider variables, and its prefix picks the provider', () => {
    const result = resolveCredentials({
      apiKey: 'sk-ant-flag',
      apiKeyOrigin: 'flag',
      env: { OPENAI_API_KEY: 'sk-env', ANTHROPIC_API_KEY: 'sk-ant-env' },
    });
    expect(result).toEqual({
      provider: 'anthropic',
      apiKey: 'sk-ant-flag',
      keySource: '--api-key',
      baseUrl: undefined,
    });
  });

  it('the provider setting overrides the prefix', () => {
    expect(
      resolveCredentials({ apiKey: 'sk-x', apiKeyOrigin: 'env', provider: 'openrouter', env: {} }).provider,
    ).toBe('openrouter');
  });

  it("a provider's own variable beats the config file's key", () => {
    const result = resolveCredentials({
      apiKey: 'sk-ant-file',
      apiKeyOrigin: 'file',
      env: { ANTHROPIC_API_KEY: 'sk-ant-newer' },
    });
    expect(result).toMatchObject({
      provider: 'anthropic',
      apiKey: 'sk-ant-newer',
      keySource: 'ANTHROPIC_API_KEY',
    });
  });

  it('falls back to the file key when no variable is set', () => {
    const result = resolveCredentials({ apiKey: 'AIzaFile', apiKeyOrigin: 'file', env: {} });
    expect(result).toMatchObject({ provider: 'gemini', apiKey: 'AIzaFile', keySource: 'config file' });
  });

  it('with an explicit provider, reads that provider’s variables (GITHUB_TOKEN for copilot)', () => {
    const result = resolveCredentials({
      provider: 'copilot',
      env: { GITHUB_TOKEN: 'ghs_ci', OPENAI_API_KEY: 'sk-o' },
    });
    expect(result).toMatchObject({ provider: 'copilot', apiKey: 'ghs_ci', keySource: 'GITHUB_TOKEN' });
  });

  it('GITHUB_TOKEN alone is a Copilot key, as the README says; any model key wins over it', () => {
    expect(resolveCredentials({ env: { GITHUB_TOKEN: 'ghu_x' } })).toMatchObject({
      provider: 'copilot',
      keySource: 'GITHUB_TOKEN',
    });
    expect(resolveCredentials({ env: { GH_TOKEN: 'ghu_x' } }).keySource).toBe('GH_TOKEN');
    expect(
      resolveCredentials({ env: { GITHUB_TOKEN: 'ghs_ci', ANTHROPIC_API_KEY: 'sk-ant-x' } }),
    ).toMatchObject({ provider: 'anthropic', keySource: 'ANTHROPIC_API_KEY' });
    // A base URL is an OpenAI-compatible server: CI's GITHUB_TOKEN is not sent there.
    expect(resolveCredentials({ baseUrl: 'http://x/v1', env: { GITHUB_TOKEN: 'ghs_ci' } }).apiKey).toBe(
      undefined,
    );
  });

  it.each([
    // key, --provider, provider used: the key's prefix names the wire, --base-url only moves it
    ['sk-ant-api03-x', undefined, 'anthropic'],
    ['AIzaSyX', undefined, 'gemini'],
    ['ghu_x', undefined, 'copilot'],
    ['github_pat_x', undefined, 'copilot'],
    ['sk-or-v1-x', undefined, 'openrouter'],
    ['sk-proj-x', undefined, 'openai'],
    ['local-key', undefined, 'openai'],
    ['sk-ant-api03-x', 'openai', 'openai'],
    ['local-key', 'anthropic', 'anthropic'],
  ] as const)('at a --base-url, key %s with --provider %s speaks %s', (key, provider, expected) => {
    const result = resolveCredentials({
      apiKey: key,
      apiKeyOrigin: 'flag',
      provider,
      baseUrl: 'http://gateway.example/v1',
      env: {},
    });
    expect(result).toMatchObject({ provider: expected, baseUrl: 'http://gateway.example/v1' });
  });

  it.each([
    ['sk-…', /character 4 is "…" \(U\+2026\), which an HTTP header cannot carry, as in the placeholder/],
    ['sk-abc\n', /character 7 is U\+000A.*a space or line break/],
    ['sk-ab cd', /character 6 is U\+0020/],
    ['sk-ключ', /character 4 is "к"/],
  ])('refuses the key %j before any request, naming where it came from, never the key', (key, message) => {
    let error: unknown;
    try {
      resolveCredentials({ apiKey: key, apiKeyOrigin: 'file', env: {} });
    } catch (caught) {
      error = caught;
    }
    expect(isRuneError(error) && error.code).toBe('PROVIDER_AUTH');
    const text = (error as Error).message;
    expect(text).toMatch(/^the API key from config file cannot be sent: /);
    expect(text).toMatch(message);
    expect(text).toMatch(/set the real key there$/);
    if (key.length > 5) expect(text).not.toContain(key.trim());
  });

  it('every variable a key is read from is registered as a secret', () => {
    for (const name of [
      'RUNE_API_KEY',
      'COPILOT_GITHUB_TOKEN',
      'GH_COPILOT_TOKEN',
      'GITHUB_TOKEN',
      'GH_TOKEN',
      'GOOGLE_API_KEY',
    ]) {
      expect(KEY_VARIABLES).toContain(name);
    }
    for (const [name] of AUTO_ENV) expect(KEY_VARIABLES).toContain(name);
  });

  it('scans the provider variables when nothing else is configured', () => {
    expect(resolveCredentials({ env: { GEMINI_API_KEY: 'AIzaEnv' } })).toMatchObject({
      provider: 'gemini',
      keySource: 'GEMINI_API_KEY',
    });
  });

  it('a custom base URL without a key is an OpenAI-compatible server (llama.cpp, Ollama)', () => {
    expect(resolveCredentials({ baseUrl: 'http://127.0.0.1:8080/v1', env: {} })).toEqual({
      provider: 'openai',
      apiKey: undefined,
      keySource: undefined,
      baseUrl: 'http://127.0.0.1:8080/v1',
    });
  });

  it('a custom base URL with an unknown key shape is OpenAI-compatible too', () => {
    expect(
      resolveCredentials({ apiKey: 'whatever', apiKeyOrigin: 'flag', baseUrl: 'http://x/v1', env: {} })
        .provider,
    ).toBe('openai');
  });

  it('no key and no base URL: PROVIDER_AUTH naming what to set', () => {
    let error: unknown;
    try {
      resolveCredentials({ env: {} });
    } catch (caught) {
      error = caught;
    }
    expect(isRuneError(error) && error.code).toBe('PROVIDER_AUTH');
    const text = (error as Error).message;
    expect(text).toContain('RUNE_API_KEY');
    expect(text).toContain('--api-key');
    expect(text).toContain('--base-url');
  });

  it('an explicit provider without a key names its own variables', () => {
    expect(() => resolveCredentials({ provider: 'anthropic', env: {} })).toThrow(/Anthropic/);
  });
});

describe('key precedence through loadConfig', () => {
  const file = 'api_key = "sk-ant-from-file-0000"\n';
  const load = (env: NodeJS.ProcessEnv, flags = {}) =>
    loadConfig({ env, flags, file: '/virtual/rune.toml', readFile: () => file }).config;
  const keySource = (env: NodeJS.ProcessEnv, flags = {}) =>
    createProvider({ config: load(env, flags), env, logger: memoryLogger() }).info.keySource;

  it('flag > RUNE_API_KEY > provider variable > file', () => {
    const env = { RUNE_API_KEY: 'sk-ant-rune-env', ANTHROPIC_API_KEY: 'sk-ant-provider-env' };
    expect(keySource(env, { api_key: 'sk-ant-flag-0000' })).toBe('--api-key');
    expect(keySource(env)).toBe('RUNE_API_KEY');
    expect(keySource({ ANTHROPIC_API_KEY: 'sk-ant-provider-env' })).toBe('ANTHROPIC_API_KEY');
    expect(keySource({})).toBe('config file');
  });
});
