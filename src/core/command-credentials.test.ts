import { describe, expect, it } from 'vitest';
import {
  credentialsInArgs,
  credentialsInEnv,
  credentialsInTable,
  credentialsInTableUrl,
  looksLikeKey,
  namesCredential,
} from './command-credentials.ts';

// base64 of `me:s3cret-pass`: what HTTP Basic sends for the pair, and a server may log.
const BASIC = 'bWU6czNjcmV0LXBhc3M=';

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
      ['p%40ss-word', 'p@ss-word', 'bWU6cEBzcy13b3Jk'],
    ],
    [['https://api.example.com/mcp?token=abc123secret&mode=fast'], ['abc123secret']],
    // A URL or a header given as a flag's value (`--url=…`, `--header=…`), or as a variable (`X_URL=…`).
    [['--url=https://me:s3cret-pass@api.example.com/mcp'], ['s3cret-pass', BASIC]],
    [['DATABASE_URL=postgres://me:s3cret-pass@db/x'], ['s3cret-pass', BASIC]],
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
    // A value that starts with a dash is still the value; a `--` word is the next flag.
    [['server', '--password', '-x9secret', '--verbose'], ['-x9secret']],
    [['server', '--password=-x9secret'], ['-x9secret']],
    [['--auth', '-v', '--token', '--', 'serve'], []],
    // Go's flags take one dash.
    [
      ['server', '-password', 'abc123secret', '-token=tok123secret'],
      ['abc123secret', 'tok123secret'],
    ],
    // HTTP Basic: the token, the pair it encodes and the password; a `user:password` credential
    // value, its password and its token.
    [
      ['-H', `Authorization: Basic ${BASIC}`],
      [BASIC, 'me:s3cret-pass', 's3cret-pass'],
    ],
    [
      ['--auth', 'Basic', BASIC],
      [BASIC, 'me:s3cret-pass', 's3cret-pass'],
    ],
    [
      ['--basic-auth', 'me:s3cret-pass'],
      ['me:s3cret-pass', 's3cret-pass', BASIC],
    ],
    [['BASIC_AUTH=me:s3cret-pass'], ['me:s3cret-pass', 's3cret-pass', BASIC]],
    [
      ['--headers', `{"Authorization":"Basic ${BASIC}"}`],
      [`Basic ${BASIC}`, BASIC, 'me:s3cret-pass', 's3cret-pass'],
    ],
    // A Basic token that is not base64 text of a pair is only itself.
    [['-H', 'Authorization: Basic YWJjZGVmZ2hpams='], ['YWJjZGVmZ2hpams=']],
    [['-H', 'Authorization: Basic not-base64!'], ['not-base64!']],
    // Connection strings and a script's variables: the values of credential names among the pairs.
    [['--conn', 'Server=db;User Id=me;Password=s3cret-pass;'], ['s3cret-pass']],
    [['--dsn', "host=db user=me password='s3cret pass' sslmode=require"], ['s3cret pass']],
    [
      ['sh', '-c', 'GH_TOKEN=abc123secret exec server --port=8080'],
      ['abc123secret exec server --port=8080', 'abc123secret'],
    ],
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
        CONNECTION_STRING: 'Server=db;Database=app;Pwd=pw-987654;',
        TOKEN_LIMIT: '100000',
        HOME: '/home/me',
      }),
    ).toEqual(['s3cret-pass', BASIC, 'Bearer abc123secret', 'abc123secret', 'pw-987654']);
  });
  it('takes credential-named variables only', () => {
    expect(
      credentialsInEnv({ GITHUB_TOKEN: 'ghsecret1', NODE_ENV: 'production', PGPASSWORD: 'pw-123456', X: '' }),
    ).toEqual(['ghsecret1', 'pw-123456']);
  });
});

describe('looksLikeKey', () => {
  it.each([
    ['7f3e9a1c5b2d4e6f', true],
    ['AKIAIOSFODNN7EXAMPLE', true],
    ['123e4567-e89b-12d3-a456-426614174000', true],
    ['pipeline-env-credential-4711-quux', true],
    ['production', false],
    ['1', false],
    ['us-east-1', false],
    ['/srv/data/project/notes', false],
    ['12345678901234567890', false],
    ['short1Key', false],
    ['a sentence with 16 words and 2 digits', false],
  ])('%s → %s', (value, expected) => {
    expect(looksLikeKey(value)).toBe(expected);
  });
});

describe('credentialsInTable (a pipeline hands the values over)', () => {
  it('takes credential-named and key-shaped values, not plain words or numbers', () => {
    expect(
      credentialsInTable(
        {
          GH_TOKEN: 'short-tok',
          DEPLOY_ENV: 'production',
          REPLICAS: '1',
          TENANT: '7f3e9a1c5b2d4e6f',
          DATABASE_URL: 'postgres://me:s3cret-pass@db/x',
          API_BASE: 'https://api.example.com/v1',
          HOOK: 'https://hooks.example.com/services/T0001/B0001/AbCdEf0123456789xyz',
        },
        'env',
      ),
    ).toEqual(['short-tok', 's3cret-pass', BASIC, '7f3e9a1c5b2d4e6f', 'AbCdEf0123456789xyz']);
  });
  it('takes what credential headers carry, and key-shaped values of any header', () => {
    expect(
      credentialsInTable(
        {
          Authorization: `Basic ${BASIC}`,
          'X-Api-Key': 'abc123',
          Accept: 'application/json',
          'X-Tenant': 'production',
          'X-Request-Signing': 'Sig AbCdEf0123456789xyz',
        },
        'headers',
      ),
    ).toEqual([BASIC, 'me:s3cret-pass', 's3cret-pass', 'abc123', 'AbCdEf0123456789xyz']);
  });
  it("takes a URL's credentials and key-shaped query values, not plain ones", () => {
    expect(
      credentialsInTableUrl(`https://me:s3cret-pass@h.example/mcp?mode=fast&tenant=7f3e9a1c5b2d4e6f`),
    ).toEqual(['s3cret-pass', BASIC, '7f3e9a1c5b2d4e6f']);
  });
});
