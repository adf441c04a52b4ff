import { describe, expect, it } from 'vitest';
import { type HostGrant, hostRefusal, keyToAdd, suggestedEntry } from './hosts.ts';

const grant = (over: Partial<HostGrant> = {}): HostGrant => ({
  server: 'docs',
  origin: 'table',
  tableDomains: [],
  policyDomains: [],
  unrestricted: false,
  ...over,
});

describe('hostRefusal', () => {
  it.each([
    ['https://mcp.example.com/mcp', { tableDomains: ['mcp.example.com'] }, true],
    ['https://mcp.example.com/mcp', { policyDomains: ['mcp.example.com'] }, true],
    ['https://mcp.example.com/mcp', { policyDomains: ['*.example.com'] }, true],
    ['https://example.com/mcp', { policyDomains: ['*.example.com'] }, false],
    ['https://mcp.example.com:8443/mcp', { tableDomains: ['mcp.example.com:8443'] }, true],
    ['https://mcp.example.com/mcp', { tableDomains: ['mcp.example.com:8443'] }, false],
    ['http://127.0.0.1:3001/mcp', { tableDomains: ['127.0.0.1:3001'] }, true],
    ['http://127.0.0.1:3002/mcp', { tableDomains: ['127.0.0.1:3001'] }, false],
    ['http://[::1]:3001/mcp', { tableDomains: ['[::1]:3001'] }, true],
    ['http://[::1]:3002/mcp', { tableDomains: ['[::1]:3001'] }, false],
    ['https://evil.example.org/mcp', { tableDomains: ['mcp.example.com'] }, false],
    ['https://evil.example.org/mcp', { unrestricted: true }, true],
    ['https://MCP.Example.COM/mcp', { tableDomains: ['mcp.example.com'] }, true],
  ] as const)('%s with %j → allowed %s', (url, over, allowed) => {
    expect(hostRefusal(new URL(url), grant(over)) === undefined).toBe(allowed);
  });

  it('names the narrowest entry and the key where the server was configured', () => {
    expect(hostRefusal(new URL('https://mcp.example.com/mcp'), grant())).toBe(
      'its host mcp.example.com is not in allowed_domains: add "mcp.example.com" to allowed_domains in the [[mcp]] table "docs" (or to policy.allowed_domains)',
    );
    expect(hostRefusal(new URL('http://127.0.0.1:3001/mcp'), grant({ origin: 'flag' }))).toBe(
      'its host 127.0.0.1:3001 is not in allowed_domains: add "127.0.0.1:3001" to policy.allowed_domains in rune.toml, or configure the server as an [[mcp]] table with its own allowed_domains',
    );
    expect(keyToAdd(grant({ origin: 'source' }), 'x.example.com')).toBe(
      'add "x.example.com" to allowed_domains of the source.mcp entry "docs" (or to source.policy.allowed_domains)',
    );
  });

  it('suggests the port only when the URL names one', () => {
    expect(suggestedEntry(new URL('https://a.example.com/x'))).toBe('a.example.com');
    expect(suggestedEntry(new URL('https://a.example.com:443/x'))).toBe('a.example.com');
    expect(suggestedEntry(new URL('http://[::1]:8080/x'))).toBe('[::1]:8080');
  });
});
