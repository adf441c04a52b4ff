// The SDK's HTTP transports, built over rune's guarded fetch, and the connection attempt the MCP
// specification describes for an unknown server: Streamable HTTP first, and when the server answers
// the InitializeRequest POST with 400, 404 or 405, the legacy SSE transport (GET, `endpoint` event).
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js';
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { SSEClientTransport, SseError } from '@modelcontextprotocol/sdk/client/sse.js';
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { LoginRequiredError } from './auth/provider.ts';
import { type GuardedFetch, RemoteNetworkError, RemoteRefusedError } from './fetch.ts';

export type RemoteKind = 'streamable-http' | 'sse';
export type RemoteTransport = StreamableHTTPClientTransport | SSEClientTransport;

export interface TransportSetup {
  url: URL;
  fetch: GuardedFetch;
  /** Static headers, env_headers and a bearer token (Authorization). */
  headers: Record<string, string>;
  authProvider?: OAuthClientProvider;
}

/** How the SDK re-opens a broken Streamable HTTP event stream (with Last-Event-ID): bounded, backing off. */
export const STREAM_RECONNECTION = {
  initialReconnectionDelay: 500,
  maxReconnectionDelay: 5000,
  reconnectionDelayGrowFactor: 2,
  maxRetries: 2,
};

export function createTransport(
  kind: RemoteKind,
  setup: TransportSetup,
  resume?: { sessionId: string },
): RemoteTransport {
  const common = {
    fetch: setup.fetch,
    requestInit: { headers: setup.headers },
    ...(setup.authProvider ? { authProvider: setup.authProvider } : {}),
  };
  if (kind === 'sse') return new SSEClientTransport(setup.url, common);
  return new StreamableHTTPClientTransport(setup.url, {
    ...common,
    reconnectionOptions: STREAM_RECONNECTION,
    ...(resume ? { sessionId: resume.sessionId } : {}),
  });
}

/** The status an HTTP transport error carries, if any. */
export function httpStatus(error: unknown): number | undefined {
  if (error instanceof StreamableHTTPError || error instanceof SseError) {
    return typeof error.code === 'number' && error.code > 0 ? error.code : undefined;
  }
  const match = /\(HTTP (\d{3})\)/.exec((error as Error)?.message ?? '');
  return match ? Number(match[1]) : undefined;
}

/** A server that refuses the Streamable HTTP POST this way may speak the older SSE transport. */
export function canFallBackToSse(error: unknown): boolean {
  const status = httpStatus(error);
  return status === 400 || status === 404 || status === 405;
}

/** Whether the error means the server is unreachable or lost the session (worth reconnecting). */
export function isConnectionLoss(error: unknown): boolean {
  for (let e: unknown = error; e instanceof Error; e = e.cause) {
    if (e instanceof RemoteNetworkError) return true;
    if (e instanceof SseError) return true;
    if (/SSE stream disconnected|Maximum reconnection attempts|Failed to reconnect/.test(e.message))
      return true;
  }
  // 404 is how the specification says a session is gone; some servers say 400 "no valid session".
  const status = httpStatus(error);
  return status === 404 || (status === 400 && /session/i.test((error as Error)?.message ?? ''));
}

/** A start-up or call failure in words a user can act on. */
export function describeRemoteError(error: unknown, timeoutMs: number): string {
  if (error instanceof RemoteRefusedError || error instanceof LoginRequiredError) return error.message;
  if (error instanceof RemoteNetworkError) return error.message;
  if (error instanceof McpError && error.code === ErrorCode.RequestTimeout) {
    return `no answer to the MCP handshake within ${timeoutMs / 1000} s`;
  }
  if (error instanceof UnauthorizedError) return 'the server did not accept the login';
  const status = httpStatus(error);
  if (status === 401 || status === 403) {
    return `the server refused the credentials (HTTP ${status}): check the token it is given`;
  }
  const message = (error as Error)?.message ?? String(error);
  // The SDK wraps our fetch errors; the innermost readable one says what happened.
  const cause = (error as Error)?.cause;
  if (cause instanceof RemoteNetworkError || cause instanceof RemoteRefusedError) return cause.message;
  return message;
}

export type Connected =
  | { client: Client; kind: 'streamable-http'; transport: StreamableHTTPClientTransport }
  | { client: Client; kind: 'sse'; transport: SSEClientTransport };

/**
 * Connects a fresh Client (from `makeClient`) over `kind`, or over Streamable HTTP and then SSE
 * when `kind` is undefined. On failure the transports are closed and the last error is thrown,
 * with `transport` attached (a login finishes on the transport that was refused).
 */
export async function connectClient(
  kind: RemoteKind | undefined,
  setup: TransportSetup,
  makeClient: () => Client,
  timeoutMs: number,
  resume?: { sessionId: string; protocolVersion?: string },
): Promise<Connected> {
  const kinds: RemoteKind[] = kind ? [kind] : ['streamable-http', 'sse'];
  let streamableError: unknown;
  for (const candidate of kinds) {
    const client = makeClient();
    const transport = createTransport(candidate, setup, candidate === 'streamable-http' ? resume : undefined);
    if (resume?.protocolVersion) transport.setProtocolVersion?.(resume.protocolVersion);
    try {
      await client.connect(transport, { timeout: timeoutMs });
      // A resumed session skips the handshake: a ping proves the server still knows it.
      if (resume && candidate === 'streamable-http') await client.ping({ timeout: timeoutMs });
      return { client, transport, kind: candidate } as Connected;
    } catch (error) {
      await client.close().catch(() => {});
      const fallBack = !kind && candidate === 'streamable-http' && !resume && canFallBackToSse(error);
      if (!fallBack) {
        const described =
          streamableError === undefined
            ? error
            : new Error(
                `Streamable HTTP: ${describeRemoteError(streamableError, timeoutMs)}; SSE: ${describeRemoteError(error, timeoutMs)}`,
                { cause: error },
              );
        throw Object.assign(described as object, { transport });
      }
      streamableError = error;
    }
  }
  throw new Error('unreachable');
}
