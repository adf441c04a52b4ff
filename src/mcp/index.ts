// The MCP client as the rest of rune sees it: start the configured servers, offer their tools,
// describe them for /tools and /info, shut them down.
export type { McpServerInfo, McpToolInfo, StartMcpOptions } from './manager.ts';
export {
  formatServers,
  formatServerTools,
  McpManager,
  serversFromFlags,
  startMcpServers,
} from './manager.ts';
export { type StartMcpForRunOptions, startMcpForRun } from './run-servers.ts';
