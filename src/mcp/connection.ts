// What every MCP server looks like to the manager, whatever carries its messages (a sandboxed
// process, Streamable HTTP, SSE): the SDK Client, its tool list (listed at start and again on
// notifications/tools/list_changed), calls with a per-call timeout whose failures become error
// results, and listeners for a server that ends or changes its tools.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  ErrorCode,
  McpError,
  type Tool,
  ToolListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import { MCP_SERVER_DEFAULTS, type McpServerConfig } from '../config/mcp-schema.ts';
import type { Logger } from '../core/logger.ts';
import { redact } from '../core/redact.ts';
import { VERSION } from '../core/version.ts';
import type { LayerReport } from '../sandbox/types.ts';
import type { ServerState, TransportName } from './format.ts';
import { type McpToolOutput, toToolOutput } from './result.ts';

/** Per-call timeout when the table sets none. */
export const DEFAULT_CALL_TIMEOUT_SECS = MCP_SERVER_DEFAULTS.timeout_secs;
export const DEFAULT_STARTUP_TIMEOUT_MS = 30_000;
const RELIST_DELAY_MS = 50;

export interface ConnectionDeps {
  logger: Logger;
  startupTimeoutMs?: number;
  /** Cap of one tool result in bytes (default: the built-in tools' cap). */
  maxResultBytes?: number;
}

/** Why the tool list changed: re-listed after a notification, or the server (re)connected. */
export type ToolsChange = 'relisted' | 'connected';

export abstract class McpConnection {
  state: ServerState = 'starting';
  /** Why it failed or ended, in words. */
  reason: string | undefined;
  tools: Tool[] = [];
  layers: LayerReport[] = [];
  protected client: Client | undefined;
  protected stopping = false;
  private readonly endListeners: Array<(server: McpConnection) => void> = [];
  private readonly toolListeners: Array<(server: McpConnection, change: ToolsChange) => void> = [];
  private relisting: Promise<void> | undefined;
  private relistAgain = false;

  constructor(
    readonly config: McpServerConfig,
    protected readonly base: ConnectionDeps,
  ) {}

  /** How messages travel: stdio, streamable-http or sse (the latter settled once connected). */
  abstract get transport(): TransportName;
  /** The command line or the URL, for /info. */
  abstract get target(): string;
  /** Starts the server or connects to it, handshakes and lists the tools. Rejects with a readable Error. */
  abstract start(): Promise<void>;
  /** Ends the connection (and the process of a stdio server) politely. */
  abstract stop(): Promise<void>;
  /** Ends it at once, for process exit, where nothing can be awaited. */
  abstract killNow(): void;

  get name(): string {
    return this.config.name;
  }

  get pid(): number | undefined {
    return undefined;
  }

  get callTimeoutMs(): number {
    return (this.config.timeout_secs ?? DEFAULT_CALL_TIMEOUT_SECS) * 1000;
  }

  get startupTimeoutMs(): number {
    return this.base.startupTimeoutMs ?? DEFAULT_STARTUP_TIMEOUT_MS;
  }

  /** Called once when a ready server crashes, closes on its own or becomes unreachable. */
  onEnd(listener: (server: McpConnection) => void): void {
    this.endListeners.push(listener);
  }

  /** Called after the tool list changed: re-listed after a notification, or (re)connected later. */
  onToolsChanged(listener: (server: McpConnection, change: ToolsChange) => void): void {
    this.toolListeners.push(listener);
  }

  /** A Client that follows the server's list_changed notifications. */
  protected newClient(): Client {
    const client = new Client({ name: 'rune', version: VERSION }, { capabilities: {} });
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      if (client === this.client) this.relist();
    });
    return client;
  }

  protected async listTools(client: Client, timeout: number): Promise<Tool[]> {
    const tools: Tool[] = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor ? { cursor } : undefined, { timeout });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor);
    return tools;
  }

  protected emitToolsChanged(change: ToolsChange): void {
    for (const listener of this.toolListeners) listener(this, change);
  }

  protected emitEnded(): void {
    for (const listener of this.endListeners) listener(this);
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
          this.base.logger.warn('mcp.relist_failed', {
            message: `MCP server "${this.name}" announced new tools but listing them failed: ${redact((error as Error).message)}`,
            server: this.name,
          });
          continue;
        }
        if (this.state !== 'ready' || this.stopping) return;
        this.base.logger.debug('mcp.tools_changed', {
          server: this.name,
          tools: this.tools.map((t) => t.name),
        });
        this.emitToolsChanged('relisted');
      } while (this.relistAgain);
    })().finally(() => {
      this.relisting = undefined;
    });
  }

  protected fail(reason: string): never {
    this.state = 'failed';
    this.reason = reason;
    throw new Error(reason);
  }

  /** Hook for remote servers: a failed call may mean the connection is gone. */
  protected callFailed(_error: unknown): void {}

  /** Calls a tool; every failure (timeout, a dead server, a protocol error) becomes an error result. */
  async call(tool: string, args: Record<string, unknown>, signal: AbortSignal): Promise<McpToolOutput> {
    const { logger } = this.base;
    const started = performance.now();
    logger.debug('mcp.call', { server: this.name, tool, arguments: args });
    let output: McpToolOutput;
    const client = this.client;
    if (this.state !== 'ready' || !client) {
      output = {
        isError: true,
        content: `MCP server "${this.name}" is not ${this.state === 'reconnecting' ? 'reachable now (rune is reconnecting)' : 'running'} (${this.reason ?? this.state}); its tools are withdrawn`,
      };
    } else {
      try {
        const result = await client.callTool({ name: tool, arguments: args }, undefined, {
          signal,
          timeout: this.callTimeoutMs,
        });
        output = toToolOutput(result, this.base.maxResultBytes);
      } catch (error) {
        output = { isError: true, content: redact(this.describeCallError(tool, error, signal)) };
        if (!signal.aborted) this.callFailed(error);
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

  protected describeCallError(tool: string, error: unknown, signal: AbortSignal): string {
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
}
