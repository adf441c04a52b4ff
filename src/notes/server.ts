// The notes HTTP server: build() assembles the services and fastify with one route plugin per
// resource (src/notes/routes/, contract in docs/notes-api.md), without listening, so tests drive it
// with inject() on a real database.
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import fastifyCookie from '@fastify/cookie';
import fastifyRateLimit from '@fastify/rate-limit';
import Fastify, { type FastifyInstance, type FastifyRequest } from 'fastify';
import type { RuneConfig } from '../config/schema.ts';
import type { Logger } from '../core/logger.ts';
import { Auth } from './auth.ts';
import { ChatService as Chat, type ChatService, type RunAgent } from './chat.ts';
import { Checkpointer } from './checkpointer.ts';
import { Collab } from './collab.ts';
import { limitConnections, openFileLimit, totalConnections } from './connections.ts';
import { openNotesDatabase, Store } from './db.ts';
import { type Fsync, WalSync } from './durable.ts';
import { EventHub } from './events.ts';
import { clientError, frameworkErrors, rateLimited, securityHeaders } from './guard.ts';
import { type Limits, resolveLimits } from './limits.ts';
import { OAuthLogins, type OAuthOptions } from './oauth.ts';
import { Quotas } from './quotas.ts';
import { ReadCache } from './read-cache.ts';
import { authRoutes } from './routes/auth.ts';
import { chatRoutes } from './routes/chat.ts';
import { collabRoutes } from './routes/collab.ts';
import { eventRoutes } from './routes/events.ts';
import { fileRoutes } from './routes/files.ts';
import { type NotesContext, notesKit, publishers } from './routes/kit.ts';
import { noteRoutes } from './routes/notes.ts';
import { pageRoutes } from './routes/pages.ts';
import { revisionRoutes } from './routes/revisions.ts';
import { searchRoutes } from './routes/search.ts';
import { tokenRoutes } from './routes/tokens.ts';
import { trashRoutes } from './routes/trash.ts';
import { uploadRoutes } from './routes/uploads.ts';
import { userRoutes } from './routes/users.ts';
import { SearchIndexer } from './search-index.ts';
import { UploadStore } from './uploads.ts';
import { createTaskRunner, type TaskRunner } from './worker-pool.ts';

export { SESSION_COOKIE } from './routes/kit.ts';

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
  /** Longest time continuous live editing goes without a revision (default notes.revision_every_secs). */
  revisionEveryMs?: number;
  oauth?: OAuthOptions;
  approvalTimeoutMs?: number;
  now?: () => Date;
  /** How the WAL is synced to disk (tests hold acknowledgements back with it). */
  fsync?: Fsync;
}

export interface NotesServer {
  app: FastifyInstance;
  store: Store;
  auth: Auth;
  hub: EventHub;
  collab: Collab;
  chat: ChatService;
  limits: Limits;
  /** Where searches, diffs and merges run: worker threads in the binary, inline in unit tests. */
  tasks: TaskRunner;
  /** The file search's index, caught up after each change. */
  searchIndex: SearchIndexer;
  /** The admin password created at first start, when no login was configured. */
  generatedAdmin: { name: string; password: string } | null;
  /**
   * Takes a changed configuration (SIGHUP): accounts, role lists and login providers as it says
   * from the next request on; sessions it no longer admits end and their event streams close.
   * Returns how many sessions ended.
   */
  reload(config: RuneConfig): number;
  /**
   * Finishes the requests in flight (cutting those still open after 5 s), stops chat runs, closes
   * event streams, saves live documents, checkpoints the WAL and closes the database.
   */
  close(): Promise<void>;
}

/**
 * How long a stop waits for requests in flight before it cuts their connections: well inside the
 * 10 s a container runtime gives between SIGTERM and SIGKILL, with time left to save live edits.
 */
const DRAIN_MS = 5000;

/** notes.db, its folders, and the WAL sync `[notes] synchronous` asks for. */
function openStorage(options: BuildOptions) {
  const { logger } = options;
  mkdirSync(join(options.dataDir, 'uploads'), { recursive: true, mode: 0o700 });
  // Tests may leave the workspace in the data folder; `rune notes` passes one outside RUNE_HOME.
  if (!options.cwd) mkdirSync(join(options.dataDir, 'workspace'), { recursive: true, mode: 0o700 });
  const dbFile = join(options.dataDir, 'notes.db');
  const db = openNotesDatabase(dbFile);
  const totalChanges = db.prepare('select total_changes()').pluck();
  const changes = (): number => totalChanges.get() as number;
  const walSync = new WalSync(join(options.dataDir, 'notes.db-wal'), {
    changes,
    ...(options.fsync ? { fsync: options.fsync } : {}),
  });
  // [notes] synchronous: what an answer to a change waits for. Every commit survives a crash of the
  // process either way; `normal` (default, SQLite's advice for WAL) does not wait for the disk, and a
  // background fsync each second bounds what a power cut can lose; `full` also waits for the WAL's
  // fsync, so it survives a power cut, at the disk's fsync latency per write (ADR 0025).
  const synchronous = options.config.notes.synchronous;
  if (synchronous === 'normal') {
    walSync.every(1000, (error) => logger.error('notes.fsync_failed', { message: error.message }));
  }
  return { db, dbFile, changes, walSync, synchronous };
}

type Storage = ReturnType<typeof openStorage>;

/** The services behind the routes, over the database. */
function startServices(options: BuildOptions, storage: Storage) {
  const { config, logger } = options;
  const notes = config.notes;
  const { db, dbFile } = storage;
  const now = options.now ?? (() => new Date());
  const limits = resolveLimits(notes);
  const store = new Store(db, now);
  const auth = new Auth(store, notes, logger);
  const hub = new EventHub(store, auth, () => now().getTime(), limits);
  const tasks = createTaskRunner(db, dbFile, logger);
  // The file search's index follows every change of files and notes, after the commit.
  const searchIndex = new SearchIndexer(db, logger);
  store.versions.listen(() => searchIndex.kick());
  searchIndex.kick();
  const checkpointer = Checkpointer.start(db, dbFile, logger, storage.changes);
  const collab = new Collab(store, hub, {
    logger,
    limits,
    ...(options.idleMs !== undefined ? { idleMs: options.idleMs } : {}),
    maxIntervalMs: options.revisionEveryMs ?? notes.revision_every_secs * 1000,
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
  const quotas = new Quotas(limits, () => now().getTime());
  const uploads = new UploadStore(options.dataDir);
  return {
    now,
    limits,
    store,
    auth,
    hub,
    tasks,
    checkpointer,
    collab,
    chat,
    oauth,
    quotas,
    uploads,
    searchIndex,
  };
}

type Services = ReturnType<typeof startServices>;

/**
 * What the last process acknowledged but did not finish: live edits not yet in a revision become
 * one; chat runs it did not finish are shown as interrupted, and their questions expire.
 */
function recoverUncleanStop({ collab, chat, uploads }: Services, storage: Storage, logger: Logger): void {
  // Uploads a crash cut short; nothing else writes in uploads/ (one server per data folder).
  const temporary = uploads.cleanTemporary();
  if (temporary > 0) {
    logger.info('notes.recovered', {
      message: `rune notes: removed ${temporary} unfinished upload(s) left by an unclean stop`,
    });
  }
  const recovered = collab.recover();
  const interrupted = chat.recoverInterrupted();
  storage.db.prepare("update approvals set status = 'expired' where status = 'pending'").run();
  if (recovered + interrupted > 0) {
    logger.info('notes.recovered', {
      message: `rune notes: recovered after an unclean stop: ${recovered} file(s) with live edits saved as revisions, ${interrupted} chat run(s) marked interrupted`,
    });
  }
}

/** fastify with the server's bounds, connection limits, security headers, cookies and rate limits. */
async function createApp(notes: RuneConfig['notes'], limits: Limits): Promise<FastifyInstance> {
  const app = Fastify({
    logger: false,
    bodyLimit: 2 * 1024 * 1024,
    trustProxy:
      notes.trusted_proxies && notes.trusted_proxies.length > 0 ? [...notes.trusted_proxies] : false,
    // Closing finishes the requests in flight (Node closes idle keep-alive connections by itself;
    // new requests on busy ones get a 503); `close()` cuts what is left after DRAIN_MS.
    forceCloseConnections: false,
    // Node's own bound on receiving a request (fastify turns it off): a body sent a byte at a time
    // would otherwise keep its connection in use (and its share of the body budgets) for ever.
    requestTimeout: limits.bodyTimeoutMs,
    // Node takes its timeouts when the server is made (fastify's own setting, applied after, is
    // not enough), and looks for requests past them this often (its default, 30 s, would let a
    // 60 s limit run to 90).
    http: {
      requestTimeout: limits.bodyTimeoutMs,
      headersTimeout: Math.min(limits.bodyTimeoutMs, 60_000),
      connectionsCheckingInterval: Math.min(30_000, Math.max(500, limits.bodyTimeoutMs / 6)),
    },
    return503OnClosing: true,
    // Names are up to 120 characters, which URL-encoded take up to 12 bytes each (4 UTF-8 bytes).
    routerOptions: { maxParamLength: 2048 },
    // Malformed URLs and over-long parameters answer in the documented shape, with the headers.
    frameworkErrors,
    clientErrorHandler: clientError,
  });
  limitConnections(app.server, {
    perAddress: limits.maxConnectionsPerClient,
    total: totalConnections(openFileLimit()),
    trusted: notes.trusted_proxies ?? [],
    sendTimeoutMs: limits.sendTimeoutMs,
  });
  // Security headers on every response (errors and 404 included): registered first, so its
  // onRequest hook runs before any hook that may throw.
  app.addHook('onRequest', securityHeaders);
  // Parsed by the hook that asks who is asking (routes/kit.ts), only when a request has cookies.
  await app.register(fastifyCookie, { hook: false });
  // Counted before the handler runs; routes opt in (see rateLimited and the login route).
  await app.register(fastifyRateLimit, {
    global: false,
    errorResponseBuilder: (_req, ctx) => rateLimited(Math.ceil(ctx.ttl / 1000)),
  });
  return app;
}

const ROUTES = [
  authRoutes,
  userRoutes,
  noteRoutes,
  fileRoutes,
  trashRoutes,
  revisionRoutes,
  collabRoutes,
  eventRoutes,
  chatRoutes,
  searchRoutes,
  uploadRoutes,
  tokenRoutes,
  pageRoutes,
];

/** The shared kit (services, who asks, errors) at the root, then one plugin per resource. */
async function registerRoutes(app: FastifyInstance, context: NotesContext): Promise<void> {
  await app.register(notesKit, context);
  for (const routes of ROUTES) await app.register(routes);
}

/**
 * The stop: chat runs end, event streams close, requests in flight finish (cut after DRAIN_MS),
 * live documents are saved, the WAL is checkpointed and the database closed.
 */
async function stop(
  app: FastifyInstance,
  { chat, hub, tasks, collab, checkpointer, auth, searchIndex }: Services,
  storage: Storage,
  logger: Logger,
): Promise<void> {
  await chat.stopAll();
  hub.closeAll();
  // A client that never finishes its request must not hold the shutdown up until the SIGKILL.
  const drainLimit = setTimeout(() => {
    app.server.getConnections((_error, count) => {
      app.server.closeAllConnections();
      logger.warn('notes.drain_cut', {
        message: `rune notes: requests were still unfinished ${DRAIN_MS / 1000} s after the stop began; cut ${count} connection(s)`,
      });
    });
  }, DRAIN_MS);
  await app.close();
  clearTimeout(drainLimit);
  await tasks.close();
  collab.flushAll();
  // What is still queued stays queued in the database: the next start indexes it.
  searchIndex.close();
  auth.flushLastUse();
  await checkpointer?.close();
  await storage.walSync.close();
  storage.db.pragma('wal_checkpoint(TRUNCATE)');
  storage.db.close();
}

export async function build(options: BuildOptions): Promise<NotesServer> {
  const { config, logger } = options;
  const notes = config.notes;
  const storage = openStorage(options);
  const services = startServices(options, storage);
  const { now, limits, store, auth, hub, tasks, collab, chat, oauth, quotas, uploads, searchIndex } =
    services;
  const generatedAdmin = await auth.ensureAdmin(oauth.enabled);
  // Sessions the config no longer admits (an account removed while the server was down) end now.
  auth.prune();
  recoverUncleanStop(services, storage, logger);
  const publicUrl = notes.public_url ? new URL(notes.public_url) : null;
  const app = await createApp(notes, limits);

  let closed = false;
  await registerRoutes(app, {
    config,
    logger,
    dataDir: options.dataDir,
    db: storage.db,
    store,
    auth,
    hub,
    collab,
    chat,
    oauth,
    limits,
    tasks,
    quotas,
    uploads,
    clock: () => now().getTime(),
    readCache: new ReadCache(store.versions),
    searchIndex,
    publicUrl,
    originOf: (req: FastifyRequest) =>
      publicUrl ? publicUrl.origin : `${req.protocol}://${req.headers.host ?? 'localhost'}`,
    secure: (req: FastifyRequest) => req.protocol === 'https' || publicUrl?.protocol === 'https:',
    durable: storage.synchronous === 'full' ? () => storage.walSync.flush() : () => Promise.resolve(),
    stopping: () => closed,
    ...publishers(hub),
  });

  const pinger = setInterval(() => hub.ping(), 20_000);
  pinger.unref();

  const reload = (next: RuneConfig): number => {
    oauth.reload(next.notes);
    const ended = auth.reload(next.notes);
    hub.recheck();
    return ended;
  };

  const close = async (): Promise<void> => {
    if (closed) return;
    closed = true;
    clearInterval(pinger);
    await stop(app, services, storage, logger);
  };

  return { app, store, auth, hub, collab, chat, limits, tasks, searchIndex, generatedAdmin, reload, close };
}
