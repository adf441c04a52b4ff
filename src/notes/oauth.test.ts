// OIDC and GitHub logins against a small local identity provider (real HTTP, real PKCE check).
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { mapRole } from './oauth.ts';
import { type Kit, makeServer } from './test-kit.ts';

let idp: Server;
let base: string;
/** code → {challenge, user}; the user the next authorization logs in as. */
const codes = new Map<string, { challenge: string; user: Record<string, unknown> }>();
let nextUser: Record<string, unknown> = {};
const tokenRequests: URLSearchParams[] = [];

beforeAll(async () => {
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
      });
    }
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
        json(200, { access_token: `at-${Buffer.from(JSON.stringify(entry.user)).toString('base64url')}` });
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
  await kit?.server.close();
});

/** What the provider does when the person agrees: a code bound to the PKCE challenge. */
function authorize(location: string): { code: string; state: string } {
  const url = new URL(location);
  expect(url.searchParams.get('code_challenge_method')).toBe('S256');
  const code = `code-${codes.size}-${Math.random()}`;
  codes.set(code, { challenge: url.searchParams.get('code_challenge')!, user: nextUser });
  return { code, state: url.searchParams.get('state')! };
}

async function setup() {
  kit = await makeServer(
    `
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

describe('mapRole', () => {
  it('takes the highest list that names the identity', () => {
    const lists = { admins: ['root'], users: ['@x.org'], guests: ['*'] };
    expect(mapRole(lists, ['root'])).toBe('admin');
    expect(mapRole(lists, ['a@x.org'])).toBe('user');
    expect(mapRole(lists, ['someone'])).toBe('guest');
    expect(mapRole({ users: ['Alice'] }, ['alice'])).toBe('user');
    expect(mapRole({ users: ['alice'] }, ['bob'])).toBeNull();
  });
});
