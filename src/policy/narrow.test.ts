import { describe, expect, it } from 'vitest';
import { type DomainPattern, parseDomainPattern } from '../core/domains.ts';
import type { EffectiveLists } from './decide.ts';
import { narrowLists, narrowMode } from './narrow.ts';

const domains = (...entries: string[]) => entries.map((entry) => parseDomainPattern(entry) as DomainPattern);
const base: EffectiveLists = {
  commands: ['ls', 'git status'],
  domains: domains('*.github.com', 'example.org'),
  pathsRo: ['/p'],
  pathsRw: ['/p/out'],
  filesRo: ['/etc/hosts'],
  filesRw: [],
  denied: ['/p/secret'],
  mcpTools: ['fs.*'],
};

describe('project config narrows, never widens', () => {
  it.each([
    ['allowlist', 'unrestricted', 'allowlist'],
    ['allowlist', 'confirm', 'allowlist'],
    ['confirm', 'allowlist', 'allowlist'],
    ['unrestricted', 'confirm', 'confirm'],
    ['confirm', undefined, 'confirm'],
  ] as const)('mode %s with project %s → %s', (user, project, expected) => {
    expect(narrowMode(user, project)).toBe(expected);
  });

  it('keeps only entries the user already allows, and adds denied paths', () => {
    const { lists, dropped } = narrowLists(base, {
      commands: ['ls', 'git status --short', 'rm', 'git'],
      domains: domains('api.github.com', '*.evil.com', 'github.com', 'example.org'),
      pathsRo: ['/p/src', '/'],
      pathsRw: ['/p/out/x', '/p/src'],
      filesRw: ['/etc/hosts'],
      denied: ['/p/src/gen'],
      mcpTools: ['fs.read', 'shell.run'],
    });
    expect(lists.commands).toEqual(['ls', 'git status --short']);
    expect(lists.domains.map((d) => d.host)).toEqual(['api.github.com', 'example.org']);
    expect(lists.pathsRo).toEqual(['/p/src']);
    expect(lists.pathsRw).toEqual(['/p/out/x']);
    expect(lists.filesRo).toEqual(['/etc/hosts']);
    expect(lists.filesRw).toEqual([]);
    expect(lists.denied).toEqual(['/p/secret', '/p/src/gen']);
    expect(lists.mcpTools).toEqual(['fs.read']);
    expect(dropped).toEqual([
      'commands: rm',
      'commands: git',
      'domains: *.evil.com',
      'domains: github.com',
      'pathsRo: /',
      'pathsRw: /p/src',
      'filesRw: /etc/hosts',
      'mcpTools: shell.run',
    ]);
  });
});
