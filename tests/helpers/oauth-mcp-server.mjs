// An OAuth-protected MCP server for tests, built from the SDK's own server pieces: mcpAuthRouter
// (authorization server metadata, dynamic client registration, /authorize, /token with PKCE,
// /revoke), requireBearerAuth with protected-resource metadata, and a Streamable HTTP MCP endpoint
// offering `echo` and `whoami`. /authorize approves at once (the test plays the user's browser).
//
//   node tests/helpers/oauth-mcp-server.mjs [PORT]   → prints "LISTENING <port>" on stdout
//
// Test controls: POST /test/expire ends every access token issued so far (as if their time ran out);
// GET /test/stats returns what happened (grants used, registrations, revocations, tool calls, and
// every token issued, so a test can look for them in rune's output).
import { randomBytes } from 'node:crypto';
import { InvalidTokenError } from '@modelcontextprotocol/sdk/server/auth/errors.js';
import { requireBearerAuth } from '@modelcontextprotocol/sdk/server/auth/middleware/bearerAuth.js';
import {
  getOAuthProtectedResourceMetadataUrl,
  mcpAuthRouter,
} from '@modelcontextprotocol/sdk/server/auth/router.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import express from 'express';
import { z } from 'zod';

const port = Number(process.argv[2] ?? 0);
const token = () => randomBytes(24).toString('base64url');

const clients = new Map();
const codes = new Map();
const accessTokens = new Map();
const refreshTokens = new Map();
const stats = { registrations: 0, grants: [], revoked: [], toolCalls: 0, issued: [], authorizations: 0 };

function issue(clientId, scopes, resource) {
  const access = `at_${token()}`;
  const refresh = `rt_${token()}`;
  accessTokens.set(access, { clientId, scopes, resource, expiresAt: Date.now() + 3600_000 });
  refreshTokens.set(refresh, { clientId, scopes, resource });
  stats.issued.push(access, refresh);
  return {
    access_token: access,
    token_type: 'bearer',
    expires_in: 3600,
    refresh_token: refresh,
    scope: scopes.join(' '),
  };
}

const provider = {
  clientsStore: {
    async getClient(id) {
      return clients.get(id);
    },
    async registerClient(client) {
      stats.registrations += 1;
      clients.set(client.client_id, client);
      return client;
    },
  },
  async authorize(client, params, res) {
    stats.authorizations += 1;
    if (!client.redirect_uris.includes(params.redirectUri)) {
      res.status(400).send('unregistered redirect_uri');
      return;
    }
    const code = token();
    codes.set(code, { client, params });
    const target = new URL(params.redirectUri);
    target.searchParams.set('code', code);
    if (params.state !== undefined) target.searchParams.set('state', params.state);
    res.redirect(target.href);
  },
  async challengeForAuthorizationCode(_client, code) {
    const entry = codes.get(code);
    if (!entry) throw new Error('unknown authorization code');
    return entry.params.codeChallenge;
  },
  async exchangeAuthorizationCode(client, code) {
    const entry = codes.get(code);
    if (!entry || entry.client.client_id !== client.client_id) throw new Error('unknown authorization code');
    codes.delete(code);
    stats.grants.push('authorization_code');
    return issue(client.client_id, entry.params.scopes ?? [], entry.params.resource);
  },
  async exchangeRefreshToken(client, refresh) {
    const entry = refreshTokens.get(refresh);
    if (!entry || entry.clientId !== client.client_id) throw new Error('unknown refresh token');
    refreshTokens.delete(refresh);
    stats.grants.push('refresh_token');
    return issue(client.client_id, entry.scopes, entry.resource);
  },
  async verifyAccessToken(access) {
    const entry = accessTokens.get(access);
    if (!entry || entry.expiresAt < Date.now())
      throw new InvalidTokenError('the access token is unknown or expired');
    return {
      token: access,
      clientId: entry.clientId,
      scopes: entry.scopes,
      expiresAt: Math.floor(entry.expiresAt / 1000),
    };
  },
  async revokeToken(_client, request) {
    stats.revoked.push(request.token);
    accessTokens.delete(request.token);
    refreshTokens.delete(request.token);
  },
};

const app = express();
const server = app.listen(port, '127.0.0.1', () => {
  const actual = server.address().port;
  const base = new URL(`http://127.0.0.1:${actual}/`);
  const mcpUrl = new URL('/mcp', base);
  app.use(
    mcpAuthRouter({
      provider,
      issuerUrl: base,
      resourceServerUrl: mcpUrl,
      scopesSupported: ['mcp'],
      authorizationOptions: { rateLimit: false },
      tokenOptions: { rateLimit: false },
      clientRegistrationOptions: { rateLimit: false },
      revocationOptions: { rateLimit: false },
    }),
  );
  app.post('/test/expire', (_req, res) => {
    for (const entry of accessTokens.values()) entry.expiresAt = 0;
    res.json({ ok: true });
  });
  app.get('/test/stats', (_req, res) => res.json(stats));
  const bearer = requireBearerAuth({
    verifier: provider,
    resourceMetadataUrl: getOAuthProtectedResourceMetadataUrl(mcpUrl),
  });
  app.post('/mcp', express.json(), bearer, async (req, res) => {
    // Stateless: one server and transport per request.
    const mcp = new McpServer({ name: 'oauth-test', version: '1.0.0' });
    mcp.registerTool(
      'echo',
      {
        description: 'Echoes the message',
        inputSchema: { message: z.string() },
        annotations: { readOnlyHint: true },
      },
      async ({ message }) => {
        stats.toolCalls += 1;
        return { content: [{ type: 'text', text: `Echo: ${message}` }] };
      },
    );
    mcp.registerTool('whoami', { description: 'The OAuth client calling' }, async (extra) => ({
      content: [{ type: 'text', text: `client ${extra.authInfo?.clientId ?? 'unknown'}` }],
    }));
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    res.on('close', () => {
      void transport.close();
      void mcp.close();
    });
    await mcp.connect(transport);
    await transport.handleRequest(req, res, req.body);
  });
  app.get('/mcp', bearer, (_req, res) => res.status(405).set('allow', 'POST').end());
  process.stdout.write(`LISTENING ${actual}\n`);
});
