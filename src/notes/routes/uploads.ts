// Uploads: raw bytes stored once per content hash, served so that a browser never runs them.
// The body is streamed to disk (uploads.ts) under in-flight budgets per person and in all, taken
// with the quota before a byte is read; the bytes are on disk and fsynced before the row that names
// them is committed, and the row before the 201.

import { createReadStream, fstatSync, openSync } from 'node:fs';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { rateLimited } from '../guard.ts';
import { ApiError, badRequest, notFound, SAFE_IMAGE_TYPES, UPLOAD_CSP } from '../http.ts';
import { UploadTooLarge } from '../uploads.ts';
import { BodyBudget, declaredLength } from './gate.ts';
import { route } from './route.ts';
import type { ZodProvider } from './schema.ts';

function tooLarge(max: number): ApiError {
  return new ApiError(
    'TOO_LARGE',
    `the upload is larger than ${max / (1024 * 1024)} MiB (notes.max_upload_mb)`,
  );
}

export async function uploadRoutes(root: FastifyInstance): Promise<void> {
  const app = root.withTypeProvider<ZodProvider>();
  const { store, db, config, limits, quotas, uploads } = app.notes;
  const maxUpload = config.notes.max_upload_mb * 1024 * 1024;
  const inFlight = new BodyBudget(limits.maxUploadsInFlightBytes, limits.maxUploadsInFlightBytesPerUser);

  // Any body, as the stream it is: the route reads it to disk itself.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', (_req, payload, done) => done(null, payload));

  /** Before the body: its size, the person's quota, and room among the uploads being received. */
  const admit = async (req: FastifyRequest, reply: FastifyReply) => {
    const user = req.need('user');
    const length = declaredLength(req);
    if (length !== null && length > maxUpload) throw tooLarge(maxUpload);
    const expected = length ?? maxUpload;
    quotas.take('uploadBytes', user.subject, expected);
    const release = inFlight.reserve(user.subject, expected);
    if (release === 'client')
      throw rateLimited(5, 'your uploads in progress are at their limit (max_uploads_in_flight_mb_per_user)');
    if (release === 'server')
      throw new ApiError(
        'BUSY',
        'the server receives as many uploads as it may; try again shortly',
        {},
        { 'Retry-After': '5' },
      );
    reply.raw.once('close', release);
  };

  route(
    app,
    'POST /api/notes/:note/uploads',
    { onRequest: admit, config: { need: 'user', streamed: true } },
    async (req, reply) => {
      const note = req.note(req.params.note);
      req.need('user');
      const { name } = req.query;
      const type = String(req.headers['content-type'] ?? 'application/octet-stream')
        .split(';')[0]!
        .trim()
        .toLowerCase();
      const body = req.body as AsyncIterable<Buffer> | undefined;
      if (!body) throw badRequest('the body is empty: send the file bytes as the body');
      let received: Awaited<ReturnType<typeof uploads.receive>>;
      try {
        received = await uploads.receive(body, maxUpload);
      } catch (error) {
        if (error instanceof UploadTooLarge) throw tooLarge(maxUpload);
        throw error;
      }
      try {
        if (received.size === 0) throw badRequest('the body is empty: send the file bytes as the body');
        await received.place();
        // From here on no await until the row is committed.
        const current = store.noteById(note.id);
        if (!current || current.deleted_at) throw notFound(`note '${req.params.note}'`);
        db.prepare(
          'insert into uploads(note_id, hash, name, type, size, created_at) values (?, ?, ?, ?, ?, ?) on conflict do nothing',
        ).run(note.id, received.hash, name, type, received.size, store.stamp());
      } finally {
        received.release();
        // Bytes placed for a row that was never written (the note went away meanwhile).
        uploads.removeUnused(
          [received.hash],
          (hash) => !!db.prepare('select 1 from uploads where hash = ? limit 1').get(hash),
        );
      }
      return reply.status(201).send({
        hash: received.hash,
        name,
        type,
        size: received.size,
        url: `/api/notes/${encodeURIComponent(note.name)}/uploads/${received.hash}`,
      });
    },
  );

  route(app, 'GET /api/notes/:note/uploads/:hash', async (req, reply) => {
    const note = req.note(req.params.note);
    const hash = req.params.hash;
    if (!/^[0-9a-f]{64}$/.test(hash)) throw notFound('upload');
    const row = db.prepare('select * from uploads where note_id = ? and hash = ?').get(note.id, hash) as
      | { name: string; type: string }
      | undefined;
    if (!row) throw notFound('upload');
    // The bytes never change under a hash; who may see them can. A public note's upload is
    // revalidated (a 304 costs nothing), anything else is not kept by browsers or proxies.
    const etag = `"${hash}"`;
    if (note.public === 1) {
      reply.header('Cache-Control', 'public, no-cache').header('ETag', etag);
      if (req.headers['if-none-match'] === etag) return reply.status(304).send();
    }
    // Streamed as the client takes it: a slow reader holds a chunk of memory, not the whole upload
    // (and one that stops reading is cut after the send timeout, connections.ts).
    const fd = openSync(uploads.path(hash), 'r');
    const size = fstatSync(fd).size;
    const inline = SAFE_IMAGE_TYPES.has(row.type);
    const ascii = row.name.replace(/[^A-Za-z0-9._-]/g, '_');
    return reply
      .header('Content-Type', inline ? row.type : 'application/octet-stream')
      .header('Content-Security-Policy', UPLOAD_CSP)
      .header(
        'Content-Disposition',
        `${inline ? 'inline' : 'attachment'}; filename="${ascii}"; filename*=UTF-8''${encodeURIComponent(row.name)}`,
      )
      .header('Content-Length', size)
      .send(createReadStream('', { fd }));
  });
}
