// How a run uses MCP: the servers of rune.toml plus `--mcp-stdio` values are started, their tools
// join the run's tool registry (which the agent reads before every model request), follow the
// server's notifications/tools/list_changed, and a server that ends has its tools removed from it. The caller shuts the servers down when the run ends.
import type { ExtraTool } from '../agent/types.ts';
import type { RuneConfig } from '../config/schema.ts';
import type { Logger } from '../core/logger.ts';
import type { SandboxExecutor } from '../sandbox/types.ts';
import type { ToolRegistry } from '../tools/registry.ts';
import { type McpManager, serversFromFlags, startMcpServers } from './manager.ts';

export interface StartMcpForRunOptions {
  config: RuneConfig;
  /** Values of `--mcp-stdio`, each "command args". */
  mcpStdio?: readonly string[];
  executor: SandboxExecutor;
  logger: Logger;
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** The run's registry: MCP tools are added to it and removed when their server ends. */
  registry: ToolRegistry;
  startupTimeoutMs?: number;
}

/**
 * Starts the configured servers (none configured: returns undefined at no cost). Throws RuneError
 * MCP_REQUIRED when a required server fails. Server processes are also killed if rune exits
 * without calling shutdown().
 */
export async function startMcpForRun(options: StartMcpForRunOptions): Promise<McpManager | undefined> {
  const tables = options.config.mcp;
  const servers = [
    ...tables,
    ...serversFromFlags(
      options.mcpStdio ?? [],
      tables.map((server) => server.name),
    ),
  ];
  if (servers.length === 0) return undefined;
  const manager = await startMcpServers({
    servers,
    executor: options.executor,
    logger: options.logger,
    cwd: options.cwd,
    env: options.env,
    reservedNames: options.registry.names(),
    killOnExit: true,
    ...(options.startupTimeoutMs === undefined ? {} : { startupTimeoutMs: options.startupTimeoutMs }),
  });
  // The MCP tools this run's registry holds, by name: synced whenever the manager's list changes.
  const added = new Map<string, ExtraTool>();
  const sync = () => {
    const live = new Map(manager.tools().map((tool) => [tool.definition.name, tool]));
    for (const name of [...added.keys()]) {
      if (live.has(name)) continue;
      options.registry.remove(name);
      added.delete(name);
    }
    for (const [name, tool] of live) {
      if (added.get(name) === tool) continue;
      options.registry.add(tool);
      added.set(name, tool);
    }
  };
  sync();
  manager.onToolsChanged(sync);
  return manager;
}
