// Health, identity and logins: local accounts (throttled), OAuth/OIDC and GitHub, logout.
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { VERSION } from '../../core/version.ts';
import type { Principal, Role } from '../auth.ts';
import { ApiError, badRequest, bodyObject, cookie, parseCookies } from '../http.ts';
import { type Params, SESSION_COOKIE } from './kit.ts';

const OAUTH_COOKIE = 'rune_oauth_state';

const userOf = (p: Principal) => ({ name: p.name, role: p.role, provider: p.provider });

export async function authRoutes(app: FastifyInstance): Promise<void> {
  const { auth, hub, oauth, throttle, logger, secure, originOf } = app.notes;

  app.get('/healthz', async () => ({ ok: true, version: VERSION }));

  app.get('/api/me', async (req) => ({
    user: req.principal ? userOf(req.principal) : null,
    role: req.role,
    csrf_token: req.principal?.csrf ?? null,
  }));

  const login = (
    reply: FastifyReply,
    req: FastifyRequest,
    p: { subject: string; name: string; provider: string; role: Role },
  ) => {
    // A new id at every login, and the old session (if any) ends: no fixation.
    const session = app.notes.store.tx(() => {
      if (req.principal?.sessionHash) auth.endSession(req.principal.sessionHash);
      return auth.createSession(p);
    });
    reply.header(
      'Set-Cookie',
      cookie(SESSION_COOKIE, session.id, { secure: secure(req), maxAge: 14 * 86400 }),
    );
    return session;
  };

  app.post('/auth/local', async (req, reply) => {
    const body = bodyObject(req.body);
    const username = typeof body.username === 'string' ? body.username.trim() : '';
    const password = typeof body.password === 'string' ? body.password : '';
    if (!username || !password) throw badRequest('username and password are required');
    const wait = throttle.retryAfter(username, req.ip);
    if (wait > 0) {
      throw new ApiError(
        429,
        'RATE_LIMITED',
        `too many failed logins; try again in ${wait} s`,
        {},
        { 'Retry-After': String(wait) },
      );
    }
    const account = await auth.checkLocal(username, password);
    const current = account ? auth.roleOf(`local:${account.name}`, account.role) : null;
    if (!account || !current) {
      throttle.fail(username, req.ip);
      logger.warn('notes.login_failed', {
        message: `failed login for ${JSON.stringify(username)} from ${req.ip}`,
      });
      throw new ApiError(401, 'UNAUTHENTICATED', 'wrong user name or password');
    }
    throttle.succeed(username);
    const session = login(reply, req, {
      subject: `local:${account.name}`,
      name: account.name,
      provider: 'local',
      role: current,
    });
    const wantsJson =
      String(req.headers.accept ?? '').includes('application/json') ||
      req.headers['content-type']?.includes('json');
    if (!wantsJson) return reply.status(303).header('Location', '/').send();
    return { user: { name: account.name, role: current, provider: 'local' }, csrf_token: session.csrf };
  });

  app.post('/auth/logout', async (req, reply) => {
    if (req.principal?.sessionHash) {
      auth.endSession(req.principal.sessionHash);
      hub.recheck();
    }
    reply.header('Set-Cookie', cookie(SESSION_COOKIE, '', { secure: secure(req), maxAge: 0 }));
    return { ok: true };
  });

  app.get('/auth/providers', async () => ({ local: true, ...oauth.list() }));

  const startExternal = async (name: string, req: FastifyRequest, reply: FastifyReply) => {
    const { url, state } = await oauth.start(name, originOf(req));
    reply.header(
      'Set-Cookie',
      cookie(OAUTH_COOKIE, state, { secure: secure(req), maxAge: 600, path: '/auth/' }),
    );
    return reply.redirect(url, 302);
  };
  const finishExternal = async (name: string, req: FastifyRequest, reply: FastifyReply) => {
    const identity = await oauth.finish(
      name,
      req.query as Record<string, unknown>,
      parseCookies(req.headers.cookie)[OAUTH_COOKIE],
    );
    const current = auth.roleOf(identity.subject, identity.role) ?? identity.role;
    login(reply, req, { ...identity, role: current });
    reply.header('Set-Cookie', [
      String(reply.getHeader('Set-Cookie')),
      cookie(OAUTH_COOKIE, '', { secure: secure(req), maxAge: 0, path: '/auth/' }),
    ]);
    return reply.redirect('/', 303);
  };
  app.get<Params<'name'>>('/auth/oauth/:name/start', (req, reply) =>
    startExternal(req.params.name, req, reply),
  );
  app.get<Params<'name'>>('/auth/oauth/:name/callback', (req, reply) =>
    finishExternal(req.params.name, req, reply),
  );
  app.get('/auth/github/start', (req, reply) => startExternal('github', req, reply));
  app.get('/auth/github/callback', (req, reply) => finishExternal('github', req, reply));
}
