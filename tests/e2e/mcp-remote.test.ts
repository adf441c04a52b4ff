// Remote MCP servers through the built binary: server-everything from npm in its Streamable HTTP
// and SSE modes, the OAuth-protected test server built from the SDK's auth pieces (the test plays
// the browser), hosts outside allowed_domains, and a server killed while a run goes on.
import { spawn } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RecordedRequest, useMockLlm } from '../helpers/mock-llm.ts';
import {
  authorizationUrlIn,
  makeCertificate,
  type OAuthServer,
  playBrowser,
  type RunningServer,
  startEverything,
  startOAuthServer,
  startTlsProxy,
} from '../helpers/remote-mcp.ts';
import { cleanEnv, RUNE_BIN, type RunResult, requireBinary, runRune, tempDir } from '../helpers/rune.ts';

const KEY = 'sk-test-mcp-remote-5a4b3c2d1e0f9a8b7c6d';
const mock = useMockLlm();

beforeAll(() => {
  requireBinary();
});

interface Home {
  cwd: string;
  runeHome: string;
  env: NodeJS.ProcessEnv;
}

function makeHome(toml = ''): Home {
  const home = tempDir('rune-remote-home-');
  const runeHome = join(home, '.rune');
  mkdirSync(runeHome, { mode: 0o700 });
  if (toml) writeFileSync(join(runeHome, 'rune.toml'), toml);
  return { cwd: tempDir('rune-remote-cwd-'), runeHome, env: { ...cleanEnv(home), RUNE_HOME: runeHome } };
}

function rune(h: Home, args: string[]): Promise<RunResult> {
  return runRune(['--base-url', mock.baseUrl, '--api-key', KEY, '--model', 'm', ...args], {
    cwd: h.cwd,
    env: h.env,
    timeoutMs: 50_000,
  });
}

// biome-ignore lint/suspicious/noExplicitAny: wire JSON
type Message = any;
const messagesOf = (request: RecordedRequest | undefined): Message[] => request?.body?.messages ?? [];
const toolResults = (request: RecordedRequest | undefined): string[] =>
  messagesOf(request)
    .filter((m) => m.role === 'tool')
    .map((m) => String(m.content));
const toolNames = (request: RecordedRequest | undefined): string[] =>
  ((request?.body?.tools ?? []) as Message[]).map((t) => t.function?.name as string);
const table = (name: string, url: string, extra = '') =>
  `[[mcp]]\nname = "${name}"\nurl = "${url}"\nallowed_domains = ["${new URL(url).host}"]\n${extra}`;

describe('server-everything over Streamable HTTP and SSE', () => {
  let http: RunningServer;
  let sse: RunningServer;
  beforeAll(async () => {
    [http, sse] = await Promise.all([startEverything('streamableHttp'), startEverything('sse')]);
  });
  afterAll(async () => {
    await Promise.all([http?.kill(), sse?.kill()]);
  });

  for (const mode of ['streamable-http', 'sse'] as const) {
    it(`puts the echoed text into the next model request (${mode})`, async () => {
      const server = mode === 'sse' ? sse : http;
      mock.script([
        { toolCalls: [{ name: 'echo', arguments: { message: `hello over ${mode}` } }] },
        { text: 'the remote server said hello' },
      ]);
      const h = makeHome(table('ev', server.url, `transport = "${mode}"\n`));
      const result = await rune(h, ['--verbose', 'use the echo tool']);
      expect(result.code).toBe(0);
      expect(result.stdout).toBe('the remote server said hello\n');
      expect(toolNames(mock.requests[0])).toEqual(expect.arrayContaining(['read_file', 'echo', 'get-sum']));
      expect(toolResults(mock.requests[1])).toEqual([`Echo: hello over ${mode}`]);
      const ready = result.stderr
        .split('\n')
        .filter((line) => line.startsWith('{'))
        .map((line) => JSON.parse(line) as { event: string; transport?: string })
        .find((event) => event.event === 'mcp.server_ready');
      expect(ready?.transport).toBe(mode);
    });
  }

  it('--mcp-http finds SSE by itself when the server refuses Streamable HTTP', async () => {
    mock.script([{ toolCalls: [{ name: 'get-sum', arguments: { a: 2, b: 3 } }] }, { text: 'five' }]);
    const h = makeHome(`[policy]\nallowed_domains = ["${new URL(sse.url).host}"]\n`);
    const result = await rune(h, ['--mcp-http', sse.url, 'add']);
    expect(result.code).toBe(0);
    expect(toolResults(mock.requests[1])[0]).toContain('5');
  });

  it('refuses a server whose host is not allowed, naming the key to add (exit 11 when required)', async () => {
    mock.setFallback({ text: 'should not be asked' });
    const port = new URL(http.url).port;
    const required = makeHome(`[[mcp]]\nname = "ev"\nurl = "${http.url}"\nrequired = true\n`);
    const stopped = await rune(required, ['hello']);
    expect(stopped.code).toBe(11);
    expect(stopped.stderr).toContain('required MCP server "ev" could not start');
    expect(stopped.stderr).toContain(
      `its host 127.0.0.1:${port} is not in allowed_domains: add "127.0.0.1:${port}" to allowed_domains in the [[mcp]] table "ev" (or to policy.allowed_domains)`,
    );
    expect(mock.requests).toHaveLength(0);

    mock.script([{ text: 'answered without it' }]);
    const flag = await rune(makeHome(), ['--mcp-http', http.url, 'hello']);
    expect(flag.code).toBe(0);
    expect(flag.stdout).toBe('answered without it\n');
    expect(flag.stderr).toContain(
      `add "127.0.0.1:${port}" to policy.allowed_domains in rune.toml, or configure the server as an [[mcp]] table with its own allowed_domains`,
    );
    expect(toolNames(mock.requests[0])).not.toContain('echo');
  });

  it('speaks https, verifying the certificate (NODE_EXTRA_CA_CERTS trusts a private CA)', async () => {
    const cert = makeCertificate(tempDir('rune-remote-tls-'));
    const tls = await startTlsProxy(http.port, cert);
    try {
      const url = `https://127.0.0.1:${tls.port}/mcp`;
      const h = makeHome(table('ev', url, 'required = true\n'));
      mock.script([
        { toolCalls: [{ name: 'echo', arguments: { message: 'over tls' } }] },
        { text: 'secure' },
      ]);
      const trusted = await runRune(['--base-url', mock.baseUrl, '--api-key', KEY, '--model', 'm', 'go'], {
        cwd: h.cwd,
        env: { ...h.env, NODE_EXTRA_CA_CERTS: cert.certFile },
        timeoutMs: 50_000,
      });
      expect(trusted.code).toBe(0);
      expect(toolResults(mock.requests[1])).toEqual(['Echo: over tls']);
      // The same server without trusting its certificate: refused, not silently accepted.
      const untrusted = await rune(h, ['go']);
      expect(untrusted.code).toBe(11);
      expect(untrusted.stderr).toMatch(
        /cannot reach 127\.0\.0\.1:\d+: (DEPTH_ZERO_SELF_SIGNED_CERT|SELF_SIGNED_CERT_IN_CHAIN)/,
      );
    } finally {
      await tls.close();
    }
  });

  it('refuses a bad --mcp-http value with a usage error', async () => {
    const result = await rune(makeHome(), ['--mcp-http', 'ftp://example.com/mcp', 'hello']);
    expect(result.code).toBe(2);
    expect(result.stderr).toContain('--mcp-http ftp://example.com/mcp: expected an http:// or https:// URL');
  });
});

describe('a remote server killed mid-run', () => {
  it('goes on without it, and the model learns its tools are gone', async () => {
    const server = await startEverything('streamableHttp');
    const h = makeHome(table('ev', server.url));
    let stderr = '';
    mock.script([
      { toolCalls: [{ name: 'echo', arguments: { message: 'one' } }] },
      // The server dies while the model "thinks"; it answers once rune has given the server up.
      async () => {
        await server.kill();
        for (let i = 0; i < 1500 && !stderr.includes('is down'); i++)
          await new Promise((r) => setTimeout(r, 20));
        return { toolCalls: [{ name: 'echo', arguments: { message: 'two' } }] };
      },
      { text: 'finished without the server' },
    ]);
    const child = spawn(
      RUNE_BIN,
      ['--base-url', mock.baseUrl, '--api-key', KEY, '--model', 'm', 'echo twice'],
      {
        cwd: h.cwd,
        env: h.env,
        stdio: ['ignore', 'pipe', 'pipe'],
      },
    );
    let stdout = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(code).toBe(0);
    expect(stdout).toBe('finished without the server\n');
    expect(stderr).toMatch(/MCP server "ev" stopped answering \(.*\); reconnecting/);
    const third = mock.requests[2];
    expect(toolNames(third)).not.toContain('echo');
    expect(toolNames(third)).toContain('read_file');
    const results = toolResults(third);
    expect(results[0]).toBe('Echo: one');
    expect(results[1]).toMatch(/^error: there is no tool named "echo" in this run/);
    const notices = messagesOf(third).filter(
      (m) => m.role === 'user' && String(m.content).startsWith('[rune]'),
    );
    expect(notices.map((m) => m.content)).toEqual([
      expect.stringMatching(
        /^\[rune\] MCP server "ev" is down \(unreachable: cannot reach 127\.0\.0\.1:\d+: ECONNREFUSED \(after 3 reconnect attempts\)\); its tools are no longer available: echo, /,
      ),
    ]);
  });
});

describe('an OAuth-protected server', () => {
  let oauth: OAuthServer;
  beforeAll(async () => {
    oauth = await startOAuthServer();
  });
  afterAll(() => oauth?.kill());

  /** `rune mcp login NAME`, with the test as the user's browser. */
  async function login(h: Home, name: string, flags: string[] = []): Promise<RunResult> {
    const child = spawn(RUNE_BIN, [...flags, 'mcp', 'login', name], {
      cwd: h.cwd,
      env: h.env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    let browsed: Promise<number> | undefined;
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
      const url = authorizationUrlIn(stderr);
      if (url && !browsed) browsed = playBrowser(url);
    });
    const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
    expect(await browsed).toBe(200);
    return { code, signal: null, stdout, stderr };
  }

  it('logs in through the loopback redirect, calls a tool with the token, refreshes it, logs out', async () => {
    // whoami is not read-only: the policy must allow it, as for any MCP tool.
    const h = makeHome(`[policy]\nallowed_mcp_tools = ["secure.whoami"]\n\n${table('secure', oauth.url)}`);
    const outputs: string[] = [];
    const keep = (result: RunResult) => {
      outputs.push(result.stdout, result.stderr);
      return result;
    };

    // Without a login, pipe mode never starts one: it names the command that does.
    mock.script([{ text: 'no tools' }]);
    const before = keep(await rune(h, ['hello']));
    expect(before.code).toBe(0);
    expect(before.stderr).toContain(
      `MCP server "secure" could not start: MCP server "secure" at ${oauth.url} asks for an OAuth login and none is stored: run \`rune mcp login secure\` in a terminal first`,
    );
    expect((await oauth.stats()).authorizations).toBe(0);

    const loggedIn = keep(await login(h, 'secure'));
    expect(loggedIn.code).toBe(0);
    expect(loggedIn.stderr).toContain('Open this URL in a browser on this machine:');
    expect(loggedIn.stderr).toContain(
      `Logged in to MCP server "secure" at ${oauth.url}: 2 tools over streamable-http.`,
    );
    const [stored1] = readdirSync(join(h.runeHome, 'mcp-auth'));
    const file = join(h.runeHome, 'mcp-auth', stored1!);
    expect(stored1).toMatch(/^127\.0\.0\.1_\d+-[0-9a-f]{16}\.json$/);
    expect(loggedIn.stderr).toContain(`The tokens are kept in ${file} (readable only by you).`);
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(statSync(join(h.runeHome, 'mcp-auth')).mode & 0o777).toBe(0o700);

    mock.script([
      { toolCalls: [{ name: 'echo', arguments: { message: 'with a token' } }] },
      { text: 'called' },
    ]);
    const first = keep(await rune(h, ['call it']));
    expect(first.code).toBe(0);
    expect(toolResults(mock.requests.at(-1))).toEqual(['Echo: with a token']);

    // The access token runs out: the next run's call gets a 401, refreshes and goes through.
    await oauth.expire();
    const trace = tempDir('rune-remote-trace-');
    mock.script([{ toolCalls: [{ name: 'whoami', arguments: {} }] }, { text: 'still called' }]);
    const refreshed = keep(
      await rune(h, ['--verbose', '--trace', trace, '--output', 'ndjson', 'call again']),
    );
    expect(refreshed.code).toBe(0);
    expect(toolResults(mock.requests.at(-1))[0]).toMatch(/^client [0-9a-f-]+$/);
    const stats = await oauth.stats();
    expect(stats.grants).toEqual(['authorization_code', 'refresh_token']);
    expect(stats.toolCalls).toBe(1);

    // No token ever shows: not in any output, trace, session, audit or history file.
    const stored = readFileSync(file, 'utf8');
    const tokens = stats.issued;
    expect(tokens).toHaveLength(4);
    expect(tokens.filter((token) => stored.includes(token))).toHaveLength(2);
    const written: string[] = [];
    for (const dir of [h.runeHome, trace, h.cwd]) {
      for (const entry of readdirSync(dir, { recursive: true, withFileTypes: true })) {
        const path = join(entry.parentPath, entry.name);
        if (entry.isFile() && path !== file && !path.includes(`${join(h.runeHome, 'cache')}`)) {
          written.push(readFileSync(path, 'latin1'));
        }
      }
    }
    expect(written.length).toBeGreaterThan(2);
    for (const text of [...outputs, ...written]) {
      for (const token of tokens) expect(text).not.toContain(token);
    }

    const out = keep(await runRune(['mcp', 'logout', 'secure'], { cwd: h.cwd, env: h.env }));
    expect(out.code).toBe(0);
    expect(out.stderr).toBe(
      `Logged out of MCP server "secure" at ${oauth.url}: the stored tokens are deleted and were revoked by the server.\n`,
    );
    expect(existsSync(file)).toBe(false);
    expect((await oauth.stats()).revoked).toEqual(tokens.filter((token) => stored.includes(token)).reverse());

    // Logged out and required: pipe mode stops at once with exit 11, naming the command.
    mock.setFallback({ text: 'should not be asked' });
    const asked = mock.requests.length;
    const required = makeHome(table('secure', oauth.url, 'required = true\n'));
    const stopped = await rune(required, ['hello']);
    expect(stopped.code).toBe(11);
    expect(stopped.stderr).toContain('run `rune mcp login secure` in a terminal first');
    expect(mock.requests).toHaveLength(asked);
  });

  // Logins are keyed by server URL: a table of the same name pointed at another server (another
  // config file) gets its own login, and neither run touches the other's tokens.
  it('two same-named tables at two URLs keep both logins, and each run uses its own', async () => {
    const second = await startOAuthServer();
    try {
      const h = makeHome(`[policy]\nallowed_mcp_tools = ["secure.whoami"]\n\n${table('secure', oauth.url)}`);
      const other = join(h.runeHome, 'other.toml');
      writeFileSync(
        other,
        `[policy]\nallowed_mcp_tools = ["secure.whoami"]\n\n${table('secure', second.url)}`,
      );
      const earlier = await oauth.stats();
      expect((await login(h, 'secure')).code).toBe(0);
      // A run with the other table first: no login for its URL, and the first one stays untouched.
      mock.script([{ text: 'no tools' }]);
      const without = await rune(h, ['--config', other, 'hello']);
      const secondLogin = await login(h, 'secure', ['--config', other]);
      expect(secondLogin.code).toBe(0);

      for (const [server, flags] of [
        [oauth, []],
        [second, ['--config', other]],
      ] as const) {
        // echo counts its calls: the call reached the server the table names, with its token.
        const calls = (await server.stats()).toolCalls;
        mock.script([
          { toolCalls: [{ name: 'echo', arguments: { message: server.url } }] },
          { text: 'called' },
        ]);
        const result = await rune(h, [...flags, 'echo it']);
        expect(result.code, result.stderr).toBe(0);
        expect(toolResults(mock.requests.at(-1))).toEqual([`Echo: ${server.url}`]);
        expect((await server.stats()).toolCalls).toBe(calls + 1);
      }
      expect(readdirSync(join(h.runeHome, 'mcp-auth'))).toHaveLength(2);
      expect(secondLogin.stderr).toContain(`Logged in to MCP server "secure" at ${second.url}`);
      expect(secondLogin.stderr).toContain(`The login of "secure" at ${oauth.url} is kept too`);
      // The run before the second login said which login it lacked, and which it did not use.
      expect(without.stderr).toContain(
        `MCP server "secure" at ${second.url} asks for an OAuth login and none is stored (the stored login of "secure" is for ${oauth.url}, another server; it is kept, not used): run \`rune mcp login secure\``,
      );
      // Neither login was given up: no token of either server was revoked or asked for again.
      const first = await oauth.stats();
      expect(first.revoked).toEqual(earlier.revoked);
      expect(first.authorizations).toBe(earlier.authorizations + 1);
      expect((await second.stats()).revoked).toEqual([]);
    } finally {
      await second.kill();
    }
  });

  it('explains what cannot be logged in to', async () => {
    const h = makeHome(
      `${table('tok', oauth.url, 'bearer_token_env_var = "TOK"\n')}\n[[mcp]]\nname = "local"\ncommand = "node"\n`,
    );
    const bearer = await runRune(['mcp', 'login', 'tok'], { cwd: h.cwd, env: h.env });
    expect(bearer.code).toBe(2);
    expect(bearer.stderr).toContain('uses a bearer token from $TOK; there is no OAuth login to make');
    const stdio = await runRune(['mcp', 'login', 'local'], { cwd: h.cwd, env: h.env });
    expect(stdio.code).toBe(2);
    expect(stdio.stderr).toContain('MCP server "local" is a stdio server (command)');
    const missing = await runRune(['mcp', 'logout', 'nope'], { cwd: h.cwd, env: h.env });
    expect(missing.code).toBe(13);
    expect(missing.stderr).toContain('no [[mcp]] table named "nope"');
    expect(missing.stderr).toContain('remote servers there: tok');
  });
});
