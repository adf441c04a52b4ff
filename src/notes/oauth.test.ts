// OIDC and GitHub logins against a small local identity provider (real HTTP, real PKCE check).
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { exportJWK, generateKeyPair, type JWTPayload, SignJWT } from 'jose';

type CryptoKey = Awaited<ReturnType<typeof generateKeyPair>>['privateKey'];

import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { whileCollecting } from '../../tests/helpers/gc.ts';
import { type SilentServer, startSilentServer } from '../../tests/helpers/silent-server.ts';
import type { BuildOptions } from './server.ts';
import { type Kit, makeServer } from './test-kit.ts';

let idp: Server;
let base: string;
/** code → {challenge, nonce, user}; the user the next authorization logs in as. */
const codes = new Map<string, { challenge: string; nonce: string; user: Record<string, unknown> }>();
let nextUser: Record<string, unknown> = {};
const tokenRequests: URLSearchParams[] = [];
/** How the next ID token is made; tests change it to forge or spoil one. */
type Forge = { key?: CryptoKey; claims?: JWTPayload; noIdToken?: boolean };
let forge: Forge = {};
let signingKey: CryptoKey;
let strangerKey: CryptoKey;

async function idToken(user: Record<string, unknown>, nonce: string): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  return new SignJWT({ ...user, nonce, ...forge.claims })
    .setProtectedHeader({ alg: 'RS256', kid: 'k1' })
    .setIssuer((forge.claims?.iss as string) ?? base)
    .setAudience((forge.claims?.aud as string) ?? 'rune')
    .setSubject(String(forge.claims?.sub ?? user.sub ?? user.login ?? 'nobody'))
    .setIssuedAt((forge.claims?.iat as number) ?? now)
    .setExpirationTime((forge.claims?.exp as number) ?? now + 300)
    .sign(forge.key ?? signingKey);
}

beforeAll(async () => {
  const pair = await generateKeyPair('RS256');
  signingKey = pair.privateKey;
  strangerKey = (await generateKeyPair('RS256')).privateKey;
  const jwk = { ...(await exportJWK(pair.publicKey)), kid: 'k1', alg: 'RS256', use: 'sig' };
  idp = createServer((req, res) => {
    const url = new URL(req.url!, base);
    const json = (status: number, body: unknown) => {
      res.writeHead(status, { 'content-type': 'application/json' });
      res.end(JSON.stringify(body));
    };
    if (url.pathname === '/.well-known/openid-configuration') {
      return json(200, {
        issuer: base,
        authorization_endpoint: `${base}/authorize`,
        token_endpoint: `${base}/token`,
        userinfo_endpoint: `${base}/userinfo`,
        jwks_uri: `${base}/jwks`,
      });
    }
    if (url.pathname === '/jwks') return json(200, { keys: [jwk] });
    if (url.pathname === '/token' || url.pathname === '/gh/token') {
      let body = '';
      req.on('data', (c) => {
        body += c;
      });
      req.on('end', () => {
        const form = new URLSearchParams(body);
        tokenRequests.push(form);
        const entry = codes.get(form.get('code') ?? '');
        const verifier = form.get('code_verifier') ?? '';
        const challenge = createHash('sha256').update(verifier).digest('base64url');
        if (!entry || entry.challenge !== challenge) return json(400, { error: 'invalid_grant' });
        codes.delete(form.get('code')!);
        const access_token = `at-${Buffer.from(JSON.stringify(entry.user)).toString('base64url')}`;
        // token_type is required (RFC 6749 §5.1); GitHub sends "bearer" in lower case.
        if (url.pathname === '/gh/token') return json(200, { access_token, token_type: 'bearer' });
        if (forge.noIdToken) return json(200, { access_token, token_type: 'Bearer' });
        idToken(entry.user, entry.nonce).then((id_token) =>
          json(200, { access_token, id_token, token_type: 'Bearer' }),
        );
      });
      return;
    }
    if (url.pathname === '/userinfo' || url.pathname === '/gh/api/user') {
      const auth = req.headers.authorization ?? '';
      const user = JSON.parse(Buffer.from(auth.replace('Bearer at-', ''), 'base64url').toString());
      return json(200, user);
    }
    json(404, {});
  });
  await new Promise<void>((r) => idp.listen(0, '127.0.0.1', r));
  base = `http://127.0.0.1:${(idp.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((r) => idp.close(() => r())));

let kit: Kit;
afterEach(async () => {
  forge = {};
  await kit?.server.close();
});

/** What the provider does when the person agrees: a code bound to the PKCE challenge. */
function authorize(location: string): { code: string; state: string } {
  const url = new URL(location);
  expect(url.searchParams.get('code_challenge_method')).toBe('S256');
  const code = `code-${codes.size}-${Math.random()}`;
  codes.set(code, {
    challenge: url.searchParams.get('code_challenge')!,
    nonce: url.searchParams.get('nonce') ?? '',
    user: nextUser,
  });
  return { code, state: url.searchParams.get('state')! };
}

async function setup(extra: Partial<BuildOptions> = {}, notes = '') {
  kit = await makeServer(
    `${notes}
[notes.local]
admins = ["ada:adapass1"]
[[notes.oauth]]
name = "corp"
issuer = "${base}"
client_id = "rune"
client_secret = "corp-secret-value"
admins = ["boss@corp.example"]
users = ["@corp.example"]
[notes.github]
client_id = "gh-client"
client_secret = "gh-secret-value"
users = ["octocat"]
`,
    {
      oauth: {
        githubAuthorize: `${base}/gh/authorize`,
        githubToken: `${base}/gh/token`,
        githubApi: `${base}/gh/api`,
      },
      ...extra,
    },
  );
}

async function loginVia(start: string, callback: string, user: Record<string, unknown>) {
  nextUser = user;
  const started = await kit.server.app.inject({ method: 'GET', url: start });
  expect(started.statusCode).toBe(302);
  const stateCookie = String(started.headers['set-cookie']).split(';')[0]!;
  const { code, state } = authorize(String(started.headers.location));
  return kit.server.app.inject({
    method: 'GET',
    url: `${callback}?code=${encodeURIComponent(code)}&state=${encodeURIComponent(state)}`,
    headers: { cookie: stateCookie },
  });
}

async function me(res: { headers: Record<string, unknown> }) {
  const cookies = ([] as string[]).concat(res.headers['set-cookie'] as string[]);
  const session = cookies.find((c) => c.startsWith('rune_session='))!.split(';')[0]!;
  return (
    await kit.server.app.inject({ method: 'GET', url: '/api/me', headers: { cookie: session } })
  ).json();
}

describe('OAuth2/OIDC login', () => {
  it('logs in through discovery + PKCE + state and maps the identity to a role', async () => {
    await setup();
    const providers = (await kit.server.app.inject({ method: 'GET', url: '/auth/providers' })).json();
    expect(providers).toEqual({
      local: true,
      oauth: [{ name: 'corp', url: '/auth/oauth/corp/start' }],
      github: '/auth/github/start',
    });
    const admin = await loginVia('/auth/oauth/corp/start', '/auth/oauth/corp/callback', {
      sub: 's-1',
      email: 'boss@corp.example',
      email_verified: true,
    });
    expect(admin.statusCode).toBe(303);
    expect((await me(admin)).user).toEqual({
      name: 'boss@corp.example',
      role: 'admin',
      provider: 'oauth:corp',
    });
    const user = await loginVia('/auth/oauth/corp/start', '/auth/oauth/corp/callback', {
      sub: 's-2',
      email: 'dev@corp.example',
      email_verified: true,
      preferred_username: 'dev',
    });
    expect((await me(user)).user).toMatchObject({ name: 'dev', role: 'user' });
    expect(tokenRequests.at(-1)!.get('client_secret')).toBe('corp-secret-value');
  });

  it('refuses an unverified address, an unmapped identity, and a state not bound to the browser', async () => {
    await setup();
    const unverified = await loginVia('/auth/oauth/corp/start', '/auth/oauth/corp/callback', {
      sub: 's-3',
      email: 'boss@corp.example',
      email_verified: false,
    });
    expect(unverified.statusCode).toBe(403);
    const stringly = await loginVia('/auth/oauth/corp/start', '/auth/oauth/corp/callback', {
      sub: 's-3a',
      email: 'boss@corp.example',
      email_verified: 'false',
    });
    expect(stringly.statusCode).toBe(403);
    const cognito = await loginVia('/auth/oauth/corp/start', '/auth/oauth/corp/callback', {
      sub: 's-3c',
      email: 'dev@corp.example',
      email_verified: 'true',
    });
    expect(cognito.statusCode).toBe(303);
    // No email_verified claim at all is not a verification either.
    const unstated = await loginVia('/auth/oauth/corp/start', '/auth/oauth/corp/callback', {
      sub: 's-3b',
      email: 'boss@corp.example',
    });
    expect(unstated.statusCode).toBe(403);
    // A self-chosen user name shaped like a listed address (or in a listed domain) claims nothing.
    for (const preferred_username of ['boss@corp.example', 'mallory@corp.example']) {
      const spoof = await loginVia('/auth/oauth/corp/start', '/auth/oauth/corp/callback', {
        sub: `s-${preferred_username.length}-${preferred_username[0]}`,
        preferred_username,
      });
      expect(spoof.statusCode, preferred_username).toBe(403);
    }
    const stranger = await loginVia('/auth/oauth/corp/start', '/auth/oauth/corp/callback', {
      sub: 's-4',
      email: 'x@elsewhere.example',
    });
    expect(stranger.statusCode).toBe(403);
    nextUser = { sub: 's-5', email: 'dev@corp.example' };
    const started = await kit.server.app.inject({ method: 'GET', url: '/auth/oauth/corp/start' });
    const { code, state } = authorize(String(started.headers.location));
    const noCookie = await kit.server.app.inject({
      method: 'GET',
      url: `/auth/oauth/corp/callback?code=${code}&state=${state}`,
    });
    expect(noCookie.statusCode).toBe(401);
    expect(noCookie.json().code).toBe('UNAUTHENTICATED');
  });

  it('refuses an ID token that is forged, for another client, expired, replayed or missing', async () => {
    await setup();
    const user = { sub: 's-9', email: 'boss@corp.example', email_verified: true };
    const now = Math.floor(Date.now() / 1000);
    const cases: Array<[string, Forge, RegExp]> = [
      ['bad signature', { key: strangerKey }, /signature/],
      ['wrong audience', { claims: { aud: 'someone-else' } }, /aud/],
      ['wrong issuer', { claims: { iss: 'https://evil.example' } }, /iss/],
      ['expired', { claims: { exp: now - 3600, iat: now - 7200 } }, /exp/],
      ['wrong nonce', { claims: { nonce: 'replayed-nonce' } }, /nonce/],
      ['no ID token', { noIdToken: true }, /no ID token/],
    ];
    for (const [label, how, message] of cases) {
      forge = how;
      const res = await loginVia('/auth/oauth/corp/start', '/auth/oauth/corp/callback', user);
      expect(res.statusCode, label).toBe(401);
      expect(res.json().code, label).toBe('UNAUTHENTICATED');
      expect(res.json().message, label).toMatch(message);
      expect(String(res.headers['set-cookie'] ?? ''), label).not.toContain('rune_session=');
    }
    forge = {};
    expect((await loginVia('/auth/oauth/corp/start', '/auth/oauth/corp/callback', user)).statusCode).toBe(
      303,
    );
  });

  it('refuses user info that names another subject than the ID token', async () => {
    await setup();
    forge = { claims: { sub: 'someone-else' } };
    const res = await loginVia('/auth/oauth/corp/start', '/auth/oauth/corp/callback', {
      sub: 's-10',
      email: 'boss@corp.example',
      email_verified: true,
    });
    expect(res.statusCode).toBe(401);
    expect(res.json().message).toMatch(/another subject/);
  });

  it('logs in with GitHub and maps the login name', async () => {
    await setup();
    const res = await loginVia('/auth/github/start', '/auth/github/callback', { login: 'octocat' });
    expect(res.statusCode).toBe(303);
    expect((await me(res)).user).toEqual({ name: 'octocat', role: 'user', provider: 'github' });
    expect(
      (await loginVia('/auth/github/start', '/auth/github/callback', { login: 'mallory' })).statusCode,
    ).toBe(403);
  });
});

describe('a provider that accepts and never answers, under forced GC', () => {
  let silent: SilentServer;
  beforeEach(async () => {
    silent = await startSilentServer();
  });
  afterEach(() => silent.close());

  it.each([
    [
      'token endpoint',
      { githubToken: '/gh/token' },
      401,
      'UNAUTHENTICATED',
      /the login with github failed: operation timed out/,
    ],
    [
      'user lookup',
      { githubApi: '/gh/api' },
      502,
      'UPSTREAM_ERROR',
      /^GitHub user lookup failed: no answer within 1\.5 s$/,
    ],
  ])('the GitHub %s ends at the request deadline', async (_name, silentRoute, status, code, message) => {
    const routes = Object.fromEntries(
      Object.entries(silentRoute).map(([key, path]) => [key, `${silent.url}${path}`]),
    );
    await setup({
      oauth: {
        githubAuthorize: `${base}/gh/authorize`,
        githubToken: `${base}/gh/token`,
        githubApi: `${base}/gh/api`,
        ...routes,
        requestTimeoutMs: 1500,
      },
    });
    const res = await whileCollecting(
      loginVia('/auth/github/start', '/auth/github/callback', { login: 'octocat' }),
    );
    expect(silent.accepted, res.body).toBeGreaterThan(0);
    expect(res.statusCode).toBe(status);
    expect(res.json().code).toBe(code);
    expect(res.json().message).toMatch(message);
  });
});

describe('external logins are acknowledged only once durable', () => {
  it('answers the callback (account and session created) only after the commit is synced, 500 when it cannot be (synchronous = full)', async () => {
    let fail = false;
    await setup(
      {
        fsync: (_fd: number, done: (error: Error | null) => void) =>
          done(fail ? Object.assign(new Error('EIO: i/o error, fsync'), { code: 'EIO' }) : null),
      },
      '[notes]\nsynchronous = "full"',
    );
    fail = true;
    const res = await loginVia('/auth/oauth/corp/start', '/auth/oauth/corp/callback', {
      sub: 's-sync',
      email: 'dev@corp.example',
      email_verified: true,
    });
    // No redirect into the app and no session cookie: the login is not known to be kept.
    expect(res.statusCode).toBe(500);
    expect(res.json()).toMatchObject({ code: 'INTERNAL' });
    expect(res.headers.location).toBeUndefined();
    expect(String(res.headers['set-cookie'] ?? '')).not.toMatch(/rune_session=[^;]/);
    expect(kit.warnings.join('\n')).toMatch(/GET \/auth\/oauth\/corp\/callback: could not sync/);
    // The log names the path only: the callback's query carries the one-time code and state.
    expect(kit.warnings.join('\n')).not.toMatch(/code=|state=/);
    fail = false;
    const ok = await loginVia('/auth/oauth/corp/start', '/auth/oauth/corp/callback', {
      sub: 's-sync',
      email: 'dev@corp.example',
      email_verified: true,
    });
    expect(ok.statusCode).toBe(303);
  });
});
