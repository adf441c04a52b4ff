// Sign-in through OAuth2/OIDC providers ([[notes.oauth]]) and a GitHub OAuth app ([notes.github]),
// by openid-client: discovery, PKCE (S256), state, nonce, the code exchange, and the ID token
// check (signature against the provider's JWKS, iss, aud/azp, exp/iat, nonce), user info bound to
// the ID token's subject. What stays here is rune's part: the state bound to the browser by a
// cookie, and which identifiers may claim a role in the config's lists.
import * as oidc from 'openid-client';
import type { NotesConfig } from '../config/schema.ts';
import { formatSeconds, startDeadline } from '../core/deadline.ts';
import { registerSecret } from '../core/redact.ts';
import { ApiError } from './http.ts';
import { mapRole, type Role } from './roles.ts';

type FetchLike = typeof fetch;

interface Pending {
  provider: string;
  verifier: string;
  nonce: string;
  redirectUri: string;
  expires: number;
}

export interface ExternalIdentity {
  subject: string;
  name: string;
  provider: string;
  role: Role;
  /** What the role was mapped by, recorded so the role follows later config changes. */
  identifiers: string[];
}

export interface OAuthOptions {
  fetch?: FetchLike;
  /** GitHub endpoints, replaceable in tests. */
  githubAuthorize?: string;
  githubToken?: string;
  githubApi?: string;
  now?: () => number;
  /** How long one request to a provider may take (default 30 s, openid-client's own default). */
  requestTimeoutMs?: number;
}

const STATE_TTL_MS = 10 * 60_000;
const REQUEST_TIMEOUT_MS = 30_000;
/** Logins started and not finished are kept at most this many, oldest dropped first. */
const MAX_PENDING = 10_000;

const unauthenticated = (message: string) => new ApiError('UNAUTHENTICATED', message);

/** http:// issuers are accepted only on the loopback interface (a provider on the same machine). */
function loopback(url: URL): boolean {
  return ['127.0.0.1', '[::1]', 'localhost'].includes(url.hostname);
}

export class OAuthLogins {
  private config: NotesConfig;
  private readonly fetch: FetchLike | undefined;
  private readonly options: OAuthOptions;
  private readonly pending = new Map<string, Pending>();
  private readonly configurations = new Map<string, Promise<oidc.Configuration>>();
  private readonly now: () => number;
  private readonly timeoutMs: number;

  constructor(config: NotesConfig, options: OAuthOptions = {}) {
    this.config = config;
    this.options = options;
    this.fetch = options.fetch;
    this.now = options.now ?? Date.now;
    this.timeoutMs = options.requestTimeoutMs ?? REQUEST_TIMEOUT_MS;
    this.registerSecrets();
  }

  private registerSecrets(): void {
    for (const provider of this.config.oauth ?? []) registerSecret(provider.client_secret);
    registerSecret(this.config.github?.client_secret);
  }

  /** Takes a new configuration (SIGHUP); providers it no longer lists stop at once. */
  reload(config: NotesConfig): void {
    this.config = config;
    this.configurations.clear();
    this.registerSecrets();
  }

  get enabled(): boolean {
    return (this.config.oauth?.length ?? 0) > 0 || this.config.github !== undefined;
  }

  list(): { oauth: Array<{ name: string; url: string }>; github: string | null } {
    return {
      oauth: (this.config.oauth ?? []).map((p) => ({
        name: p.name,
        url: `/auth/oauth/${encodeURIComponent(p.name)}/start`,
      })),
      github: this.config.github ? '/auth/github/start' : null,
    };
  }

  private requestOptions(url: URL, idTokens: boolean) {
    const execute: Array<(config: oidc.Configuration) => void> = [];
    if (url.protocol === 'http:' && loopback(url)) execute.push(oidc.allowInsecureRequests);
    // openid-client trusts an ID token from the token endpoint on TLS alone (OIDC Core 3.1.3.7
    // allows it); rune checks its signature against the provider's JWKS as well, as it always has.
    if (idTokens) execute.push(oidc.enableNonRepudiationChecks);
    return { ...(this.fetch ? { [oidc.customFetch]: this.fetch as never } : {}), execute };
  }

  /** The provider's configuration (discovery for OIDC, fixed endpoints for GitHub), cached. */
  private configuration(name: string): Promise<oidc.Configuration> {
    const cached = this.configurations.get(name);
    if (cached) return cached;
    let made: Promise<oidc.Configuration>;
    if (name === 'github') {
      const gh = this.config.github;
      if (!gh) throw new ApiError('NOT_FOUND', 'GitHub login is not configured');
      const token = new URL(this.options.githubToken ?? 'https://github.com/login/oauth/access_token');
      const config = new oidc.Configuration(
        {
          issuer: 'https://github.com',
          authorization_endpoint: this.options.githubAuthorize ?? 'https://github.com/login/oauth/authorize',
          token_endpoint: token.href,
        },
        gh.client_id,
        undefined,
        oidc.ClientSecretPost(gh.client_secret),
      );
      for (const apply of this.requestOptions(token, false).execute) apply(config);
      if (this.fetch) config[oidc.customFetch] = this.fetch as never;
      config.timeout = this.timeoutMs / 1000;
      made = Promise.resolve(config);
    } else {
      const provider = (this.config.oauth ?? []).find((p) => p.name === name);
      if (!provider) throw new ApiError('NOT_FOUND', `login provider '${name}' not found`);
      const issuer = new URL(provider.issuer);
      made = oidc
        .discovery(
          issuer,
          provider.client_id,
          { [oidc.clockTolerance]: 60 },
          provider.client_secret ? oidc.ClientSecretPost(provider.client_secret) : oidc.None(),
          { ...this.requestOptions(issuer, true), timeout: this.timeoutMs / 1000 },
        )
        .catch((error: Error) => {
          this.configurations.delete(name);
          throw new ApiError(
            'UPSTREAM_ERROR',
            `OIDC discovery for ${provider.issuer} failed: ${error.message}`,
          );
        });
    }
    this.configurations.set(name, made);
    return made;
  }

  private remember(
    provider: string,
    redirectUri: string,
  ): { state: string; verifier: string; nonce: string } {
    const now = this.now();
    for (const [key, value] of this.pending) if (value.expires < now) this.pending.delete(key);
    while (this.pending.size >= MAX_PENDING) this.pending.delete(this.pending.keys().next().value!);
    const state = oidc.randomState();
    const verifier = oidc.randomPKCECodeVerifier();
    const nonce = oidc.randomNonce();
    this.pending.set(state, { provider, verifier, nonce, redirectUri, expires: now + STATE_TTL_MS });
    return { state, verifier, nonce };
  }

  private take(
    provider: string,
    state: unknown,
    boundState: string | undefined,
  ): Pending & { state: string } {
    if (typeof state !== 'string' || !state || state !== boundState) {
      throw unauthenticated('login state does not match this browser; start the login again');
    }
    const pending = this.pending.get(state);
    this.pending.delete(state);
    if (!pending || pending.provider !== provider || pending.expires < this.now()) {
      throw unauthenticated('login state expired or unknown; start the login again');
    }
    return { ...pending, state };
  }

  /** The provider URL to send the browser to, and the state to bind to the browser in a cookie. */
  async start(name: string, origin: string): Promise<{ url: string; state: string }> {
    const config = await this.configuration(name);
    const github = name === 'github';
    const redirectUri = github
      ? `${origin}/auth/github/callback`
      : `${origin}/auth/oauth/${encodeURIComponent(name)}/callback`;
    const { state, verifier, nonce } = this.remember(name, redirectUri);
    const provider = (this.config.oauth ?? []).find((p) => p.name === name);
    const url = oidc.buildAuthorizationUrl(config, {
      redirect_uri: redirectUri,
      scope: github ? 'read:user' : (provider?.scopes ?? ['openid', 'email', 'profile']).join(' '),
      state,
      code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
      code_challenge_method: 'S256',
      ...(github ? {} : { nonce }),
    });
    return { url: url.href, state };
  }

  /** GitHub's user of an access token, within the request deadline (src/core/deadline.ts). */
  private async githubUser(accessToken: string): Promise<{ login?: unknown; email?: unknown }> {
    const fetcher = this.fetch ?? fetch;
    const deadline = startDeadline(this.timeoutMs);
    let response: Response;
    try {
      response = await fetcher(`${this.options.githubApi ?? 'https://api.github.com'}/user`, {
        headers: {
          authorization: `Bearer ${accessToken}`,
          accept: 'application/vnd.github+json',
          'user-agent': 'rune-notes',
        },
        signal: deadline.signal,
      });
      if (!response.ok) throw unauthenticated(`GitHub user lookup answered ${response.status}`);
      return (await response.json()) as { login?: unknown; email?: unknown };
    } catch (error) {
      if (error instanceof ApiError) throw error;
      const why = deadline.expired ? `no answer within ${formatSeconds(deadline.ms)}` : describe(error);
      throw new ApiError('UPSTREAM_ERROR', `GitHub user lookup failed: ${why}`);
    } finally {
      deadline.clear();
    }
  }

  /** The code exchange, with openid-client's checks; its errors become 401s that say what failed. */
  private async exchange(name: string, pending: Pending & { state: string }, query: Record<string, unknown>) {
    const config = await this.configuration(name);
    const callback = new URL(pending.redirectUri);
    for (const [key, value] of Object.entries(query)) {
      if (typeof value === 'string') callback.searchParams.set(key, value);
    }
    const github = name === 'github';
    try {
      const tokens = await oidc.authorizationCodeGrant(config, callback, {
        pkceCodeVerifier: pending.verifier,
        expectedState: pending.state,
        ...(github ? {} : { expectedNonce: pending.nonce, idTokenExpected: true }),
      });
      registerSecret(tokens.access_token);
      if (tokens.id_token) registerSecret(tokens.id_token);
      return { config, tokens };
    } catch (error) {
      if (error instanceof ApiError) throw error;
      throw unauthenticated(`the login with ${name} failed: ${describe(error)}`);
    }
  }

  async finish(
    name: string,
    query: Record<string, unknown>,
    boundState: string | undefined,
  ): Promise<ExternalIdentity> {
    if (typeof query.error === 'string') {
      throw unauthenticated(`the provider refused the login: ${query.error.slice(0, 200)}`);
    }
    const pending = this.take(name, query.state, boundState);
    if (typeof query.code !== 'string' || !query.code) throw new ApiError('BAD_REQUEST', 'code: missing');
    const { config, tokens } = await this.exchange(name, pending, query);

    if (name === 'github') {
      const gh = this.config.github!;
      const user = await this.githubUser(tokens.access_token);
      if (typeof user.login !== 'string' || !user.login)
        throw unauthenticated('GitHub returned no login name');
      const identifiers = [user.login, typeof user.email === 'string' ? user.email : ''].filter(Boolean);
      const role = mapRole(gh, identifiers);
      if (!role) throw new ApiError('FORBIDDEN', `GitHub user ${user.login} has no role on this server`);
      return {
        subject: `github:${user.login.toLowerCase()}`,
        name: user.login,
        provider: 'github',
        role,
        identifiers,
      };
    }

    const provider = (this.config.oauth ?? []).find((p) => p.name === name)!;
    const claims = tokens.claims();
    if (!claims) throw unauthenticated(`provider ${name} returned no ID token`);
    type Claims = {
      sub?: string;
      email?: string;
      email_verified?: boolean | string;
      preferred_username?: string;
      name?: string;
    };
    let info = claims as Claims;
    if (config.serverMetadata().userinfo_endpoint) {
      try {
        // Bound to the ID token's subject (OIDC Core §5.3.2): user info for another is refused.
        info = {
          ...(claims as Claims),
          ...((await oidc.fetchUserInfo(config, tokens.access_token, claims.sub)) as Claims),
        };
      } catch (error) {
        const message = describe(error);
        throw unauthenticated(
          /"sub"/.test(message)
            ? 'user info names another subject than the ID token'
            : `user info from ${name} failed: ${message}`,
        );
      }
    }
    if (!info.sub) throw unauthenticated('the provider returned no subject');
    // Only an address the provider says it verified may claim a listed one; some providers send
    // a user-editable, unverified `email` without any email_verified claim.
    // (Some providers, such as Amazon Cognito, send the flag as the string "true".)
    const verified = info.email_verified === true || info.email_verified === 'true';
    const email = typeof info.email === 'string' && verified ? info.email : '';
    // preferred_username is whatever the person chose at many providers: it may name a listed user
    // name, never an address or a domain, which only a verified email may claim.
    const preferred = typeof info.preferred_username === 'string' ? info.preferred_username : '';
    const username = preferred.includes('@') ? '' : preferred;
    const identifiers = [info.sub, email, username].filter(Boolean);
    const role = mapRole(provider, identifiers);
    const display = preferred || email || (typeof info.name === 'string' ? info.name : '') || info.sub;
    if (!role) throw new ApiError('FORBIDDEN', `${display} has no role on this server`);
    return {
      subject: `oauth:${name}:${info.sub}`,
      name: display,
      provider: `oauth:${name}`,
      role,
      identifiers,
    };
  }
}

/** openid-client's message, with the cause that names the failed check when there is one. */
function describe(error: unknown): string {
  const e = error as { message?: string; cause?: unknown; code?: string };
  const message = e.message ?? String(error);
  const cause = e.cause as { message?: string } | undefined;
  const full = cause?.message && !message.includes(cause.message) ? `${message} (${cause.message})` : message;
  if (/"id_token" property must be/.test(full)) return 'the provider returned no ID token';
  return full;
}
