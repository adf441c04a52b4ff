// All MCP servers of a run: started in parallel (stdio ones through the sandbox, remote ones over
// HTTP), their tools offered to the agent as ExtraTools (through the same policy gate as built-ins),
// re-listed when a server announces a change, withdrawn when a server ends, shut down on exit.
import type { ExtraTool } from '../agent/types.ts';
import { isRemoteMcp, type McpServerConfig, type StdioMcpConfig } from '../config/mcp-schema.ts';
import { RuneError } from '../core/errors.ts';
import type { Logger } from '../core/logger.ts';
import type { SandboxExecutor } from '../sandbox/types.ts';
import { BUILTIN_TOOL_NAMES } from '../tools/catalog.ts';
import type { LookupFn } from '../tools/types.ts';
import type { McpConnection, ToolsChange } from './connection.ts';
import type { McpServerInfo, McpToolInfo } from './format.ts';
import { packageName } from './locate.ts';
import {
  assignToolNames,
  SERVER_NAME_PATTERN,
  sanitizeName,
  serverNameFromArgv,
  splitCommandLine,
  uniqueNames,
} from './naming.ts';
import type { ServerOrigin } from './remote/hosts.ts';
import { RemoteServer, type SessionLogin } from './remote/server.ts';
import { McpServer } from './server.ts';

export { formatServers, formatServerTools, type McpServerInfo, type McpToolInfo } from './format.ts';

/** A server to start, and where it was configured (which decides the key a refusal names). */
export type ConfiguredServer = McpServerConfig & { origin?: ServerOrigin };

/** What remote servers need beyond their table. */
export interface RemoteOptions {
  /** `policy.allowed_domains` of the run; a server's own `allowed_domains` add to it. */
  policyDomains: readonly string[];
  /** `--unrestricted`: hosts are not checked against the lists (addresses still are). */
  unrestricted?: boolean;
  /** Only in the interactive session: servers that ask for a login get one. */
  login?: SessionLogin;
  /** What a run that cannot log in tells the user to do; default: `rune mcp login NAME`. */
  loginHint?: (server: string) => string;
  lookup?: LookupFn;
  reconnectDelaysMs?: readonly number[];
}

export function defaultLoginHint(server: string): string {
  return `run \`rune mcp login ${server}\` in a terminal first`;
}

export interface StartMcpOptions {
  servers: readonly ConfiguredServer[];
  executor: SandboxExecutor;
  logger: Logger;
  cwd: string;
  env: NodeJS.ProcessEnv;
  /** Names already taken by the run's own tools (default: the built-ins). */
  reservedNames?: readonly string[];
  startupTimeoutMs?: number;
  maxResultBytes?: number;
  /** Kill the server process groups if rune exits without calling shutdown() (they run detached). */
  killOnExit?: boolean;
  remote?: RemoteOptions;
}

/** Turns `--mcp-stdio "cmd args"` values into server tables, named after their program or package. */
export function serversFromFlags(
  values: readonly string[],
  taken: readonly string[] = [],
): McpServerConfig[] {
  const parsed = values.map((value) => {
    const argv = splitCommandLine(value);
    const [command, ...args] = argv;
    if (!command)
      throw new RuneError('USAGE', '--mcp-stdio needs a command, e.g. --mcp-stdio "node server.js"');
    return { argv, command, args };
  });
  const names = uniqueNames(
    parsed.map(({ argv }) => serverNameFromArgv(argv, packageName)),
    taken,
  );
  return parsed.map(({ command, args }, i) => ({ name: names[i] as string, command, args }));
}

/** Names a remote server after its host: `https://mcp.example.com/mcp` → `mcp-example-com`. */
export function serverNameFromUrl(raw: string): string {
  try {
    const url = new URL(raw);
    return sanitizeName(url.hostname.replace(/^\[|\]$/g, '').replace(/[.:]/g, '-')) || 'remote';
  } catch {
    return 'remote';
  }
}

/** Turns `--mcp-http URL` values into remote server tables, named after their host. */
export function serversFromHttpFlags(
  values: readonly string[],
  taken: readonly string[] = [],
): ConfiguredServer[] {
  const problems: string[] = [];
  for (const value of values) {
    let url: URL | undefined;
    try {
      url = new URL(value);
    } catch {
      // Reported below.
    }
    if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) {
      problems.push(
        `--mcp-http ${value}: expected an http:// or https:// URL, e.g. --mcp-http https://mcp.example.com/mcp`,
      );
    } else if (url.username || url.password) {
      problems.push(
        `--mcp-http ${value}: a URL with a user name or password is refused; use a [[mcp]] table with bearer_token_env_var`,
      );
    }
  }
  if (problems.length > 0) throw new RuneError('USAGE', problems.join('; '));
  const names = uniqueNames(values.map(serverNameFromUrl), taken);
  return values.map((url, i) => ({ name: names[i] as string, url, origin: 'flag' as const }));
}

function checkNames(servers: readonly McpServerConfig[]): void {
  const problems: string[] = [];
  const seen = new Set<string>();
  for (const server of servers) {
    if (!SERVER_NAME_PATTERN.test(server.name)) {
      problems.push(`mcp: "${server.name}": a server name may hold only letters, digits, _ and -`);
    }
    if (seen.has(server.name)) problems.push(`mcp: two servers are named "${server.name}"`);
    seen.add(server.name);
  }
  if (problems.length > 0) {
    throw new RuneError('CONFIG_INVALID', 'invalid MCP server configuration', { details: problems });
  }
}

export class McpManager {
  private offered: Array<{ server: McpConnection; tool: string; name: string; extra: ExtraTool }> = [];
  private hidden: Array<{ server: string; tool: string; name: string; owner: string }> = [];
  private notices: string[] = [];
  /** Why each server that is not required could not start, as the warning said it. */
  readonly startFailures: string[] = [];
  private reservedNames: readonly string[] = BUILTIN_TOOL_NAMES;
  private readonly changeListeners: Array<() => void> = [];
  private readonly killOnExit = () => this.killAll();

  constructor(
    private readonly servers: McpConnection[],
    private readonly logger: Logger,
  ) {}

  /** @internal Arms the kill of every server group when the process exits. */
  killAllOnExit(): void {
    process.once('exit', this.killOnExit);
  }

  /** @internal Builds the offered tool list once every server has started or failed. */
  assign(reservedNames: readonly string[]): void {
    this.reservedNames = reservedNames;
    this.rebuild();
    for (const server of this.servers) {
      server.onEnd((ended) => this.withdraw(ended));
      server.onToolsChanged((changed, change) => this.relisted(changed, change));
    }
  }

  /**
   * Names the tools of every running server. Tools offered before keep their names (first owner
   * keeps a name, also across re-listings); the rest follow in server order, as at start.
   */
  private rebuild(): void {
    const all = this.servers
      .filter((server) => server.state === 'ready')
      .flatMap((server) =>
        server.tools.map((tool) => ({ server: server.name, tool: tool.name, instance: server, spec: tool })),
      );
    const rank = (entry: (typeof all)[number]) => {
      const i = this.offered.findIndex((o) => o.server === entry.instance && o.tool === entry.tool);
      return i < 0 ? this.offered.length : i;
    };
    const candidates = all
      .map((entry, order) => ({ entry, order, rank: rank(entry) }))
      .sort((a, b) => a.rank - b.rank || a.order - b.order)
      .map(({ entry }) => entry);
    const { offered, hidden } = assignToolNames(this.reservedNames, candidates);
    const wasHidden = new Set(this.hidden.map((entry) => `${entry.server}\0${entry.tool}`));
    for (const entry of hidden) {
      if (wasHidden.has(`${entry.server}\0${entry.tool}`)) continue;
      this.logger.warn('mcp.tool_hidden', { message: entry.warning, server: entry.server, tool: entry.tool });
    }
    this.hidden = hidden.map(({ server, tool, name, owner }) => ({ server, tool, name, owner }));
    this.offered = offered.map(({ instance, spec, name }) => {
      const { $schema: _ignored, ...parameters } = (spec.inputSchema ?? { type: 'object' }) as Record<
        string,
        unknown
      >;
      const extra: ExtraTool = {
        definition: {
          name,
          description: spec.description ?? spec.title ?? `Tool ${spec.name} of MCP server ${instance.name}`,
          parameters,
        },
        source: 'mcp',
        server: instance.name,
        readOnly: spec.annotations?.readOnlyHint === true,
        ...(instance.config.allowed_paths_rw?.length
          ? { writablePaths: [...instance.config.allowed_paths_rw] }
          : {}),
        execute: (args, signal) => instance.call(spec.name, args, signal),
      };
      return { server: instance, tool: spec.name, name, extra };
    });
  }

  private relisted(server: McpConnection, change: ToolsChange): void {
    const snapshot = () => {
      const own = this.offered.filter((entry) => entry.server === server);
      return {
        names: new Set(own.map((e) => e.name)),
        text: JSON.stringify(own.map((e) => e.extra.definition)),
      };
    };
    const old = snapshot();
    this.rebuild();
    const now = snapshot();
    // A server may announce a change that the model cannot see (or announce the same one twice).
    if (now.text === old.text) return;
    const before = old.names;
    const after = now.names;
    const added = [...after].filter((name) => !before.has(name));
    const removed = [...before].filter((name) => !after.has(name));
    const parts = [
      ...(added.length > 0 ? [`new tools: ${added.join(', ')}`] : []),
      ...(removed.length > 0 ? [`tools no longer available: ${removed.join(', ')}`] : []),
    ];
    const notice =
      change === 'connected'
        ? `MCP server "${server.name}" is connected now${added.length > 0 ? `; new tools: ${added.join(', ')}` : ''}.`
        : `MCP server "${server.name}" changed its tools` +
          (parts.length > 0
            ? ` (${parts.join('; ')}).`
            : ' (same names, descriptions or parameters may differ).');
    this.logger.info('mcp.tools_changed', { message: notice, server: server.name });
    this.notices.push(notice);
    for (const listener of this.changeListeners) listener();
  }

  private withdraw(server: McpConnection): void {
    const names = this.offered.filter((entry) => entry.server === server).map((entry) => entry.name);
    const verb = server.state === 'down' ? 'is down' : 'has stopped';
    const notice =
      `MCP server "${server.name}" ${verb} (${server.reason ?? 'connection closed'}); ` +
      (names.length > 0 ? `its tools are no longer available: ${names.join(', ')}.` : 'it offered no tools.');
    this.logger.warn('mcp.server_ended', { message: notice, server: server.name, reason: server.reason });
    this.notices.push(notice);
    for (const listener of this.changeListeners) listener();
  }

  /** The tools to offer the model now: those of servers still running. */
  tools(): ExtraTool[] {
    return this.offered.filter((entry) => entry.server.state === 'ready').map((entry) => entry.extra);
  }

  /**
   * Every tool ever offered, for a run loop that takes a fixed list: calls to a withdrawn tool
   * return an error result saying the server stopped.
   */
  allTools(): ExtraTool[] {
    return this.offered.map((entry) => entry.extra);
  }

  /** Messages for the model about servers that ended or changed their tools since the last call (each returned once). */
  takeNotices(): string[] {
    const taken = this.notices;
    this.notices = [];
    return taken;
  }

  /** Called when the set of offered tools changes (a server ended or re-listed its tools). */
  onToolsChanged(listener: () => void): void {
    this.changeListeners.push(listener);
  }

  /** Plain data for /info and /tools. */
  describeServers(): McpServerInfo[] {
    return this.servers.map((server) => {
      const tools: McpToolInfo[] = server.tools.map((tool) => {
        const offered = this.offered.find((entry) => entry.server === server && entry.tool === tool.name);
        const hidden = this.hidden.find((entry) => entry.server === server.name && entry.tool === tool.name);
        return {
          name: offered?.name ?? hidden?.name ?? tool.name,
          serverTool: tool.name,
          description: tool.description ?? '',
          readOnly: tool.annotations?.readOnlyHint === true,
          ...(hidden ? { hiddenBy: hidden.owner } : {}),
        };
      });
      return {
        name: server.name,
        state: server.state,
        required: server.config.required === true,
        transport: server.transport,
        target: server.target,
        ...(server.pid !== undefined ? { pid: server.pid } : {}),
        ...(server.reason !== undefined ? { reason: server.reason } : {}),
        tools,
        layers: server.layers,
      };
    });
  }

  /** Kills every server process group at once; safe to call from a process 'exit' handler. */
  killAll(): void {
    for (const server of this.servers) server.killNow();
  }

  /** Ends every server: stdin closed, then SIGTERM and SIGKILL to its process group, each after a grace time. */
  async shutdown(): Promise<void> {
    process.off('exit', this.killOnExit);
    await Promise.all(this.servers.map((server) => server.stop()));
  }
}

/**
 * Starts every server in parallel. A `required` server that fails stops rune (MCP_REQUIRED, naming
 * it); any other failure is a warning and the run goes on without that server.
 */
export async function startMcpServers(options: StartMcpOptions): Promise<McpManager> {
  checkNames(options.servers);
  const remote = options.remote ?? { policyDomains: [] };
  const common = {
    logger: options.logger,
    ...(options.startupTimeoutMs !== undefined ? { startupTimeoutMs: options.startupTimeoutMs } : {}),
    ...(options.maxResultBytes !== undefined ? { maxResultBytes: options.maxResultBytes } : {}),
  };
  const servers: McpConnection[] = options.servers.map(({ origin, ...config }) =>
    isRemoteMcp(config)
      ? new RemoteServer(config, {
          ...common,
          env: options.env,
          grant: {
            server: config.name,
            origin: origin ?? 'table',
            tableDomains: config.allowed_domains ?? [],
            policyDomains: remote.policyDomains,
            unrestricted: remote.unrestricted ?? false,
          },
          loginHint: (remote.loginHint ?? defaultLoginHint)(config.name),
          ...(remote.login ? { login: remote.login } : {}),
          ...(remote.lookup ? { lookup: remote.lookup } : {}),
          ...(remote.reconnectDelaysMs ? { reconnectDelaysMs: remote.reconnectDelaysMs } : {}),
        })
      : new McpServer(config as StdioMcpConfig, {
          ...common,
          executor: options.executor,
          cwd: options.cwd,
          env: options.env,
        }),
  );
  const results = await Promise.allSettled(servers.map((server) => server.start()));
  const requiredFailures: string[] = [];
  const manager = new McpManager(servers, options.logger);
  results.forEach((result, i) => {
    if (result.status === 'fulfilled') return;
    const server = servers[i] as McpConnection;
    const message = `MCP server "${server.name}" could not start: ${server.reason ?? String(result.reason)}`;
    if (server.config.required) requiredFailures.push(message);
    else {
      options.logger.warn('mcp.server_failed', { message, server: server.name });
      manager.startFailures.push(message);
    }
  });
  if (options.killOnExit) manager.killAllOnExit();
  if (requiredFailures.length > 0) {
    await manager.shutdown();
    const names = servers.filter((s) => s.config.required && s.state === 'failed').map((s) => `"${s.name}"`);
    throw new RuneError('MCP_REQUIRED', `required MCP server ${names.join(', ')} could not start`, {
      details: requiredFailures,
    });
  }
  manager.assign(options.reservedNames ?? BUILTIN_TOOL_NAMES);
  return manager;
}
