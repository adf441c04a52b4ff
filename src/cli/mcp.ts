// `rune mcp login NAME` and `rune mcp logout NAME`: the OAuth login of a remote MCP server (an
// [[mcp]] table with a url, or a URL as --mcp-http takes it), run in a terminal. Pipe mode, the
// notes server and Concourse never log in; they use what this stored. Messages go to stderr.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { isRemoteMcp, type RemoteMcpConfig } from '../config/mcp-schema.ts';
import { RuneError } from '../core/errors.ts';
import { redact } from '../core/redact.ts';
import { terminalText } from '../core/terminal-text.ts';
import { VERSION } from '../core/version.ts';
import { type ConfiguredServer, serversFromHttpFlags } from '../mcp/manager.ts';
import { LOGIN_TIMEOUT_MS, loginToServer, logoutFromServer } from '../mcp/remote/auth/login.ts';
import { otherLogins, TokenStore } from '../mcp/remote/auth/store.ts';
import type { HostGrant } from '../mcp/remote/hosts.ts';
import { displayUrl } from '../mcp/remote/server.ts';
import { describeRemoteError } from '../mcp/remote/transports.ts';
import { type AgentSetup, setupAgent } from './agent.ts';
import type { AgentFlags } from './flags.ts';

export interface McpCommandIo {
  stderr: (text: string) => void;
}

// A server's URL, names and error text are shown, never obeyed by the terminal.
const defaultIo: McpCommandIo = { stderr: (text) => process.stderr.write(terminalText(text)) };

/** The remote server NAME stands for: an [[mcp]] table with a url, or a URL. */
export function findRemoteServer(setup: AgentSetup, name: string): RemoteMcpConfig & ConfiguredServer {
  const tables = setup.config.mcp;
  const table = tables.find((server) => server.name === name);
  if (table) {
    if (!isRemoteMcp(table)) {
      throw new RuneError(
        'USAGE',
        `MCP server "${name}" is a stdio server (command); only remote servers (url) have a login`,
      );
    }
    return { ...table, origin: 'table' };
  }
  if (/^https?:\/\//i.test(name)) {
    const [server] = serversFromHttpFlags(
      [name],
      tables.map((t) => t.name),
    );
    return server as RemoteMcpConfig & ConfiguredServer;
  }
  const remote = tables.filter(isRemoteMcp).map((server) => server.name);
  throw new RuneError(
    'NOT_FOUND',
    `no [[mcp]] table named "${name}" in ${setup.configFile}; ${
      remote.length > 0
        ? `remote servers there: ${remote.join(', ')}`
        : 'it has no remote servers (tables with url)'
    }; a URL works too: rune mcp login https://mcp.example.com/mcp`,
  );
}

function grantOf(setup: AgentSetup, server: RemoteMcpConfig & ConfiguredServer): HostGrant {
  return {
    server: server.name,
    origin: server.origin ?? 'table',
    tableDomains: server.allowed_domains ?? [],
    policyDomains: setup.config.policy.allowed_domains,
    unrestricted: setup.config.policy.mode === 'unrestricted',
  };
}

/** Static headers and env_headers of the table; a table with a bearer token has no login. */
function loginHeaders(server: RemoteMcpConfig, env: NodeJS.ProcessEnv): Record<string, string> {
  if (server.bearer_token_env_var !== undefined) {
    throw new RuneError(
      'USAGE',
      `MCP server "${server.name}" uses a bearer token from $${server.bearer_token_env_var}; there is no OAuth login to make (remove bearer_token_env_var to use OAuth)`,
    );
  }
  const headers: Record<string, string> = { ...server.headers };
  for (const [header, variable] of Object.entries(server.env_headers ?? {})) {
    const value = env[variable];
    if (!value) {
      throw new RuneError(
        'USAGE',
        `the environment variable ${variable} (env_headers "${header}" of MCP server "${server.name}") is not set`,
      );
    }
    headers[header] = value;
  }
  return headers;
}

export async function mcpLogin(
  name: string,
  flags: AgentFlags,
  io: McpCommandIo = defaultIo,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const setup = setupAgent(flags, env);
  const server = findRemoteServer(setup, name);
  const headers = loginHeaders(server, env);
  const store = new TokenStore(env, server.name, server.url);
  io.stderr(`Logging in to MCP server "${server.name}" at ${displayUrl(server.url)}.\n`);
  // Ctrl-C gives up the wait for the browser and closes the loopback listener.
  const stop = new AbortController();
  const onSignal = () => stop.abort();
  process.once('SIGINT', onSignal);
  try {
    const outcome = await loginToServer({
      server,
      env,
      grant: grantOf(setup, server),
      headers,
      ui: {
        show: (url, opened) =>
          io.stderr(
            `${opened ? 'A browser was opened to log in. If it did not show up, open' : 'Open'} this URL in a browser on this machine:\n\n  ${url}\n\nWaiting for the login (up to ${LOGIN_TIMEOUT_MS / 60_000} minutes; Ctrl-C gives up)…\n`,
          ),
      },
      makeClient: () => new Client({ name: 'rune', version: VERSION }, { capabilities: {} }),
      connectTimeoutMs: 30_000,
      signal: stop.signal,
    });
    // Logins are kept per server URL: one for the same name at another URL stays as it is.
    const kept = otherLogins(env, server.name, server.url)
      .map(
        (other) => ` The login of "${server.name}" at ${displayUrl(other.url)} is kept too (${other.file}).`,
      )
      .join('');
    io.stderr(
      outcome.loggedIn
        ? `Logged in to MCP server "${server.name}" at ${displayUrl(server.url)}: ${outcome.tools} tool${outcome.tools === 1 ? '' : 's'} over ${outcome.kind}. The tokens are kept in ${store.file} (readable only by you).${kept}\n`
        : `MCP server "${server.name}" let rune in without a login (${outcome.tools} tools over ${outcome.kind}); nothing was stored.\n`,
    );
    return 0;
  } catch (error) {
    if (stop.signal.aborted) {
      io.stderr('rune: the login was cancelled\n');
      return new RuneError('INTERRUPTED', '').exitCode;
    }
    throw new RuneError(
      'MCP_AUTH',
      `the login to MCP server "${server.name}" failed: ${redact(describeRemoteError(error, 30_000))}`,
      { cause: error },
    );
  } finally {
    process.off('SIGINT', onSignal);
  }
}

export async function mcpLogout(
  name: string,
  flags: AgentFlags,
  io: McpCommandIo = defaultIo,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number> {
  const setup = setupAgent(flags, env);
  const server = findRemoteServer(setup, name);
  const outcome = await logoutFromServer({ server, env, grant: grantOf(setup, server) });
  if (!outcome.removed) {
    io.stderr(
      `MCP server "${server.name}" at ${displayUrl(server.url)} has no stored login; nothing to do.\n`,
    );
    return 0;
  }
  io.stderr(
    `Logged out of MCP server "${server.name}" at ${displayUrl(server.url)}: the stored tokens are deleted${
      outcome.revoked
        ? ' and were revoked by the server'
        : outcome.note
          ? ` (not revoked: ${redact(outcome.note)})`
          : ''
    }.\n`,
  );
  return 0;
}
