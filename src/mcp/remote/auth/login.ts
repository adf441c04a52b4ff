// `rune mcp login NAME` and the interactive session's login: connect with a login provider so the
// SDK discovers the authorization server, registers rune and builds the authorization URL (PKCE,
// state); show and open that URL; take the code from the loopback redirect; exchange it on the
// transport that was refused; then connect again with the stored tokens to prove they work.
// `rune mcp logout NAME` revokes the tokens where the server offers revocation, then forgets them.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { RemoteMcpConfig } from '../../../config/mcp-schema.ts';
import type { LookupFn } from '../../../tools/types.ts';
import { createGuardedFetch, type GuardedFetch } from '../fetch.ts';
import type { HostGrant } from '../hosts.ts';
import { connectClient, type RemoteKind, type RemoteTransport } from '../transports.ts';
import { openBrowser } from './browser.ts';
import { startLoopback } from './loopback.ts';
import { LoginProvider, StoredCredentialsProvider } from './provider.ts';
import { TokenStore } from './store.ts';

export const LOGIN_TIMEOUT_MS = 5 * 60_000;

export interface LoginUi {
  /** Shows the authorization URL; `opened` says whether a browser was started for it. */
  show(url: string, opened: boolean): void;
}

export interface LoginOptions {
  server: RemoteMcpConfig;
  env: NodeJS.ProcessEnv;
  grant: HostGrant;
  /** Static headers and env_headers (a server with a bearer token has nothing to log in to). */
  headers: Record<string, string>;
  ui: LoginUi;
  makeClient: () => Client;
  timeoutMs?: number;
  /** How long one connection attempt may take. */
  connectTimeoutMs: number;
  signal?: AbortSignal;
  lookup?: LookupFn;
  /** Opens the browser (injected by tests); default: openBrowser. */
  open?: (url: string, env: NodeJS.ProcessEnv) => boolean;
}

export interface LoginOutcome {
  /** false: the server let rune in without a login. */
  loggedIn: boolean;
  tools: number;
  kind: RemoteKind;
}

async function countTools(client: Client): Promise<number> {
  let count = 0;
  let cursor: string | undefined;
  do {
    const page = await client.listTools(cursor ? { cursor } : undefined);
    count += page.tools.length;
    cursor = page.nextCursor;
  } while (cursor);
  return count;
}

export async function loginToServer(options: LoginOptions): Promise<LoginOutcome> {
  const { server, env, grant } = options;
  const url = new URL(server.url);
  const store = new TokenStore(env, server.name, server.url);
  const fetch: GuardedFetch = createGuardedFetch({
    grant,
    ...(options.lookup ? { lookup: options.lookup } : {}),
  });
  const preferredPort = store.redirectUri ? Number(new URL(store.redirectUri).port) || undefined : undefined;
  const loopback = await startLoopback(server.name, preferredPort);
  const open = options.open ?? openBrowser;
  try {
    const provider = new LoginProvider(store, loopback.redirectUrl, (authorizationUrl) => {
      options.ui.show(authorizationUrl.href, open(authorizationUrl.href, env));
    });
    const setup = { url, fetch, headers: options.headers, authProvider: provider };
    let refused: RemoteTransport;
    try {
      const connected = await connectClient(
        server.transport,
        setup,
        options.makeClient,
        options.connectTimeoutMs,
      );
      const tools = await countTools(connected.client);
      await connected.client.close();
      return { loggedIn: false, tools, kind: connected.kind };
    } catch (error) {
      // Anything but "go and authorize" (no URL handed over) is a real failure.
      if (!provider.authorizationUrl) throw error;
      refused = (error as { transport: RemoteTransport }).transport;
    }
    const { code } = await loopback.waitForCode(
      () => provider.state(),
      options.timeoutMs ?? LOGIN_TIMEOUT_MS,
      options.signal,
    );
    await refused.finishAuth(code);
    const check = await connectClient(
      server.transport,
      {
        ...setup,
        authProvider: new StoredCredentialsProvider(store, 'the login just made was not accepted'),
      },
      options.makeClient,
      options.connectTimeoutMs,
    );
    const tools = await countTools(check.client);
    await check.client.close();
    return { loggedIn: true, tools, kind: check.kind };
  } finally {
    await loopback.close();
    fetch.close();
  }
}

export interface LogoutOutcome {
  /** There was a stored login. */
  removed: boolean;
  /** The authorization server confirmed the revocation of the tokens. */
  revoked: boolean;
  /** Why revocation was skipped or failed, when it was. */
  note?: string;
}

/** Revokes the stored tokens (RFC 7009) where the authorization server offers it, then deletes them. */
export async function logoutFromServer(options: {
  server: RemoteMcpConfig;
  env: NodeJS.ProcessEnv;
  grant: HostGrant;
  lookup?: LookupFn;
}): Promise<LogoutOutcome> {
  const store = new TokenStore(options.env, options.server.name, options.server.url);
  const tokens = store.tokens;
  const endpoint = (
    store.discovery?.authorizationServerMetadata as { revocation_endpoint?: string } | undefined
  )?.revocation_endpoint;
  const clientId = store.client?.client_id;
  const clientSecret = (store.client as { client_secret?: string } | undefined)?.client_secret;
  let revoked = false;
  let note: string | undefined;
  if (tokens && endpoint && clientId) {
    const fetch = createGuardedFetch({
      grant: options.grant,
      headersTimeoutMs: 10_000,
      ...(options.lookup ? { lookup: options.lookup } : {}),
    });
    try {
      revoked = true;
      for (const [token, hint] of [
        [tokens.refresh_token, 'refresh_token'],
        [tokens.access_token, 'access_token'],
      ] as const) {
        if (!token) continue;
        const response = await fetch(endpoint, {
          method: 'POST',
          redirect: 'manual',
          headers: { accept: 'application/json' },
          body: new URLSearchParams({
            token,
            token_type_hint: hint,
            client_id: clientId,
            ...(clientSecret ? { client_secret: clientSecret } : {}),
          }),
        });
        await response.body?.cancel();
        if (!response.ok) {
          revoked = false;
          note = `the authorization server answered HTTP ${response.status} to the revocation`;
        }
      }
    } catch (error) {
      revoked = false;
      note = (error as Error).message;
    } finally {
      fetch.close();
    }
  } else if (tokens) {
    note = 'the authorization server offers no token revocation';
  }
  const removed = store.remove();
  return { removed, revoked, ...(note ? { note } : {}) };
}
