// [[mcp]] tables (mcp-schema.ts): stdio (command) or remote (url), never both, and never a credential in the file.
import { describe, expect, it } from 'vitest';
import { isRuneError, type RuneError } from '../core/errors.ts';
import { loadConfig } from './load.ts';

const FILE = '/home/u/.rune/rune.toml';

function load(text: string) {
  return loadConfig({ env: { HOME: '/home/u' }, readFile: () => text });
}

function problems(text: string): string[] {
  try {
    load(text);
  } catch (error) {
    if (isRuneError(error)) return [...(error as RuneError).details];
    throw error;
  }
  throw new Error('expected a config error');
}

describe('[[mcp]] tables', () => {
  it('takes a remote server with its transport, headers and token variable', () => {
    const { config } = load(
      [
        '[[mcp]]',
        'name = "docs"',
        'url = "https://mcp.example.com/mcp"',
        'transport = "sse"',
        'headers = { "X-Client" = "rune" }',
        'env_headers = { "X-Api-Key" = "DOCS_KEY" }',
        'bearer_token_env_var = "DOCS_TOKEN"',
        'allowed_domains = ["mcp.example.com"]',
        'required = true',
      ].join('\n'),
    );
    expect(config.mcp[0]).toMatchObject({
      name: 'docs',
      url: 'https://mcp.example.com/mcp',
      transport: 'sse',
    });
  });

  it.each([
    ['name = "x"', 'mcp.0.command: give command (a stdio server) or url (a remote server)'],
    [
      'name = "x"\ncommand = "node"\nurl = "https://a.example.com/mcp"',
      'mcp.0.url: give either command (a stdio server) or url (a remote server), not both',
    ],
    [
      'name = "x"\nurl = "https://a.example.com/mcp"\nargs = ["x"]',
      'mcp.0.args: is for stdio servers (command), not for url',
    ],
    [
      'name = "x"\nurl = "https://a.example.com/mcp"\nallowed_paths_rw = ["/tmp"]',
      'mcp.0.allowed_paths_rw: is for stdio servers (command), not for url',
    ],
    [
      'name = "x"\ncommand = "node"\ntransport = "sse"',
      'mcp.0.transport: is for remote servers (url), not for command',
    ],
    ['name = "x"\nurl = "ftp://a.example.com/"', 'mcp.0.url: must be an http:// or https:// URL, not ftp:'],
    ['name = "x"\nurl = "not a url"', 'mcp.0.url: is not a valid URL, e.g. https://mcp.example.com/mcp'],
    [
      'name = "x"\nurl = "https://user:pw@a.example.com/mcp"',
      'mcp.0.url: must not hold a user name or password: use bearer_token_env_var or OAuth',
    ],
    [
      'name = "x"\nurl = "http://a.example.com/mcp"\nbearer_token_env_var = "T"',
      'mcp.0.url: plain http would send the credential to a.example.com unencrypted; use https://',
    ],
    [
      'name = "x"\nurl = "https://a.example.com/mcp"\nbearer_token_env_var = "ghp_0123456789abcdef0123"',
      'mcp.0.bearer_token_env_var: looks like a token: name the environment variable that holds it',
    ],
    [
      'name = "x"\nurl = "https://a.example.com/mcp"\nheaders = { Authorization = "Bearer abc" }',
      'mcp.0.headers: "Authorization" carries a credential',
    ],
    [
      'name = "x"\nurl = "https://a.example.com/mcp"\nbearer_token = "abc"',
      'mcp.0.bearer_token: unknown key',
    ],
    [
      'name = "x"\nurl = "https://a.example.com/mcp"\nheaders = { "X-Api-Key" = "sk-proj-0123456789abcdefghij" }',
      'mcp.0.headers: the value of "X-Api-Key" looks like a key: put it in an environment variable and name it in env_headers',
    ],
    ['name = "x"\nurl = "https://a.example.com/mcp"\ntransport = "websocket"', 'mcp.0.transport:'],
  ])('refuses %j', (table, message) => {
    expect(problems(`[[mcp]]\n${table}\n`).join('\n')).toContain(`${FILE}: ${message}`);
  });

  it('lets plain http carry a token to a loopback server only', () => {
    expect(() =>
      load('[[mcp]]\nname = "x"\nurl = "http://127.0.0.1:3000/mcp"\nbearer_token_env_var = "T"\n'),
    ).not.toThrow();
    expect(() =>
      load('[[mcp]]\nname = "x"\nurl = "http://localhost:3000/mcp"\nbearer_token_env_var = "T"\n'),
    ).not.toThrow();
  });
});
