import { describe, expect, it } from 'vitest';
import { isRuneError } from '../core/errors.ts';
import { parseRequest } from './schema.ts';

function usageError(run: () => unknown): string {
  try {
    run();
  } catch (error) {
    expect(isRuneError(error) && error.code).toBe('USAGE');
    const message = (error as Error).message;
    expect(message).not.toContain('\n');
    return message;
  }
  throw new Error('expected a USAGE error');
}

describe('parseRequest', () => {
  it('accepts a null source and a missing version', () => {
    expect(parseRequest('check', '{"source": null}')).toEqual({ source: null, version: null, params: {} });
  });

  it('reads source, version and params', () => {
    const request = parseRequest(
      'in',
      JSON.stringify({
        source: { prompt: 'hi', policy: { mode: 'allowlist' } },
        version: { ref: 'x' },
        params: { skip_download: true },
      }),
    );
    expect(request.source?.prompt).toBe('hi');
    expect(request.version).toEqual({ ref: 'x' });
    expect(request.params).toEqual({ skip_download: true });
  });

  it.each([
    ['', /stdin is empty/],
    ['{"source": ', /not valid JSON/],
    [
      '{"source": {"api_key": "sk-live-1234567890"',
      /^check: stdin is not valid JSON \(at character \d+\);(?!.*sk-live)/,
    ],
    ['[1]', /must be a JSON object/],
  ])('refuses %j with one line', (text, pattern) => {
    expect(usageError(() => parseRequest('check', text))).toMatch(pattern);
  });

  it('lists every unknown key, in source, params and nested tables', () => {
    const message = usageError(() =>
      parseRequest(
        'out',
        JSON.stringify({
          source: { prompt: 'x', promt: 'y', colour: 1, policy: { mode: 'allowlist', allow_all: true } },
          params: { prompt: 'p', extra: 1 },
        }),
      ),
    );
    expect(message).toContain('source.promt');
    expect(message).toContain('source.colour');
    expect(message).toContain('source.policy.allow_all');
    expect(message).toContain('params.extra');
  });

  it('refuses a version with a non-string value, and an empty version', () => {
    expect(usageError(() => parseRequest('check', '{"source":{},"version":{"ref":1}}'))).toMatch(
      /version\.ref: must be a string/,
    );
    expect(usageError(() => parseRequest('check', '{"source":{},"version":{}}'))).toMatch(
      /version: must not be empty/,
    );
  });

  it('does not echo values, which may be secrets', () => {
    const message = usageError(() =>
      parseRequest(
        'check',
        JSON.stringify({
          source: { api_key: 12345678, notes: { url: 'x', token: 'tok-secret-value', note: 'n' } },
        }),
      ),
    );
    expect(message).not.toContain('tok-secret-value');
    expect(message).not.toContain('12345678');
    expect(message).toContain('source.api_key');
    expect(message).toContain('source.notes.url');
  });

  it('knows which params each step takes', () => {
    expect(usageError(() => parseRequest('in', '{"source":{},"params":{"prompt":"x"}}'))).toMatch(
      /params\.prompt/,
    );
  });

  it('ignores keys beside source, version and params (a future Concourse may send more)', () => {
    const request = parseRequest(
      'in',
      JSON.stringify({
        source: { prompt: 'x' },
        version: { ref: 'r' },
        params: {},
        space: 'main',
        x: { y: 1 },
      }),
    );
    expect(request).toEqual({ source: { prompt: 'x' }, version: { ref: 'r' }, params: {} });
    // check is given no params by Concourse: one there is just another key beside the request.
    expect(parseRequest('check', '{"source":{},"params":{"anything":1}}').params).toEqual({});
  });

  it('refuses a watch that is a path', () => {
    const notes = { url: 'http://127.0.0.1:1', token: 't', note: 'n', watch: '../x' };
    expect(usageError(() => parseRequest('check', JSON.stringify({ source: { notes } })))).toMatch(
      /source\.notes\.watch/,
    );
  });

  it('takes source.mcp like [[mcp]] tables, with the token in the source instead of the environment', () => {
    const mcp = [
      {
        name: 'docs',
        url: 'https://mcp.example.com/mcp',
        bearer_token: 'tok-abc',
        // A key in a header is fine in the source (a credential manager's value), unlike in rune.toml.
        headers: { 'X-Api-Key': 'sk-proj-0123456789abcdefghij' },
        allowed_domains: ['mcp.example.com'],
      },
      { name: 'files', command: 'node', args: ['server.js'] },
    ];
    expect(parseRequest('check', JSON.stringify({ source: { mcp } })).source?.mcp).toEqual(mcp);
    const message = usageError(() =>
      parseRequest(
        'check',
        JSON.stringify({
          source: {
            mcp: [
              { name: 'a', url: 'https://a.example.com/mcp', bearer_token_env_var: 'A' },
              { name: 'b', command: 'node', bearer_token: 'tok-secret-in-source' },
              { name: 'c' },
            ],
          },
        }),
      ),
    );
    expect(message).toContain('unknown key source.mcp.0.bearer_token_env_var');
    expect(message).toContain('source.mcp.1.bearer_token: is for remote servers (url), not for command');
    expect(message).toContain('source.mcp.2.command: give command (a stdio server) or url (a remote server)');
    expect(message).not.toContain('tok-secret-in-source');
  });
});
