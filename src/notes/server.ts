// The notes HTTP server: build() assembles fastify with every route of docs/notes-api.md and the
// services behind them, without listening, so tests drive it with inject() on a real database.
import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { createTwoFilesPatch } from 'diff';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import type { RuneConfig } from '../config/schema.ts';
import { AssetMissingError, readAsset, readAssetText } from '../core/assets.ts';
import type { Logger } from '../core/logger.ts';
import { redact } from '../core/redact.ts';
import { VERSION } from '../core/version.ts';
import {
  Auth,
  atLeast,
  configAccounts,
  LoginThrottle,
  type Principal,
  ROLES,
  type Role,
  sha256,
} from './auth.ts';
import { parseAwareness } from './awareness.ts';
import { ChatService as Chat, type ChatService, type RunAgent, toApproval, toMessage } from './chat.ts';
import { Collab } from './collab.ts';
import {
  type FileRow,
  ftsQuery,
  type NoteRow,
  openNotesDatabase,
  Store,
  snippetSegments,
  toFile,
  toNote,
} from './db.ts';
import { canSee, EventHub, TOOL_OUTPUT_HIDDEN } from './events.ts';
import { tarNote, zipNote } from './export.ts';
import {
  ApiError,
  badRequest,
  bodyObject,
  checkFileName,
  checkNoteName,
  contentTypeFor,
  cookie,
  forbidden,
  notFound,
  optionalBool,
  PAGE_CSP,
  parseCookies,
  requireString,
  SAFE_IMAGE_TYPES,
  UPLOAD_CSP,
} from './http.ts';
import { OAuthLogins, type OAuthOptions } from './oauth.ts';

export const SESSION_COOKIE = 'rune_session';
const OAUTH_COOKIE = 'rune_oauth_state';
const SSE_BUFFER_LIMIT = 8 * 1024 * 1024;

export interface BuildOptions {
  config: RuneConfig;
  /** Folder of notes.db and uploads/. */
  dataDir: string;
  logger: Logger;
  runAgent?: RunAgent;
  env?: NodeJS.ProcessEnv;
  /** Working folder of agent runs. */
  cwd?: string;
  /** Save delay of collaborative edits. */
  idleMs?: number;
  throttle?: ConstructorParameters<typeof LoginThrottle>[0];
  oauth?: OAuthOptions;
  approvalTimeoutMs?: number;
  now?: () => Date;
}

export interface NotesServer {
  app: FastifyInstance;
  store: Store;
  auth: Auth;
  hub: EventHub;
  collab: Collab;
  chat: ChatService;
  /** The admin password created at first start, when no login was configured. */
  generatedAdmin: { name: string; password: string } | null;
  /** Drains event streams, saves live documents, checkpoints the WAL and closes the database. */
  close(): Promise<void>;
}

declare module 'fastify' {
  interface FastifyRequest {
    principal: Principal | null;
  }
}

function role(req: FastifyRequest): Role | 'anonymous' {
  return req.principal?.role ?? 'anonymous';
}

function need(req: FastifyRequest, needed: Role): Principal {
  if (!req.principal) throw new ApiError(401, 'UNAUTHENTICATED', 'log in first');
  if (!atLeast(req.principal.role, needed)) throw forbidden(`this needs the ${needed} role`);
  return req.principal;
}

const MUTATING = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

export async function build(options: BuildOptions): Promise<NotesServer> {
  const { config, logger } = options;
  const notes = config.notes;
  mkdirSync(join(options.dataDir, 'uploads'), { recursive: true, mode: 0o700 });
  // Tests may leave the workspace in the data folder; `rune notes` passes one outside RUNE_HOME.
  if (!options.cwd) mkdirSync(join(options.dataDir, 'workspace'), { recursive: true, mode: 0o700 });
  const db = openNotesDatabase(join(options.dataDir, 'notes.db'));
  const now = options.now ?? (() => new Date());
  const store = new Store(db, now);
  const auth = new Auth(store, configAccounts(notes, logger));
  const hub = new EventHub(store, auth, () => now().getTime());
  const collab = new Collab(store, hub, {
    logger,
    ...(options.idleMs !== undefined ? { idleMs: options.idleMs } : {}),
  });
  const chat = new Chat({
    store,
    hub,
    collab,
    config,
    logger,
    runAgent: options.runAgent,
    env: options.env ?? process.env,
    cwd: options.cwd ?? join(options.dataDir, 'workspace'),
    ...(options.approvalTimeoutMs !== undefined ? { approvalTimeoutMs: options.approvalTimeoutMs } : {}),
  });
  const oauth = new OAuthLogins(notes, options.oauth);
  const throttle = new LoginThrottle(options.throttle);
  const generatedAdmin = await auth.ensureAdmin(oauth.enabled);
  // Runs do not survive a restart, so neither do their questions.
  db.prepare("update approvals set status = 'expired' where status = 'pending'").run();
  const maxUpload = (notes.max_upload_mb ?? 10) * 1024 * 1024;
  const publicUrl = notes.public_url ? new URL(notes.public_url) : null;

  const app = Fastify({
    logger: false,
    bodyLimit: 2 * 1024 * 1024,
    trustProxy:
      notes.trusted_proxies && notes.trusted_proxies.length > 0 ? [...notes.trusted_proxies] : false,
    forceCloseConnections: true,
    return503OnClosing: true,
  });
  app.decorateRequest('principal', null);

  app.addContentTypeParser('application/x-www-form-urlencoded', { parseAs: 'string' }, (_req, body, done) => {
    done(null, Object.fromEntries(new URLSearchParams(body as string)));
  });

  const originOf = (req: FastifyRequest): string =>
    publicUrl ? publicUrl.origin : `${req.protocol}://${req.headers.host ?? 'localhost'}`;
  const secure = (req: FastifyRequest): boolean =>
    req.protocol === 'https' || publicUrl?.protocol === 'https:';

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
    const sid = parseCookies(req.headers.cookie)[SESSION_COOKIE];
    if (sid) req.principal = auth.fromSession(sid);
  });

  // CSRF: a request carrying ambient credentials must come from this site and carry the session's token.
  app.addHook('preHandler', async (req) => {
    if (!MUTATING.has(req.method)) return;
    const site = req.headers['sec-fetch-site'];
    if (typeof site === 'string' && site !== 'same-origin' && site !== 'none') {
      throw new ApiError(403, 'CSRF', `cross-site request refused (Sec-Fetch-Site: ${site})`);
    }
    const origin = req.headers.origin;
    if (typeof origin === 'string' && origin !== originOf(req)) {
      throw new ApiError(403, 'CSRF', `request from another origin refused (${origin})`);
    }
    if (req.principal?.sessionHash) {
      const token = req.headers['x-csrf-token'];
      if (typeof token !== 'string' || !req.principal.csrf || sha256(token) !== sha256(req.principal.csrf)) {
        throw new ApiError(403, 'CSRF', 'missing or wrong X-CSRF-Token header (get it from GET /api/me)');
      }
    }
  });

  app.addHook('onSend', async (_req, reply, payload) => {
    reply.header('X-Content-Type-Options', 'nosniff');
    reply.header('Referrer-Policy', 'same-origin');
    const type = String(reply.getHeader('content-type') ?? '');
    if (type.startsWith('text/html')) {
      reply.header('Content-Security-Policy', PAGE_CSP);
      reply.header('X-Frame-Options', 'DENY');
    } else if (!reply.hasHeader('Content-Security-Policy')) {
      reply.header('Content-Security-Policy', "default-src 'none'; frame-ancestors 'none'");
    }
    return payload;
  });

  app.setErrorHandler((error, req, reply) => {
    if (error instanceof ApiError) {
      reply.headers(error.headers);
      return reply.status(error.status).send({ code: error.code, message: error.message, ...error.extra });
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
    logger.error('notes.internal', { message: `${req.method} ${req.url}: ${redact(fe.message)}` });
    return reply.status(500).send({ code: 'INTERNAL', message: 'internal error (see the server log)' });
  });

  app.setNotFoundHandler((req, reply) => {
    reply
      .status(404)
      .send({ code: 'NOT_FOUND', message: `${req.method} ${req.url.split('?')[0]} not found` });
  });

  // --- lookups that apply the visibility rule: what the caller may not see does not exist.

  const noteFor = (req: FastifyRequest, ref: string, opts: { deleted?: boolean } = {}): NoteRow => {
    const note = store.findNote(ref, opts.deleted ?? false);
    if (!note || !canSee(role(req), note)) throw notFound(`note '${ref}'`);
    return note;
  };
  const fileFor = (
    req: FastifyRequest,
    note: NoteRow,
    ref: string,
    opts: { deleted?: boolean } = {},
  ): FileRow => {
    const file = store.findFile(note.id, ref, opts.deleted ?? false);
    if (!file || !canSee(role(req), note, file)) throw notFound(`file '${ref}'`);
    return file;
  };
  type P = { note: string; file: string; rev: string; id: string; hash: string; name: string };
  const params = (req: FastifyRequest): P => req.params as P;

  const publishNote = (name: string, note: NoteRow): void => {
    hub.publish({ name, noteId: note.id, data: { note: toNote(note) } });
  };
  const publishFile = (name: string, file: FileRow): void => {
    hub.publish({
      name,
      noteId: file.note_id,
      fileId: file.id,
      data: { note_id: file.note_id, file: toFile(file) },
    });
  };

  // --- health and identity

  app.get('/healthz', async () => ({ ok: true, version: VERSION }));

  const userOf = (p: Principal) => ({ name: p.name, role: p.role, provider: p.provider });

  app.get('/api/me', async (req) => ({
    user: req.principal ? userOf(req.principal) : null,
    role: role(req),
    csrf_token: req.principal?.csrf ?? null,
  }));

  const login = (
    reply: FastifyReply,
    req: FastifyRequest,
    p: { subject: string; name: string; provider: string; role: Role },
  ) => {
    // A new id at every login, and the old session (if any) ends: no fixation.
    if (req.principal?.sessionHash) auth.endSession(req.principal.sessionHash);
    const session = auth.createSession(p);
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
  app.get('/auth/oauth/:name/start', (req, reply) => startExternal(params(req).name, req, reply));
  app.get('/auth/oauth/:name/callback', (req, reply) => finishExternal(params(req).name, req, reply));
  app.get('/auth/github/start', (req, reply) => startExternal('github', req, reply));
  app.get('/auth/github/callback', (req, reply) => finishExternal('github', req, reply));

  // --- users (admin): role changes take effect at once, event streams included

  app.get('/api/users', async (req) => {
    need(req, 'admin');
    const local = [...auth.accounts.values()].map((a) => ({
      subject: `local:${a.name}`,
      name: a.name,
      provider: 'local',
      role: auth.roleOf(`local:${a.name}`, a.role),
    }));
    const others = db
      .prepare(
        "select subject, name, provider, role from sessions where subject not like 'local:%' group by subject",
      )
      .all() as Array<{ subject: string; name: string; provider: string; role: Role }>;
    return {
      users: [...local, ...others.map((o) => ({ ...o, role: auth.roleOf(o.subject, o.role) }))],
    };
  });

  app.patch('/api/users/:id', async (req) => {
    const admin = need(req, 'admin');
    const subject = params(req).id;
    const body = bodyObject(req.body);
    const newRole = body.role;
    if (typeof newRole !== 'string' || !(ROLES as readonly string[]).includes(newRole)) {
      throw badRequest('role: expected guest, user or admin');
    }
    if (subject === admin.subject && newRole !== 'admin') throw badRequest('you cannot demote yourself');
    auth.setRole(subject, newRole as Role);
    hub.recheck();
    return { subject, role: newRole };
  });

  // --- notes

  app.get('/api/notes', async (req) => {
    const q = req.query as Record<string, string>;
    const deleted = q.deleted === '1' || q.deleted === 'true';
    if (deleted) need(req, 'admin');
    const publicOnly = !atLeast(role(req), 'user');
    return { notes: store.listNotes({ publicOnly, deleted }).map(toNote) };
  });

  app.post('/api/notes', async (req, reply) => {
    need(req, 'admin');
    const body = bodyObject(req.body);
    const name = checkNoteName(body.name);
    const isPublic = optionalBool(body, 'public') ?? false;
    if (store.findNote(name)) throw new ApiError(409, 'CONFLICT', `a note named '${name}' exists`);
    const note = store.createNote(name, isPublic);
    publishNote('note.created', note);
    return reply.status(201).send(toNote(note));
  });

  app.get('/api/notes/:note', async (req) => {
    const note = noteFor(req, params(req).note);
    const publicOnly = !atLeast(role(req), 'user');
    return {
      note: toNote(note),
      files: store.listFiles(note.id, { publicOnly, deleted: false }).map((f) => toFile(f)),
    };
  });

  app.patch('/api/notes/:note', async (req) => {
    const note = noteFor(req, params(req).note);
    need(req, 'admin');
    const body = bodyObject(req.body);
    const fields: { name?: string; public?: boolean; model?: string | null } = {};
    if (body.name !== undefined) fields.name = checkNoteName(body.name);
    const pub = optionalBool(body, 'public');
    if (pub !== undefined) fields.public = pub;
    if (body.model !== undefined) {
      if (body.model !== null && (typeof body.model !== 'string' || !body.model.trim())) {
        throw badRequest('model: expected a model name or null');
      }
      fields.model = body.model === null ? null : (body.model as string).trim();
    }
    if (fields.name && fields.name !== note.name && store.findNote(fields.name)) {
      throw new ApiError(409, 'CONFLICT', `a note named '${fields.name}' exists`);
    }
    const updated = store.updateNote(note.id, fields);
    publishNote('note.updated', updated);
    // Visibility may have shrunk: streams of guests watching this note close now.
    hub.recheck(note.id);
    return toNote(updated);
  });

  app.delete('/api/notes/:note', async (req) => {
    const q = req.query as Record<string, string>;
    const purge = q.purge === '1' || q.purge === 'true';
    need(req, 'admin');
    const note = noteFor(req, params(req).note, { deleted: purge });
    if (purge) {
      if (!note.deleted_at)
        throw new ApiError(409, 'CONFLICT', 'delete the note first, then purge it from the trash');
      for (const file of store.listFiles(note.id, { publicOnly: false, deleted: true }))
        collab.close(file.id);
      for (const file of store.listFiles(note.id, { publicOnly: false, deleted: false }))
        collab.close(file.id);
      const hashes = (
        db.prepare('select hash from uploads where note_id = ?').all(note.id) as Array<{ hash: string }>
      ).map((r) => r.hash);
      store.purgeNote(note.id);
      chat.removeWorkspace(note.id);
      // Upload bytes are stored once per content hash and may be shared with other notes: remove
      // only those no note references any more. No await in between, so no upload can interleave.
      const stillUsed = db.prepare('select 1 from uploads where hash = ? limit 1');
      for (const hash of hashes) {
        if (!stillUsed.get(hash)) rmSync(join(options.dataDir, 'uploads', hash), { force: true });
      }
      return { ok: true };
    }
    chat.cancel(note.id);
    for (const file of store.listFiles(note.id, { publicOnly: false, deleted: false })) collab.close(file.id);
    store.setNoteDeleted(note.id, true);
    hub.publish({ name: 'note.deleted', noteId: note.id, data: { note_id: note.id } });
    hub.recheck(note.id);
    return { ok: true };
  });

  app.post('/api/notes/:note/restore', async (req) => {
    need(req, 'admin');
    const note = noteFor(req, params(req).note, { deleted: true });
    if (!note.deleted_at) return toNote(note);
    if (store.findNote(note.name))
      throw new ApiError(409, 'CONFLICT', `a note named '${note.name}' exists; rename it first`);
    const restored = store.setNoteDeleted(note.id, false);
    publishNote('note.created', restored);
    return toNote(restored);
  });

  app.get('/api/notes/:note/export', async (req, reply) => {
    const note = noteFor(req, params(req).note);
    const format = (req.query as Record<string, string>).format ?? 'zip';
    if (format !== 'zip' && format !== 'tar') throw badRequest('format: zip or tar');
    const publicOnly = !atLeast(role(req), 'user');
    const files = store.listFiles(note.id, { publicOnly, deleted: false }).map((f) => ({
      name: f.name,
      content: collab.text(f),
      mtime: new Date(f.updated_at),
    }));
    const body = format === 'zip' ? zipNote(note.name, files) : tarNote(note.name, files);
    const ascii = note.name.replace(/[^A-Za-z0-9._-]/g, '_');
    return reply
      .header('Content-Type', format === 'zip' ? 'application/zip' : 'application/x-tar')
      .header(
        'Content-Disposition',
        `attachment; filename="${ascii}.${format}"; filename*=UTF-8''${encodeURIComponent(note.name)}.${format}`,
      )
      .send(Buffer.from(body));
  });

  // --- files

  app.get('/api/notes/:note/files', async (req) => {
    const note = noteFor(req, params(req).note);
    const q = req.query as Record<string, string>;
    const deleted = q.deleted === '1' || q.deleted === 'true';
    if (deleted) need(req, 'user');
    const publicOnly = !atLeast(role(req), 'user');
    return { files: store.listFiles(note.id, { publicOnly, deleted }).map((f) => toFile(f)) };
  });

  app.post('/api/notes/:note/files', async (req, reply) => {
    const note = noteFor(req, params(req).note);
    const user = need(req, 'user');
    const body = bodyObject(req.body);
    const name = checkFileName(body.name);
    const content = body.content === undefined ? '' : requireString(body, 'content');
    const isPublic = optionalBool(body, 'public') ?? true;
    if (store.findFile(note.id, name))
      throw new ApiError(409, 'CONFLICT', `a file named '${name}' exists in this note`);
    const file = store.createFile(note.id, name, content, isPublic, user.name);
    publishFile('file.created', file);
    return reply.status(201).send(toFile(file, true));
  });

  app.get('/api/notes/:note/files/:file', async (req) => {
    const note = noteFor(req, params(req).note);
    const file = fileFor(req, note, params(req).file);
    return { ...toFile(file), content: collab.text(file) };
  });

  app.put('/api/notes/:note/files/:file', async (req) => {
    const note = noteFor(req, params(req).note);
    const file = fileFor(req, note, params(req).file);
    const user = need(req, 'user');
    const body = bodyObject(req.body);
    const content = requireString(body, 'content');
    const base = body.base_revision;
    if (typeof base !== 'number' || !Number.isInteger(base) || base < 1) {
      throw badRequest('base_revision: the revision this text was based on (an integer ≥ 1) is required');
    }
    if (base > file.revision)
      throw badRequest(`base_revision: ${base} is newer than the file (${file.revision})`);
    const result = collab.put(file, content, base, user.name);
    if (!result.ok) {
      throw new ApiError(409, 'CONFLICT', `the file changed since revision ${base} and the changes overlap`, {
        current: result.current,
      });
    }
    return { ...toFile(result.file, true), merged: result.merged };
  });

  app.patch('/api/notes/:note/files/:file', async (req) => {
    const note = noteFor(req, params(req).note);
    const file = fileFor(req, note, params(req).file);
    need(req, 'user');
    const body = bodyObject(req.body);
    const fields: { name?: string; public?: boolean } = {};
    if (body.name !== undefined) fields.name = checkFileName(body.name);
    const pub = optionalBool(body, 'public');
    if (pub !== undefined) fields.public = pub;
    if (fields.name && fields.name !== file.name && store.findFile(note.id, fields.name)) {
      throw new ApiError(409, 'CONFLICT', `a file named '${fields.name}' exists in this note`);
    }
    const updated = store.updateFile(file.id, fields);
    publishFile('file.updated', updated);
    return { ...toFile(updated), content: collab.text(updated) };
  });

  app.delete('/api/notes/:note/files/:file', async (req) => {
    const q = req.query as Record<string, string>;
    const purge = q.purge === '1' || q.purge === 'true';
    const note = noteFor(req, params(req).note);
    const file = fileFor(req, note, params(req).file, { deleted: purge });
    need(req, purge ? 'admin' : 'user');
    collab.close(file.id);
    if (purge) {
      if (!file.deleted_at) throw new ApiError(409, 'CONFLICT', 'delete the file first, then purge it');
      store.purgeFile(file.id);
      return { ok: true };
    }
    store.setFileDeleted(file.id, true);
    hub.publish({
      name: 'file.deleted',
      noteId: note.id,
      fileId: file.id,
      data: { note_id: note.id, file_id: file.id },
    });
    return { ok: true };
  });

  app.post('/api/notes/:note/files/:file/restore', async (req) => {
    const note = noteFor(req, params(req).note);
    const file = fileFor(req, note, params(req).file, { deleted: true });
    need(req, 'user');
    if (!file.deleted_at) return toFile(file, true);
    if (store.findFile(note.id, file.name))
      throw new ApiError(409, 'CONFLICT', `a file named '${file.name}' exists; rename it first`);
    const restored = store.setFileDeleted(file.id, false);
    publishFile('file.created', restored);
    return toFile(restored, true);
  });

  // --- revisions

  const revisionNumber = (value: string): number => {
    if (!/^\d+$/.test(value)) throw badRequest('revision: expected a number');
    return Number(value);
  };

  app.get('/api/notes/:note/files/:file/revisions', async (req) => {
    const note = noteFor(req, params(req).note);
    const file = fileFor(req, note, params(req).file);
    return { revisions: store.listRevisions(file.id) };
  });

  app.get('/api/notes/:note/files/:file/revisions/:rev', async (req) => {
    const note = noteFor(req, params(req).note);
    const file = fileFor(req, note, params(req).file);
    const rev = store.revision(file.id, revisionNumber(params(req).rev));
    if (!rev) throw notFound(`revision ${params(req).rev}`);
    return { ...rev, size: Buffer.byteLength(rev.content) };
  });

  app.get('/api/notes/:note/files/:file/revisions/:rev/diff', async (req) => {
    const note = noteFor(req, params(req).note);
    const file = fileFor(req, note, params(req).file);
    const to = revisionNumber(params(req).rev);
    const against = (req.query as Record<string, string>).against;
    const from = against === undefined ? to - 1 : revisionNumber(against);
    const newer = store.revision(file.id, to);
    if (!newer) throw notFound(`revision ${to}`);
    const older = from >= 1 ? store.revision(file.id, from) : undefined;
    if (from >= 1 && !older) throw notFound(`revision ${from}`);
    const diff = createTwoFilesPatch(
      `${file.name}@${from}`,
      `${file.name}@${to}`,
      older?.content ?? '',
      newer.content,
      undefined,
      undefined,
      { context: 3 },
    );
    return { from, to, diff };
  });

  app.post('/api/notes/:note/files/:file/revisions/:rev/restore', async (req) => {
    const note = noteFor(req, params(req).note);
    const file = fileFor(req, note, params(req).file);
    const user = need(req, 'user');
    const rev = store.revision(file.id, revisionNumber(params(req).rev));
    if (!rev) throw notFound(`revision ${params(req).rev}`);
    const saved = collab.replace(file, rev.content, user.name);
    return toFile(saved, true);
  });

  // --- collaboration

  app.get('/api/notes/:note/files/:file/collab', async (req) => {
    const note = noteFor(req, params(req).note);
    const file = fileFor(req, note, params(req).file);
    return collab.state(file);
  });

  app.post('/api/notes/:note/files/:file/collab', async (req) => {
    const note = noteFor(req, params(req).note);
    const file = fileFor(req, note, params(req).file);
    const user = need(req, 'user');
    const body = bodyObject(req.body);
    const update = requireString(body, 'update');
    const clientId = body.client_id === undefined ? 'anonymous' : requireString(body, 'client_id', 64);
    if (!/^[A-Za-z0-9+/]*={0,2}$/.test(update)) throw badRequest('update: expected base64');
    try {
      collab.apply(file, Buffer.from(update, 'base64'), user.name, clientId);
    } catch (error) {
      throw badRequest(`update: not a Yjs update (${(error as Error).message})`);
    }
    return { ok: true };
  });

  app.post('/api/notes/:note/presence', async (req) => {
    const note = noteFor(req, params(req).note);
    const body = bodyObject(req.body);
    const clientId = requireString(body, 'client_id', 64);
    const fileId = body.file_id === undefined || body.file_id === null ? null : Number(body.file_id);
    if (fileId !== null && !Number.isInteger(fileId)) throw badRequest('file_id: expected a number or null');
    const typing = optionalBool(body, 'typing') ?? false;
    const awareness = parseAwareness(body.awareness);
    if (awareness && !atLeast(role(req), 'user')) throw forbidden('awareness: only editors share a cursor');
    return {
      ok: hub.setPresence(req.principal?.subject ?? null, note.id, clientId, fileId, typing, awareness),
    };
  });

  // --- event stream

  app.get('/api/events', (req, reply) => {
    const q = req.query as Record<string, string>;
    const note = q.note_id ? noteFor(req, q.note_id) : null;
    const lastHeader = req.headers['last-event-id'] ?? q.last_event_id;
    const last = typeof lastHeader === 'string' && /^\d+$/.test(lastHeader) ? Number(lastHeader) : null;
    const clientId = typeof q.client_id === 'string' && q.client_id.length <= 64 ? q.client_id : null;
    reply.hijack();
    const raw = reply.raw;
    raw.writeHead(200, {
      'Content-Type': 'text/event-stream; charset=utf-8',
      'Cache-Control': 'no-cache, no-transform',
      Connection: 'keep-alive',
      'X-Accel-Buffering': 'no',
      'X-Content-Type-Options': 'nosniff',
    });
    raw.write('retry: 2000\n\n');
    const unsubscribe = hub.subscribe({
      principal: req.principal,
      noteId: note?.id ?? null,
      clientId,
      lastEventId: last,
      sink: {
        write: (chunk) => {
          // A client that stopped reading is dropped rather than buffered without bound.
          if (raw.writableLength > SSE_BUFFER_LIMIT) {
            raw.destroy();
            throw new Error('event stream client too slow');
          }
          raw.write(chunk);
        },
        end: () => raw.end(),
      },
    });
    req.raw.on('close', unsubscribe);
  });

  // --- chat and approvals

  app.get('/api/notes/:note/chat', async (req) => {
    const note = noteFor(req, params(req).note);
    const q = req.query as Record<string, string>;
    const limit = Math.min(Math.max(Number(q.limit ?? 100) || 100, 1), 500);
    const before = q.before && /^\d+$/.test(q.before) ? Number(q.before) : undefined;
    const reader = !atLeast(role(req), 'user');
    return {
      messages: store
        .listChat(note.id, before, limit)
        .map((m) =>
          reader && m.role === 'tool' ? { ...toMessage(m), content: TOOL_OUTPUT_HIDDEN } : toMessage(m),
        ),
      running: chat.running(note.id),
    };
  });

  app.post('/api/notes/:note/chat', async (req, reply) => {
    const note = noteFor(req, params(req).note);
    const user = need(req, 'user');
    const body = bodyObject(req.body);
    const message = requireString(body, 'message', 100_000).trim();
    if (!message) throw badRequest('message: must not be empty');
    const started = chat.start(note, user, message);
    if (!started)
      throw new ApiError(
        409,
        'CONFLICT',
        'the assistant is already answering in this note; cancel it or wait',
      );
    return reply.status(202).send({ run_id: started.runId, message: toMessage(started.message) });
  });

  app.post('/api/notes/:note/chat/cancel', async (req) => {
    const note = noteFor(req, params(req).note);
    need(req, 'user');
    return { cancelled: chat.cancel(note.id) };
  });

  app.get('/api/approvals', async (req) => {
    need(req, 'admin');
    const ref = (req.query as Record<string, string>).note;
    const note = ref ? noteFor(req, ref) : undefined;
    return { approvals: chat.pending(note?.id).map(toApproval) };
  });

  app.post('/api/approvals/:id', async (req) => {
    const admin = need(req, 'admin');
    const answer = bodyObject(req.body).answer;
    if (answer !== 'yes' && answer !== 'no' && answer !== 'always')
      throw badRequest('answer: yes, no or always');
    const row = chat.approval(params(req).id);
    if (!row) throw notFound(`approval '${params(req).id}'`);
    const updated = chat.answer(row.id, answer, admin.name);
    if (!updated) throw new ApiError(409, 'CONFLICT', `approval already ${row.status}`);
    return toApproval(updated);
  });

  // --- search

  app.get('/api/search', async (req) => {
    const q = req.query as Record<string, string>;
    const query = ftsQuery(q.q ?? '');
    if (!query) throw badRequest('q: give at least one word');
    const limit = Math.min(Math.max(Number(q.limit ?? 20) || 20, 1), 100);
    const note = q.note ? noteFor(req, q.note) : undefined;
    const publicOnly = !atLeast(role(req), 'user');
    const opts = { publicOnly, limit, ...(note ? { noteId: note.id } : {}) };
    const files = store.searchFiles(query, opts).map((r) => ({
      kind: 'file',
      note_id: r.note_id,
      note: r.note,
      file_id: r.file_id,
      file: r.file,
      snippet: snippetSegments(r.snippet),
    }));
    const chats = store.searchChat(query, opts).map((r) => ({
      kind: 'chat',
      note_id: r.note_id,
      note: r.note,
      message_id: r.message_id,
      snippet: snippetSegments(r.snippet),
    }));
    return { results: [...files, ...chats].slice(0, limit) };
  });

  // --- uploads

  await app.register(async (scope) => {
    scope.removeAllContentTypeParsers();
    scope.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: maxUpload }, (_req, body, done) =>
      done(null, body),
    );
    scope.post('/api/notes/:note/uploads', { bodyLimit: maxUpload }, async (req, reply) => {
      const note = noteFor(req, params(req).note);
      need(req, 'user');
      const rawName = (req.query as Record<string, string>).name;
      const name = checkFileName(rawName ?? 'upload');
      const bytes = req.body as Buffer | undefined;
      if (!bytes || bytes.length === 0)
        throw badRequest('the body is empty: send the file bytes as the body');
      const type = String(req.headers['content-type'] ?? 'application/octet-stream')
        .split(';')[0]!
        .trim()
        .toLowerCase();
      const hash = createHash('sha256').update(bytes).digest('hex');
      const path = join(options.dataDir, 'uploads', hash);
      try {
        readFileSync(path, { flag: 'r' });
      } catch {
        const tmp = `${path}.${process.pid}.tmp`;
        writeFileSync(tmp, bytes, { mode: 0o600 });
        renameSync(tmp, path);
      }
      db.prepare(
        'insert into uploads(note_id, hash, name, type, size, created_at) values (?, ?, ?, ?, ?, ?) on conflict do nothing',
      ).run(note.id, hash, name, type, bytes.length, store.stamp());
      return reply.status(201).send({
        hash,
        name,
        type,
        size: bytes.length,
        url: `/api/notes/${encodeURIComponent(note.name)}/uploads/${hash}`,
      });
    });
  });

  app.get('/api/notes/:note/uploads/:hash', async (req, reply) => {
    const note = noteFor(req, params(req).note);
    const hash = params(req).hash;
    if (!/^[0-9a-f]{64}$/.test(hash)) throw notFound('upload');
    const row = db.prepare('select * from uploads where note_id = ? and hash = ?').get(note.id, hash) as
      | { name: string; type: string }
      | undefined;
    if (!row) throw notFound('upload');
    const bytes = readFileSync(join(options.dataDir, 'uploads', hash));
    const inline = SAFE_IMAGE_TYPES.has(row.type);
    const ascii = row.name.replace(/[^A-Za-z0-9._-]/g, '_');
    return reply
      .header('Content-Type', inline ? row.type : 'application/octet-stream')
      .header('Content-Security-Policy', UPLOAD_CSP)
      .header(
        'Content-Disposition',
        `${inline ? 'inline' : 'attachment'}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(row.name)}`,
      )
      .header('Cache-Control', 'private, max-age=31536000, immutable')
      .send(bytes);
  });

  // --- tokens (admin)

  app.get('/api/tokens', async (req) => {
    need(req, 'admin');
    return { tokens: auth.listTokens() };
  });

  app.post('/api/tokens', async (req, reply) => {
    const admin = need(req, 'admin');
    const body = bodyObject(req.body);
    const name = requireString(body, 'name', 120).trim();
    if (!name) throw badRequest('name: must not be empty');
    const tokenRole = body.role;
    if (typeof tokenRole !== 'string' || !(ROLES as readonly string[]).includes(tokenRole)) {
      throw badRequest('role: expected guest, user or admin');
    }
    const days = body.expires_in_days;
    if (days !== undefined && (typeof days !== 'number' || !(days > 0)))
      throw badRequest('expires_in_days: a positive number');
    const { token, row } = auth.createToken(
      name,
      tokenRole as Role,
      admin.name,
      days as number | undefined,
      admin.subject,
    );
    return reply.status(201).send({ ...row, token });
  });

  app.delete('/api/tokens/:id', async (req) => {
    need(req, 'admin');
    const id = params(req).id;
    if (!/^\d+$/.test(id) || !auth.revokeToken(Number(id))) throw notFound(`token ${id}`);
    hub.recheck();
    return { ok: true };
  });

  // --- pages: the app, its assets, and the public pages (public notes' public files only)

  const assetCache = new Map<string, Buffer | null>();
  const asset = (path: string): Buffer | null => {
    if (!assetCache.has(path)) {
      try {
        assetCache.set(path, Buffer.from(readAsset(`web/${path}`)));
      } catch (error) {
        if (!(error instanceof AssetMissingError)) throw error;
        assetCache.set(path, null);
      }
    }
    return assetCache.get(path) ?? null;
  };
  const sendAsset = (reply: FastifyReply, path: string) => {
    const bytes = asset(path);
    if (!bytes) throw notFound(`/${path}`);
    return reply.header('Content-Type', contentTypeFor(path)).header('Cache-Control', 'no-cache').send(bytes);
  };
  const publicPage = (reply: FastifyReply, data: unknown) => {
    let html: string;
    try {
      html = readAssetText('web/public.html');
    } catch {
      throw notFound('the public page template (web/public.html)');
    }
    const json = JSON.stringify(data)
      .replace(/</g, '\\u003c')
      .replace(/\u2028/g, '\\u2028')
      .replace(/\u2029/g, '\\u2029');
    const tag = `<script type="application/json" id="rune-data">${json}</script>`;
    return reply
      .header('Content-Type', 'text/html; charset=utf-8')
      .send(html.replace('<!--RUNE_DATA-->', () => tag));
  };
  const publicNote = (ref: string): NoteRow => {
    const note = store.findNote(ref);
    if (note?.public !== 1 || /^\d+$/.test(ref)) throw notFound(`note '${ref}'`);
    return note;
  };
  const publicFile = (note: NoteRow, ref: string): FileRow => {
    const file = store.findFile(note.id, ref);
    if (file?.public !== 1 || /^\d+$/.test(ref)) throw notFound(`file '${ref}'`);
    return file;
  };

  app.get('/', (_req, reply) => sendAsset(reply, 'index.html'));
  app.get('/assets/*', (req, reply) => {
    const path = (req.params as { '*': string })['*'];
    if (!path || path.split('/').some((part) => part === '..' || part === '' || part.startsWith('.'))) {
      throw notFound('asset');
    }
    return sendAsset(reply, path);
  });
  app.get('/notes', (_req, reply) => reply.redirect('/notes/', 301));
  app.get('/notes/', (_req, reply) =>
    publicPage(reply, {
      kind: 'index',
      notes: store.listNotes({ publicOnly: true, deleted: false }).map(toNote),
    }),
  );
  app.get('/notes/:note/', (req, reply) => {
    const note = publicNote(params(req).note);
    const files = store.listFiles(note.id, { publicOnly: true, deleted: false }).map((f) => toFile(f));
    return publicPage(reply, { kind: 'note', note: toNote(note), files });
  });
  app.get('/notes/:note', (req, reply) => {
    const note = publicNote(params(req).note);
    return reply.redirect(`/notes/${encodeURIComponent(note.name)}/`, 301);
  });
  app.get('/notes/:note/:file', (req, reply) => {
    const note = publicNote(params(req).note);
    const file = publicFile(note, params(req).file);
    return publicPage(reply, {
      kind: 'file',
      note: toNote(note),
      file: { ...toFile(file), content: collab.text(file) },
    });
  });
  app.get('/raw/:note/:file', (req, reply) => {
    const note = publicNote(params(req).note);
    const file = publicFile(note, params(req).file);
    return reply.header('Content-Type', 'text/plain; charset=utf-8').send(collab.text(file));
  });

  const pinger = setInterval(() => hub.ping(), 20_000);
  pinger.unref();

  let closed = false;
  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    clearInterval(pinger);
    await chat.stopAll();
    hub.closeAll();
    await app.close();
    collab.flushAll();
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
  };

  return { app, store, auth, hub, collab, chat, generatedAdmin, close };
}
