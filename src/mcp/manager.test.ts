// Real MCP servers (server-everything from npm) started through the sandbox executor.
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DEFAULTS, type RuneConfig } from '../config/schema.ts';
import { isRuneError } from '../core/errors.ts';
import { createLogger } from '../core/logger.ts';
import { createSandboxExecutor } from '../sandbox/executor.ts';
import {
  formatServers,
  formatServerTools,
  type McpManager,
  serversFromFlags,
  startMcpServers,
} from './manager.ts';

const require = createRequire(import.meta.url);
const EVERYTHING = join(
  dirname(require.resolve('@modelcontextprotocol/server-everything/package.json')),
  'dist/index.js',
);

function capture() {
  const lines: string[] = [];
  return { lines, logger: createLogger({ verbose: true, write: (line) => lines.push(line) }) };
}

const config = { ...DEFAULTS, mcp: [] } as unknown as RuneConfig;
const executor = createSandboxExecutor({ config, logger: createLogger({ write: () => {} }) });
const env = {
  PATH: process.env.PATH,
  HOME: process.env.HOME,
  RUNE_API_KEY: 'sk-rune-secret-key-0123456789',
  SECRET_X: 'hush-hush-value',
};
const signal = new AbortController().signal;

function call(manager: McpManager, name: string, args: Record<string, unknown> = {}) {
  const tool = manager.tools().find((t) => t.definition.name === name);
  if (!tool) throw new Error(`no tool ${name}`);
  return tool.execute(args, signal);
}

describe('startMcpServers with server-everything', () => {
  let manager: McpManager;
  const log = capture();

  beforeAll(async () => {
    manager = await startMcpServers({
      servers: [{ name: 'everything', command: 'node', args: [EVERYTHING, 'stdio'], timeout_secs: 2 }],
      executor,
      logger: log.logger,
      cwd: process.cwd(),
      env,
      maxResultBytes: 4096,
    });
  });
  afterAll(() => manager?.shutdown());

  it('offers the server tools under their own names, read-only from the annotation', () => {
    const tools = manager.tools();
    const echo = tools.find((t) => t.definition.name === 'echo');
    expect(echo).toMatchObject({ source: 'mcp', server: 'everything', readOnly: true });
    expect(echo?.definition.parameters).toMatchObject({ type: 'object', required: ['message'] });
    expect(echo?.definition.parameters).not.toHaveProperty('$schema');
    expect(tools.find((t) => t.definition.name === 'toggle-simulated-logging')?.readOnly).toBe(false);
  });

  it('calls echo and logs the call and result as NDJSON', async () => {
    expect(await call(manager, 'echo', { message: 'hello mcp' })).toEqual({
      content: 'Echo: hello mcp',
      isError: false,
    });
    const events = log.lines.map((l) => JSON.parse(l) as { event: string; tool?: string });
    expect(events.filter((e) => e.tool === 'echo').map((e) => e.event)).toEqual(['mcp.call', 'mcp.result']);
  });

  it('prefers structured content', async () => {
    const out = await call(manager, 'get-structured-content', { location: 'Chicago' });
    expect(JSON.parse(out.content)).toMatchObject({
      conditions: expect.any(String),
      temperature: expect.any(Number),
    });
  });

  it('turns a tool error into an error result', async () => {
    const out = await call(manager, 'get-sum', { a: 'one', b: 2 });
    expect(out.isError).toBe(true);
    expect(out.content).toMatch(/a/);
  });

  it('summarises images', async () => {
    const out = await call(manager, 'get-tiny-image');
    expect(out.content).toMatch(/\[image: image\/png, \d+ bytes\]/);
  });

  it('caps large output with a truncation note', async () => {
    const out = await call(manager, 'echo', { message: 'z'.repeat(20_000) });
    expect(Buffer.byteLength(out.content)).toBeLessThan(4300);
    expect(out.content).toMatch(/\[truncated: the MCP tool result was 20006 bytes/);
  });

  it('times a long-running call out per the table and stays usable', async () => {
    const out = await call(manager, 'trigger-long-running-operation', { duration: 30, steps: 3 });
    expect(out).toEqual({
      isError: true,
      content:
        'MCP tool "trigger-long-running-operation" of server "everything" timed out after 2 s (timeout_secs of the server)',
    });
    expect((await call(manager, 'echo', { message: 'still here' })).content).toBe('Echo: still here');
  });

  it('hands the server none of rune secrets (get-env)', async () => {
    const out = await call(manager, 'get-env');
    expect(out.isError).toBe(false);
    expect(out.content).toContain('"PATH"');
    expect(out.content).not.toContain('RUNE_API_KEY');
    expect(out.content).not.toContain('sk-rune-secret');
    expect(out.content).not.toContain('SECRET_X');
  });

  it('makes an unknown tool name an error result', async () => {
    const echo = manager.tools().find((t) => t.definition.name === 'echo');
    // The same server, asked for a tool it does not have.
    const server = (
      manager as unknown as {
        servers: Array<{
          call: (t: string, a: object, s: AbortSignal) => Promise<{ isError: boolean; content: string }>;
        }>;
      }
    ).servers[0];
    const out = await server?.call('no-such-tool', {}, signal);
    expect(echo).toBeDefined();
    expect(out?.isError).toBe(true);
    expect(out?.content).toMatch(/no-such-tool/);
  });

  it('describes servers for /info and /tools', () => {
    const info = manager.describeServers();
    expect(info[0]).toMatchObject({
      name: 'everything',
      state: 'ready',
      required: false,
      transport: 'stdio',
      target: `node ${EVERYTHING} stdio`,
      pid: expect.any(Number),
    });
    expect(formatServers(info)).toMatch(
      /^MCP servers:\n {2}everything: ready, \d+ tools, pid \d+ \[stdio\]$/,
    );
    const text = formatServerTools(info);
    expect(text).toContain('MCP server everything [stdio]:');
    expect(text).toMatch(/ {2}echo — Echoes back the input string \[read-only\]/);
  });
});

describe('startMcpServers failures and lifecycle', () => {
  it('stops with MCP_REQUIRED naming a required server whose command does not exist', async () => {
    const log = capture();
    const error = await startMcpServers({
      servers: [
        { name: 'ghost', command: 'no-such-mcp-server-xyz', required: true },
        { name: 'everything', command: 'node', args: [EVERYTHING, 'stdio'] },
      ],
      executor,
      logger: log.logger,
      cwd: process.cwd(),
      env,
    }).catch((e: unknown) => e);
    expect(isRuneError(error) && error.code).toBe('MCP_REQUIRED');
    expect((error as Error).message).toBe('required MCP server "ghost" could not start');
    expect((error as { details: string[] }).details).toEqual([
      'MCP server "ghost" could not start: command not found: no-such-mcp-server-xyz',
    ]);
  });

  it('reports a failing optional server and goes on with the others', async () => {
    const log = capture();
    const manager = await startMcpServers({
      servers: [
        {
          name: 'broken',
          command: 'node',
          args: ['-e', 'console.error("cannot start: no config"); process.exit(3)'],
        },
        { name: 'everything', command: 'node', args: [EVERYTHING, 'stdio'] },
      ],
      executor,
      logger: log.logger,
      cwd: process.cwd(),
      env,
    });
    try {
      const info = manager.describeServers();
      expect(info.map((s) => [s.name, s.state])).toEqual([
        ['broken', 'failed'],
        ['everything', 'ready'],
      ]);
      expect(info[0]?.reason).toMatch(
        /exited with code 3 during start-up; its stderr ends with:\ncannot start: no config/,
      );
      expect(log.lines.some((l) => l.includes('"event":"mcp.server_failed"'))).toBe(true);
    } finally {
      await manager.shutdown();
    }
  });

  it('hides a second server tool of the same name and warns', async () => {
    const log = capture();
    const manager = await startMcpServers({
      servers: serversFromFlags([`node ${EVERYTHING} stdio`, `node ${EVERYTHING} stdio`]),
      executor,
      logger: log.logger,
      cwd: process.cwd(),
      env,
    });
    try {
      const echoes = manager.tools().filter((t) => t.definition.name === 'echo');
      expect(echoes.map((t) => t.server)).toEqual(['server-everything']);
      expect(log.lines.join('')).toContain(
        'MCP tool \\"echo\\" of server \\"server-everything-2\\" is hidden: the name \\"echo\\" belongs to the tool of MCP server \\"server-everything\\"',
      );
    } finally {
      await manager.shutdown();
    }
  });

  it('withdraws the tools of a server that is killed, tells the model, and shuts the rest down', async () => {
    const log = capture();
    const manager = await startMcpServers({
      servers: [{ name: 'victim', command: 'node', args: [EVERYTHING, 'stdio'] }],
      executor,
      logger: log.logger,
      cwd: process.cwd(),
      env,
    });
    const echo = manager.tools().find((t) => t.definition.name === 'echo');
    let changed = 0;
    manager.onToolsChanged(() => changed++);
    const pid = manager.describeServers()[0]?.pid as number;
    process.kill(pid, 'SIGKILL');
    await waitFor(() => manager.describeServers()[0]?.state === 'crashed');
    expect(changed).toBe(1);
    expect(manager.tools()).toEqual([]);
    expect(manager.takeNotices()).toEqual([
      expect.stringMatching(
        /^MCP server "victim" has stopped \(it was killed by SIGKILL\); its tools are no longer available: echo, /,
      ),
    ]);
    expect(manager.takeNotices()).toEqual([]);
    const out = await echo?.execute({ message: 'x' }, signal);
    expect(out).toEqual({
      isError: true,
      content: 'MCP server "victim" is not running (it was killed by SIGKILL); its tools are withdrawn',
    });
    await manager.shutdown();
  });

  it('shutdown ends every server process', async () => {
    const manager = await startMcpServers({
      servers: [{ name: 'a', command: 'node', args: [EVERYTHING, 'stdio'] }],
      executor,
      logger: capture().logger,
      cwd: process.cwd(),
      env,
    });
    const pid = manager.describeServers()[0]?.pid as number;
    expect(isAlive(pid)).toBe(true);
    await manager.shutdown();
    expect(isAlive(pid)).toBe(false);
    expect(manager.describeServers()[0]?.state).toBe('stopped');
  });
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function waitFor(check: () => boolean, timeoutMs = 5000): Promise<void> {
  const until = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > until) throw new Error('condition not met in time');
    await new Promise((r) => setTimeout(r, 20));
  }
}
