// The SDK's OAuthClientProvider, backed by the token store. Two kinds: one that only uses what a
// login stored (and refreshes it), failing with LoginRequiredError wherever the SDK would send the
// user to a browser; and one that runs a login (registration, authorization URL, PKCE, state).
import { randomBytes } from 'node:crypto';
import type { OAuthClientProvider, OAuthDiscoveryState } from '@modelcontextprotocol/sdk/client/auth.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { VERSION } from '../../../core/version.ts';
import { displayUrl } from '../hosts.ts';
import { otherLogins, type TokenStore } from './store.ts';

/** The server wants an OAuth login and this run cannot (or may not) start one. */
export class LoginRequiredError extends Error {
  override name = 'LoginRequiredError';
}

// Never used for a redirect: the stored-credentials provider must name one, or the SDK would
// take it for a client-credentials client.
const PLACEHOLDER_REDIRECT = 'http://127.0.0.1/callback';

function registeredFor(client: OAuthClientInformationMixed | undefined, redirectUrl: string): boolean {
  const uris = (client as { redirect_uris?: unknown } | undefined)?.redirect_uris;
  // Pre-registered information without redirect_uris: the server decides; keep using it.
  return client !== undefined && (!Array.isArray(uris) || uris.includes(redirectUrl));
}

abstract class StoreProvider implements OAuthClientProvider {
  constructor(protected readonly store: TokenStore) {}

  abstract get redirectUrl(): string;
  abstract clientInformation(): OAuthClientInformationMixed | undefined;
  abstract tokens(): OAuthTokens | undefined;
  abstract redirectToAuthorization(authorizationUrl: URL): void;
  abstract saveCodeVerifier(codeVerifier: string): void;
  abstract codeVerifier(): string;

  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'rune',
      software_id: 'rune',
      software_version: VERSION,
      redirect_uris: [this.redirectUrl],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }

  saveClientInformation(client: OAuthClientInformationMixed): void {
    this.store.saveClient(client, this.redirectUrl);
  }

  saveTokens(tokens: OAuthTokens): void {
    this.store.saveTokens(tokens);
  }

  discoveryState(): OAuthDiscoveryState | undefined {
    return this.store.discovery;
  }

  saveDiscoveryState(state: OAuthDiscoveryState): void {
    this.store.saveDiscovery(state);
  }

  invalidateCredentials(scope: 'all' | 'client' | 'tokens' | 'verifier' | 'discovery'): void {
    this.store.invalidate(scope);
  }
}

/**
 * Uses and refreshes stored credentials; never starts a login. `hint` says what to do instead
 * (`rune mcp login NAME`, or Concourse's source.mcp bearer_token).
 */
export class StoredCredentialsProvider extends StoreProvider {
  constructor(
    store: TokenStore,
    private readonly hint: string,
  ) {
    super(store);
  }

  private required(why: string): LoginRequiredError {
    // Which login is missing: this URL's. One kept for the same name at another URL is not used.
    const others = otherLogins(this.store.env, this.store.server, this.store.serverUrl).map(
      (other) => other.url,
    );
    const elsewhere =
      others.length > 0
        ? ` (the stored login of "${this.store.server}" is for ${others.map(displayUrl).join(', ')}, another server; it is kept, not used)`
        : '';
    return new LoginRequiredError(
      `MCP server "${this.store.server}" at ${displayUrl(this.store.serverUrl)} ${why}${elsewhere}: ${this.hint}`,
    );
  }

  get redirectUrl(): string {
    return this.store.redirectUri ?? PLACEHOLDER_REDIRECT;
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    // Registering a client is the first step of a login: never done here.
    if (!this.store.client) throw this.required('asks for an OAuth login and none is stored');
    return this.store.client;
  }

  tokens(): OAuthTokens | undefined {
    return this.store.tokens;
  }

  redirectToAuthorization(): void {
    throw this.required(
      this.store.tokens
        ? 'did not accept the stored login and it could not be refreshed'
        : 'asks for an OAuth login',
    );
  }

  saveCodeVerifier(): void {
    throw this.required('asks for an OAuth login');
  }

  codeVerifier(): string {
    throw this.required('asks for an OAuth login');
  }
}

/** Runs one login: registers the client if needed, hands over the authorization URL, keeps PKCE and state in memory. */
export class LoginProvider extends StoreProvider {
  private verifier: string | undefined;
  private readonly expectedState = randomBytes(24).toString('base64url');
  authorizationUrl: URL | undefined;

  constructor(
    store: TokenStore,
    readonly redirectUrl: string,
    private readonly onAuthorizationUrl: (url: URL) => void,
  ) {
    super(store);
  }

  state(): string {
    return this.expectedState;
  }

  clientInformation(): OAuthClientInformationMixed | undefined {
    // A client registered for another redirect port cannot receive this login's code: register again.
    return registeredFor(this.store.client, this.redirectUrl) ? this.store.client : undefined;
  }

  tokens(): OAuthTokens | undefined {
    // A login asks the user, even when a refresh token is stored: that is what the user asked for.
    return undefined;
  }

  redirectToAuthorization(authorizationUrl: URL): void {
    if (authorizationUrl.protocol !== 'https:' && authorizationUrl.protocol !== 'http:') {
      throw new Error(`the authorization URL is not an http(s) URL: ${authorizationUrl.protocol}`);
    }
    this.authorizationUrl = authorizationUrl;
    this.onAuthorizationUrl(authorizationUrl);
  }

  saveCodeVerifier(codeVerifier: string): void {
    this.verifier = codeVerifier;
  }

  codeVerifier(): string {
    if (!this.verifier) throw new Error('no PKCE code verifier: the login did not start');
    return this.verifier;
  }
}
