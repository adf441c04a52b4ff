// How a run uses MCP: the servers of rune.toml plus `--mcp-stdio` and `--mcp-http` values are
// started, their tools join the run's tool registry (which the agent reads before every model
// request), follow the server's notifications/tools/list_changed, and a server that ends has its
// tools removed from it. The caller shuts the servers down when the run ends.
import type { ExtraTool } from '../agent/types.ts';
import type { RuneConfig } from '../config/schema.ts';
import type { Logger } from '../core/logger.ts';
import { createSandboxExecutor } from '../sandbox/executor.ts';
import type { SandboxExecutor } from '../sandbox/types.ts';
import { ToolRegistry } from '../tools/registry.ts';
import {
  type ConfiguredServer,
  type McpManager,
  type RemoteOptions,
  serversFromFlags,
  serversFromHttpFlags,
  startMcpServers,
} from './manager.ts';

export interface StartMcpForRunOptions {
  config: RuneConfig;
  /** The servers to start instead of `config.mcp` (Concourse's source.mcp). */
  servers?: readonly ConfiguredServer[];
  /** Values of `--mcp-stdio`, each "command args". */
  mcpStdio?: readonly string[];
  /** Values of `--mcp-http`, each a URL. */
  mcpHttp?: readonly string[];
  executor: SandboxExecutor;
  logger: Logger;
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** The run's registry: MCP tools are added to it and removed when their server ends. */
  registry: ToolRegistry;
  startupTimeoutMs?: number;
  /** Remote settings beyond the policy's domains: the session's login, the hint of runs that cannot log in. */
  remote?: Omit<RemoteOptions, 'policyDomains' | 'unrestricted'>;
}

/** Every server a run starts: the tables (or given servers), then `--mcp-stdio`, then `--mcp-http`. */
export function serversOfRun(
  options: Pick<StartMcpForRunOptions, 'config' | 'servers' | 'mcpStdio' | 'mcpHttp'>,
) {
  const tables: ConfiguredServer[] = [...(options.servers ?? options.config.mcp)];
  const stdio = serversFromFlags(
    options.mcpStdio ?? [],
    tables.map((server) => server.name),
  );
  const http = serversFromHttpFlags(
    options.mcpHttp ?? [],
    [...tables, ...stdio].map((server) => server.name),
  );
  return [...tables, ...stdio, ...http];
}

/**
 * Starts the configured servers (none configured: returns undefined at no cost). Throws RuneError
 * MCP_REQUIRED when a required server fails. Server processes are also killed if rune exits
 * without calling shutdown().
 */
export async function startMcpForRun(options: StartMcpForRunOptions): Promise<McpManager | undefined> {
  const servers = serversOfRun(options);
  if (servers.length === 0) return undefined;
  const { policy } = options.config;
  const manager = await startMcpServers({
    servers,
    executor: options.executor,
    logger: options.logger,
    cwd: options.cwd,
    env: options.env,
    reservedNames: options.registry.names(),
    killOnExit: true,
    remote: {
      ...options.remote,
      policyDomains: policy.allowed_domains,
      unrestricted: policy.mode === 'unrestricted',
    },
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

/** The MCP side of one run that starts and stops its own servers (a notes chat, a Concourse step). */
export interface McpRunScope {
  /** The run's registry: `extraTools` first, then the servers' tools. */
  tools: ToolRegistry;
  executor: SandboxExecutor;
  takeNotices(): string[];
  /** Why servers that are not required could not start (a login is needed …): their tools are missing. */
  startFailures: readonly string[];
  /** Shuts the servers down. */
  close(): Promise<void>;
}

/**
 * Starts the servers of one run (`servers`, else `config.mcp`) into a fresh registry holding
 * `extraTools`; undefined when there are none. Never starts a login: `loginHint` says what to do.
 */
export async function mcpForOneRun(options: {
  config: RuneConfig;
  servers?: readonly ConfiguredServer[];
  extraTools?: readonly ExtraTool[];
  logger: Logger;
  cwd: string;
  env: NodeJS.ProcessEnv;
  loginHint: (server: string) => string;
  /** The run's own executor, when the caller made one already (its layers were reported). */
  executor?: SandboxExecutor;
}): Promise<McpRunScope | undefined> {
  const servers = options.servers ?? options.config.mcp;
  if (servers.length === 0) return undefined;
  const executor =
    options.executor ??
    createSandboxExecutor({
      config: options.config,
      logger: options.logger,
      mode: options.config.sandbox.mode,
    });
  const tools = new ToolRegistry(options.extraTools ?? []);
  const manager = await startMcpForRun({
    config: options.config,
    servers,
    executor,
    logger: options.logger,
    cwd: options.cwd,
    env: options.env,
    registry: tools,
    remote: { loginHint: options.loginHint },
  });
  return {
    tools,
    executor,
    takeNotices: () => manager?.takeNotices() ?? [],
    startFailures: manager?.startFailures ?? [],
    close: async () => {
      await manager?.shutdown();
    },
  };
}
