// Uploads: raw bytes stored once per content hash, served so that a browser never runs them.
// This plugin takes any body as bytes (its own content-type parser, up to notes.max_upload_mb).
// The bytes are on disk (and with synchronous = full, on stable storage) before the row that
// names them is committed, and the row before the 201.
import { createHash, randomBytes } from 'node:crypto';
import {
  closeSync,
  createReadStream,
  existsSync,
  fstatSync,
  fsyncSync,
  openSync,
  renameSync,
  rmSync,
} from 'node:fs';
import { open } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import { badRequest, checkFileName, notFound, SAFE_IMAGE_TYPES, UPLOAD_CSP } from '../http.ts';
import type { Params, Query } from './kit.ts';

/**
 * Writes the bytes to a temporary file next to `path` (fsynced when `sync`), off the event loop.
 * The caller renames it into place and commits the row without an await in between.
 */
async function writeTemporary(path: string, bytes: Buffer, sync: boolean): Promise<string> {
  const tmp = `${path}.${randomBytes(6).toString('hex')}.tmp`;
  const handle = await open(tmp, 'wx', 0o600);
  try {
    await handle.writeFile(bytes);
    if (sync) await handle.sync();
  } catch (error) {
    await handle.close();
    rmSync(tmp, { force: true });
    throw error;
  }
  await handle.close();
  return tmp;
}

/** Makes a rename in `dir` durable. */
function syncFolder(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}

export async function uploadRoutes(app: FastifyInstance): Promise<void> {
  const { store, db, dataDir, config } = app.notes;
  const maxUpload = config.notes.max_upload_mb * 1024 * 1024;
  const sync = config.notes.synchronous === 'full';

  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer', bodyLimit: maxUpload }, (_req, body, done) =>
    done(null, body),
  );

  app.post<Params<'note'> & Query>(
    '/api/notes/:note/uploads',
    { bodyLimit: maxUpload },
    async (req, reply) => {
      const note = req.note(req.params.note);
      req.need('user');
      const name = checkFileName(req.query.name ?? 'upload');
      const bytes = req.body as Buffer | undefined;
      if (!bytes || bytes.length === 0)
        throw badRequest('the body is empty: send the file bytes as the body');
      const type = String(req.headers['content-type'] ?? 'application/octet-stream')
        .split(';')[0]!
        .trim()
        .toLowerCase();
      const hash = createHash('sha256').update(bytes).digest('hex');
      const path = join(dataDir, 'uploads', hash);
      const tmp = existsSync(path) ? null : await writeTemporary(path, bytes, sync);
      // From here on no await: a purge cannot remove the bytes between their rename and the row.
      const current = store.noteById(note.id);
      if (!current || current.deleted_at) {
        if (tmp) rmSync(tmp, { force: true });
        throw notFound(`note '${req.params.note}'`);
      }
      if (tmp) {
        renameSync(tmp, path);
        if (sync) syncFolder(dirname(path));
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
    },
  );

  app.get<Params<'note' | 'hash'>>('/api/notes/:note/uploads/:hash', async (req, reply) => {
    const note = req.note(req.params.note);
    const hash = req.params.hash;
    if (!/^[0-9a-f]{64}$/.test(hash)) throw notFound('upload');
    const row = db.prepare('select * from uploads where note_id = ? and hash = ?').get(note.id, hash) as
      | { name: string; type: string }
      | undefined;
    if (!row) throw notFound('upload');
    // Streamed as the client takes it: a slow reader holds a chunk of memory, not the whole upload
    // (and one that stops reading is cut after the send timeout, connections.ts).
    const fd = openSync(join(dataDir, 'uploads', hash), 'r');
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
      .header('Cache-Control', 'private, max-age=31536000, immutable')
      .header('Content-Length', size)
      .send(createReadStream('', { fd }));
  });
}
