// What every notes route shares, registered once at the root (fastify-plugin, so it is not
// encapsulated): the services as `app.notes`, who is asking (`req.principal`, `req.need()`), the
// lookups that apply the visibility rule (`req.note()`, `req.file()`), CSRF and security headers,
// and the one `{code, message}` error shape.
import type { FastifyInstance, FastifyRequest } from 'fastify';
import fp from 'fastify-plugin';
import type { RuneConfig } from '../../config/schema.ts';
import type { Logger } from '../../core/logger.ts';
import { redact } from '../../core/redact.ts';
import type { SqliteDatabase } from '../../core/sqlite.ts';
import { type Auth, sha256 } from '../auth.ts';
import type { ChatService } from '../chat.ts';
import type { Collab } from '../collab.ts';
import { type FileRow, type NoteRow, type Store, toFile, toNote } from '../db.ts';
import { canSee, type EventHub } from '../events.ts';
import { ApiError, badRequest, forbidden, lookupName, notFound, PAGE_CSP } from '../http.ts';
import type { Limits } from '../limits.ts';
import type { OAuthLogins } from '../oauth.ts';
import { atLeast, type Principal, type Role } from '../roles.ts';
import { storageFailure } from '../storage.ts';
import { BusyError, type TaskRunner } from '../worker-pool.ts';

export const SESSION_COOKIE = 'rune_session';

/** The services behind the routes, one instance per server. */
export interface NotesContext {
  config: RuneConfig;
  logger: Logger;
  /** Folder of notes.db and uploads/. */
  dataDir: string;
  db: SqliteDatabase;
  store: Store;
  auth: Auth;
  hub: EventHub;
  collab: Collab;
  chat: ChatService;
  oauth: OAuthLogins;
  limits: Limits;
  /** Searches, diffs and merges, off the event loop. */
  tasks: TaskRunner;
  publicUrl: URL | null;
  /** The server's own origin as browsers see it (for Origin checks and OAuth redirects). */
  originOf(req: FastifyRequest): string;
  /** Whether cookies must be Secure. */
  secure(req: FastifyRequest): boolean;
  /** Resolves once what was committed is as durable as `[notes] synchronous` promises. */
  durable(): Promise<void>;
  /** Whether the server is stopping (answers then close their connection, so the stop ends). */
  stopping(): boolean;
  publishNote(name: string, note: NoteRow): void;
  publishFile(name: string, file: FileRow): void;
}

declare module 'fastify' {
  interface FastifyInstance {
    notes: NotesContext;
  }
  interface FastifyContextConfig {
    /**
     * A GET that commits what it answers (an external login creates the account and the session):
     * its answer waits for durability like a POST's.
     */
    acknowledges?: boolean;
  }
  interface FastifyRequest {
    principal: Principal | null;
    /** The caller's role now; `anonymous` without a login. */
    readonly role: Role | 'anonymous';
    /** The caller, when logged in with at least `role`; else 401/403. */
    need(role: Role): Principal;
    /** A note the caller may see (404 otherwise: what one may not see does not exist). */
    note(ref: string, opts?: { deleted?: boolean }): NoteRow;
    /** A file of `note` the caller may see (404 otherwise). */
    file(note: NoteRow, ref: string, opts?: { deleted?: boolean }): FileRow;
  }
}

/** Route parameters by name, for `app.get<Params<'note' | 'file'>>(…)`. */
export type Params<K extends string> = { Params: Record<K, string> };
/** Query strings are read field by field and validated where used. */
export type Query = { Querystring: Record<string, string | undefined> };

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** JSON and form bodies, parsed the same way for every route. */
function bodyParsers(app: FastifyInstance): void {
  // Clients that label every request JSON (fetch wrappers, `curl -H content-type:application/json
  // -X DELETE`) send a DELETE or POST with no body: that is no body, not a malformed one (fastify
  // answers 400 to it). Any other body is parsed by fastify's own JSON parser, prototype keys refused.
  const json = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if (body === '') return done(null, undefined);
    json(req, body as string, done);
  });
  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });
}

async function kit(app: FastifyInstance, context: NotesContext): Promise<void> {
  const { auth, store, logger } = context;
  app.decorate('notes', context);
  app.decorateRequest('principal', null);
  app.decorateRequest('role', {
    getter(this: FastifyRequest) {
      return this.principal?.role ?? 'anonymous';
    },
  });
  app.decorateRequest('need', function need(this: FastifyRequest, needed: Role): Principal {
    if (!this.principal) throw new ApiError(401, 'UNAUTHENTICATED', 'log in first');
    if (!atLeast(this.principal.role, needed)) throw forbidden(`this needs the ${needed} role`);
    return this.principal;
  });
  app.decorateRequest('note', function note(this: FastifyRequest, ref: string, opts = {}): NoteRow {
    const row = store.findNote(lookupName(ref), opts.deleted ?? false);
    if (!row || !canSee(this.role, row)) throw notFound(`note '${ref}'`);
    return row;
  });
  app.decorateRequest(
    'file',
    function file(this: FastifyRequest, note: NoteRow, ref: string, opts = {}): FileRow {
      const row = store.findFile(note.id, lookupName(ref), opts.deleted ?? false);
      if (!row || !canSee(this.role, note, row)) throw notFound(`file '${ref}'`);
      return row;
    },
  );

  bodyParsers(app);

  // Who is asking: a bearer token, else the session cookie. A bad bearer token is an error, not anonymity.
  app.addHook('onRequest', async (req) => {
    const header = req.headers.authorization;
    if (header?.startsWith('Bearer ')) {
      const principal = auth.fromToken(header.slice(7).trim());
      if (!principal)
        throw new ApiError(401, 'UNAUTHENTICATED', 'the bearer token is unknown, expired or revoked');
      req.principal = principal;
      return;
    }
    const sid = req.cookies[SESSION_COOKIE];
    if (sid) req.principal = auth.fromSession(sid);
  });

  // A query parameter means one value. Given twice it arrives as an array, which no route expects
  // (`?note=a&note=b` once reached a lookup as an array and answered 500): refused for every route.
  app.addHook('onRequest', async (req) => {
    for (const [name, value] of Object.entries(req.query as Record<string, unknown>)) {
      if (Array.isArray(value)) throw badRequest(`${name}: give this query parameter once`);
    }
  });

  // CSRF: a request carrying ambient credentials must come from this site and carry the session's token.
  app.addHook('preHandler', async (req) => {
    if (!MUTATING.has(req.method)) return;
    const site = req.headers['sec-fetch-site'];
    if (typeof site === 'string' && site !== 'same-origin' && site !== 'none') {
      throw new ApiError(403, 'CSRF', `cross-site request refused (Sec-Fetch-Site: ${site})`);
    }
    const origin = req.headers.origin;
    if (typeof origin === 'string' && origin !== context.originOf(req)) {
      throw new ApiError(403, 'CSRF', `request from another origin refused (${origin})`);
    }
    // Logging in (again, as someone else) needs no token of the old session: the Origin and
    // Sec-Fetch-Site checks above keep other sites from logging a browser in.
    if (req.principal?.sessionHash && req.routeOptions.url !== '/auth/local') {
      const token = req.headers['x-csrf-token'];
      if (typeof token !== 'string' || !req.principal.csrf || sha256(token) !== sha256(req.principal.csrf)) {
        throw new ApiError(403, 'CSRF', 'missing or wrong X-CSRF-Token header (get it from GET /api/me)');
      }
    }
  });

  // The rule of every answer to a change: it leaves only once what the change committed is durable
  // (with synchronous = full, on disk; see durable.ts). Routes commit before they return. GET routes
  // that commit say so in their config (`acknowledges`).
  // helmet (see guard.ts) gave every response its headers; HTML pages get the policy they need.
  app.addHook('onSend', async (req, reply, payload) => {
    if (MUTATING.has(req.method) || req.routeOptions.config?.acknowledges) {
      try {
        await context.durable();
      } catch (error) {
        // Whatever the route meant to say, the change is not known to be kept: no success answer.
        logger.error('notes.fsync_failed', {
          message: `${req.method} ${req.url.split('?')[0]}: ${(error as Error).message}`,
        });
        reply.status(500).header('content-type', 'application/json; charset=utf-8');
        reply.removeHeader('set-cookie');
        reply.removeHeader('location');
        payload = JSON.stringify({
          code: 'INTERNAL',
          message:
            'the change could not be synced to disk, so it may not be kept; try again (see the server log)',
        });
      }
    }
    // A keep-alive connection whose request finishes during the stop would otherwise stay open
    // (Node closes only the connections that were idle when the stop began) until it is cut.
    if (context.stopping()) reply.header('connection', 'close');
    if (String(reply.getHeader('content-type') ?? '').startsWith('text/html')) {
      reply.header('Content-Security-Policy', PAGE_CSP);
    }
    return payload;
  });

  app.setErrorHandler((error, req, reply) => {
    if (error instanceof ApiError) {
      reply.headers(error.headers);
      return reply.status(error.status).send({ code: error.code, message: error.message, ...error.extra });
    }
    if (error instanceof BusyError) {
      return reply
        .status(503)
        .header('Retry-After', '2')
        .send({ code: 'BUSY', message: `the server is busy: ${error.message}; try again shortly` });
    }
    const fe = error as { statusCode?: number; code?: string; message: string };
    if (fe.code === 'FST_ERR_CTP_BODY_TOO_LARGE') {
      return reply
        .status(413)
        .send({ code: 'TOO_LARGE', message: 'the request body is larger than allowed' });
    }
    if (fe.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') {
      return reply.status(415).send({ code: 'UNSUPPORTED_MEDIA', message: fe.message });
    }
    if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) {
      return reply.status(fe.statusCode).send({ code: 'BAD_REQUEST', message: redact(fe.message) });
    }
    // The path only: a query may carry what logs must not (an OAuth callback's code and state).
    const where = `${req.method} ${req.url.split('?')[0]}`;
    const storage = storageFailure(error);
    if (storage) {
      logger.error('notes.storage', { message: `${where}: not saved: ${redact(fe.message)}` });
      reply.headers(storage.headers);
      return reply.status(storage.status).send({ code: storage.code, message: storage.message });
    }
    logger.error('notes.internal', { message: `${where}: ${redact(fe.message)}` });
    return reply.status(500).send({ code: 'INTERNAL', message: 'internal error (see the server log)' });
  });

  app.setNotFoundHandler((req, reply) => {
    reply
      .status(404)
      .send({ code: 'NOT_FOUND', message: `${req.method} ${req.url.split('?')[0]} not found` });
  });
}

/** Registered once at the root; every route plugin sees its decorations and hooks. */
export const notesKit = fp(kit, { fastify: '5.x', name: 'rune-notes-kit' });

/** Events about a note or a file, in the shape docs/notes-api.md gives them. */
export function publishers(hub: EventHub): Pick<NotesContext, 'publishNote' | 'publishFile'> {
  return {
    publishNote(name, note) {
      hub.publish({ name, noteId: note.id, data: { note: toNote(note) } });
    },
    publishFile(name, file) {
      hub.publish({
        name,
        noteId: file.note_id,
        fileId: file.id,
        data: { note_id: file.note_id, file: toFile(file) },
      });
    },
  };
}
