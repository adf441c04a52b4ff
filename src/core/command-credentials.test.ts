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
    // A URL or a header given as a flag's value (`--url=…`, `--header=…`), or as a variable (`X_URL=…`).
    [['--url=https://me:s3cret-pass@api.example.com/mcp'], ['s3cret-pass']],
    [['DATABASE_URL=postgres://me:s3cret-pass@db/x'], ['s3cret-pass']],
    [['--header=Authorization: Bearer abc123secret'], ['abc123secret']],
    [['--header=X-Api-Key:abc123secret'], ['abc123secret']],
    // A query value as it is written in the URL (percent-encoded) as well as decoded.
    [['https://h.example/mcp?api_key=abc%2B123secret'], ['abc%2B123secret', 'abc+123secret']],
    // A signed URL's signature.
    [['https://acct.blob.example/c?sv=2024&sig=abc123signature'], ['abc123signature']],
    // Quotes written into the word are not part of the credential.
    [['--api-key="abc123secret"'], ['abc123secret']],
    [["--token='abc123secret'"], ['abc123secret']],
    // Headers or settings passed as JSON.
    [
      ['--headers', '{"Authorization":"Bearer abc123secret","Accept":"text/plain"}'],
      ['Bearer abc123secret', 'abc123secret'],
    ],
    [['--config={"apiKey":"abc123secret","port":8080}'], ['abc123secret']],
    // A DSN without a scheme (Go's MySQL driver, redis-cli -u): user:password@host.
    [['--dsn', 'me:s3cret-pass@tcp(db:3306)/app'], ['s3cret-pass']],
    [['--dsn=me:s3cret-pass@tcp(db:3306)/app'], ['s3cret-pass']],
    [['git@github.com:org/repo.git', 'db:5432', 'image:latest@sha256:0123abcd', 'a:b'], []],
    // A flag that names a credential's file, kind or limit does not carry one.
    [['--token-file', '/run/secrets/token', '--api-key-env', 'MY_API_KEY', '--token-limit', '100000'], []],
    // A switch about a credential takes no value: the word after it is the command's own.
    [['--no-auth', '/home/me/project', '--auth-disabled', '/srv/notes', '--skip-token-verify', 'serve'], []],
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
  it('takes URL passwords and the credential of a `Bearer …` value too, whatever the name', () => {
    expect(
      credentialsInEnv({
        DATABASE_URL: 'postgres://me:s3cret-pass@db/x',
        AUTH_HEADER: 'Bearer abc123secret',
        TOKEN_LIMIT: '100000',
        HOME: '/home/me',
      }),
    ).toEqual(['s3cret-pass', 'Bearer abc123secret', 'abc123secret']);
  });
  it('takes credential-named variables only', () => {
    expect(
      credentialsInEnv({ GITHUB_TOKEN: 'ghsecret1', NODE_ENV: 'production', PGPASSWORD: 'pw-123456', X: '' }),
    ).toEqual(['ghsecret1', 'pw-123456']);
  });
});
