// One MCP server: started through the sandbox, spoken to with the SDK's Client over the sandboxed
// stdio transport, its tools listed at start and again on notifications/tools/list_changed, calls
// timed out per call, its end noticed.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  ErrorCode,
  McpError,
  type Tool,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { McpServerConfig } from '../config/schema.ts';
import type { Logger } from '../core/logger.ts';
import { VERSION } from '../core/version.ts';
import type { LayerReport, SandboxExecutor } from '../sandbox/types.ts';
import type { ServerState } from './format.ts';
import { locateServer } from './locate.ts';
import { planServerSandbox } from './plan.ts';
import { type McpToolOutput, toToolOutput } from './result.ts';
import { type ExitInfo, SandboxedStdioTransport } from './transport.ts';

/** Per-call timeout when the table sets none. */
export const DEFAULT_CALL_TIMEOUT_SECS = 60;
export const DEFAULT_STARTUP_TIMEOUT_MS = 30_000;
const RELIST_DELAY_MS = 50;

export interface ServerDeps {
  executor: SandboxExecutor;
  logger: Logger;
  cwd: string;
  /** rune's environment: PATH to find the program, and the few variables a server inherits. */
  env: NodeJS.ProcessEnv;
  startupTimeoutMs?: number;
  /** Cap of one tool result in bytes (default: the built-in tools' cap). */
  maxResultBytes?: number;
}

export function describeExit(exit: ExitInfo | undefined): string {
  if (!exit) return 'its connection closed';
  if (exit.signal) return `it was killed by ${exit.signal}`;
  return `it exited with code ${exit.exitCode}`;
}

function lastLines(text: string, count = 5): string {
  return text.trim().split('\n').slice(-count).join('\n');
}

export class McpServer {
  state: ServerState = 'starting';
  /** Why it failed or ended, in words. */
  reason: string | undefined;
  tools: Tool[] = [];
  layers: LayerReport[] = [];
  private client: Client | undefined;
  private transport: SandboxedStdioTransport | undefined;
  private stopping = false;
  private readonly endListeners: Array<(server: McpServer) => void> = [];
  private readonly toolListeners: Array<(server: McpServer) => void> = [];
  private relisting: Promise<void> | undefined;
  private relistAgain = false;

  constructor(
    readonly config: McpServerConfig,
    private readonly deps: ServerDeps,
  ) {}

  get name(): string {
    return this.config.name;
  }

  get pid(): number | undefined {
    return this.transport?.pid;
  }

  get callTimeoutMs(): number {
    return (this.config.timeout_secs ?? DEFAULT_CALL_TIMEOUT_SECS) * 1000;
  }

  /** Called once when a ready server crashes or closes on its own. */
  onEnd(listener: (server: McpServer) => void): void {
    this.endListeners.push(listener);
  }

  /** Called after the server announced a changed tool list and it was listed again. */
  onToolsChanged(listener: (server: McpServer) => void): void {
    this.toolListeners.push(listener);
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
    this.transport = transport;
    const client = new Client({ name: 'rune', version: VERSION }, { capabilities: {} });
    this.client = client;
    client.onclose = () => this.ended();
    client.onerror = (error) =>
      logger.debug('mcp.transport_error', { server: this.name, message: error.message });

    client.setNotificationHandler(ToolListChangedNotificationSchema, () => this.relist());

    const timeout = this.deps.startupTimeoutMs ?? DEFAULT_STARTUP_TIMEOUT_MS;
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

  private async listTools(client: Client, timeout: number): Promise<Tool[]> {
    const tools: Tool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : undefined, { timeout });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    return tools;
  }

  /**
   * Lists the tools again after notifications/tools/list_changed. Notifications that arrive while a
   * listing runs cause one more listing after it, so the last answer always reflects the last change.
   */
  private relist(): void {
    if (this.relisting) {
      this.relistAgain = true;
      return;
    }
    this.relisting = (async () => {
      // Servers announce each added or removed tool on its own: a short pause lists a burst once.
      await new Promise((resolve) => setTimeout(resolve, RELIST_DELAY_MS));
      do {
        this.relistAgain = false;
        const client = this.client;
        if (this.state !== 'ready' || this.stopping || !client) return;
        try {
          this.tools = await this.listTools(client, this.callTimeoutMs);
        } catch (error) {
          // The old list stays: a crash is reported through onEnd, anything else is only logged.
          this.deps.logger.warn('mcp.relist_failed', {
            message: `MCP server "${this.name}" announced new tools but listing them failed: ${(error as Error).message}`,
            server: this.name,
          });
          continue;
        }
        if (this.state !== 'ready' || this.stopping) return;
        this.deps.logger.debug('mcp.tools_changed', {
          server: this.name,
          tools: this.tools.map((t) => t.name),
        });
        for (const listener of this.toolListeners) listener(this);
      } while (this.relistAgain);
    })().finally(() => {
      this.relisting = undefined;
    });
  }

  private fail(reason: string): never {
    this.state = 'failed';
    this.reason = reason;
    throw new Error(reason);
  }

  private ended(): void {
    if (this.stopping || this.state !== 'ready') return;
    this.state = 'crashed';
    this.reason = describeExit(this.transport?.exitInfo);
    for (const listener of this.endListeners) listener(this);
  }

  /** Calls a tool; every failure (timeout, a dead server, a protocol error) becomes an error result. */
  async call(tool: string, args: Record<string, unknown>, signal: AbortSignal): Promise<McpToolOutput> {
    const { logger } = this.deps;
    const started = performance.now();
    logger.debug('mcp.call', { server: this.name, tool, arguments: args });
    let output: McpToolOutput;
    if (this.state !== 'ready' || !this.client) {
      output = {
        isError: true,
        content: `MCP server "${this.name}" is not running (${this.reason ?? this.state}); its tools are withdrawn`,
      };
    } else {
      try {
        const result = await this.client.callTool({ name: tool, arguments: args }, undefined, {
          signal,
          timeout: this.callTimeoutMs,
        });
        output = toToolOutput(result, this.deps.maxResultBytes);
      } catch (error) {
        output = { isError: true, content: this.describeCallError(tool, error, signal) };
      }
    }
    logger.debug('mcp.result', {
      server: this.name,
      tool,
      isError: output.isError,
      bytes: Buffer.byteLength(output.content),
      durationMs: Math.round(performance.now() - started),
      content: output.content.length > 2000 ? `${output.content.slice(0, 2000)}…` : output.content,
    });
    return output;
  }

  private describeCallError(tool: string, error: unknown, signal: AbortSignal): string {
    const subject = `MCP tool "${tool}" of server "${this.name}"`;
    if (signal.aborted) return `${subject} was cancelled`;
    if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
      return `${subject} timed out after ${this.callTimeoutMs / 1000} s (timeout_secs of the server)`;
    }
    if (this.state !== 'ready') {
      return `MCP server "${this.name}" stopped while running "${tool}" (${this.reason ?? 'connection closed'}); its tools are withdrawn`;
    }
    return `${subject} failed: ${(error as Error).message}`;
  }

  /** Kills the process group at once (for process exit, where nothing can be awaited). */
  killNow(): void {
    this.stopping = true;
    this.transport?.sandboxProcess?.kill();
  }

  /** Ends stdin, then SIGTERM and SIGKILL to the process group, each after a grace time. */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    const wasReady = this.state === 'ready';
    await this.client?.close().catch(() => {});
    await this.transport?.close().catch(() => {});
    if (wasReady) this.state = 'stopped';
  }
}
