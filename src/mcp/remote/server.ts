// One remote MCP server, over Streamable HTTP or SSE through rune's guarded fetch. Credentials come
// from the environment (bearer_token_env_var, env_headers) or from a stored OAuth login, refreshed
// when it expires. A connection that breaks is checked with a ping, then re-established a bounded
// number of times with back-off (the same Streamable HTTP session first, where the server keeps it);
// when that fails the server is down: its tools are withdrawn and the model is told.
import { auth } from '@modelcontextprotocol/sdk/client/auth.js';
import type { RemoteMcpConfig } from '../../config/mcp-schema.ts';
import { credentialValue } from '../../core/command-credentials.ts';
import { registerSecret } from '../../core/redact.ts';
import type { LookupFn } from '../../tools/types.ts';
import { type ConnectionDeps, McpConnection } from '../connection.ts';
import type { ServerState, TransportName } from '../format.ts';
import { LOGIN_TIMEOUT_MS, loginToServer } from './auth/login.ts';
import { LoginRequiredError, StoredCredentialsProvider } from './auth/provider.ts';
import { TokenStore } from './auth/store.ts';
import { createGuardedFetch, type GuardedFetch, RemoteRefusedError } from './fetch.ts';
import { displayUrl, type HostGrant, hostRefusal } from './hosts.ts';

export { displayUrl } from './hosts.ts';

import {
  type Connected,
  connectClient,
  describeRemoteError,
  httpStatus,
  isConnectionLoss,
  type RemoteKind,
  type TransportSetup,
} from './transports.ts';

export const RECONNECT_DELAYS_MS = [500, 1000, 2000] as const;
const PING_TIMEOUT_MS = 10_000;
const TERMINATE_GRACE_MS = 2000;

/** How the interactive session shows a login: the authorization URL, and whether a browser opened it. */
export interface SessionLogin {
  show(server: string, url: string, opened: boolean): void;
  /** The login ended: connected (with its tool count), or failed with the reason. */
  done?(server: string, outcome: { ok: true; tools: number } | { ok: false; reason: string }): void;
  timeoutMs?: number;
}

export interface RemoteDeps extends ConnectionDeps {
  /** For bearer_token_env_var and env_headers. */
  env: NodeJS.ProcessEnv;
  grant: HostGrant;
  /** Only in the interactive session: a server asking for a login gets one (in the background unless required). */
  login?: SessionLogin;
  /** What to do when a login is needed and this run cannot start one. */
  loginHint: string;
  lookup?: LookupFn;
  /** Wait before each reconnect attempt; tests shorten it. */
  reconnectDelaysMs?: readonly number[];
}

function causedBy<T>(error: unknown, type: new (...args: never[]) => T): T | undefined {
  for (let e: unknown = error; e instanceof Error; e = e.cause) if (e instanceof type) return e;
  return undefined;
}

const sleep = (ms: number, keepAlive = true) =>
  new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    if (!keepAlive) timer.unref();
  });

export class RemoteServer extends McpConnection {
  private kind: RemoteKind | undefined;
  private fetch: GuardedFetch | undefined;
  private setup: TransportSetup | undefined;
  private current: Connected | undefined;
  private recovering: Promise<void> | undefined;
  private loginRun: Promise<void> | undefined;
  private readonly loginAbort = new AbortController();

  constructor(
    override readonly config: RemoteMcpConfig,
    private readonly deps: RemoteDeps,
  ) {
    super(config, deps);
    this.kind = config.transport;
  }

  get transport(): TransportName {
    return this.kind ?? 'http';
  }

  get target(): string {
    return displayUrl(this.config.url);
  }

  /** The Streamable HTTP session id, once connected to a server that gives one. */
  get sessionId(): string | undefined {
    return this.current?.kind === 'streamable-http' ? this.current.transport.sessionId : undefined;
  }

  /** The login running in the background of the session, if any (tests and shutdown wait for it). */
  get pendingLogin(): Promise<void> | undefined {
    return this.loginRun;
  }

  private headers(): Record<string, string> {
    const { env } = this.deps;
    const headers: Record<string, string> = { ...this.config.headers };
    for (const [header, variable] of Object.entries(this.config.env_headers ?? {})) {
      const value = env[variable];
      if (!value)
        throw new Error(`the environment variable ${variable} (env_headers "${header}") is not set`);
      for (const form of credentialValue(value)) registerSecret(form);
      headers[header] = value;
    }
    const variable = this.config.bearer_token_env_var;
    const token = this.config.bearer_token ?? (variable ? env[variable] : undefined);
    if (variable && !token) {
      throw new Error(`the environment variable ${variable} (its bearer_token_env_var) is not set`);
    }
    if (token) {
      registerSecret(token);
      headers.Authorization = `Bearer ${token}`;
    }
    return headers;
  }

  private storedCredentials(): StoredCredentialsProvider {
    return new StoredCredentialsProvider(
      new TokenStore(this.deps.env, this.name, this.config.url),
      this.deps.loginHint,
    );
  }

  async start(): Promise<void> {
    const url = new URL(this.config.url);
    const refusal = hostRefusal(url, this.deps.grant);
    if (refusal) return this.fail(refusal);
    let headers: Record<string, string>;
    try {
      headers = this.headers();
    } catch (error) {
      return this.fail((error as Error).message);
    }
    this.fetch = createGuardedFetch({
      grant: this.deps.grant,
      headersTimeoutMs: this.callTimeoutMs + 5000,
      ...(this.deps.lookup ? { lookup: this.deps.lookup } : {}),
    });
    // A bearer token replaces OAuth; without one, a stored login is used when the server asks.
    const oauth = headers.Authorization === undefined;
    this.setup = {
      url,
      fetch: this.fetch,
      headers,
      ...(oauth ? { authProvider: this.storedCredentials() } : {}),
    };
    try {
      if (oauth) await this.refreshIfExpired();
      await this.connect();
    } catch (error) {
      if (causedBy(error, LoginRequiredError) && this.deps.login) {
        this.state = 'login';
        this.reason = 'waiting for the OAuth login in the browser';
        this.loginRun = this.loginThenConnect(headers);
        if (!this.config.required) return;
        await this.loginRun;
        if ((this.state as ServerState) === 'ready') return;
        return this.fail(this.reason ?? 'the login failed');
      }
      this.fetch.close();
      return this.fail(describeRemoteError(error, this.startupTimeoutMs));
    }
    this.state = 'ready';
    this.base.logger.debug('mcp.server_ready', {
      server: this.name,
      transport: this.kind,
      url: this.target,
      tools: this.tools.map((tool) => tool.name),
    });
  }

  /** An access token known to have expired is refreshed before it is sent (the server's 401 would cost a round trip). */
  private async refreshIfExpired(): Promise<void> {
    const provider = this.setup?.authProvider as StoredCredentialsProvider | undefined;
    const store = new TokenStore(this.deps.env, this.name, this.config.url);
    if (!provider || !store.tokens?.refresh_token || !store.expired() || !this.fetch) return;
    const resourceMetadataUrl = store.discovery?.resourceMetadataUrl;
    try {
      await auth(provider, {
        serverUrl: this.config.url,
        fetchFn: this.fetch,
        ...(resourceMetadataUrl ? { resourceMetadataUrl: new URL(resourceMetadataUrl) } : {}),
      });
      this.base.logger.debug('mcp.token_refreshed', { server: this.name });
    } catch (error) {
      if (causedBy(error, LoginRequiredError) || causedBy(error, RemoteRefusedError)) throw error;
      // Anything else: the server's own 401 decides, and the SDK refreshes then.
      this.base.logger.debug('mcp.token_refresh_failed', {
        server: this.name,
        message: (error as Error).message,
      });
    }
  }

  private async connect(resume?: { sessionId: string; protocolVersion?: string }): Promise<void> {
    const setup = this.setup as TransportSetup;
    const connected = await connectClient(
      this.kind,
      setup,
      () => this.newClient(),
      this.startupTimeoutMs,
      resume,
    );
    let tools: Awaited<ReturnType<McpConnection['listTools']>>;
    try {
      tools = await this.listTools(connected.client, this.startupTimeoutMs);
    } catch (error) {
      await connected.client.close().catch(() => {});
      throw error;
    }
    this.kind = connected.kind;
    this.tools = tools;
    this.attach(connected);
  }

  private attach(connected: Connected): void {
    const { client } = connected;
    this.current = connected;
    this.client = client;
    client.onerror = (error) => {
      if (client !== this.client || this.stopping) return;
      this.base.logger.debug('mcp.transport_error', { server: this.name, message: error.message });
      if (isConnectionLoss(error)) this.checkConnection(error);
    };
    client.onclose = () => {
      if (client !== this.client || this.stopping) return;
      this.checkConnection(new Error('the connection closed'));
    };
  }

  protected override callFailed(error: unknown): void {
    if (isConnectionLoss(error)) this.checkConnection(error);
  }

  /** Starts (once at a time) the check of a connection that looks broken. */
  private checkConnection(cause: unknown): void {
    if (this.recovering || this.stopping || this.state !== 'ready') return;
    this.recovering = this.recover(cause).finally(() => {
      this.recovering = undefined;
    });
  }

  private async recover(cause: unknown): Promise<void> {
    const { logger } = this.base;
    // A broken event stream may be a blip the SDK already mends: a ping says whether the session answers.
    try {
      await this.client?.ping({ timeout: PING_TIMEOUT_MS });
      return;
    } catch (error) {
      if (this.stopping) return;
      cause = error;
    }
    const previous = this.current;
    // The Streamable HTTP session is resumed while the server may still hold it. Once the server
    // answers but refuses it (404 as the specification says, or 400 as some servers do), it is gone.
    let resume =
      previous?.kind === 'streamable-http' && previous.transport.sessionId
        ? {
            sessionId: previous.transport.sessionId,
            ...(previous.transport.protocolVersion
              ? { protocolVersion: previous.transport.protocolVersion }
              : {}),
          }
        : undefined;
    this.state = 'reconnecting';
    this.reason = describeRemoteError(cause, PING_TIMEOUT_MS);
    logger.warn('mcp.reconnecting', {
      message: `MCP server "${this.name}" stopped answering (${this.reason}); reconnecting`,
      server: this.name,
    });
    this.current = undefined;
    this.client = undefined;
    // Closing stops the SDK's own stream reconnects and an SSE EventSource's endless retries.
    await previous?.client.close().catch(() => {});
    const before = JSON.stringify(this.tools);
    const delays = this.deps.reconnectDelaysMs ?? RECONNECT_DELAYS_MS;
    let lastError = cause;
    for (const delay of delays) {
      await sleep(delay);
      if (this.stopping) return;
      try {
        if (resume) {
          try {
            await this.connect(resume);
          } catch (error) {
            const status = httpStatus(error);
            if (status !== 404 && status !== 400) throw error;
            resume = undefined;
            await this.connect();
          }
        } else {
          await this.connect();
        }
        if (this.stopping) return;
        this.state = 'ready';
        this.reason = undefined;
        logger.info('mcp.reconnected', {
          message: `MCP server "${this.name}" answers again${resume ? ' (same session)' : ' (new session)'}`,
          server: this.name,
        });
        if (JSON.stringify(this.tools) !== before) this.emitToolsChanged('relisted');
        return;
      } catch (error) {
        lastError = error;
        if (causedBy(error, RemoteRefusedError) || causedBy(error, LoginRequiredError)) break;
      }
    }
    if (this.stopping) return;
    this.state = 'down';
    this.reason = `unreachable: ${describeRemoteError(lastError, this.startupTimeoutMs)} (after ${delays.length} reconnect attempts)`;
    this.fetch?.close();
    this.emitEnded();
  }

  /** The session's login, then the connection; a failure leaves the server failed, with the reason. */
  private async loginThenConnect(headers: Record<string, string>): Promise<void> {
    const login = this.deps.login as SessionLogin;
    try {
      await loginToServer({
        server: this.config,
        env: this.deps.env,
        grant: this.deps.grant,
        headers,
        ui: { show: (url, opened) => login.show(this.name, url, opened) },
        makeClient: () => this.newClient(),
        connectTimeoutMs: this.startupTimeoutMs,
        timeoutMs: login.timeoutMs ?? LOGIN_TIMEOUT_MS,
        signal: this.loginAbort.signal,
        ...(this.deps.lookup ? { lookup: this.deps.lookup } : {}),
      });
      if (this.stopping) return;
      // The login wrote new credentials: read them afresh.
      this.setup = { ...(this.setup as TransportSetup), authProvider: this.storedCredentials() };
      await this.connect();
      if (this.stopping) return;
      this.state = 'ready';
      this.reason = undefined;
      this.emitToolsChanged('connected');
      login.done?.(this.name, { ok: true, tools: this.tools.length });
    } catch (error) {
      if (this.stopping) return;
      this.state = 'failed';
      this.reason = `the login failed: ${describeRemoteError(error, this.startupTimeoutMs)}`;
      this.base.logger.warn('mcp.login_failed', {
        message: `MCP server "${this.name}": ${this.reason}`,
        server: this.name,
      });
      login.done?.(this.name, { ok: false, reason: this.reason });
    }
  }

  killNow(): void {
    this.stopping = true;
    this.loginAbort.abort();
    this.fetch?.close();
  }

  /** Ends the session politely (DELETE for Streamable HTTP), then closes every connection. */
  async stop(): Promise<void> {
    if (this.stopping) return;
    this.stopping = true;
    this.loginAbort.abort();
    const wasReady = this.state === 'ready';
    const current = this.current;
    if (current?.kind === 'streamable-http' && wasReady) {
      await Promise.race([
        current.transport.terminateSession().catch(() => {}),
        sleep(TERMINATE_GRACE_MS, false),
      ]);
    }
    await current?.client.close().catch(() => {});
    await this.loginRun?.catch(() => {});
    this.fetch?.close();
    if (wasReady) this.state = 'stopped';
  }
}
