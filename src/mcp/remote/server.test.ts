// Remote MCP servers for real: server-everything from npm over Streamable HTTP and SSE, a proxy
// that breaks the connection on demand, and the OAuth test server built from the SDK's own auth
// pieces. Only what a run does at the edges is shortened (reconnect delays).

import { randomUUID } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { McpServer as SdkServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  type CuttableProxy,
  type OAuthServer,
  playBrowser,
  type RunningServer,
  startEverything,
  startOAuthServer,
  startProxy,
} from '../../../tests/helpers/remote-mcp.ts';
import type { McpServerConfig } from '../../config/mcp-schema.ts';
import { isRuneError } from '../../core/errors.ts';
import { createLogger } from '../../core/logger.ts';
import type { SandboxExecutor } from '../../sandbox/types.ts';
import { type McpManager, type RemoteOptions, startMcpServers } from '../manager.ts';
import type { RemoteServer } from './server.ts';

const logger = createLogger({ write: () => {} });
// Remote servers never spawn anything: an executor that would be a bug to use.
const executor = {
  spawn: () => {
    throw new Error('a remote server must not spawn');
  },
} as unknown as SandboxExecutor;
const signal = new AbortController().signal;
const home = () => ({ PATH: process.env.PATH, RUNE_HOME: mkdtempSync(join(tmpdir(), 'rune-remote-')) });

async function start(
  servers: McpServerConfig[],
  remote: Partial<RemoteOptions> = {},
  env: NodeJS.ProcessEnv = home(),
): Promise<McpManager> {
  return startMcpServers({
    servers,
    executor,
    logger,
    cwd: process.cwd(),
    env,
    startupTimeoutMs: 15_000,
    remote: { policyDomains: [], ...remote },
  });
}

function call(manager: McpManager, name: string, args: Record<string, unknown> = {}) {
  const tool = manager.allTools().find((t) => t.definition.name === name);
  if (!tool) throw new Error(`no tool ${name}`);
  return tool.execute(args, signal);
}

async function until(check: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 1500 && !check(); i++) await new Promise((r) => setTimeout(r, 20));
  if (!check()) throw new Error(`timed out waiting for ${what}`);
}

const local = (port: number) => [`127.0.0.1:${port}`];

describe('server-everything over HTTP', () => {
  let http: RunningServer;
  let sse: RunningServer;
  beforeAll(async () => {
    [http, sse] = await Promise.all([startEverything('streamableHttp'), startEverything('sse')]);
  });
  afterAll(async () => {
    await Promise.all([http?.kill(), sse?.kill()]);
  });

  it('calls echo over Streamable HTTP, found without being told', async () => {
    const manager = await start([{ name: 'ev', url: http.url, allowed_domains: local(http.port) }]);
    try {
      expect(await call(manager, 'echo', { message: 'over http' })).toEqual({
        content: 'Echo: over http',
        isError: false,
      });
      expect(manager.describeServers()[0]).toMatchObject({
        state: 'ready',
        transport: 'streamable-http',
        target: http.url,
      });
    } finally {
      await manager.shutdown();
    }
  });

  it('calls echo over SSE, named or found by falling back from Streamable HTTP', async () => {
    const manager = await start(
      [
        { name: 'named', url: sse.url, transport: 'sse' },
        { name: 'found', url: sse.url },
      ],
      { policyDomains: local(sse.port) },
    );
    try {
      expect(manager.describeServers().map((s) => [s.name, s.state, s.transport])).toEqual([
        ['named', 'ready', 'sse'],
        ['found', 'ready', 'sse'],
      ]);
      expect((await call(manager, 'echo', { message: 'over sse' })).content).toBe('Echo: over sse');
    } finally {
      await manager.shutdown();
    }
  });

  it('refuses a host that is not allowed, naming the key, and stops on a required one', async () => {
    const error = await start([{ name: 'ev', url: http.url, required: true }]).catch((e: unknown) => e);
    expect(isRuneError(error) && error.code).toBe('MCP_REQUIRED');
    expect((error as { details: string[] }).details).toEqual([
      `MCP server "ev" could not start: its host 127.0.0.1:${http.port} is not in allowed_domains: add "127.0.0.1:${http.port}" to allowed_domains in the [[mcp]] table "ev" (or to policy.allowed_domains)`,
    ]);
  });

  it('refuses a loopback server reached by a name when no loopback address is listed', async () => {
    const manager = await start([{ name: 'ev', url: `http://localhost:${http.port}/mcp` }], {
      unrestricted: true,
    });
    try {
      expect(manager.describeServers()[0]?.state).toBe('failed');
      expect(manager.describeServers()[0]?.reason).toMatch(
        /^refused to connect to localhost for MCP server "ev": (127\.0\.0\.1|::1) is a loopback/,
      );
    } finally {
      await manager.shutdown();
    }
  });
});

describe('a connection that breaks', () => {
  let upstream: RunningServer;
  let proxy: CuttableProxy;
  beforeAll(async () => {
    upstream = await startEverything('streamableHttp');
    proxy = await startProxy(upstream.port);
  });
  afterAll(async () => {
    await proxy?.close();
    await upstream?.kill();
  });

  it('is resumed with the same session once the network is back', async () => {
    const manager = await start(
      [{ name: 'ev', url: `http://127.0.0.1:${proxy.port}/mcp`, allowed_domains: local(proxy.port) }],
      { reconnectDelaysMs: [100, 200, 400, 800, 1600, 3200, 6400] },
    );
    const server = (manager as unknown as { servers: RemoteServer[] }).servers[0] as RemoteServer;
    try {
      const session = server.sessionId;
      expect(session).toBeDefined();
      proxy.cut();
      await until(() => server.state === 'reconnecting', 'reconnecting');
      const failed = await call(manager, 'echo', { message: 'while cut' });
      expect(failed).toMatchObject({ isError: true });
      expect(failed.content).toMatch(/is not reachable now \(rune is reconnecting\)/);
      proxy.restore();
      await until(() => server.state === 'ready', 'ready again');
      expect(server.sessionId).toBe(session);
      expect((await call(manager, 'echo', { message: 'back' })).content).toBe('Echo: back');
      expect(manager.takeNotices()).toEqual([]);
    } finally {
      await manager.shutdown();
    }
  });

  it('starts a new session when the server lost the old one (restarted)', async () => {
    const manager = await start(
      [{ name: 'ev', url: `http://127.0.0.1:${proxy.port}/mcp`, allowed_domains: local(proxy.port) }],
      { reconnectDelaysMs: [100, 200, 400, 800, 1600, 3200, 6400] },
    );
    const server = (manager as unknown as { servers: RemoteServer[] }).servers[0] as RemoteServer;
    try {
      const session = server.sessionId;
      proxy.cut();
      await until(() => server.state === 'reconnecting', 'reconnecting');
      await upstream.kill();
      upstream = await startEverything('streamableHttp', upstream.port);
      proxy.restore();
      await until(() => server.state === 'ready', 'ready again');
      expect(server.sessionId).toBeDefined();
      expect(server.sessionId).not.toBe(session);
      expect((await call(manager, 'echo', { message: 'new session' })).content).toBe('Echo: new session');
    } finally {
      await manager.shutdown();
    }
  });

  it('is given up after the bounded reconnects: tools withdrawn, the model told', async () => {
    const doomed = await startEverything('streamableHttp');
    const manager = await start([{ name: 'ev', url: doomed.url, allowed_domains: local(doomed.port) }], {
      reconnectDelaysMs: [50, 100, 200],
    });
    try {
      expect(manager.tools().some((t) => t.definition.name === 'echo')).toBe(true);
      await doomed.kill();
      await until(() => manager.describeServers()[0]?.state === 'down', 'down');
      expect(manager.tools()).toEqual([]);
      const [notice] = manager.takeNotices();
      expect(notice).toMatch(
        new RegExp(
          `^MCP server "ev" is down \\(unreachable: cannot reach 127\\.0\\.0\\.1:${doomed.port}: ECONNREFUSED \\(after 3 reconnect attempts\\)\\); its tools are no longer available: echo, `,
        ),
      );
      expect((await call(manager, 'echo', { message: 'x' })).content).toMatch(
        /^MCP server "ev" is not running/,
      );
    } finally {
      await manager.shutdown();
    }
  });
});

describe('credentials', () => {
  it('sends the bearer token and env_headers from the environment, never from the file', async () => {
    const seen: Record<string, string | string[] | undefined>[] = [];
    const server = createServer((req, res) => {
      seen.push(req.headers);
      res.writeHead(401).end();
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const { port } = server.address() as AddressInfo;
    try {
      const table: McpServerConfig = {
        name: 'tok',
        url: `http://127.0.0.1:${port}/mcp`,
        allowed_domains: local(port),
        bearer_token_env_var: 'TOK_TOKEN',
        env_headers: { 'X-Api-Key': 'TOK_KEY' },
        headers: { 'X-Client': 'rune-test' },
      };
      const unset = await start([table]);
      expect(unset.describeServers()[0]?.reason).toBe(
        'the environment variable TOK_KEY (env_headers "X-Api-Key") is not set',
      );
      expect(seen).toEqual([]);
      const manager = await start(
        [table],
        {},
        { ...home(), TOK_TOKEN: 'tok-secret-123456', TOK_KEY: 'key-secret-654321' },
      );
      expect(manager.describeServers()[0]?.reason).toMatch(/refused the credentials \(HTTP 401\)/);
      expect(seen[0]).toMatchObject({
        authorization: 'Bearer tok-secret-123456',
        'x-api-key': 'key-secret-654321',
        'x-client': 'rune-test',
      });
    } finally {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe('OAuth', () => {
  let oauth: OAuthServer;
  beforeAll(async () => {
    oauth = await startOAuthServer();
  });
  afterAll(() => oauth?.kill());

  it('never starts a login outside the session: it names `rune mcp login`', async () => {
    const manager = await start([{ name: 'secure', url: oauth.url, allowed_domains: local(oauth.port) }]);
    expect(manager.describeServers()[0]).toMatchObject({
      state: 'failed',
      reason: `MCP server "secure" at ${oauth.url} asks for an OAuth login and none is stored: run \`rune mcp login secure\` in a terminal first`,
    });
    expect((await oauth.stats()).registrations).toBe(0);
  });

  it('logs in from the session through the loopback redirect, then offers the tools', async () => {
    const env = home();
    const shown: string[] = [];
    const done: unknown[] = [];
    const manager = await start(
      [{ name: 'secure', url: oauth.url, allowed_domains: local(oauth.port) }],
      {
        login: {
          show: (_server, url, opened) => {
            shown.push(url);
            expect(opened).toBe(false);
            void playBrowser(url);
          },
          done: (_server, outcome) => done.push(outcome),
        },
      },
      env,
    );
    try {
      const server = (manager as unknown as { servers: RemoteServer[] }).servers[0] as RemoteServer;
      await server.pendingLogin;
      expect(shown).toHaveLength(1);
      expect(done).toEqual([{ ok: true, tools: 2 }]);
      expect(manager.describeServers()[0]?.state).toBe('ready');
      expect(manager.takeNotices()).toEqual([
        'MCP server "secure" is connected now; new tools: echo, whoami.',
      ]);
      expect((await call(manager, 'echo', { message: 'with a token' })).content).toBe('Echo: with a token');
      // The next run uses the stored login without asking.
      const again = await start(
        [{ name: 'secure', url: oauth.url, allowed_domains: local(oauth.port) }],
        {},
        env,
      );
      expect(again.describeServers()[0]?.state).toBe('ready');
      await again.shutdown();
    } finally {
      await manager.shutdown();
    }
  });
});

describe('what the stdio client does, over HTTP', () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    // A stateful Streamable HTTP server from the SDK: a large result, and a tool that adds a tool.
    const sessions = new Map<string, StreamableHTTPServerTransport>();
    server = createServer(async (req, res) => {
      const id = req.headers['mcp-session-id'];
      let transport = typeof id === 'string' ? sessions.get(id) : undefined;
      if (!transport) {
        const mcp = new SdkServer({ name: 'shifty', version: '1.0.0' });
        mcp.registerTool(
          'big',
          { description: 'a long answer', annotations: { readOnlyHint: true } },
          async () => ({
            content: [{ type: 'text', text: 'x'.repeat(100_000) }],
          }),
        );
        mcp.registerTool('change', { description: 'adds a tool' }, async () => {
          mcp.registerTool('new_tool', { description: 'added at run time' }, async () => ({
            content: [{ type: 'text', text: 'from new_tool' }],
          }));
          return { content: [{ type: 'text', text: 'changed' }] };
        });
        const created = new StreamableHTTPServerTransport({
          sessionIdGenerator: () => randomUUID(),
          onsessioninitialized: (sessionId) => {
            sessions.set(sessionId, created);
          },
        });
        await mcp.connect(created);
        transport = created;
      }
      await transport.handleRequest(req, res);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server?.closeAllConnections();
    await new Promise<void>((resolve) => server?.close(() => resolve()));
  });

  it('caps results and follows list_changed, telling the model', async () => {
    const manager = await startMcpServers({
      servers: [{ name: 'shifty', url: `http://127.0.0.1:${port}/mcp`, allowed_domains: local(port) }],
      executor,
      logger,
      cwd: process.cwd(),
      env: home(),
      maxResultBytes: 4096,
      remote: { policyDomains: [] },
    });
    try {
      const big = await call(manager, 'big');
      expect(big.content).toMatch(/\[truncated: the MCP tool result was 100000 bytes/);
      expect(Buffer.byteLength(big.content)).toBeLessThan(4096 + 200);
      expect(manager.tools().map((t) => t.definition.name)).toEqual(['big', 'change']);
      expect((await call(manager, 'change')).content).toBe('changed');
      await until(() => manager.tools().some((t) => t.definition.name === 'new_tool'), 'new_tool');
      expect(manager.takeNotices()).toEqual(['MCP server "shifty" changed its tools (new tools: new_tool).']);
      expect((await call(manager, 'new_tool')).content).toBe('from new_tool');
    } finally {
      await manager.shutdown();
    }
  });
});
