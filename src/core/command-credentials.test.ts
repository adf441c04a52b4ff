import { describe, expect, it } from 'vitest';
import { credentialsInArgs, credentialsInEnv, namesCredential } from './command-credentials.ts';

describe('namesCredential', () => {
  it.each([
    ['--api-key', true],
    ['--auth-token', true],
    ['--token', true],
    ['GITHUB_PERSONAL_ACCESS_TOKEN', true],
    ['OPENAI_API_KEY', true],
    ['PGPASSWORD', true],
    ['clientSecret', true],
    ['X-Api-Key', true],
    ['Authorization', false],
    ['--port', false],
    ['KEYBOARD_LAYOUT', false],
    ['GIT_AUTHOR_NAME', false],
    ['NODE_ENV', false],
    ['--keyword', false],
  ])('%s → %s', (name, expected) => {
    expect(namesCredential(name)).toBe(expected);
  });
});

describe('credentialsInArgs', () => {
  it.each<[string[], string[]]>([
    [['server.js', '--api-key', 'abc123secret'], ['abc123secret']],
    [['server.js', '--api-key=abc123secret'], ['abc123secret']],
    [['server.js', '--apiKey=abc123secret'], ['abc123secret']],
    [['env', 'GITHUB_TOKEN=abc123secret', 'server'], ['abc123secret']],
    [['--header', 'X-Api-Key: abc123secret'], ['abc123secret']],
    [['--header', 'Authorization: Bearer abc123secret'], ['abc123secret']],
    [['-H', 'Bearer abc123secret'], ['abc123secret']],
    [['--auth', 'Bearer', 'abc123secret'], ['abc123secret']],
    [['-H', 'Cookie: session=abc123secret'], ['session=abc123secret']],
    [
      ['--db', 'postgres://me:p%40ss-word@db/x'],
      ['p%40ss-word', 'p@ss-word'],
    ],
    [['https://api.example.com/mcp?token=abc123secret&mode=fast'], ['abc123secret']],
    // Nothing credential-shaped: nothing found.
    [['-y', '@modelcontextprotocol/server-filesystem', '/work'], []],
    [['server.js', '--port', '8080', '--verbose'], []],
    [['--token', '--verbose'], []],
    [['NODE_ENV=production', 'Content-Type: text/plain'], []],
  ])('%j → %j', (args, expected) => {
    expect(credentialsInArgs(args)).toEqual(expected);
  });
});

describe('credentialsInEnv', () => {
  it('takes credential-named variables only', () => {
    expect(
      credentialsInEnv({ GITHUB_TOKEN: 'ghsecret1', NODE_ENV: 'production', PGPASSWORD: 'pw-123456', X: '' }),
    ).toEqual(['ghsecret1', 'pw-123456']);
  });
});
