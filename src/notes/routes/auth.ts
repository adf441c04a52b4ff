// Health, identity and logins: local accounts (limited per account and per address before the
// password is hashed), OAuth/OIDC and GitHub, logout.
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { VERSION } from '../../core/version.ts';
import type { SessionSubject } from '../auth.ts';
import { rateLimited } from '../guard.ts';
import { ApiError } from '../http.ts';
import type { LocalAccount } from '../local-accounts.ts';
import type { Principal } from '../roles.ts';
import { type NotesContext, SESSION_COOKIE } from './kit.ts';
import { route } from './route.ts';
import type { ZodApp, ZodProvider } from './schema.ts';

const OAUTH_COOKIE = 'rune_oauth_state';
/**
 * Marks a browser that has logged in to an account before (OWASP's "device cookie"): its login
 * attempts for that account count in a bucket of their own, so a stranger who spends an account's
 * attempts with wrong passwords locks out strangers, not the account's owner. The mark is bound to
 * the account's password as configured: a new password (or the account removed and made again)
 * voids the marks given before, so whoever logged in with an old password is a stranger again.
 * The key lives as long as the process, as do the attempt counts it guards.
 */
const DEVICE_COOKIE = 'rune_device';
const DEVICE_MARKS_KEPT = 4;
/** What a login or logout may send: a name and a password, not megabytes. */
const SMALL_BODY = 16 * 1024;
const userOf = (p: Principal) => ({ name: p.name, role: p.role, provider: p.provider });

/** Health, who is asking, and which logins there are: reads anyone may make. */
function identityRoutes(app: ZodApp, oauth: NotesContext['oauth']): void {
  route(app, 'GET /healthz', async () => ({ ok: true as const, version: VERSION }));

  route(app, 'GET /api/me', async (req) => ({
    user: req.principal ? userOf(req.principal) : null,
    role: req.role,
    csrf_token: req.principal?.csrf ?? null,
  }));

  route(app, 'GET /auth/providers', async () => ({
    local: true as const,
    ...oauth.list(),
  }));
}

export async function authRoutes(root: FastifyInstance): Promise<void> {
  const app = root.withTypeProvider<ZodProvider>();
  const { auth, hub, oauth, limits, logger, secure, originOf } = app.notes;
  identityRoutes(app, oauth);

  const cookieOptions = (req: FastifyRequest, maxAge: number, path = '/') => ({
    path,
    httpOnly: true,
    sameSite: 'lax' as const,
    secure: secure(req),
    maxAge,
  });

  const login = (reply: FastifyReply, req: FastifyRequest, p: SessionSubject) => {
    // A new id at every login, and the old session (if any) ends: no fixation.
    const session = app.notes.store.tx(() => {
      if (req.principal?.sessionHash) auth.endSession(req.principal.sessionHash);
      return auth.createSession(p);
    });
    reply.setCookie(SESSION_COOKIE, session.id, cookieOptions(req, 14 * 86400));
    return session;
  };

  // Every attempt counts, right or wrong, and is counted before the password is hashed: a burst of
  // concurrent guesses gets at most the limit tried, whatever the hash costs.
  const window = limits.loginWindowMs;
  const perAddress = app.createRateLimit({ max: limits.loginPerAddress, timeWindow: window });
  const deviceKey = randomBytes(32);
  const deviceMark = (account: Pick<LocalAccount, 'name' | 'secret'>) =>
    createHmac('sha256', deviceKey).update(`${account.name}\0${account.secret}`).digest('base64url');
  const deviceMarks = (req: FastifyRequest) => (req.cookies[DEVICE_COOKIE] ?? '').split('.').filter(Boolean);
  const knownDevice = (req: FastifyRequest, account: Pick<LocalAccount, 'name' | 'secret'>) => {
    const expected = Buffer.from(deviceMark(account));
    return deviceMarks(req).some((mark) => {
      const given = Buffer.from(mark);
      return given.length === expected.length && timingSafeEqual(given, expected);
    });
  };
  const nameOf = (req: FastifyRequest) => (req.body as { username?: unknown } | undefined)?.username;
  const accountOf = (req: FastifyRequest) => {
    const name = nameOf(req);
    return typeof name === 'string' ? auth.localAccount(name.trim()) : undefined;
  };
  // Each limiter keeps its counts in an LRU of its own (5000 keys). Real accounts' counts live in
  // one no flood of made-up names can evict them from (two keys per configured account); each
  // account has its owner's known browsers in one bucket, everyone else in another.
  const perAccount = app.createRateLimit({
    max: limits.loginPerAccount,
    timeWindow: window,
    keyGenerator: (req) => {
      // Gone since loginLimits looked (a reload in between): the stranger bucket of the name.
      const account = accountOf(req) ?? { name: String(nameOf(req)).trim(), secret: '' };
      return `${account.secret && knownDevice(req, account) ? 'device' : 'account'}:${account.name}`;
    },
  });
  // Made-up names count the same (a 429 tells no more than a 401 about which names exist), under a
  // hash of the name, so an over-long name is not what is kept. The name as matched, not folded:
  // folded, 'UMA' spent 'uma''s count only when uma was no account, which told that it was one.
  const perUnknownName = app.createRateLimit({
    max: limits.loginPerAccount,
    timeWindow: window,
    keyGenerator: (req) => {
      const name = nameOf(req);
      return createHash('sha256')
        .update(typeof name === 'string' ? name.trim() : '')
        .digest('base64url');
    },
  });
  const rememberDevice = (req: FastifyRequest, reply: FastifyReply, account: LocalAccount) => {
    const mark = deviceMark(account);
    const marks = [...deviceMarks(req).filter((m) => m !== mark), mark].slice(-DEVICE_MARKS_KEPT);
    reply.setCookie(DEVICE_COOKIE, marks.join('.'), cookieOptions(req, 365 * 86400, '/auth'));
  };
  const loginLimits = async (req: FastifyRequest) => {
    for (const [limit, what] of [
      [perAddress, 'too many login attempts from this address'],
      [accountOf(req) ? perAccount : perUnknownName, 'too many login attempts for this account'],
    ] as const) {
      const result = await limit(req);
      if (!result.isAllowed && result.isExceeded) {
        logger.warn('notes.login_limited', {
          message: `${what} (${req.ip}); refused for ${result.ttlInSeconds} s`,
        });
        throw rateLimited(result.ttlInSeconds, what);
      }
    }
  };

  route(
    app,
    'POST /auth/local',
    { preHandler: loginLimits, bodyLimit: SMALL_BODY, config: { need: 'anyone' } },
    async (req, reply) => {
      const { username, password } = req.body;
      const account = await auth.checkLocal(username, password);
      const current = account ? auth.roleOf(`local:${account.name}`) : null;
      if (!account || !current) {
        logger.warn('notes.login_failed', {
          message: `failed login for ${JSON.stringify(username.slice(0, 120))} from ${req.ip}`,
        });
        throw new ApiError('UNAUTHENTICATED', 'wrong user name or password');
      }
      const session = login(reply, req, {
        subject: `local:${account.name}`,
        name: account.name,
        provider: 'local',
        role: current,
      });
      // After the session cookie, which clients that keep only the first cookie rely on.
      rememberDevice(req, reply, account);
      const wantsJson =
        String(req.headers.accept ?? '').includes('application/json') ||
        req.headers['content-type']?.includes('json');
      // A form's login answers a redirect, outside the declared JSON answer.
      if (!wantsJson) return (reply as FastifyReply).status(303).header('Location', '/').send();
      return { user: { name: account.name, role: current, provider: 'local' }, csrf_token: session.csrf };
    },
  );

  route(
    app,
    'POST /auth/logout',
    { bodyLimit: SMALL_BODY, config: { need: 'anyone' } },
    async (req, reply) => {
      if (req.principal?.sessionHash) {
        auth.endSession(req.principal.sessionHash);
        hub.recheck();
      }
      reply.clearCookie(SESSION_COOKIE, cookieOptions(req, 0));
      return { ok: true };
    },
  );

  const startExternal = async (name: string, req: FastifyRequest, reply: FastifyReply) => {
    const { url, state } = await oauth.start(name, originOf(req));
    reply.setCookie(OAUTH_COOKIE, state, cookieOptions(req, 600, '/auth/'));
    return reply.redirect(url, 302);
  };
  const finishExternal = async (name: string, req: FastifyRequest, reply: FastifyReply) => {
    const identity = await oauth.finish(
      name,
      req.query as Record<string, unknown>,
      req.cookies[OAUTH_COOKIE],
    );
    // Recorded first: the role of this identity is worked out from the config on every request.
    auth.recordIdentity(identity.subject, identity.identifiers);
    const current = auth.roleOf(identity.subject) ?? identity.role;
    login(reply, req, {
      subject: identity.subject,
      name: identity.name,
      provider: identity.provider,
      role: current,
    });
    reply.clearCookie(OAUTH_COOKIE, cookieOptions(req, 0, '/auth/'));
    return reply.redirect('/', 303);
  };
  route(app, 'GET /auth/oauth/:name/start', (req, reply) => startExternal(req.params.name, req, reply));
  // The callbacks record the identity and start a session: answered once that is durable.
  const committing = { config: { acknowledges: true } };
  route(app, 'GET /auth/oauth/:name/callback', committing, (req, reply) =>
    finishExternal(req.params.name, req, reply),
  );
  route(app, 'GET /auth/github/start', (req, reply) => startExternal('github', req, reply));
  route(app, 'GET /auth/github/callback', committing, (req, reply) => finishExternal('github', req, reply));
}
