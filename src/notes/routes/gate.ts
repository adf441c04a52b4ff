// What a request must pass before a byte of its body is read (nginx's order: headers, then rights,
// then the body): the site check and CSRF token, the note and file it names (which the caller must
// be able to see), the role the route declares (`config.need`), and a share of the memory that
// bodies in flight may hold. All of it runs in `onRequest`, so a stranger's body to a note that
// does not exist, or to a route they may not use, costs a 4xx and a closed connection, not a parse.
// Handlers still check what depends on the body (and look the note up again after it).
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { sha256 } from '../auth.ts';
import type { Store } from '../db.ts';
import { canSee } from '../events.ts';
import { rateLimited } from '../guard.ts';
import { ApiError, forbidden, lookupName, notFound } from '../http.ts';
import type { Limits } from '../limits.ts';
import { atLeast } from '../roles.ts';

/** The least a caller must be to use a route that changes something; `anyone` includes anonymous. */
export type Need = 'anyone' | 'user' | 'admin';

declare module 'fastify' {
  interface FastifyContextConfig {
    /** Who may send this request (checked before the body is read); every mutating route says. */
    need?: Need;
    /** The route reads its body as a stream under budgets of its own (uploads). */
    streamed?: boolean;
  }
}

/** Route options of what only signed-in users, or admins, may send. */
export const USER = { config: { need: 'user' as const } };
export const ADMIN = { config: { need: 'admin' as const } };

export const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Bodies that are read into memory (JSON, forms): the bytes each may hold, in all and per client. */
export class BodyBudget {
  private total = 0;
  private readonly perClient = new Map<string, number>();

  constructor(
    readonly totalBytes: number,
    readonly clientBytes: number,
  ) {}

  /** Reserves `bytes` for `client`: a release function, or why not (the status to answer). */
  reserve(client: string, bytes: number): (() => void) | 'client' | 'server' {
    const mine = this.perClient.get(client) ?? 0;
    if (mine + bytes > this.clientBytes) return 'client';
    if (this.total + bytes > this.totalBytes) return 'server';
    this.total += bytes;
    this.perClient.set(client, mine + bytes);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.total -= bytes;
      const left = (this.perClient.get(client) ?? bytes) - bytes;
      if (left <= 0) this.perClient.delete(client);
      else this.perClient.set(client, left);
    };
  }

  get inFlight(): number {
    return this.total;
  }
}

/** Who a request counts against: the signed-in person, else the client address. */
export function clientKey(req: FastifyRequest): string {
  return req.principal ? `subject ${req.principal.subject}` : `address ${req.ip}`;
}

/** Bytes a request says its body has, or null when it does not say (chunked). */
export function declaredLength(req: FastifyRequest): number | null {
  const header = req.headers['content-length'];
  if (header === undefined) return null;
  const length = Number(header);
  return Number.isSafeInteger(length) && length >= 0 ? length : null;
}

/** Whether a body may still be on its way (it was not read): then the connection must close. */
export function bodyPending(req: FastifyRequest): boolean {
  if (req.raw.complete) return false;
  const length = declaredLength(req);
  return length === null ? req.headers['transfer-encoding'] !== undefined : length > 0;
}

function checkSite(req: FastifyRequest, originOf: (req: FastifyRequest) => string): void {
  const site = req.headers['sec-fetch-site'];
  if (typeof site === 'string' && site !== 'same-origin' && site !== 'none') {
    throw new ApiError('CSRF', `cross-site request refused (Sec-Fetch-Site: ${site})`);
  }
  const origin = req.headers.origin;
  if (typeof origin === 'string' && origin !== originOf(req)) {
    throw new ApiError('CSRF', `request from another origin refused (${origin})`);
  }
  // Logging in (again, as someone else) needs no token of the old session: the Origin and
  // Sec-Fetch-Site checks above keep other sites from logging a browser in.
  if (req.principal?.sessionHash && req.routeOptions.url !== '/auth/local') {
    const token = req.headers['x-csrf-token'];
    if (typeof token !== 'string' || !req.principal.csrf || sha256(token) !== sha256(req.principal.csrf)) {
      throw new ApiError('CSRF', 'missing or wrong X-CSRF-Token header (get it from GET /api/me)');
    }
  }
}

/**
 * The note and file a route names exist (live or in the trash) and the caller may see them, then
 * the role: the same 404-before-403 order as the handlers' own lookups, which stay exact.
 */
function checkRights(req: FastifyRequest, store: Store, need: Need): void {
  const params = req.params as Record<string, string | undefined>;
  if (params.note !== undefined) {
    const note = store.findNote(lookupName(params.note), true);
    if (!note || !canSee(req.role, note)) throw notFound(`note '${params.note}'`);
    if (params.file !== undefined) {
      const file = store.findFile(note.id, lookupName(params.file), true);
      if (!file || !canSee(req.role, note, file)) throw notFound(`file '${params.file}'`);
    }
  }
  if (need === 'anyone') return;
  if (!req.principal) throw new ApiError('UNAUTHENTICATED', 'log in first');
  if (!atLeast(req.principal.role, need)) throw forbidden(`this needs the ${need} role`);
}

/** Registers the checks (at the root, before the routes). */
export function gate(
  app: FastifyInstance,
  context: { store: Store; limits: Limits; originOf(req: FastifyRequest): string },
): void {
  const { store, limits } = context;
  const bodies = new BodyBudget(limits.maxBodyMemoryBytes, Math.max(4 << 20, limits.maxBodyMemoryBytes / 8));

  // A route that changes something says who may call it; one that does not is a bug caught at start.
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (methods.some((m) => MUTATING.has(m)) && route.config?.need === undefined) {
      throw new Error(`${methods.join(',')} ${route.url}: declare config.need (who may send it)`);
    }
  });

  app.addHook('onRequest', (req: FastifyRequest, reply: FastifyReply, done: (error?: Error) => void) => {
    if (!MUTATING.has(req.method)) return done();
    try {
      checkSite(req, context.originOf);
      checkRights(req, store, req.routeOptions.config?.need ?? 'admin');
    } catch (error) {
      return done(error as Error);
    }
    // Streamed bodies (uploads) have budgets of their own; everything else is read into memory.
    if (req.routeOptions.config?.streamed || !bodyPending(req)) return done();
    const limit = req.routeOptions.bodyLimit ?? app.initialConfig.bodyLimit ?? 1 << 20;
    const length = declaredLength(req);
    if (length !== null && length > limit) {
      return done(new ApiError('TOO_LARGE', `the request body is larger than the ${limit} bytes allowed`));
    }
    const release = bodies.reserve(clientKey(req), Math.min(length ?? limit, limit));
    if (release === 'client') {
      return done(rateLimited(1, 'this client has too many request bodies on their way'));
    }
    if (release === 'server') {
      return done(
        new ApiError(
          'BUSY',
          'the server holds as many request bodies as it may; try again shortly',
          {},
          { 'Retry-After': '2' },
        ),
      );
    }
    reply.raw.once('close', release);
    done();
  });
}
