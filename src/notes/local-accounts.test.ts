import { describe, expect, it } from 'vitest';
import { DEFAULTS, type NotesConfig } from '../config/schema.ts';
import type { Logger } from '../core/logger.ts';
import { redact } from '../core/redact.ts';
import { configAccounts } from './local-accounts.ts';

const HASH = 'scrypt$16384$8$1$c2FsdA$aGFzaA';

function accounts(local: NotesConfig['local']) {
  const warnings: string[] = [];
  const logger = {
    warn: (_e: string, f?: { message?: string }) => warnings.push(f?.message ?? ''),
  } as unknown as Logger;
  const found = configAccounts({ ...DEFAULTS.notes, local } as unknown as NotesConfig, logger);
  return { found: [...found.values()].map((a) => [a.name, a.role, a.secret]), warnings };
}

describe('configAccounts', () => {
  it.each<[string, NotesConfig['local'], Array<[string, string, string]>]>([
    ['none', undefined, []],
    [
      'one of each role',
      { admins: ['ada:a1pass'], users: ['uma:u1pass'], guests: ['gus:g1pass'] },
      [
        ['ada', 'admin', 'a1pass'],
        ['uma', 'user', 'u1pass'],
        ['gus', 'guest', 'g1pass'],
      ],
    ],
    [
      'the highest role when a name appears twice',
      { admins: ['ada:first1'], guests: ['ada:second'] },
      [['ada', 'admin', 'first1']],
    ],
    ['a password holding colons', { users: ['uma:a:b:c'] }, [['uma', 'user', 'a:b:c']]],
    ['a hash', { users: [`uma:${HASH}`] }, [['uma', 'user', HASH]]],
  ])('%s', (_name, local, expected) => {
    expect(accounts(local).found).toEqual(expected);
  });

  it('warns about plain passwords, naming the accounts, and treats them as secrets', () => {
    const { warnings } = accounts({ admins: ['ada:plain-secret-words-1'], users: [`uma:${HASH}`] });
    expect(warnings).toEqual([expect.stringMatching(/plain-text passwords for ada;/)]);
    expect(redact('leaked plain-secret-words-1')).not.toContain('plain-secret-words-1');
  });
});
