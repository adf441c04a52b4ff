import { describe, expect, it } from 'vitest';
import { DEFAULTS, type RuneConfig } from '../config/schema.ts';
import { readAudit } from '../policy/audit.ts';
import { formatAuditLine, parseSince } from '../policy/audit-command.ts';
import { formatPolicy } from './policy-format.ts';

const config = {
  ...DEFAULTS,
  mcp: [],
  policy: { ...DEFAULTS.policy, allowed_commands: ['ls', 'git status'], allowed_domains: ['*.github.com'] },
} as unknown as RuneConfig;

describe('formatPolicy', () => {
  it('/policy: mode, lists and the floor, no sandbox section', () => {
    const text = formatPolicy(config, 'allowlist', null, ['/h/.ssh']);
    expect(text).toContain('policy mode: allowlist (anything the lists do not cover is blocked');
    expect(text).toContain('allowed_commands   ls, git status');
    expect(text).toContain('allowed_domains    *.github.com');
    expect(text).toContain('allowed_paths_rw   (none)');
    expect(text).toContain('never (floor)      /h/.ssh');
    expect(text).not.toContain('sandbox');
  });

  it('/policy full without a sandbox report says it is unavailable', () => {
    expect(formatPolicy(config, 'confirm')).toContain('sandbox layers: report unavailable');
  });

  it('/policy full with layers lists availability and the last call', () => {
    const text = formatPolicy(config, 'unrestricted', {
      available: [{ layer: 'landlock', applied: true, detail: 'ABI 7' }],
      lastCall: [{ layer: 'landlock', applied: false, detail: 'sandbox off' }],
    });
    expect(text).toContain('landlock     available: ABI 7');
    expect(text).toContain('landlock     not applied: sandbox off');
  });

  it('/policy full states the network, git and environment rules, with ports and passthrough names', () => {
    const withPorts = {
      ...config,
      policy: { ...config.policy, allowed_domains: ['api.example.com:443', '*.github.com'] },
      sandbox: { ...config.sandbox, env_passthrough: ['GH_TOKEN'] },
    } as RuneConfig;
    const text = formatPolicy(withPorts, 'allowlist', { available: [] });
    expect(text).toContain('api.example.com:443: fetch_url and sandboxed tools, TCP port 443 only');
    expect(text).toContain('*.github.com: fetch_url only (any TCP port); a wildcard cannot be resolved');
    expect(text).toMatch(/git {10}every git folder under a writable folder/);
    expect(text).toMatch(
      /environment {2}tools and MCP servers get only PATH, HOME, .*env_passthrough: GH_TOKEN/,
    );
    expect(text).toMatch(/files {8}\.env\*, rune's own config .* NAME\.rune-rejected after the call/);
    expect(formatPolicy(config, 'allowlist', null)).not.toContain('sandbox rules');
  });
});

describe('rune audit helpers', () => {
  const now = new Date('2026-01-10T00:00:00Z');
  it.each([
    ['2h', '2026-01-09T22:00:00.000Z'],
    ['7d', '2026-01-03T00:00:00.000Z'],
    ['2026-01-05', '2026-01-05T00:00:00.000Z'],
  ])('--since %s', (text, iso) => {
    expect(parseSince(text, now).toISOString()).toBe(iso);
  });
  it('/policy full says whether an unprotected writable grant is refused or was accepted without namespaces', () => {
    const refused = formatPolicy(config, 'allowlist', { available: [] });
    expect(refused).toMatch(
      /files .*is refused before the call runs \(sandbox\.accept_unprotected_grants = true accepts it\)/,
    );
    expect(refused).not.toContain('ACCEPTED');
    const accepted = {
      ...config,
      sandbox: { ...config.sandbox, accept_unprotected_grants: true },
    } as unknown as RuneConfig;
    expect(formatPolicy(accepted, 'allowlist', { available: [] })).toContain(
      'ACCEPTED here by sandbox.accept_unprotected_grants = true',
    );
  });

  it('rejects a bad --since', () => {
    expect(() => parseSince('yesterday-ish', now)).toThrow(/neither a duration/);
  });
  it('filters by time and decision and skips broken lines', () => {
    const line = (time: string, decision: string) =>
      JSON.stringify({
        time,
        session: 's',
        tool: 't',
        source: 'builtin',
        args_sha256: 'x',
        decision,
        rule: 'r',
        mode: 'allowlist',
      });
    const text = [
      line('2026-01-01T00:00:00Z', 'deny'),
      '{broken',
      line('2026-01-09T00:00:00Z', 'allow'),
      line('2026-01-09T01:00:00Z', 'deny'),
    ].join('\n');
    const { records, skipped } = readAudit(text, {
      since: new Date('2026-01-08T00:00:00Z'),
      decision: 'deny',
    });
    expect(skipped).toBe(1);
    expect(records.map((r) => r.time)).toEqual(['2026-01-09T01:00:00Z']);
    expect(formatAuditLine(records[0]!)).toMatch(/^2026-01-09T01:00:00Z {2}deny {3}t/);
  });
});

describe('the secrets floor in /policy', () => {
  it('names $RUNE_HOME once when it is ~/.rune', async () => {
    const { floorPaths } = await import('../policy/paths.ts');
    const floor = floorPaths('/home/u', '/home/u/.rune');
    expect(floor.filter((path) => path === '/home/u/.rune')).toHaveLength(1);
    expect(floorPaths('/home/u', '/srv/rune')).toEqual(
      expect.arrayContaining(['/home/u/.rune', '/srv/rune']),
    );
  });
});
