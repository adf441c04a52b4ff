// Files of a note: list, create, read, save (3-way merged against the base revision), rename and
// visibility. The trash is trash.ts, the revision history revisions.ts.
import type { FastifyInstance } from 'fastify';
import { toFile } from '../db.ts';
import { ApiError, badRequest } from '../http.ts';
import { plainSave } from '../plain-save.ts';
import { sendRendered } from '../read-cache.ts';
import { atLeast } from '../roles.ts';
import { USER } from './gate.ts';
import { rawRoute, route } from './route.ts';
import type { ZodProvider } from './schema.ts';

const JSON_TYPE = 'application/json; charset=utf-8';

export async function fileRoutes(root: FastifyInstance): Promise<void> {
  const app = root.withTypeProvider<ZodProvider>();
  const { store, collab, tasks, quotas, readCache, publishFile } = app.notes;

  route(app, 'GET /api/notes/:note/files', async (req) => {
    const note = req.note(req.params.note);
    const { deleted } = req.query;
    if (deleted) req.need('user');
    const publicOnly = !atLeast(req.role, 'user');
    return { files: store.listFiles(note.id, { publicOnly, deleted }).map((f) => toFile(f)) };
  });

  route(
    app,
    'POST /api/notes/:note/files',
    { ...USER, onRequest: quotas.hook('files', 'revisions') },
    async (req, reply) => {
      const note = req.note(req.params.note);
      const user = req.need('user');
      const { name, content = '', public: isPublic = true } = req.body;
      collab.checkSize(content);
      if (store.findFile(note.id, name))
        throw new ApiError('CONFLICT', `a file named '${name}' exists in this note`);
      const file = store.tx(() => {
        const created = store.createFile(note.id, name, content, isPublic, user.name);
        publishFile('file.created', created);
        return created;
      });
      return reply.status(201).send(toFile(file, true));
    },
  );

  // Answers JSON text it rendered (and, for visitors, cached): the declared schema validates the
  // path and tells clients the shape; fastify does not serialize text again.
  rawRoute(app, 'GET /api/notes/:note/files/:file', (req, reply) => {
    const read = () => {
      const { note, file } = req.noteAndFile(req.params);
      // The size of the text returned, live edits included (not the size of the last revision).
      const content = collab.text(file);
      return {
        noteId: note.id,
        body: JSON.stringify({ ...toFile(file), size: Buffer.byteLength(content), content }),
      };
    };
    if (req.principal) return reply.type(JSON_TYPE).send(read().body);
    // What a visitor reads is public and the same for every visitor: rendered once per version.
    const key = `json\0${req.params.note}\0${req.params.file}`;
    let rendered = readCache.get(key);
    if (!rendered) {
      const { noteId, body } = read();
      rendered = readCache.put(key, noteId, JSON_TYPE, body);
    }
    return sendRendered(req, reply, rendered);
  });

  route(
    app,
    'PUT /api/notes/:note/files/:file',
    { ...USER, onRequest: quotas.hook('revisions') },
    async (req) => {
      const { file } = req.noteAndFile(req.params);
      const user = req.need('user');
      const { content, base_revision: base } = req.body;
      if (base > file.revision)
        throw badRequest(`base_revision: ${base} is newer than the file (${file.revision})`);
      const result = await plainSave({ collab, store, runner: tasks }, file, content, base, user.name);
      if (!result.ok) {
        const why = result.tooLarge
          ? "the changes are too large to merge within the server's budget"
          : 'the changes overlap';
        throw new ApiError('CONFLICT', `the file changed since revision ${base} and ${why}`, {
          current: result.current,
        });
      }
      return { ...toFile(result.file, true), merged: result.merged };
    },
  );

  route(app, 'PATCH /api/notes/:note/files/:file', USER, async (req) => {
    const { note, file } = req.noteAndFile(req.params);
    req.need('user');
    const fields: { name?: string; public?: boolean } = {};
    const { name, public: pub } = req.body;
    if (name !== undefined) fields.name = name;
    if (pub !== undefined) fields.public = pub;
    if (fields.name && fields.name !== file.name && store.findFile(note.id, fields.name)) {
      throw new ApiError('CONFLICT', `a file named '${fields.name}' exists in this note`);
    }
    const updated = store.tx(() => {
      const row = store.updateFile(file.id, fields);
      publishFile('file.updated', row);
      return row;
    });
    return { ...toFile(updated), content: collab.text(updated) };
  });
}
