// Text for /info and /tools about MCP servers, from plain data; no SDK import, so the session can
// show it without loading the MCP client.
import type { LayerReport } from '../sandbox/types.ts';

/**
 * starting → ready; failed (never started); crashed (a stdio process ended); login (waiting for
 * the user to log in); reconnecting (a remote server stopped answering); down (reconnecting gave
 * up); stopped (rune shut it down).
 */
export type ServerState =
  | 'starting'
  | 'ready'
  | 'failed'
  | 'crashed'
  | 'login'
  | 'reconnecting'
  | 'down'
  | 'stopped';

/** `http`: a remote server whose transport is not settled yet (Streamable HTTP, else SSE). */
export type TransportName = 'stdio' | 'streamable-http' | 'sse' | 'http';

export interface McpToolInfo {
  /** The name the model sees. */
  name: string;
  /** The name the server gave it. */
  serverTool: string;
  description: string;
  readOnly: boolean;
  /** Set when the tool is not offered: the owner of its name. */
  hiddenBy?: string;
}

export interface McpServerInfo {
  name: string;
  state: ServerState;
  required: boolean;
  transport: TransportName;
  /** The command line of a stdio server, the URL of a remote one. */
  target: string;
  pid?: number;
  /** Why it failed or ended. */
  reason?: string;
  tools: McpToolInfo[];
  layers: LayerReport[];
}

/** How a server is reached: `stdio`, or the transport and the URL of a remote server. */
export function describeTransport(server: Pick<McpServerInfo, 'transport' | 'target'>): string {
  return server.transport === 'stdio' ? 'stdio' : `${server.transport} ${server.target}`;
}

/** One line per server for /info. */
export function formatServers(servers: readonly McpServerInfo[]): string {
  if (servers.length === 0) return 'MCP servers: none';
  const lines = ['MCP servers:'];
  for (const server of servers) {
    const offered = server.tools.filter((tool) => !tool.hiddenBy).length;
    const detail =
      server.state === 'ready'
        ? `ready, ${offered} tool${offered === 1 ? '' : 's'}${server.pid ? `, pid ${server.pid}` : ''}`
        : `${server.state}${server.reason ? `: ${server.reason.split('\n')[0]}` : ''}`;
    lines.push(
      `  ${server.name}${server.required ? ' (required)' : ''}: ${detail} [${describeTransport(server)}]`,
    );
  }
  return lines.join('\n');
}

/** The MCP part of /tools: each server's tools, marking read-only, hidden and withdrawn ones. */
export function formatServerTools(servers: readonly McpServerInfo[]): string {
  const lines: string[] = [];
  for (const server of servers) {
    const state = server.state === 'ready' ? '' : ` (${server.state}: tools withdrawn)`;
    lines.push(`MCP server ${server.name} [${describeTransport(server)}]${state}:`);
    if (server.tools.length === 0) lines.push('  (no tools)');
    for (const tool of server.tools) {
      const flags = [tool.readOnly ? 'read-only' : 'may change things'];
      if (tool.hiddenBy) flags.push(`hidden: name taken by the ${tool.hiddenBy}`);
      const summary = tool.description.split('\n')[0] ?? '';
      lines.push(`  ${tool.name}${summary ? ` — ${summary}` : ''} [${flags.join('; ')}]`);
    }
  }
  return lines.join('\n');
}
