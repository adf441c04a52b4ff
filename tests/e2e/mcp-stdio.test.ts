// MCP through the built binary: real servers from npm (server-everything) started with
// --mcp-stdio or [[mcp]] tables, a scripted model calling their tools, a server killed mid-run,
// a required server that cannot start, and the scrubbed environment a server sees.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { type RecordedRequest, useMockLlm } from '../helpers/mock-llm.ts';
import { cleanEnv, requireBinary, runRune, tempDir } from '../helpers/rune.ts';

const require = createRequire(import.meta.url);
const EVERYTHING = join(
  dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')),
  'dist/index.js',
);
const KEY = 'sk-test-mcp-e2e-5a4b3c2d1e0f9a8b7c6d';
const mock = useMockLlm();

beforeAll(() => {
  requireBinary();
});

function makeHome(toml = '') {
  const home = tempDir('rune-mcp-home-');
  const runeHome = join(home, '.rune');
  mkdirSync(runeHome, { mode: 0o700 });
  if (toml) writeFileSync(join(runeHome, 'rune.toml'), toml);
  return { cwd: tempDir('rune-mcp-cwd-'), env: { ...cleanEnv(home), RUNE_HOME: runeHome } };
}

function rune(args: string[], extraEnv: NodeJS.ProcessEnv = {}, toml = '') {
  const h = makeHome(toml);
  return runRune(['--base-url', mock.baseUrl, '--api-key', KEY, '--model', 'm', ...args], {
    cwd: h.cwd,
    env: { ...h.env, ...extraEnv },
    timeoutMs: 50_000,
  });
}

// biome-ignore lint/suspicious/noExplicitAny: wire JSON
type Message = any;
function messagesOf(request: RecordedRequest | undefined): Message[] {
  return (request?.body?.messages ?? []) as Message[];
}
function toolResults(request: RecordedRequest | undefined): string[] {
  return messagesOf(request)
    .filter((m) => m.role === 'tool')
    .map((m) => String(m.content));
}
function toolNames(request: RecordedRequest | undefined): string[] {
  return ((request?.body?.tools ?? []) as Message[]).map((t) => t.function?.name as string);
}

/** Host pids of the processes below `root` whose command line contains `needle`. */
function descendantsMatching(root: number, needle: string): number[] {
  const children = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(entry)]);
    } catch {
      // The process ended while we looked.
    }
  }
  const found: number[] = [];
  const walk = (pid: number) => {
    for (const child of children.get(pid) ?? []) {
      try {
        if (readFileSync(`/proc/${child}/cmdline`, 'utf8').includes(needle)) found.push(child);
      } catch {
        // Gone.
      }
      walk(child);
    }
  };
  walk(root);
  return found;
}

const STDIO = `node ${EVERYTHING} stdio`;

describe('--mcp-stdio with server-everything', () => {
  it('offers the server tools and puts the echoed text into the next model request', async () => {
    mock.script([
      { toolCalls: [{ name: 'echo', arguments: { message: 'hello through MCP' } }] },
      { text: 'the server said hello' },
    ]);
    const result = await rune(['--verbose', '--mcp-stdio', STDIO, 'use the echo tool']);
    expect(result.stderr).not.toMatch(/"level":"error"/);
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('the server said hello\n');
    const [first, second] = mock.requests;
    expect(toolNames(first)).toEqual(expect.arrayContaining(['read_file', 'execute_cmd', 'echo', 'get-env']));
    expect(toolResults(second)).toEqual(['Echo: hello through MCP']);
    // --verbose logs the MCP call and its result as NDJSON events.
    const events = result.stderr
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line) as { event: string; tool?: string; server?: string });
    expect(events.filter((e) => e.tool === 'echo').map((e) => e.event)).toEqual(['mcp.call', 'mcp.result']);
    expect(events.find((e) => e.event === 'mcp.call')?.server).toBe('server-everything');
  });

  it('hands the server none of rune secret variables (get-env)', async () => {
    mock.script([{ toolCalls: [{ name: 'get-env', arguments: {} }] }, { text: 'done' }]);
    const secrets = {
      RUNE_API_KEY: 'sk-rune-env-secret-11223344556677',
      OPENAI_API_KEY: 'sk-openai-secret-99887766554433',
      GITHUB_TOKEN: 'ghp_abcdefghijklmnopqrstuvwxyz0123456789',
      MY_PASSWORD: 'hunter2-hunter2',
    };
    const result = await rune(['--mcp-stdio', STDIO, 'print the env'], secrets);
    expect(result.code).toBe(0);
    const [output] = toolResults(mock.requests[1]);
    // It did print an environment…
    expect(output).toContain('"PATH"');
    // …without any of rune's secrets, by name or by value, nor the key given with --api-key.
    for (const [name, value] of Object.entries(secrets)) {
      expect(output).not.toContain(name);
      expect(output).not.toContain(value);
    }
    expect(output).not.toContain(KEY);
  });

  it('goes on when the server is killed mid-run, and the model learns its tools are gone', async () => {
    mock.script([
      { toolCalls: [{ name: 'echo', arguments: { message: 'one' } }] },
      { toolCalls: [{ name: 'echo', arguments: { message: 'two' } }], delay: 1500 },
      { text: 'finished without the server' },
    ]);
    // The kill happens while the mock holds back its second answer, so rune notices the crash
    // before the model's next call reaches the dead server.
    const started = rune(['--mcp-stdio', STDIO, 'echo twice']);
    const deadline = Date.now() + 40_000;
    while (mock.requests.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    // rune blanks its own command line at start, so its server is found below this test's process.
    const killed = descendantsMatching(process.pid, 'server-everything');
    // A process listed a moment ago may have ended since (a wrapper that exec'd or exited): that one
    // needs no kill, but at least one server process must have been there to kill.
    const hit = killed.filter((pid) => {
      try {
        process.kill(pid, 'SIGKILL');
        return true;
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code !== 'ESRCH') throw error;
        return false;
      }
    });
    const result = await started;
    expect(hit.length).toBeGreaterThan(0);

    expect(result.code).toBe(0);
    expect(result.stdout).toBe('finished without the server\n');
    expect(result.stderr).toMatch(/MCP server "server-everything" has stopped \(it was killed by SIGKILL\)/);
    const third = mock.requests[2];
    // Its tools are withdrawn from the offer, and the call that came too late is an error the model reads.
    expect(toolNames(third)).not.toContain('echo');
    expect(toolNames(third)).toContain('read_file');
    const results = toolResults(third);
    expect(results[0]).toBe('Echo: one');
    expect(results[1]).toMatch(/^error: there is no tool named "echo" in this run; available: read_file, /);
    expect(results[1]).not.toMatch(/available:.*\becho\b/);
    // …and a notice says why, before the model answers.
    const notices = messagesOf(third).filter(
      (m) => m.role === 'user' && String(m.content).startsWith('[rune]'),
    );
    expect(notices.map((m) => m.content)).toEqual([
      expect.stringMatching(
        /^\[rune\] MCP server "server-everything" has stopped \(it was killed by SIGKILL\); its tools are no longer available: echo, /,
      ),
    ]);
  });
});

describe('[[mcp]] tables', () => {
  it('a required server whose command does not exist stops rune, naming it', async () => {
    mock.setFallback({ text: 'should not be asked' });
    const result = await rune(
      ['hello'],
      {},
      '[[mcp]]\nname = "ghost"\ncommand = "no-such-mcp-server-4711"\nrequired = true\n',
    );
    expect(result.code).toBe(11);
    expect(result.stderr).toContain('required MCP server "ghost" could not start');
    expect(result.stderr).toContain('command not found: no-such-mcp-server-4711');
    expect(mock.requests).toHaveLength(0);
  });

  it('an optional server that cannot start is reported and the run goes on', async () => {
    mock.script([{ text: 'answered anyway' }]);
    const result = await rune(
      ['hello'],
      {},
      '[[mcp]]\nname = "flaky"\ncommand = "no-such-mcp-server-4711"\n',
    );
    expect(result.code).toBe(0);
    expect(result.stdout).toBe('answered anyway\n');
    expect(result.stderr).toContain('MCP server "flaky" could not start: command not found');
  });

  it("keeps credentials in a server's command line and environment out of what rune prints", async () => {
    mock.script([{ text: 'answered anyway' }]);
    const argToken = 'cli-arg-credential-0815-quux';
    const envToken = 'cli-env-credential-4711-quux';
    const result = await rune(
      ['hello'],
      {},
      [
        '[[mcp]]',
        'name = "search"',
        'command = "sh"',
        `args = ["-c", "echo \\"started as $0 $1 with $SEARCH_TOKEN\\" >&2; exit 1", "srv", "--api-key=${argToken}"]`,
        `env = { SEARCH_TOKEN = "${envToken}" }`,
        '',
      ].join('\n'),
    );
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('started as srv --api-key=[REDACTED] with [REDACTED]');
    expect(result.stderr).not.toContain(argToken);
    expect(result.stderr).not.toContain(envToken);
  });

  it('keeps a password in a URL given as a flag value or in any variable out of what rune prints', async () => {
    mock.script([{ text: 'answered anyway' }]);
    const argToken = 'url-arg-credential-0815-quux';
    const envToken = 'url-env-credential-4711-quux';
    const headerToken = 'header-arg-credential-42-quux';
    const result = await rune(
      ['hello'],
      {},
      [
        '[[mcp]]',
        'name = "db"',
        'command = "sh"',
        `args = ["-c", "echo \\"started as $0 $1 $2 with $DATABASE_URL\\" >&2; exit 1", "srv", "--url=https://me:${argToken}@db.example/mcp", "--header=Authorization: Bearer ${headerToken}"]`,
        `env = { DATABASE_URL = "postgres://me:${envToken}@db/x" }`,
        '',
      ].join('\n'),
    );
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('started as srv --url=https://me:[REDACTED]@db.example/mcp');
    expect(result.stderr).not.toContain(argToken);
    expect(result.stderr).not.toContain(envToken);
    expect(result.stderr).not.toContain(headerToken);
  });

  it("keeps a dash-led password and a URL's Basic token out of what rune prints", async () => {
    mock.script([{ text: 'answered anyway' }]);
    const password = 'cli-dash-credential-0815-quux';
    const urlPassword = 'cli-basic-credential-4711-quux';
    const basic = Buffer.from(`me:${urlPassword}`).toString('base64');
    const result = await rune(
      ['hello'],
      {},
      [
        '[[mcp]]',
        'name = "db"',
        'command = "sh"',
        `args = ["-c", "u=\${3#*//}; echo \\"started with $1 $2 sent Authorization: Basic $(printf %s \\"\${u%%@*}\\" | base64)\\" >&2; exit 1", "srv", "--password", "-${password}", "--url=https://me:${urlPassword}@db.example/mcp"]`,
        '',
      ].join('\n'),
    );
    expect(result.code).toBe(0);
    expect(result.stderr).toContain(
      'started with --password [REDACTED] sent Authorization: Basic [REDACTED]',
    );
    for (const secret of [password, urlPassword, basic]) expect(result.stderr).not.toContain(secret);
  });

  it("keeps the password of a connection string in a server's environment out of what rune prints", async () => {
    mock.script([{ text: 'answered anyway' }]);
    const password = 'cli-connection-credential-0815';
    const result = await rune(
      ['hello'],
      {},
      [
        '[[mcp]]',
        'name = "db"',
        'command = "sh"',
        'args = ["-c", "echo \\"cannot connect with $CONNECTION\\" >&2; exit 1"]',
        `env = { CONNECTION = "Server=db;User Id=me;Password=${password};" }`,
        '',
      ].join('\n'),
    );
    expect(result.code).toBe(0);
    expect(result.stderr).toContain('cannot connect with Server=db;User Id=me;Password=[REDACTED];');
    expect(result.stderr).not.toContain(password);
  });

  it('a table server runs with its configured env and per-call timeout', async () => {
    mock.script([
      { toolCalls: [{ name: 'trigger-long-running-operation', arguments: { duration: 30, steps: 3 } }] },
      { toolCalls: [{ name: 'get-env', arguments: {} }] },
      { text: 'done' },
    ]);
    const toml = [
      '[[mcp]]',
      'name = "ev"',
      'command = "node"',
      `args = ["${EVERYTHING}", "stdio"]`,
      'timeout_secs = 1',
      'env = { GREETING = "from-the-table" }',
      '',
    ].join('\n');
    const result = await rune(['go'], {}, toml);
    expect(result.code).toBe(0);
    expect(toolResults(mock.requests[1])).toEqual([
      'MCP tool "trigger-long-running-operation" of server "ev" timed out after 1 s (timeout_secs of the server)',
    ]);
    expect(toolResults(mock.requests[2])[1]).toContain('"GREETING": "from-the-table"');
  });
});
