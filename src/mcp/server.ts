// One stdio MCP server: started through the sandbox and spoken to with the SDK's Client over the
// sandboxed stdio transport; its end (exit, crash, closed pipes) is noticed and reported.
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import type { StdioMcpConfig } from '../config/mcp-schema.ts';
import { credentialsInArgs, credentialsInEnv } from '../core/command-credentials.ts';
import { registerSecret } from '../core/redact.ts';
import type { SandboxExecutor } from '../sandbox/types.ts';
import { type ConnectionDeps, McpConnection } from './connection.ts';
import type { TransportName } from './format.ts';
import { locateServer } from './locate.ts';
import { planServerSandbox } from './plan.ts';
import { type ExitInfo, SandboxedStdioTransport } from './transport.ts';

export { DEFAULT_CALL_TIMEOUT_SECS, DEFAULT_STARTUP_TIMEOUT_MS } from './connection.ts';

export interface ServerDeps extends ConnectionDeps {
  executor: SandboxExecutor;
  cwd: string;
  /** rune's environment: PATH to find the program, and the few variables a server inherits. */
  env: NodeJS.ProcessEnv;
}

export function describeExit(exit: ExitInfo | undefined): string {
  if (!exit) return 'its connection closed';
  if (exit.signal) return `it was killed by ${exit.signal}`;
  return `it exited with code ${exit.exitCode}`;
}

function lastLines(text: string, count = 5): string {
  return text.trim().split('\n').slice(-count).join('\n');
}

export class McpServer extends McpConnection {
  private stdio: SandboxedStdioTransport | undefined;

  constructor(
    override readonly config: StdioMcpConfig,
    private readonly deps: ServerDeps,
  ) {
    super(config, deps);
    // Its command line is shown (/mcp, failures) and it may echo its environment when it fails.
    for (const value of credentialsInArgs(config.args ?? [])) registerSecret(value);
    for (const value of credentialsInEnv(config.env ?? {})) registerSecret(value);
  }

  get transport(): TransportName {
    return 'stdio';
  }

  get target(): string {
    return [this.config.command, ...(this.config.args ?? [])].join(' ');
  }

  override get pid(): number | undefined {
    return this.stdio?.pid;
  }

  /** Starts the process, runs the MCP handshake and lists the tools. Rejects with a readable Error. */
  async start(): Promise<void> {
    const { executor, logger, cwd, env } = this.deps;
    const located = locateServer(this.config.command, this.config.args ?? [], env.PATH, cwd);
    if (!located.program) {
      return this.fail(`command not found: ${this.config.command}`);
    }
    const plan = planServerSandbox(this.config, { ...located, program: located.program }, cwd, env);
    logger.debug('mcp.server_start', {
      server: this.name,
      argv: plan.argv,
      readOnlyPaths: plan.readOnlyPaths,
      readWritePaths: plan.readWritePaths,
      allowedDomains: plan.allowedDomains,
      configuredEnvKeys: Object.keys(plan.configuredEnv ?? {}),
    });
    const transport = new SandboxedStdioTransport(
      () => {
        const child = executor.spawn(plan);
        this.layers = child.layers;
        return child;
      },
      { onStderr: (text) => logger.debug('mcp.stderr', { server: this.name, text: text.trimEnd() }) },
    );
    this.stdio = transport;
    const client = this.newClient();
    this.client = client;
    client.onclose = () => this.ended();
    client.onerror = (error) =>
      logger.debug('mcp.transport_error', { server: this.name, message: error.message });

    const timeout = this.startupTimeoutMs;
    try {
      await client.connect(transport, { timeout });
      this.tools = await this.listTools(client, timeout);
    } catch (error) {
      const exit = transport.exitInfo;
      const stderr = lastLines(transport.stderr);
      const why =
        exit !== undefined
          ? `${describeExit(exit)} during start-up`
          : error instanceof McpError && error.code === ErrorCode.RequestTimeout
            ? `no answer to the MCP handshake within ${timeout / 1000} s`
            : (error as Error).message;
      this.stopping = true;
      await transport.close().catch(() => {});
      return this.fail(stderr ? `${why}; its stderr ends with:\n${stderr}` : why);
    }
    this.state = 'ready';
    logger.debug('mcp.server_ready', {
      server: this.name,
      pid: transport.pid,
      tools: this.tools.map((tool) => tool.name),
    });
  }

  private ended(): void {
    if (this.stopping || this.state !== 'ready') return;
    this.state = 'crashed';
    this.reason = describeExit(this.stdio?.exitInfo);
    this.emitEnded();
  }

  /** Kills the process group at once (for process exit, where nothing can be awaited). */
  killNow(): void {
    this.stopping = true;
    this.stdio?.sandboxProcess?.kill();
  }

  /** Ends stdin, then SIGTERM and SIGKILL to the process group, each after a grace time. */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    const wasReady = this.state === 'ready';
    await this.client?.close().catch(() => {});
    await this.stdio?.close().catch(() => {});
    if (wasReady) this.state = 'stopped';
  }
}
