// Sign-in through OAuth2/OIDC providers ([[notes.oauth]], discovery + PKCE + state + nonce) and a
// GitHub OAuth app ([notes.github]); the identity they return is mapped to a role by the lists in
// the config. For OIDC the ID token is the proof of identity: its signature is checked against the
// provider's JWKS along with iss, aud, exp and the nonce this login sent; user info only adds claims.
import { createHash, randomBytes } from 'node:crypto';
import { createLocalJWKSet, type JWTPayload, jwtVerify } from 'jose';
import type { NotesConfig } from '../config/schema.ts';
import { registerSecret } from '../core/redact.ts';
import type { Role } from './auth.ts';
import { ApiError } from './http.ts';

type FetchLike = typeof fetch;

interface Pending {
  provider: string;
  verifier: string;
  nonce: string;
  redirectUri: string;
  expires: number;
}

interface Discovery {
  issuer?: string;
  jwks_uri?: string;
  authorization_endpoint: string;
  token_endpoint: string;
  userinfo_endpoint?: string;
}

export interface ExternalIdentity {
  subject: string;
  name: string;
  provider: string;
  role: Role;
}

export interface OAuthOptions {
  fetch?: FetchLike;
  /** GitHub endpoints, replaceable in tests. */
  githubAuthorize?: string;
  githubToken?: string;
  githubApi?: string;
  now?: () => number;
}

const STATE_TTL_MS = 10 * 60_000;

function b64url(buffer: Buffer): string {
  return buffer.toString('base64url');
}

/** First list (admins, then users, then guests) that names one of the identifiers; `*` names anyone. */
export function mapRole(
  lists: { admins?: string[]; users?: string[]; guests?: string[] },
  identifiers: string[],
): Role | null {
  const ids = identifiers.filter(Boolean).map((id) => id.toLowerCase());
  for (const [role, list] of [
    ['admin', lists.admins],
    ['user', lists.users],
    ['guest', lists.guests],
  ] as const) {
    for (const entry of list ?? []) {
      const e = entry.toLowerCase();
      if (e === '*' || ids.includes(e)) return role;
      // `@example.org` names everyone with an address at that domain.
      if (e.startsWith('@') && ids.some((id) => id.endsWith(e))) return role;
    }
  }
  return null;
}

export class OAuthLogins {
  private readonly config: NotesConfig;
  private readonly fetch: FetchLike;
  private readonly options: OAuthOptions;
  private readonly pending = new Map<string, Pending>();
  private readonly discovery = new Map<string, Discovery>();
  private readonly jwks = new Map<string, ReturnType<typeof createLocalJWKSet>>();
  private readonly now: () => number;

  constructor(config: NotesConfig, options: OAuthOptions = {}) {
    this.config = config;
    this.options = options;
    this.fetch = options.fetch ?? fetch;
    this.now = options.now ?? Date.now;
    for (const provider of config.oauth ?? []) registerSecret(provider.client_secret);
    registerSecret(config.github?.client_secret);
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

  private async discover(issuer: string): Promise<Discovery> {
    const cached = this.discovery.get(issuer);
    if (cached) return cached;
    const url = `${issuer.replace(/\/$/, '')}/.well-known/openid-configuration`;
    const response = await this.fetch(url, { headers: { accept: 'application/json' } });
    if (!response.ok)
      throw new ApiError(502, 'INTERNAL', `OIDC discovery at ${url} answered ${response.status}`);
    const doc = (await response.json()) as Partial<Discovery>;
    if (!doc.authorization_endpoint || !doc.token_endpoint) {
      throw new ApiError(502, 'INTERNAL', `OIDC discovery at ${url} lacks authorization/token endpoints`);
    }
    // OIDC Discovery §4.3: the document must name the issuer it was fetched for, or tokens could be
    // checked against someone else's keys.
    if (doc.issuer !== undefined && doc.issuer.replace(/\/$/, '') !== issuer.replace(/\/$/, '')) {
      throw new ApiError(
        502,
        'INTERNAL',
        `OIDC discovery at ${url} names issuer ${doc.issuer}, not ${issuer}`,
      );
    }
    this.discovery.set(issuer, doc as Discovery);
    return doc as Discovery;
  }

  private remember(
    provider: string,
    redirectUri: string,
  ): { state: string; verifier: string; nonce: string } {
    const now = this.now();
    for (const [key, value] of this.pending) if (value.expires < now) this.pending.delete(key);
    const state = b64url(randomBytes(24));
    const verifier = b64url(randomBytes(32));
    const nonce = b64url(randomBytes(16));
    this.pending.set(state, { provider, verifier, nonce, redirectUri, expires: now + STATE_TTL_MS });
    return { state, verifier, nonce };
  }

  private take(provider: string, state: unknown, boundState: string | undefined): Pending {
    if (typeof state !== 'string' || !state || state !== boundState) {
      throw new ApiError(
        401,
        'UNAUTHENTICATED',
        'login state does not match this browser; start the login again',
      );
    }
    const pending = this.pending.get(state);
    this.pending.delete(state);
    if (!pending || pending.provider !== provider || pending.expires < this.now()) {
      throw new ApiError(401, 'UNAUTHENTICATED', 'login state expired or unknown; start the login again');
    }
    return pending;
  }

  /** The provider URL to send the browser to, and the state to bind to the browser in a cookie. */
  async start(name: string, origin: string): Promise<{ url: string; state: string }> {
    if (name === 'github') {
      const gh = this.config.github;
      if (!gh) throw new ApiError(404, 'NOT_FOUND', 'GitHub login is not configured');
      const redirectUri = `${origin}/auth/github/callback`;
      const { state, verifier } = this.remember('github', redirectUri);
      const url = new URL(this.options.githubAuthorize ?? 'https://github.com/login/oauth/authorize');
      url.search = new URLSearchParams({
        client_id: gh.client_id,
        redirect_uri: redirectUri,
        scope: 'read:user',
        state,
        code_challenge: b64url(createHash('sha256').update(verifier).digest()),
        code_challenge_method: 'S256',
      }).toString();
      return { url: url.toString(), state };
    }
    const provider = (this.config.oauth ?? []).find((p) => p.name === name);
    if (!provider) throw new ApiError(404, 'NOT_FOUND', `login provider '${name}' not found`);
    const discovery = await this.discover(provider.issuer);
    const redirectUri = `${origin}/auth/oauth/${encodeURIComponent(name)}/callback`;
    const { state, verifier, nonce } = this.remember(name, redirectUri);
    const url = new URL(discovery.authorization_endpoint);
    url.search = new URLSearchParams({
      response_type: 'code',
      client_id: provider.client_id,
      redirect_uri: redirectUri,
      scope: (provider.scopes ?? ['openid', 'email', 'profile']).join(' '),
      state,
      nonce,
      code_challenge: b64url(createHash('sha256').update(verifier).digest()),
      code_challenge_method: 'S256',
    }).toString();
    return { url: url.toString(), state };
  }

  private async exchange(
    tokenUrl: string,
    params: Record<string, string>,
    clientSecret: string | undefined,
  ): Promise<{ access_token: string; id_token?: string }> {
    const body = new URLSearchParams(params);
    if (clientSecret) body.set('client_secret', clientSecret);
    const response = await this.fetch(tokenUrl, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body,
    });
    const json = (await response.json().catch(() => ({}))) as {
      access_token?: string;
      id_token?: string;
      error?: string;
    };
    if (!response.ok || !json.access_token) {
      throw new ApiError(
        401,
        'UNAUTHENTICATED',
        `the provider refused the login code (${json.error ?? response.status})`,
      );
    }
    registerSecret(json.access_token);
    if (typeof json.id_token === 'string') registerSecret(json.id_token);
    return {
      access_token: json.access_token,
      id_token: typeof json.id_token === 'string' ? json.id_token : undefined,
    };
  }

  private async keySet(discovery: Discovery, refresh: boolean) {
    const uri = discovery.jwks_uri!;
    const cached = this.jwks.get(uri);
    if (cached && !refresh) return cached;
    const response = await this.fetch(uri, { headers: { accept: 'application/json' } });
    if (!response.ok) throw new ApiError(502, 'INTERNAL', `OIDC keys at ${uri} answered ${response.status}`);
    const set = createLocalJWKSet((await response.json()) as Parameters<typeof createLocalJWKSet>[0]);
    this.jwks.set(uri, set);
    return set;
  }

  /** The ID token's claims once signature, iss, aud/azp, exp/iat and nonce all hold; 401 otherwise. */
  private async verifyIdToken(
    idToken: string | undefined,
    provider: { name: string; issuer: string; client_id: string },
    discovery: Discovery,
    nonce: string,
  ): Promise<JWTPayload> {
    if (!idToken)
      throw new ApiError(401, 'UNAUTHENTICATED', `provider ${provider.name} returned no ID token`);
    if (!discovery.jwks_uri) throw new ApiError(502, 'INTERNAL', `provider ${provider.name} has no jwks_uri`);
    const options = {
      issuer: discovery.issuer ?? provider.issuer,
      audience: provider.client_id,
      currentDate: new Date(this.now()),
      clockTolerance: 60,
      requiredClaims: ['sub', 'exp', 'iat'],
    };
    let payload: JWTPayload;
    try {
      try {
        ({ payload } = await jwtVerify(idToken, await this.keySet(discovery, false), options));
      } catch (error) {
        // A key the cached set lacks may be a rotated-in one: fetch the set once more.
        if ((error as { code?: string }).code !== 'ERR_JWKS_NO_MATCHING_KEY') throw error;
        ({ payload } = await jwtVerify(idToken, await this.keySet(discovery, true), options));
      }
    } catch (error) {
      if (error instanceof ApiError) throw error;
      throw new ApiError(
        401,
        'UNAUTHENTICATED',
        `the ID token from ${provider.name} is not valid: ${(error as Error).message}`,
      );
    }
    if (payload.nonce !== nonce) {
      throw new ApiError(401, 'UNAUTHENTICATED', `the ID token from ${provider.name} has the wrong nonce`);
    }
    if (Array.isArray(payload.aud) && payload.aud.length > 1 && payload.azp !== provider.client_id) {
      throw new ApiError(
        401,
        'UNAUTHENTICATED',
        `the ID token from ${provider.name} was issued to another client`,
      );
    }
    return payload;
  }

  async finish(
    name: string,
    query: Record<string, unknown>,
    boundState: string | undefined,
  ): Promise<ExternalIdentity> {
    if (typeof query.error === 'string') {
      throw new ApiError(401, 'UNAUTHENTICATED', `the provider refused the login: ${query.error}`);
    }
    const pending = this.take(name, query.state, boundState);
    const code = typeof query.code === 'string' ? query.code : '';
    if (!code) throw new ApiError(400, 'BAD_REQUEST', 'code: missing');

    if (name === 'github') {
      const gh = this.config.github!;
      const { access_token: token } = await this.exchange(
        this.options.githubToken ?? 'https://github.com/login/oauth/access_token',
        {
          client_id: gh.client_id,
          code,
          redirect_uri: pending.redirectUri,
          code_verifier: pending.verifier,
        },
        gh.client_secret,
      );
      const response = await this.fetch(`${this.options.githubApi ?? 'https://api.github.com'}/user`, {
        headers: {
          authorization: `Bearer ${token}`,
          accept: 'application/vnd.github+json',
          'user-agent': 'rune-notes',
        },
      });
      if (!response.ok)
        throw new ApiError(401, 'UNAUTHENTICATED', `GitHub user lookup answered ${response.status}`);
      const user = (await response.json()) as { login?: string; email?: string | null };
      if (!user.login) throw new ApiError(401, 'UNAUTHENTICATED', 'GitHub returned no login name');
      const role = mapRole(gh, [user.login, user.email ?? '']);
      if (!role) throw new ApiError(403, 'FORBIDDEN', `GitHub user ${user.login} has no role on this server`);
      return { subject: `github:${user.login.toLowerCase()}`, name: user.login, provider: 'github', role };
    }

    const provider = (this.config.oauth ?? []).find((p) => p.name === name)!;
    const discovery = await this.discover(provider.issuer);
    const tokens = await this.exchange(
      discovery.token_endpoint,
      {
        grant_type: 'authorization_code',
        client_id: provider.client_id,
        code,
        redirect_uri: pending.redirectUri,
        code_verifier: pending.verifier,
      },
      provider.client_secret,
    );
    const claims = await this.verifyIdToken(tokens.id_token, provider, discovery, pending.nonce);
    type Claims = {
      sub?: string;
      email?: string;
      email_verified?: boolean;
      preferred_username?: string;
      name?: string;
    };
    let info = claims as Claims;
    if (discovery.userinfo_endpoint) {
      const response = await this.fetch(discovery.userinfo_endpoint, {
        headers: { authorization: `Bearer ${tokens.access_token}`, accept: 'application/json' },
      });
      if (!response.ok) throw new ApiError(401, 'UNAUTHENTICATED', `user info answered ${response.status}`);
      const extra = (await response.json()) as Claims;
      // OIDC Core §5.3.2: user info for another subject than the ID token's must not be used.
      if (extra.sub !== claims.sub) {
        throw new ApiError(401, 'UNAUTHENTICATED', 'user info names another subject than the ID token');
      }
      info = { ...(claims as Claims), ...extra };
    }
    if (!info.sub) throw new ApiError(401, 'UNAUTHENTICATED', 'the provider returned no subject');
    // Only an address the provider says it verified may claim a listed one; some providers send
    // a user-editable, unverified `email` without any email_verified claim.
    // (Some providers, such as Amazon Cognito, send the flag as the string "true".)
    const verified = info.email_verified === true || (info.email_verified as unknown) === 'true';
    const email = info.email && verified ? info.email : '';
    // preferred_username is whatever the person chose at many providers: it may name a listed user
    // name, never an address or a domain, which only a verified email may claim.
    const username = info.preferred_username?.includes('@') ? '' : (info.preferred_username ?? '');
    const role = mapRole(provider, [info.sub, email, username]);
    const display = info.preferred_username || email || info.name || info.sub;
    if (!role) throw new ApiError(403, 'FORBIDDEN', `${display} has no role on this server`);
    return { subject: `oauth:${name}:${info.sub}`, name: display, provider: `oauth:${name}`, role };
  }
}
