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
    expect(usageError(() => parseRequest('check', '{"source":{},"params":{}}'))).toMatch(
      /unknown key params/,
    );
  });

  it('refuses a watch that is a path', () => {
    const notes = { url: 'http://127.0.0.1:1', token: 't', note: 'n', watch: '../x' };
    expect(usageError(() => parseRequest('check', JSON.stringify({ source: { notes } })))).toMatch(
      /source\.notes\.watch/,
    );
  });
});
