// The [notes] table (notes-schema.ts), as a layer of rune.toml gives it.
import { describe, expect, it } from 'vitest';
import { notesLimitsSchema, notesSchema } from './notes-schema.ts';

const problems = (table: unknown): string[] => {
  const result = notesSchema().partial().safeParse(table);
  return result.success ? [] : result.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`);
};

describe('[notes]', () => {
  it.each([
    ['local accounts, plain and hashed', { local: { admins: ['ada:pw'], users: ['uma:scrypt$abc'] } }],
    ['port 0 (the kernel picks one)', { port: 0 }],
    ['synchronous = full', { synchronous: 'full' }],
    ['a limit', { limits: { max_file_kb: 2 } }],
    ['a GitHub app', { github: { client_id: 'id', client_secret: 's', admins: ['octo'] } }],
  ])('takes %s', (_name, table) => {
    expect(problems(table)).toEqual([]);
  });

  it.each([
    [
      'an account without a password',
      { local: { users: ['uma'] } },
      /local\.users\.0: expected "name:password"/,
    ],
    ['an account name with a space', { local: { users: ['u ma:pw'] } }, /local\.users\.0/],
    ['a port past 65535', { port: 65536 }, /^port: /],
    ['another synchronous level', { synchronous: 'off' }, /^synchronous: /],
    ['an unknown key', { colour: 'blue' }, /colour/],
    ['a limit of 0', { limits: { max_streams: 0 } }, /^limits\.max_streams: /],
    ['an unknown limit', { limits: { max_everything: 1 } }, /max_everything/],
    ['a public URL that is not one', { public_url: 'notes.example.com' }, /^public_url: /],
  ])('refuses %s', (_name, table, message) => {
    expect(problems(table).join('\n')).toMatch(message);
  });

  it('names every limit, each optional (the defaults are DEFAULTS.notes.limits)', () => {
    expect(notesLimitsSchema().safeParse({}).success).toBe(true);
  });
});
