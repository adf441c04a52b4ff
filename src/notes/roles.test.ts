import { describe, expect, it } from 'vitest';
import { atLeast, mapRole, ROLES, type Role } from './roles.ts';

describe('atLeast', () => {
  const holders = ['anonymous', ...ROLES] as const;
  // Each holder against each needed role: the ranks are anonymous < guest < user < admin.
  it.each(holders.flatMap((holder, h) => ROLES.map((needed, n) => [holder, needed, h >= n + 1] as const)))(
    '%s needing %s: %s',
    (holder, needed, expected) => {
      expect(atLeast(holder, needed)).toBe(expected);
    },
  );
});

describe('mapRole', () => {
  const lists = { admins: ['root'], users: ['@x.org'], guests: ['*'] };
  it.each<[string, Parameters<typeof mapRole>[0], string[], Role | null]>([
    ['the highest list that names the identity', lists, ['root'], 'admin'],
    ['@domain names every address there', lists, ['a@x.org'], 'user'],
    ['* names anyone', lists, ['someone'], 'guest'],
    ['names compare without case', { users: ['Alice'] }, ['alice'], 'user'],
    ['any of the identifiers', { admins: ['12345'] }, ['alice', '12345'], 'admin'],
    ['a name no list has', { users: ['alice'] }, ['bob'], null],
    ['no lists', {}, ['alice'], null],
    ['an empty identifier names nobody', { users: [''] }, [''], null],
    ['@domain is the end of an address, not a part', { users: ['@x.org'] }, ['a@x.org.evil'], null],
  ])('%s', (_name, roleLists, identifiers, expected) => {
    expect(mapRole(roleLists, identifiers)).toBe(expected);
  });
});
