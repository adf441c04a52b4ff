// What every notes route shares, registered once at the root (fastify-plugin, so it is not
// encapsulated): the services as `app.notes`, who is asking (`req.principal`, `req.need()`), the
// lookups that apply the visibility rule (`req.note()`, `req.file()`), CSRF and security headers,
// and the one `{code, message}` error shape.
import type { FastifyInstance, FastifyReply, FastifyRequest, onSendHookHandler } from 'fastify';
import fp from 'fastify-plugin';
import type { RuneConfig } from '../../config/schema.ts';
import type { Logger } from '../../core/logger.ts';
import { redact } from '../../core/redact.ts';
import type { SqliteDatabase } from '../../core/sqlite.ts';
import { API_CODES, codeOfStatus } from '../api-codes.ts';
import type { Auth } from '../auth.ts';
import type { ChatService } from '../chat.ts';
import type { Collab } from '../collab.ts';
import { type FileRow, type NoteRow, type Store, toFile, toNote } from '../db.ts';
import { canSee, type EventHub } from '../events.ts';
import { ApiError, badRequest, forbidden, lookupName, notFound, PAGE_CSP } from '../http.ts';
import type { Limits } from '../limits.ts';
import type { OAuthLogins } from '../oauth.ts';
import type { Quotas } from '../quotas.ts';
import type { ReadCache } from '../read-cache.ts';
import { atLeast, type Principal, type Role } from '../roles.ts';
import type { SearchIndexer } from '../search-index.ts';
import { storageFailure } from '../storage.ts';
import type { UploadStore } from '../uploads.ts';
import { BusyError, type TaskRunner } from '../worker-pool.ts';
import { bodyPending, gate, MUTATING } from './gate.ts';
import { useZodSchemas } from './schema.ts';

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
  /** Milliseconds now: the clock of the server's budgets (tests hold it still). */
  clock(): number;
  /** What each person may add per minute. */
  quotas: Quotas;
  /** Upload bytes on disk. */
  uploads: UploadStore;
  /** Rendered public answers, by the version of what they show. */
  readCache: ReadCache;
  /** The file search's index, caught up after each change. */
  searchIndex: SearchIndexer;
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
    /** `note()` then `file()` of a route's `:note/:file` (`opts` for the file); 404 as each. */
    noteAndFile(
      params: { note: string; file: string },
      opts?: { deleted?: boolean },
    ): { note: NoteRow; file: FileRow };
  }
}

/** Route parameters by name, for `app.get<Params<'note' | 'file'>>(…)`. */
export type Params<K extends string> = { Params: Record<K, string> };

/** The cookies of a request that sends none (read-only; setting a cookie parses them anew). */
const NO_COOKIES: Readonly<Record<string, string | undefined>> = Object.freeze({});

/** Levels of arrays and objects a JSON body may nest. */
export const MAX_JSON_DEPTH = 32;

/**
 * Whether JSON text nests arrays and objects deeper than `max` (brackets inside strings do not
 * count). Linear and allocation-free; a body with few brackets is answered by counting them.
 */
export function nestedDeeper(text: string, max: number): boolean {
  let brackets = 0;
  for (let at = text.indexOf('{'); at >= 0 && brackets <= max; at = text.indexOf('{', at + 1)) brackets++;
  for (let at = text.indexOf('['); at >= 0 && brackets <= max; at = text.indexOf('[', at + 1)) brackets++;
  if (brackets <= max) return false;
  let depth = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \\ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91) {
      if (++depth > max) return true;
    } else if (c === 125 || c === 93) depth--;
  }
  return false;
}

/** JSON and form bodies, parsed the same way for every route. */
function bodyParsers(app: FastifyInstance): void {
  // Clients that label every request JSON (fetch wrappers, `curl -H content-type:application/json
  // -X DELETE`) send a DELETE or POST with no body: that is no body, not a malformed one (fastify
  // answers 400 to it). Any other body is parsed by fastify's own JSON parser, prototype keys refused.
  const json = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    if (body === '') return done(null, undefined);
    // Nesting is bounded before parsing: no route takes deep JSON, and what is parsed is later
    // walked recursively (JSON.stringify of a presence state 200k levels deep overflowed the stack).
    if (nestedDeeper(body as string, MAX_JSON_DEPTH)) {
      return done(badRequest(`the JSON body is nested deeper than ${MAX_JSON_DEPTH} levels`), undefined);
    }
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
    if (!this.principal) throw new ApiError('UNAUTHENTICATED', 'log in first');
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
  app.decorateRequest(
    'noteAndFile',
    function noteAndFile(this: FastifyRequest, params: { note: string; file: string }, opts = {}) {
      const note = this.note(params.note);
      return { note, file: this.file(note, params.file, opts) };
    },
  );

  bodyParsers(app);
  useZodSchemas(app);

  // Who is asking: a bearer token, else the session cookie. A bad bearer token is an error, not
  // anonymity. A query parameter means one value: given twice it arrives as an array, which no
  // route expects (`?note=a&note=b` once reached a lookup as an array and answered 500).
  app.addHook('onRequest', (req: FastifyRequest, _reply: FastifyReply, done: (error?: Error) => void) => {
    const query = req.query as Record<string, unknown>;
    for (const name in query) {
      if (Array.isArray(query[name])) return done(badRequest(`${name}: give this query parameter once`));
    }
    const cookies = req.headers.cookie;
    req.cookies = cookies === undefined ? NO_COOKIES : app.parseCookie(cookies);
    const header = req.headers.authorization;
    if (header?.startsWith('Bearer ')) {
      const principal = auth.fromToken(header.slice(7).trim());
      if (!principal)
        return done(new ApiError('UNAUTHENTICATED', 'the bearer token is unknown, expired or revoked'));
      req.principal = principal;
      return done();
    }
    const sid = req.cookies[SESSION_COOKIE];
    if (sid) req.principal = auth.fromSession(sid);
    done();
  });

  // Rights, CSRF and the body budget, before the body is read (gate.ts).
  gate(app, context);

  // The rule of every answer to a change: it leaves only once what the change committed is durable
  // (with synchronous = full, on disk; see durable.ts). Routes commit before they return. GET routes
  // that commit say so in their config (`acknowledges`).
  // helmet (see guard.ts) gave every response its headers; HTML pages get the policy they need, and
  // whatever did not say how it may be cached is not stored (private answers: a session's CSRF
  // token, private files, tokens).
  app.addHook('onSend', (_req, reply, payload, done) => {
    if (!reply.hasHeader('cache-control')) reply.header('cache-control', 'no-store');
    // A keep-alive connection whose request finishes during the stop would otherwise stay open
    // (Node closes only the connections that were idle when the stop began) until it is cut.
    if (context.stopping()) reply.header('connection', 'close');
    if (String(reply.getHeader('content-type') ?? '').startsWith('text/html')) {
      reply.header('Content-Security-Policy', PAGE_CSP);
    }
    done(null, payload);
  });
  // The wait is a hook of the routes that commit (known when they are added), so a read pays
  // nothing for it (`req.routeOptions`, which would tell at each request, builds an object each time).
  const awaitDurable: onSendHookHandler = (req, reply, payload, done) => {
    context.durable().then(
      () => done(null, payload),
      (error: unknown) => {
        // Whatever the route meant to say, the change is not known to be kept: no success answer.
        logger.error('notes.fsync_failed', {
          message: `${req.method} ${req.url.split('?')[0]}: ${(error as Error).message}`,
        });
        reply.status(API_CODES.INTERNAL).header('content-type', 'application/json; charset=utf-8');
        reply.removeHeader('set-cookie');
        reply.removeHeader('location');
        done(
          null,
          JSON.stringify({
            code: 'INTERNAL',
            message:
              'the change could not be synced to disk, so it may not be kept; try again (see the server log)',
          }),
        );
      },
    );
  };
  app.addHook('onRoute', (route) => {
    const methods = Array.isArray(route.method) ? route.method : [route.method];
    if (methods.some((m) => MUTATING.has(m)) || route.config?.acknowledges) {
      route.onSend = [...(route.onSend === undefined ? [] : [route.onSend].flat()), awaitDurable];
    }
  });

  app.setErrorHandler((error, req, reply) => {
    // Refused before its body was read: the connection closes rather than read what was refused.
    if (bodyPending(req)) reply.header('connection', 'close');
    const answer = asApiError(error, logger, `${req.method} ${req.url.split('?')[0]}`);
    reply.headers(answer.headers);
    return reply.status(answer.status).send({ code: answer.code, message: answer.message, ...answer.extra });
  });

  app.setNotFoundHandler((req, reply) => {
    const answer = notFound(`${req.method} ${req.url.split('?')[0]}`);
    reply.status(answer.status).send({ code: answer.code, message: answer.message });
  });
}

/**
 * What an error thrown anywhere in a request answers: ours as they are, fastify's own by their
 * status, a storage failure as its code, anything else as INTERNAL (logged, not shown). `where` is
 * the method and path only: a query may carry what logs must not (an OAuth callback's code and state).
 */
function asApiError(error: unknown, logger: Logger, where: string): ApiError {
  if (error instanceof ApiError) return error;
  if (error instanceof BusyError) {
    return new ApiError(
      'BUSY',
      `the server is busy: ${error.message}; try again shortly`,
      {},
      { 'Retry-After': '2' },
    );
  }
  const fe = error as { statusCode?: number; code?: string; message: string };
  if (fe.code === 'FST_ERR_CTP_BODY_TOO_LARGE')
    return new ApiError('TOO_LARGE', 'the request body is larger than allowed');
  if (fe.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE') return new ApiError('UNSUPPORTED_MEDIA', fe.message);
  if (fe.statusCode && fe.statusCode >= 400 && fe.statusCode < 500) {
    return new ApiError(codeOfStatus(fe.statusCode), redact(fe.message));
  }
  const storage = storageFailure(error);
  if (storage) {
    logger.error('notes.storage', { message: `${where}: not saved: ${redact(fe.message)}` });
    return storage;
  }
  logger.error('notes.internal', { message: `${where}: ${redact(fe.message)}` });
  return new ApiError('INTERNAL', 'internal error (see the server log)');
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
