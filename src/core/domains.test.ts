import { describe, expect, it } from 'vitest';
import { loadConfig } from '../config/load.ts';
import { parseDomainPattern } from './domains.ts';
import { isRuneError } from './errors.ts';

function load(toml: string) {
  return loadConfig({ env: {}, file: '/x/rune.toml', readFile: () => toml });
}

describe('allowed_domains is checked at load', () => {
  it.each([
    ['*', /only allowed as a leading/],
    ['*.com', /whole top-level domain/],
    [
      '*.co.uk',
      /every domain under the public suffix "co\.uk"; name a registered domain, like \*\.example\.co\.uk/,
    ],
    ['*.com.au', /public suffix "com\.au"/],
    ['*.github.io', /public suffix "github\.io"/],
    ['*.s3.amazonaws.com', /public suffix/],
    ['*.internal', /whole top-level domain/],
    ['https://github.com', /not a host name/],
  ])('rejects %s with a clear message naming the file and key', (entry, message) => {
    try {
      load(`[policy]\nallowed_domains = ["api.github.com", ${JSON.stringify(entry)}]\n`);
      expect.unreachable();
    } catch (error) {
      expect(isRuneError(error) && error.code).toBe('CONFIG_INVALID');
      const details = (error as { details: string[] }).details.join('\n');
      expect(details).toContain('/x/rune.toml: policy.allowed_domains.1:');
      expect(details).toMatch(message);
    }
  });

  it('accepts names, subdomain wildcards, ports and IP literals; MCP servers too', () => {
    const { config } = load(
      '[policy]\nallowed_domains = ["github.com", "*.github.com", "example.org:8443", "10.0.0.1"]\n[[mcp]]\nname = "s"\ncommand = "x"\nallowed_domains = ["*.example.org"]\n',
    );
    expect(config.policy.allowed_domains).toHaveLength(4);
    // Registered domains under multi-label suffixes, and names under an unknown TLD, are fine.
    expect(() =>
      load('[policy]\nallowed_domains = ["*.bbc.co.uk", "*.example.github.io", "*.corp.internal"]\n'),
    ).not.toThrow();
    expect(() => load('[[mcp]]\nname = "s"\ncommand = "x"\nallowed_domains = ["*.org"]\n')).toThrow();
  });
});

describe('parseDomainPattern', () => {
  it.each([
    ['api.example.com:443', { host: 'api.example.com', wildcard: false, port: 443 }],
    ['[::1]:9000', { host: '::1', wildcard: false, port: 9000 }],
    ['::1', { host: '::1', wildcard: false }],
    ['2001:db8::1', { host: '2001:db8::1', wildcard: false }],
    ['[2001:db8::1]', { host: '2001:db8::1', wildcard: false }],
    ['10.0.0.1:5432', { host: '10.0.0.1', wildcard: false, port: 5432 }],
    ['*.example.com:8443', { host: 'example.com', wildcard: true, port: 8443 }],
  ])('%s → %j', (entry, expected) => {
    expect(parseDomainPattern(entry)).toEqual(expected);
  });

  it.each([
    ['api.example.com:0', /invalid port/],
    ['api.example.com:65536', /invalid port/],
    ['api.example.com:', /invalid port/],
    ['[::1]:x', /invalid port/],
    ['[nothost]:80', /not a valid IPv6/],
  ])('refuses %s', (entry, message) => {
    expect(parseDomainPattern(entry)).toMatch(message);
  });
});
