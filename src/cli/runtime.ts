// What a CLI run keeps beyond one model call: the sandbox executor and the tool registry, with the
// MCP servers of rune.toml, --mcp-stdio and --mcp-http started into it, shut down when the CLI is done.
import { createDefaultExecutor, requireStrictLayers } from '../agent/deps.ts';
import type { McpManager } from '../mcp/manager.ts';
import type { SessionLogin } from '../mcp/remote/server.ts';
import type { SandboxExecutor } from '../sandbox/types.ts';
import { ToolRegistry } from '../tools/registry.ts';
import type { AgentSetup } from './agent.ts';

export interface Runtime {
  executor: SandboxExecutor;
  registry: ToolRegistry;
  mcp?: McpManager;
  close(): Promise<void>;
}

/**
 * Starts the run's executor and MCP servers. `login` is given only by the interactive session: a
 * remote server that asks for an OAuth login gets one there; pipe mode never starts one.
 */
export async function startRuntime(setup: AgentSetup, login?: SessionLogin): Promise<Runtime> {
  const { config, logger, cwd, env } = setup;
  const executor = createDefaultExecutor({ prompt: '', config, logger, cwd, env });
  // Strict mode stops here, before an MCP server starts or a model is called: exit 8, each layer named.
  requireStrictLayers(config, executor);
  const registry = new ToolRegistry();
  const mcpStdio = setup.flags.mcpStdio ?? [];
  const mcpHttp = setup.flags.mcpHttp ?? [];
  let mcp: McpManager | undefined;
  if (config.mcp.length > 0 || mcpStdio.length > 0 || mcpHttp.length > 0) {
    // Loaded only when a server is configured: the SDK is not parsed on ordinary runs.
    const { startMcpForRun } = await import('../mcp/run-servers.ts');
    mcp = await startMcpForRun({
      config,
      mcpStdio,
      mcpHttp,
      executor,
      logger,
      cwd,
      env,
      registry,
      ...(login ? { remote: { login } } : {}),
    });
  }
  return {
    executor,
    registry,
    ...(mcp ? { mcp } : {}),
    close: async () => {
      await mcp?.shutdown();
    },
  };
}
